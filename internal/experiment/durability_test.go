package experiment_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/report"
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

// Three kill cycles on a new managed server: the run builds the schema,
// kills the postmaster under load three times, loses nothing, stores the
// cycles, and the report shows them; the server, restarted after each
// kill, is left running as the user's, not an orphan. This was the CLI's
// TestDurabilityManagedKill; `durability --json`'s keys and exit codes stay
// in internal/cli.
func TestRunDurabilityManagedKill(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	ctx := context.Background()
	base := pgtest.TempDir(t)
	dataDir := filepath.Join(base, "data")
	t.Cleanup(func() { server.Stop(context.Background(), dataDir, "immediate") })
	res := filepath.Join(base, "results")
	out, err := experiment.RunDurability(ctx, experiment.DurabilityConfig{Results: res, Managed: dataDir, Cycles: 3, Fault: "kill",
		VUs: 2, RunBeforeFault: 2 * time.Second, RecoverTimeout: time.Minute, Warehouses: 1, Rebuild: true}, experiment.Nop{})
	if err != nil {
		t.Fatal(err)
	}
	var doc durabilityDoc
	asDoc(t, out, &doc)
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
	if st, err := server.Status(ctx, dataDir); err != nil || !st.Running {
		t.Fatalf("the managed server is not running after the test: %+v, %v", st, err)
	}
	// Restarted after each kill, it is the user's again, not an orphan
	// (what `server status` shows).
	running, err := server.Running(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, rs := range running {
		if rs.DataDir == dataDir {
			listed = true
			if rs.Orphaned {
				t.Errorf("after the durability run the server is orphaned: %+v", rs)
			}
		}
	}
	if !listed {
		t.Fatalf("the managed server is not among the running ones: %+v", running)
	}

	_, steps := storedRun(t, res, doc.RunID)
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "cycle=1 cycle=2 cycle=3" {
		t.Fatalf("stored steps %q; want the 3 cycles", got)
	}
	html := filepath.Join(base, "report.html")
	w := writeReport(t, res, report.Options{Out: html})
	md, err := os.ReadFile(w.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## Durability") || !strings.Contains(string(md), "All 3 cycles passed") ||
		strings.Count(string(md), "| kill |") != 3 {
		t.Fatalf("the report's durability section:\n%s", md)
	}
}
