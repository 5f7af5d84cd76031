package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/backup"
	"github.com/tierbench/tierbench/internal/cli"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/mariatest"
)

// A managed MariaDB with a one-warehouse schema, backed up and restored once
// physically (mariadb-backup, --datadir given) and once logically
// (tierbench-dump and tierbench-load, the backup kept) while TPC-C runs on
// it: both phases complete, each restored copy passes the consistency
// conditions and lies between the source's row counts before and after its
// backup, and the store holds the run with its engine and method.
func TestBackupRunMariaDB(t *testing.T) {
	mariatest.RequireBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	base := mariatest.TempDir(t)
	dataDir := filepath.Join(base, "data")
	t.Cleanup(func() { server.Stop(context.Background(), dataDir, "immediate") })
	info, err := server.Start(ctx, server.Options{Engine: "mariadb", DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	buildSchema(t, info.DSN, 1)
	password := strings.Split(strings.TrimPrefix(info.DSN, "mariadb://tierbench:"), "@")[0]
	res := filepath.Join(base, "results")

	// TPC-C beside both cycles, until they are done.
	tctx, stopTPCC := context.WithCancel(ctx)
	defer stopTPCC()
	tpccDone := make(chan string, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		code := cli.Execute(tctx, []string{"tpcc", "run", "--dsn", info.DSN, "--vus", "2", "--rampup", "0s", "--duration", "3m",
			"--results", filepath.Join(base, "tpcc-results")}, &stdout, &stderr)
		if code != cli.ExitOK && code != cli.ExitInterrupted {
			tpccDone <- stderr.String()
		}
		close(tpccDone)
	}()
	time.Sleep(2 * time.Second) // its workers connected and running

	for _, tc := range []struct {
		name            string
		args            []string
		method, restore string
	}{
		{name: "physical", method: "mariadb-backup", restore: "mariadb-backup"},
		{name: "logical", args: []string{"--logical", "--jobs", "3", "--keep"}, method: "tierbench-dump", restore: "tierbench-load"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := filepath.Join(base, "backups-"+tc.name)
			args := append([]string{"backup", "run", "--json", "--dsn", info.DSN, "--datadir", dataDir, "--target", target,
				"--cycles", "1", "--results", res}, tc.args...)
			start := time.Now()
			code, out, errOut := runTierbench(t, args...)
			if code != 0 {
				t.Fatalf("backup run: exit %d: %s", code, errOut)
			}
			t.Logf("backup run --cycles 1 (%s): %v", tc.name, time.Since(start).Round(time.Millisecond))
			if strings.Contains(out+errOut, password) {
				t.Error("the output shows the password")
			}
			var d backupRunDoc
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatalf("backup run --json: %v\n%s", err, out)
			}
			if d.Status != "complete" || len(d.Cycles) != 1 || d.Cycles[0].Cycle != 1 || d.Cycles[0].Backup == nil || d.Cycles[0].Restore == nil {
				t.Fatalf("backup run --json: %s", out)
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
			code, out, _ = runTierbench(t, "results", "show", d.RunID, "--results", res, "--json")
			if code != 0 {
				t.Fatalf("results show: exit %d", code)
			}
			var show struct {
				Run struct {
					Kind   string `json:"kind"`
					Status string `json:"status"`
					Params struct {
						DSN    string `json:"dsn"`
						Engine string `json:"engine"`
						Method string `json:"method"`
					} `json:"params"`
				} `json:"run"`
				Steps []struct {
					Name    string         `json:"name"`
					Metrics backupPhaseDoc `json:"metrics"`
				} `json:"steps"`
			}
			if err := json.Unmarshal([]byte(out), &show); err != nil {
				t.Fatal(err)
			}
			p := show.Run.Params
			if show.Run.Kind != "backup" || show.Run.Status != "complete" || len(show.Steps) != 2 ||
				p.Engine != "mariadb" || p.Method != tc.method || strings.Contains(p.DSN, password) {
				t.Errorf("stored run: %s", out)
			}
			for i, want := range []string{"backup 1", "restore 1"} {
				if st := show.Steps[i]; st.Name != want || st.Metrics.Method != []string{tc.method, tc.restore}[i] {
					t.Errorf("step %d: %+v", i, st)
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
					t.Errorf("--keep: %v", err)
				}
			}
			if _, err := os.Stat(filepath.Join(target, "restore-1")); !os.IsNotExist(err) {
				t.Errorf("restored copy kept: %v", err)
			}
		})
	}
	stopTPCC()
	if errOut, failed := <-tpccDone; failed {
		t.Errorf("TPC-C beside the backups failed: %s", errOut)
	}
}
