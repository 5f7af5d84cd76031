package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/cli"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// serverDoc is the JSON of `server start` and `server clone`.
type serverDoc struct {
	Engine         string   `json:"engine"`
	DSN            string   `json:"dsn"`
	DataDir        string   `json:"datadir"`
	Port           int      `json:"port"`
	PID            int      `json:"pid"`
	Version        string   `json:"version"`
	Listen         []string `json:"listen"`
	Network        string   `json:"network"`
	AlreadyRunning bool     `json:"already_running"`
	ClonedFrom     string   `json:"cloned_from"`
}

// `server clone` copies a stopped managed PostgreSQL and starts the copy
// on a port of its own, with the source's data and password; it refuses a
// running source and an existing copy unless --replace (and the copy is
// stopped).
func TestServerClone(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := pgtest.TempDir(t)
	src, dst := filepath.Join(base, "src"), filepath.Join(base, "copies", "dst")
	for _, d := range []string{src, dst} {
		t.Cleanup(func() { server.Stop(context.Background(), d, "immediate") })
	}

	code, out, errOut := runTierbench(t, "server", "start", "--json", "--datadir", src)
	if code != 0 {
		t.Fatalf("server start: exit %d: %s", code, errOut)
	}
	var started serverDoc
	if err := json.Unmarshal([]byte(out), &started); err != nil {
		t.Fatal(err)
	}
	admin(ctx, t, started.DSN, "CREATE TABLE cloned (v text)", "INSERT INTO cloned VALUES ('from the source')")

	one := func(what string, code int, out, errOut, want string) {
		t.Helper()
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != cli.ExitUsage || out != "" || len(lines) != 1 || !strings.Contains(lines[0], want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line saying %q", what, code, out, errOut, want)
		}
	}
	code, out, errOut = runTierbench(t, "server", "clone", "--json", "--from", src, "--datadir", dst)
	one("a running source", code, out, errOut, "stop it before cloning (tierbench server stop --datadir "+src+")")
	code, out, errOut = runTierbench(t, "server", "clone", "--from", src, "--datadir", filepath.Join(src, "inside"))
	one("a copy inside the source", code, out, errOut, "is inside --from")
	code, out, errOut = runTierbench(t, "server", "clone", "--from", src, "--datadir", base, "--replace")
	one("a copy holding the source", code, out, errOut, "holds --from")

	if code, _, errOut := runTierbench(t, "server", "stop", "--datadir", src); code != 0 {
		t.Fatalf("server stop: exit %d: %s", code, errOut)
	}
	start := time.Now()
	code, out, errOut = runTierbench(t, "server", "clone", "--json", "--from", src, "--datadir", dst, "--memory", "256MiB", "--no-cgroup",
		"--set", "work_mem=3MB")
	if code != 0 {
		t.Fatalf("server clone: exit %d: %s", code, errOut)
	}
	t.Logf("clone and start in %v; stderr: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(errOut))
	m, keys := jsonKeys(t, out)
	if want := []string{"cloned_from", "datadir", "dsn", "engine", "listen", "pid", "port", "version"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("clone --json keys %v; want %v", keys, want)
	}
	var cloned serverDoc
	if err := json.Unmarshal([]byte(out), &cloned); err != nil {
		t.Fatal(err)
	}
	if cloned.Engine != "postgres" || cloned.DataDir != dst || cloned.ClonedFrom != src || cloned.Port == started.Port ||
		cloned.PID == 0 || !strings.Contains(cloned.DSN, "@127.0.0.1:") || m["already_running"] != nil {
		t.Errorf("clone --json = %s; want the copy in %s, from %s, on a port other than %d", out, dst, src, started.Port)
	}
	if !strings.Contains(errOut, "cloning "+src+" into "+dst) {
		t.Errorf("clone: stderr %q; want the progress line", errOut)
	}
	if got := pgQuery(ctx, t, cloned.DSN, "SELECT string_agg(v, ',') || ' ' || current_setting('work_mem') FROM cloned"); got != "from the source 3MB" {
		t.Errorf("the copy: %q; want the source's row and --set work_mem=3MB", got)
	}
	admin(ctx, t, cloned.DSN, "INSERT INTO cloned VALUES ('only in the copy')")
	// The source starts again beside its copy, on its own port.
	code, out, errOut = runTierbench(t, "server", "start", "--json", "--datadir", src)
	if code != 0 || !strings.Contains(out, `"port": `+itoa(started.Port)) {
		t.Errorf("the source again: exit %d, %s%s", code, out, errOut)
	}

	code, out, errOut = runTierbench(t, "server", "stop", "--datadir", src)
	if code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut = runTierbench(t, "server", "clone", "--from", src, "--datadir", dst)
	one("an existing copy", code, out, errOut, "add --replace to replace it")
	code, out, errOut = runTierbench(t, "server", "clone", "--from", src, "--datadir", dst, "--replace")
	one("a running copy", code, out, errOut, "stop it first")
	if code, _, errOut := runTierbench(t, "server", "stop", "--datadir", dst); code != 0 {
		t.Fatal(errOut)
	}
	// --replace: a fresh copy of the source, in text.
	code, out, errOut = runTierbench(t, "server", "clone", "--from", src, "--datadir", dst, "--replace")
	if code != 0 || !strings.Contains(out, "cloned "+src+" into "+dst+"\n") || !strings.Contains(out, "\ndsn: postgres://") {
		t.Fatalf("clone --replace: exit %d\n%s%s", code, out, errOut)
	}
	dsn := out[strings.Index(out, "dsn: ")+5 : len(out)-1]
	if got := pgQuery(ctx, t, dsn, "SELECT string_agg(v, ',') FROM cloned"); got != "from the source" {
		t.Errorf("the replaced copy holds %q; want the source's row alone", got)
	}
}

// pgQuery returns the one text value sql selects.
func pgQuery(ctx context.Context, t *testing.T, dsn, sql string) string {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}
