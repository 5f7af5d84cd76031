package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

type durabilityDoc struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Fault  string `json:"fault"`
	Cycles []struct {
		Cycle           int     `json:"cycle"`
		Committed       int64   `json:"committed"`
		Found           int64   `json:"found"`
		Lost            int64   `json:"lost"`
		Excess          int64   `json:"excess"`
		ExcessBound     int64   `json:"excess_bound"`
		RecoverySeconds float64 `json:"recovery_seconds"`
		Consistency     bool    `json:"consistency"`
		OK              bool    `json:"ok"`
		Log             string  `json:"log"`
	} `json:"cycles"`
	Total struct {
		Cycles int   `json:"cycles"`
		Lost   int64 `json:"lost"`
		OK     bool  `json:"ok"`
	} `json:"total"`
}

// `durability --managed DIR --cycles 3 --fault kill` on a new managed
// server: it builds the schema, kills the postmaster under load three
// times, loses nothing, stores the cycles, and the report shows them.
func TestDurabilityManagedKill(t *testing.T) {
	pgtest.RequireBinaries(t)
	base := pgtest.TempDir(t)
	dataDir := filepath.Join(base, "data")
	t.Cleanup(func() { server.Stop(context.Background(), dataDir, "immediate") })
	res := filepath.Join(base, "results")
	code, out, errOut := runTierbench(t, "durability", "--managed", dataDir, "--cycles", "3", "--fault", "kill",
		"--vus", "2", "--run-before-fault", "2s", "--warehouses", "1", "--results", res, "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var doc durabilityDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not the JSON document: %v\n%s", err, out)
	}
	if doc.Status != "complete" || doc.Fault != "kill" || len(doc.Cycles) != 3 || doc.Total.Cycles != 3 || !doc.Total.OK || doc.Total.Lost != 0 {
		t.Fatalf("document: %+v", doc)
	}
	for _, c := range doc.Cycles {
		if !c.OK || c.Lost != 0 || c.Committed == 0 || c.Found != c.Committed || !c.Consistency || c.ExcessBound != 2 || c.RecoverySeconds <= 0 {
			t.Errorf("cycle %+v", c)
		}
		if fi, err := os.Stat(c.Log); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("success log %s: %v, %v", c.Log, fi, err)
		}
	}
	if st, err := server.Status(context.Background(), dataDir); err != nil || !st.Running {
		t.Fatalf("the managed server is not running after the test: %+v, %v", st, err)
	}
	// Restarted after each kill, it is the user's again, not an orphan.
	code, out, _ = runTierbench(t, "server", "status")
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, dataDir+":") {
			line = l
		}
	}
	if code != 0 || line == "" || strings.Contains(line, "orphaned") {
		t.Fatalf("server status after the durability run: exit %d, its line %q\n%s", code, line, out)
	}

	code, out, errOut = runTierbench(t, "results", "show", doc.RunID, "--results", res, "--json")
	if code != 0 || strings.Count(out, `"cycle=`) != 3 {
		t.Fatalf("results show: exit %d, %s\n%s", code, errOut, out)
	}
	html := filepath.Join(base, "report.html")
	if code, _, errOut = runTierbench(t, "report", "--results", res, "--out", html); code != 0 {
		t.Fatalf("report: exit %d, %s", code, errOut)
	}
	md, err := os.ReadFile(strings.TrimSuffix(html, ".html") + ".md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## Durability") || !strings.Contains(string(md), "All 3 cycles passed") ||
		strings.Count(string(md), "| kill |") != 3 {
		t.Fatalf("the report's durability section:\n%s", md)
	}
}

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
