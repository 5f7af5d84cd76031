package experiment_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/backup"
	"github.com/tierbench/tierbench/internal/driver"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/server/mariatest"
)

// A managed MariaDB with a one-warehouse schema, backed up and restored once
// physically (mariadb-backup, its data directory given) and once logically
// (tierbench-dump and tierbench-load, the backup kept) while TPC-C runs on
// it: both phases complete, each restored copy passes the consistency
// conditions and lies between the source's row counts before and after its
// backup, and the store holds the run with its engine and method. This was
// the CLI's TestBackupRunMariaDB.
func TestRunBackupMariaDB(t *testing.T) {
	t.Parallel()
	mariatest.RequireBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	base := mariatest.TempDir(t)
	info := tpcctest.MariaDB(t, ctx, 1)
	dataDir := info.DataDir
	password := strings.Split(strings.TrimPrefix(info.DSN, "mariadb://tierbench:"), "@")[0]
	res := filepath.Join(base, "results")

	// TPC-C beside both cycles, until they are done: open loop at 1,200
	// transactions a minute, which changes the tables throughout the
	// backups without two VUs saturating the host's cores.
	tctx, stopTPCC := context.WithCancel(ctx)
	defer stopTPCC()
	tpccDone := make(chan error, 1)
	go func() {
		_, err := experiment.RunTPCC(tctx, experiment.TPCCConfig{Record: experiment.Record{Results: filepath.Join(base, "tpcc-results")},
			DSN: info.DSN, VUs: []int{2}, Rates: []float64{1200}, Arrival: driver.ArrivalConstant, LateAfter: time.Second,
			Duration: 3 * time.Minute, Repeat: 1}, experiment.Nop{})
		var in *experiment.Interrupted
		if err != nil && !errors.As(err, &in) {
			tpccDone <- err
		}
		close(tpccDone)
	}()
	time.Sleep(2 * time.Second) // its workers connected and running

	for _, tc := range []struct {
		name            string
		cfg             experiment.BackupConfig
		method, restore string
	}{
		{name: "physical", method: "mariadb-backup", restore: "mariadb-backup"},
		{name: "logical", cfg: experiment.BackupConfig{Logical: true, Jobs: 3, Keep: true}, method: "tierbench-dump", restore: "tierbench-load"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := filepath.Join(base, "backups-"+tc.name)
			cfg := tc.cfg
			cfg.Results, cfg.Telemetry = res, experiment.DefaultTelemetry
			cfg.DSN, cfg.DataDir, cfg.Target, cfg.Cycles, cfg.Verify, cfg.Repeat = info.DSN, dataDir, target, 1, true, 1
			if cfg.Jobs == 0 {
				cfg.Jobs = 2 // the command line's default here: one a core
			}
			start := time.Now()
			result, err := experiment.RunBackup(ctx, cfg, experiment.Nop{})
			if err != nil {
				t.Fatalf("backup run: %v", err)
			}
			t.Logf("backup run, 1 cycle (%s): %v", tc.name, time.Since(start).Round(time.Millisecond))
			var d backupRunDoc
			out := asDoc(t, result, &d)
			if strings.Contains(out, password) {
				t.Error("the run's document shows the password")
			}
			if d.Status != "complete" || len(d.Cycles) != 1 || d.Cycles[0].Cycle != 1 || d.Cycles[0].Backup == nil || d.Cycles[0].Restore == nil {
				t.Fatalf("backup run: %s", out)
			}
			b, r := d.Cycles[0].Backup, d.Cycles[0].Restore
			for _, p := range []struct {
				doc           *backupPhaseDoc
				phase, method string
			}{{b, "backup", tc.method}, {r, "restore", tc.restore}} {
				if p.doc.Cycle != 1 || p.doc.Phase != p.phase || p.doc.Method != p.method || p.doc.Seconds <= 0 ||
					p.doc.Bytes < 10<<20 || p.doc.MBps <= 0 || p.doc.Host == nil {
					t.Errorf("%s phase: %+v", p.phase, p.doc)
				}
			}
			if !r.Verified || b.Verified {
				t.Errorf("verified: backup %v, restore %v; want the restore verified", b.Verified, r.Verified)
			}
			t.Logf("%s: backup %d bytes in %.2fs (%.0f MB/s); restore %.2fs (%.0f MB/s)", tc.name, b.Bytes, b.Seconds, b.MBps, r.Seconds, r.MBps)

			// The store: the run's engine and method, and its two steps.
			run, steps := storedRun(t, res, d.RunID)
			var p struct {
				DSN    string `json:"dsn"`
				Engine string `json:"engine"`
				Method string `json:"method"`
			}
			if err := json.Unmarshal(run.Params, &p); err != nil {
				t.Fatal(err)
			}
			if run.Kind != "backup" || run.Status != "complete" || len(steps) != 2 ||
				p.Engine != "mariadb" || p.Method != tc.method || strings.Contains(p.DSN, password) {
				t.Errorf("stored run: %+v, params %s, %d steps", run, run.Params, len(steps))
			}
			for i, want := range []string{"backup 1", "restore 1"} {
				var m backupPhaseDoc
				if err := json.Unmarshal(steps[i].Metrics, &m); err != nil {
					t.Fatal(err)
				}
				if steps[i].Name != want || m.Method != []string{tc.method, tc.restore}[i] {
					t.Errorf("step %d: %s %+v", i, steps[i].Name, m)
				}
			}

			// What is left in the target: nothing, or the kept dump.
			if tc.name == "physical" {
				if _, err := os.Stat(target); !os.IsNotExist(err) {
					t.Errorf("the target tierbench created is still there: %v", err)
				}
				return
			}
			for _, name := range []string{"cycle-1/tierbench-dump.json", "cycle-1/stock.0001.tsv", backup.MarkerFile} {
				if _, err := os.Stat(filepath.Join(target, name)); err != nil {
					t.Errorf("Keep: %v", err)
				}
			}
			if _, err := os.Stat(filepath.Join(target, "restore-1")); !os.IsNotExist(err) {
				t.Errorf("restored copy kept: %v", err)
			}
		})
	}
	stopTPCC()
	if err, failed := <-tpccDone; failed {
		t.Errorf("TPC-C beside the backups failed: %v", err)
	}
}
