package cli_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// Bad input is refused before anything is written: exit 2, one line.
func TestBackupRunRefuses(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	base := pgtest.TempDir(t)
	foreign := filepath.Join(base, "foreign")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(base, "results")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no target", []string{"--dsn", dsn}, "--target"},
		{"foreign target", []string{"--dsn", dsn, "--target", foreign, "--logical", "--verify=false"}, "not empty"},
		{"no cycles", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--cycles", "0"}, "--cycles"},
		{"bad interval", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--interval", "soon"}, "--interval"},
		{"repeat 0", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--repeat", "0"}, "--repeat 0 is out of range"},
		{"repeat -1", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--repeat", "-1"}, "--repeat -1 is out of range"},
		{"back to back", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--repeat", "2", "--back-to-back"}, "a restore needs its backup first"},
		{"negative noisy limit", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--noisy-steal", "-5"}, "--noisy-steal -5 is not a percentage"},
		{"foreign datadir", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--datadir", foreign, "--verify=false"}, "not a tierbench-managed"},
		{"no schema", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--logical"}, "--verify=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"backup", "run", "--results", res}, tc.args...)
			code, out, errOut := runTierbench(t, args...)
			if code != 2 || !strings.HasPrefix(errOut, "tierbench: ") || strings.Count(errOut, "\n") != 1 ||
				!strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line about %s", code, out, errOut, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "notes.txt")); string(b) != "mine" {
		t.Error("the foreign target was touched")
	}
	if entries, _ := os.ReadDir(foreign); len(entries) != 1 {
		t.Errorf("the foreign target has %d entries; want its one file", len(entries))
	}
	for _, p := range []string{filepath.Join(base, "t"), res} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("a refused run made %s", p)
		}
	}
}

// The contract of `backup run`, cheaply: the DSN from TIERBENCH_DSN, exit 0
// and one document with the keys scripts read (the cycles, their phases,
// the stats over the repetitions), no password in what it prints, and the
// run in the store as kind backup. ("verified" is there only when a
// restore was.) A logical backup of an empty database,
// unverified: what a backup and a restore measure and leave behind is
// tested where they run (internal/experiment, backup_test.go).
func TestBackupRunJSON(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	base := pgtest.TempDir(t)
	res := filepath.Join(base, "results")
	code, out, errOut := runTierbenchWith(t, map[string]string{"TIERBENCH_DSN": dsn}, strings.NewReader(""), "backup", "run", "--json", "--target", filepath.Join(base, "backups"), "--logical",
		"--verify=false", "--cycles", "1", "--repeat", "2", "--sample-interval", "200ms", "--results", res)
	if code != 0 {
		t.Fatalf("backup run: exit %d: %s", code, errOut)
	}
	doc := hasKeys(t, "the document", object(t, "backup run --json", out), "run_id", "status", "repeat", "cycles", "stats")
	if doc["status"] != "complete" || doc["repeat"] != 2.0 {
		t.Errorf("status %v, repeat %v; want complete and 2", doc["status"], doc["repeat"])
	}
	cycle := hasKeys(t, "a cycle", first(t, "cycles", doc["cycles"]), "cycle", "backup", "restore")
	for _, phase := range []string{"backup", "restore"} {
		hasKeys(t, phase, cycle[phase], "cycle", "phase", "method", "seconds", "bytes", "mbps", "host")
	}
	hasKeys(t, "stats of backup seconds", hasKeys(t, "stats of backup", hasKeys(t, "stats", doc["stats"], "backup", "restore")["backup"],
		"seconds", "mbps")["seconds"], "mean", "stddev", "n", "ci95_low", "ci95_high")
	if u, err := url.Parse(dsn); err == nil {
		if password, ok := u.User.Password(); ok && strings.Contains(out+errOut, password) {
			t.Error("the output shows the password")
		}
	}
	code, out, _ = runTierbench(t, "results", "show", doc["run_id"].(string), "--results", res, "--json")
	if code != 0 {
		t.Fatalf("results show: exit %d", code)
	}
	show := object(t, "results show --json", out)
	if run := hasKeys(t, "run", show["run"], "kind", "status", "params"); run["kind"] != "backup" || run["status"] != "complete" {
		t.Errorf("stored run: %s", out)
	}
}
