package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
)

// Bad durability flags are refused before anything starts.
func TestDurabilityBadInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "never")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--managed", dir, "--dsn", "postgres://u@127.0.0.1:1/db"}, "not both"},
		{[]string{"--managed", dir, "--fault", "command"}, "--fault-command"},
		{[]string{"--managed", dir, "--fault", "reboot"}, "kill, stop, restart, command"},
		{[]string{"--managed", dir, "--fault-command", "true"}, "only used with --fault command"},
		{[]string{"--managed", dir, "--cycles", "0"}, "--cycles"},
		{[]string{"--managed", dir, "--vus", "-1"}, "--vus"},
		{[]string{"--managed", dir, "--run-before-fault", "10ms"}, "at least 1s"},
		{[]string{"--managed", dir, "--recover-timeout", "soon"}, "--recover-timeout"},
		{[]string{"--dsn", "postgres://u@127.0.0.1:1/db", "--warehouses", "3"}, "--managed"},
	} {
		args := append([]string{"durability", "--results", dir}, tc.args...)
		code, _, errOut := runTierbench(t, args...)
		if code != 2 || !strings.HasPrefix(errOut, "tierbench: ") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 ||
			!strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, one line with %q", tc.args, code, errOut, tc.want)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Fatalf("%v created %s", tc.args, dir)
		}
	}
}

// The contract of `durability --json`, cheaply: exit 0 and one document
// with the keys scripts read, for the run, each cycle and the total. The
// fault is a no-op command on the shared server; what a real fault loses
// and finds is tested where the cycles run (internal/experiment,
// durability_test.go and mariadb_test.go).
func TestDurabilityJSON(t *testing.T) {
	t.Parallel()
	dsn := tpcctest.Database(t, 1)
	res := t.TempDir()
	code, out, errOut := runTierbench(t, "durability", "--json", "--dsn", dsn, "--cycles", "1", "--vus", "1", "--run-before-fault", "2s",
		"--fault", "command", "--fault-command", "true", "--recover-timeout", "30s", "--results", res)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	doc := hasKeys(t, "the document", object(t, "durability --json", out), "run_id", "status", "fault", "vus", "cycles", "total")
	if doc["status"] != "complete" || doc["fault"] != "command" {
		t.Errorf("status %v, fault %v; want complete and command", doc["status"], doc["fault"])
	}
	hasKeys(t, "a cycle", first(t, "cycles", doc["cycles"]), "cycle", "committed", "found", "lost", "excess", "excess_bound",
		"recovery_seconds", "consistency", "ok", "log")
	hasKeys(t, "the total", doc["total"], "cycles", "lost", "ok")
}
