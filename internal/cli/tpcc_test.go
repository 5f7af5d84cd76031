package cli_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// oneErrorLine asserts the command failed with code and said so in exactly
// one line starting "tierbench: " that mentions want.
func oneErrorLine(t *testing.T, code int, stderr string, wantCode int, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != wantCode || len(lines) != 1 || !strings.HasPrefix(lines[0], "tierbench: ") || !strings.Contains(lines[0], want) {
		t.Errorf("exit %d (want %d), stderr %q (want one 'tierbench: ' line mentioning %q)", code, wantCode, stderr, want)
	}
}

func TestTPCCBuildAndCheckCommands(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	code, out, errOut := runTierbench(t, "tpcc", "build", "--json", "--dsn", dsn, "--warehouses", "1", "--build-vus", "2")
	if code != 0 {
		t.Fatalf("build: exit %d: %s", code, errOut)
	}
	m, keys := jsonKeys(t, out)
	for _, k := range []string{"warehouses", "seconds", "rows", "bytes"} {
		if _, ok := m[k]; !ok {
			t.Errorf("build --json lacks %q (has %v)", k, keys)
		}
	}
	rows, _ := m["rows"].(map[string]any)
	if m["warehouses"] != 1.0 || rows["stock"] != 100000.0 || rows["customer"] != 30000.0 || len(rows) != 9 {
		t.Errorf("build --json = %s", out)
	}
	if !strings.Contains(errOut, "warehouses") {
		t.Errorf("no progress on stderr: %q", errOut)
	}

	code, out, errOut = runTierbench(t, "tpcc", "check", "--json", "--dsn", dsn)
	if code != 0 {
		t.Fatalf("check: exit %d: %s %s", code, out, errOut)
	}
	var res struct {
		OK         bool `json:"ok"`
		Conditions []struct {
			ID         string `json:"id"`
			OK         bool   `json:"ok"`
			Violations int    `json:"violations"`
		} `json:"conditions"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.OK || len(res.Conditions) != 12 || res.Conditions[11].ID != "3.3.2.12" {
		t.Fatalf("check --json: %v %s", err, out)
	}

	// A second build without --drop is refused: exit 2, one line naming --drop.
	code, _, errOut = runTierbench(t, "tpcc", "build", "--dsn", dsn, "--warehouses", "1")
	oneErrorLine(t, code, errOut, 2, "--drop")

	// Corrupt one value: check exits 1 and names the failing conditions.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "UPDATE district SET d_ytd = d_ytd + 0.01 WHERE d_w_id = 1 AND d_id = 4"); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runTierbench(t, "tpcc", "check", "--json", "--dsn", dsn)
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.OK {
		t.Fatalf("check of a corrupted schema: exit %d, %s", code, out)
	}
	var bad []string
	for _, c := range res.Conditions {
		if !c.OK {
			bad = append(bad, c.ID)
		}
	}
	if !reflect.DeepEqual(bad, []string{"3.3.2.1", "3.3.2.9"}) {
		t.Errorf("failing conditions %v, want 3.3.2.1 and 3.3.2.9", bad)
	}
	code, out, _ = runTierbench(t, "tpcc", "check", "--dsn", dsn)
	if code != 1 || !strings.Contains(out, "FAIL") {
		t.Errorf("human check output: exit %d\n%s", code, out)
	}

	// --drop rebuilds, and the rebuilt schema passes.
	if code, _, errOut = runTierbench(t, "tpcc", "build", "--dsn", dsn, "--warehouses", "1", "--drop"); code != 0 {
		t.Fatalf("build --drop: exit %d: %s", code, errOut)
	}
	if code, out, _ = runTierbench(t, "tpcc", "check", "--dsn", dsn, "--all"); code != 0 || !strings.Contains(out, "all consistency conditions hold") {
		t.Fatalf("check after --drop: exit %d\n%s", code, out)
	}
}

func TestTPCCBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"malformed DSN", []string{"tpcc", "build", "--dsn", "postgres://u:pw@h:notaport/db", "--warehouses", "1"}, 2, "not valid"},
		{"no scheme", []string{"tpcc", "check", "--dsn", "dbname=x"}, 2, "no scheme"},
		{"other engine", []string{"tpcc", "check", "--dsn", "sqlite:///tmp/x.db"}, 2, "not supported"},
		{"unreachable", []string{"tpcc", "check", "--dsn", "postgres://u:pw@127.0.0.1:1/db"}, 1, "cannot connect"},
		{"zero warehouses", []string{"tpcc", "build", "--dsn", "postgres://u@127.0.0.1:1/db", "--warehouses", "0"}, 2, "--warehouses"},
		{"negative warehouses", []string{"tpcc", "build", "--dsn", "postgres://u@127.0.0.1:1/db", "--warehouses", "-3"}, 2, "--warehouses"},
		{"warehouses not a number", []string{"tpcc", "build", "--dsn", "postgres://u@127.0.0.1:1/db", "--warehouses", "many"}, 2, "warehouses"},
		{"no dsn", []string{"tpcc", "check"}, 2, "--dsn"},
		{"unknown subcommand", []string{"tpcc", "bild"}, 2, "unknown command"},
		{"unknown flag", []string{"tpcc", "build", "--wharehouses", "2"}, 2, "unknown flag"},
		{"generate into a file", []string{"tpcc", "generate", "--warehouses", "1", "--out", "/etc/hostname"}, 2, "is a file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runTierbench(t, tc.args...)
			oneErrorLine(t, code, errOut, tc.code, tc.want)
			if strings.Contains(errOut, ":pw@") {
				t.Errorf("password in error: %s", errOut)
			}
		})
	}
}
