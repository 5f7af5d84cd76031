package experiment_test

// TPC-C and durability on MariaDB, and durability on a server found from
// its DSN, tested where RunTPCC and RunDurability are: these were the CLI's
// TestMariaDBTPCC, TestMariaDBDurabilityKill and TestDurabilityKillDSN.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/driver"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/mariatest"
)

// checkTPCC runs the consistency checks on the database at dsn (`tpcc
// check`, with --all when all).
func checkTPCC(t *testing.T, ctx context.Context, dsn string, all bool) {
	t.Helper()
	db, err := experiment.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check, err := db.CheckTPCC(ctx, engine.CheckOptions{All: all, Seed: uint64(time.Now().UnixNano())})
	if err != nil || !check.OK {
		t.Fatalf("consistency: %v %+v", err, check)
	}
}

// TPC-C on MariaDB: the checks pass after the build, a short run in each
// mode has every transaction type and the database's and the driver's
// New-Order counts agreeing, and the checks pass afterwards.
func TestRunTPCCMariaDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := mariatest.NewDatabase(t)
	tpcctest.Build(t, ctx, dsn, 2)
	checkTPCC(t, ctx, dsn, false)
	resultsDir := t.TempDir()
	for _, mode := range []string{engine.ModeRoutines, engine.ModeStatements} {
		t.Run(mode, func(t *testing.T) {
			// Open loop at 1,800 transactions a minute (120 measured, every
			// type in each of the 2 VUs' decks), not a saturating closed loop.
			res, err := runTPCC(t, ctx, resultsDir, experiment.TPCCConfig{DSN: dsn, Mode: mode, VUs: []int{2},
				Rates: []float64{1800}, Arrival: driver.ArrivalConstant, LateAfter: time.Second, RampUp: time.Second, Duration: 4 * time.Second})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			var d tpccDoc
			out := asDoc(t, res, &d)
			if d.Status != "complete" || len(d.Steps) != 1 || !d.NOPMAgree {
				t.Fatalf("run: %s", out)
			}
			s := d.Steps[0]
			for _, k := range []string{"new_order", "payment", "order_status", "delivery", "stock_level"} {
				tx := s.Txn[k]
				// A server that stalled (arrivals late or unserved) may
				// have served too few for a deck's rare types: a loaded CI
				// host's step had no Order-Status.
				if tx.Count == 0 && k != "new_order" && s.Late+s.Unserved > 0 {
					t.Logf("%s: none served; the server stalled (%d late, %d unserved)", k, s.Late, s.Unserved)
					continue
				}
				if tx.Count == 0 || tx.P50 <= 0 || tx.P50 > tx.P95 || tx.P95 > tx.P99 || tx.P99 > tx.Max {
					t.Errorf("%s: %+v", k, tx)
				}
			}
			if s.Errors != 0 || s.NOPM <= 0 || s.TPM <= 0 || s.ClientNOPM <= 0 || s.CPU <= 0 {
				t.Errorf("step numbers: %+v", s)
			}
			if s.DB["commits_per_s"] <= 0 || s.DB["cache_hit_pct"] <= 0 || s.Host["server_cpu_pct"] <= 0 {
				t.Errorf("step telemetry: db %v, host %v", s.DB, s.Host)
			}
			diff := s.NOPMCheck.Database - s.NOPMCheck.Client
			if diff > s.NOPMCheck.Bound || -diff > s.NOPMCheck.Bound || s.NOPMCheck.Bound != 2 {
				t.Errorf("database committed %d New-Orders, driver saw %d (bound %d)", s.NOPMCheck.Database, s.NOPMCheck.Client, s.NOPMCheck.Bound)
			}
			// TPM is Com_commit + Com_rollback: one per business
			// transaction in both modes (docs/tpcc.md), so the database
			// and the driver agree but for the transactions in flight at
			// the edges and tierbench's own readings.
			db, client := float64(s.TPM)*s.Seconds/60, float64(s.ClientTPM)*s.Seconds/60
			if db < client-4 || db > client+4+float64(s.Retries)+2*s.Seconds {
				t.Errorf("the database counted %.0f transactions, the driver %.0f (%d retried), in %.1f s", db, client, s.Retries, s.Seconds)
			}
			checkTPCC(t, ctx, dsn, true)
			// The stored run says which engine it ran on (`results show`).
			run, _ := storedRun(t, resultsDir, d.RunID)
			if !strings.Contains(string(run.Params), `"engine":"mariadb"`) {
				t.Errorf("stored params %s; want engine mariadb", run.Params)
			}
		})
	}
	// A rate well below capacity is held, here in statements mode
	// (PostgreSQL's, in routines mode, is TestRunTPCCRate).
	t.Run("rate", func(t *testing.T) {
		const rate = 3000
		res, err := runTPCC(t, ctx, resultsDir, experiment.TPCCConfig{DSN: dsn, Mode: engine.ModeStatements, VUs: []int{4},
			Rates: []float64{rate}, Arrival: driver.ArrivalConstant, LateAfter: time.Second, RampUp: time.Second, Duration: 6 * time.Second})
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		checkHeldRate(t, res, rate)
	})
}

// stderrTo points this process's standard error (the file descriptor, so
// that what a library set up at init writes is caught too) at a file of
// the test's until the returned function restores it, and returns what
// was written meanwhile.
func stderrTo(t *testing.T) func() string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	saved, err := unix.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(int(f.Fd()), 2); err != nil {
		t.Fatal(err)
	}
	return func() string {
		unix.Dup2(saved, 2)
		unix.Close(saved)
		f.Close()
		b, _ := os.ReadFile(f.Name())
		return string(b)
	}
}

// SIGKILL of a managed mariadbd under load three times, recovery, and every
// acknowledged New-Order found; the driver's own log, which its connections
// broken by the kills would write, reaches no standard error.
func TestRunDurabilityMariaDBKill(t *testing.T) {
	t.Parallel()
	mariatest.RequireBinaries(t)
	base := mariatest.TempDir(t)
	dataDir := filepath.Join(base, "data")
	t.Cleanup(func() { server.Stop(context.Background(), dataDir, "immediate") })
	restore := stderrTo(t)
	out, err := experiment.RunDurability(context.Background(), experiment.DurabilityConfig{Results: filepath.Join(base, "results"),
		Managed: dataDir, Engine: "mariadb", Cycles: 3, Fault: "kill", VUs: 2, RunBeforeFault: 2 * time.Second,
		RecoverTimeout: time.Minute, Warehouses: 1, Rebuild: true}, experiment.Nop{})
	if errOut := restore(); strings.Contains(errOut, "[mysql]") {
		t.Errorf("the driver's own log reached stderr:\n%s", errOut)
	}
	if err != nil {
		t.Fatal(err)
	}
	var doc durabilityDoc
	asDoc(t, out, &doc)
	if doc.Status != "complete" || len(doc.Cycles) != 3 || !doc.Total.OK || doc.Total.Lost != 0 {
		t.Fatalf("document: %+v", doc)
	}
	for _, c := range doc.Cycles {
		if !c.OK || c.Lost != 0 || c.Committed == 0 || c.Found != c.Committed || !c.Consistency || c.RecoverySeconds <= 0 {
			t.Errorf("cycle %+v", c)
		}
	}
	if st, err := server.Status(context.Background(), dataDir); err != nil || !st.Running || st.Engine != "mariadb" {
		t.Fatalf("the managed MariaDB is not running after the test: %+v, %v", st, err)
	}
}

// Durability against a DSN on a server tierbench did not start: the run
// finds the server's process from what the server says of itself
// (PostgreSQL: its backend's parent; MariaDB: @@pid_file in @@datadir) and
// kills it; a supervisor (here a goroutine, elsewhere systemd) starts it
// again with a new PID, found again before the next fault, and no
// acknowledged New-Order is lost. Each engine's server is its own, so the
// two run side by side.
func TestRunDurabilityKillDSN(t *testing.T) {
	t.Parallel()
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		testDurabilityKillDSN(t, tpcctest.Postgres(t, context.Background(), 1))
	})
	t.Run("mariadb", func(t *testing.T) {
		t.Parallel()
		testDurabilityKillDSN(t, tpcctest.MariaDB(t, context.Background(), 1))
	})
}

// testDurabilityKillDSN runs the test on the managed server of info, which
// holds a one-warehouse build.
func testDurabilityKillDSN(t *testing.T, info server.Info) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var restarts sync.WaitGroup
	restarts.Add(1)
	started := 0
	go func() {
		defer restarts.Done()
		for ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			if st, err := server.Status(ctx, info.DataDir); err == nil && !st.Running && ctx.Err() == nil {
				if _, err := server.Start(ctx, server.Options{DataDir: info.DataDir, KeepConfig: true}); err == nil {
					started++
				}
			}
		}
	}()
	out, err := experiment.RunDurability(ctx, experiment.DurabilityConfig{Results: t.TempDir(), DSN: info.DSN, Cycles: 2, Fault: "kill",
		VUs: 2, RunBeforeFault: 2 * time.Second, RecoverTimeout: 60 * time.Second}, experiment.Nop{})
	cancel()
	restarts.Wait()
	if err != nil {
		t.Fatal(err)
	}
	var doc durabilityDoc
	asDoc(t, out, &doc)
	if doc.Status != "complete" || len(doc.Cycles) != 2 || !doc.Total.OK || doc.Total.Lost != 0 || started != 2 {
		t.Fatalf("document %+v; the supervisor restarted the server %d times, want 2", doc, started)
	}
}
