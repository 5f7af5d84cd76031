package experiment_test

// What a TPC-C run measures, stores and groups, tested here where RunTPCC
// is rather than through `tpcc run` in internal/cli: these were the CLI's
// TestTPCCRunModes, TestTPCCRunAudit, TestTPCCRunSurvivesServerRestart,
// TestTPCCRunRepeat and TestTPCCRunNoisy. Their assertions read the run's
// document as `tpcc run --json` prints it (the result marshalled), so they
// stay as they were; the CLI keeps a cheap check of that document's shape.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/driver"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/proctest"
	"github.com/tierbench/tierbench/internal/report"
	"github.com/tierbench/tierbench/internal/report/reporttest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/stored"
)

// tpccDoc is a TPC-C run's document as `tpcc run --json` prints it.
type tpccDoc struct {
	RunID     string `json:"run_id"`
	Status    string `json:"status"`
	NOPMAgree bool   `json:"nopm_agree"`
	Steps     []struct {
		VUs        int     `json:"vus"`
		TPM        int64   `json:"tpm"`
		NOPM       int64   `json:"nopm"`
		ClientTPM  int64   `json:"client_tpm"`
		ClientNOPM int64   `json:"client_nopm"`
		Errors     int64   `json:"errors"`
		Reconnects int64   `json:"reconnects"`
		CPU        float64 `json:"client_cpu_us_per_txn"`
		Seconds    float64 `json:"measured_seconds"`
		Retries    int64   `json:"retries"`
		Late       int64   `json:"late"`     // open loop only
		Unserved   int64   `json:"unserved"` // open loop only
		Txn        map[string]struct {
			Count int64   `json:"count"`
			P50   float64 `json:"p50_ms"`
			P95   float64 `json:"p95_ms"`
			P99   float64 `json:"p99_ms"`
			Max   float64 `json:"max_ms"`
		} `json:"txn"`
		NOPMCheck struct {
			Database int64 `json:"database_new_orders"`
			Client   int64 `json:"client_committed_new_orders"`
			Bound    int64 `json:"bound"`
			OK       bool  `json:"ok"`
		} `json:"nopm_check"`
		Host   map[string]float64 `json:"host"`
		Device map[string]float64 `json:"device"`
		DB     map[string]float64 `json:"db"`
		Audit  []struct {
			Name    string  `json:"name"`
			Value   float64 `json:"value"`
			Samples int64   `json:"samples"`
			Verdict string  `json:"verdict"`
		} `json:"audit"`
	} `json:"steps"`
}

// runTPCC runs TPC-C into the store in dir, with the command line's
// telemetry unless cfg has its own.
func runTPCC(t *testing.T, ctx context.Context, dir string, cfg experiment.TPCCConfig) (*experiment.TPCCResult, error) {
	t.Helper()
	cfg.Record.Results = dir
	if cfg.Repeat == 0 {
		cfg.Repeat = 1
	}
	if cfg.Record.Telemetry.Interval == 0 {
		cfg.Record.Telemetry = experiment.DefaultTelemetry
	}
	return experiment.RunTPCC(ctx, cfg, experiment.Nop{})
}

// A short run in each mode: every transaction type runs, the database's and
// the driver's New-Order counts agree within the in-flight bound, and the
// consistency conditions hold afterwards.
func TestRunTPCCModes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := tpcctest.Database(t, 2)
	// The database's commit counter also counts autovacuum's transactions,
	// which the driver never sees: a freshly loaded table is due for an
	// insert-triggered vacuum, and a worker that came in a measured
	// interval added about 40 (CI). Autovacuum stays off on these tables, so
	// the counts below compare the driver with the database alone.
	noAutovacuum(t, ctx, dsn)
	resultsDir := t.TempDir()
	for _, mode := range []string{engine.ModeRoutines, engine.ModeStatements} {
		t.Run(mode, func(t *testing.T) {
			runDSN := dsn
			if mode == engine.ModeStatements {
				// Plans that use parallel workers wherever they can.
				runDSN += "&options=" + strings.ReplaceAll(url.QueryEscape("-c plan_cache_mode=force_generic_plan -c parallel_setup_cost=0"+
					" -c parallel_tuple_cost=0 -c min_parallel_table_scan_size=0 -c min_parallel_index_scan_size=0"), "+", "%20")
				if !strings.Contains(dsn, "?") {
					runDSN = strings.Replace(runDSN, "&options=", "?options=", 1)
				}
			}
			// Open loop at 1,800 transactions a minute, served by 2 VUs:
			// 120 measured transactions, each VU's 23-card deck dealt more
			// than twice (every type), New-Orders in every second, at a
			// few % of a core where a closed loop saturates two.
			res, err := runTPCC(t, ctx, resultsDir, experiment.TPCCConfig{DSN: runDSN, Mode: mode,
				VUs: []int{2}, Rates: []float64{1800}, Arrival: driver.ArrivalConstant, LateAfter: time.Second, RampUp: time.Second, Duration: 4 * time.Second})
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
				if tx.Count == 0 || tx.P50 <= 0 || tx.P50 > tx.P95 || tx.P95 > tx.P99 || tx.P99 > tx.Max {
					t.Errorf("%s: %+v", k, tx)
				}
			}
			if s.Errors != 0 || s.NOPM <= 0 || s.TPM <= 0 || s.ClientNOPM <= 0 || s.CPU <= 0 {
				t.Errorf("step numbers: %+v", s)
			}
			// Telemetry of the step: the host, the devices under the
			// server's data directory, and PostgreSQL's own commit rate.
			if idle, ok := s.Host["cpu_idle_pct"]; !ok || idle < 0 || idle > 100 || s.Host["server_cpu_pct"] <= 0 {
				t.Errorf("step host telemetry: %v", s.Host)
			}
			if _, ok := s.Device["w_iops"]; !ok {
				t.Errorf("step device telemetry: %v", s.Device)
			}
			if s.DB["commits_per_s"] <= 0 || s.DB["cache_hit_pct"] <= 0 {
				t.Errorf("step database telemetry: %v", s.DB)
			}
			diff := s.NOPMCheck.Database - s.NOPMCheck.Client
			if diff > s.NOPMCheck.Bound || -diff > s.NOPMCheck.Bound || s.NOPMCheck.Bound != 2 {
				t.Errorf("database committed %d New-Orders, driver saw %d (bound %d)", s.NOPMCheck.Database, s.NOPMCheck.Client, s.NOPMCheck.Bound)
			}
			// The database's transaction count agrees with the driver's: it
			// may count the transactions in flight at the end (2), the
			// attempts rolled back and retried (serialization failures,
			// deadlocks) and the readings on tierbench's own connections
			// (the counters' and telemetry's database statistics, one each a
			// second, and a few more counter readings at each edge while
			// the VUs settle: 16.4 in all once, on a busy CI host, where 11
			// to 14 are usual), and lose one to each truncation to a per-minute
			// rate; before the VUs' connections were asked to publish their
			// counters, it missed the last second's. Statements mode runs
			// with parallel plans made cheap: unless the driver turns
			// parallel query off, its statements launch workers, and each
			// worker's own commits count.
			db, client := float64(s.TPM)*s.Seconds/60, float64(s.ClientTPM)*s.Seconds/60
			t.Logf("the database counted %.1f transactions more than the driver in %.1f s", db-client, s.Seconds)
			if db < client-2 || db > client+2+float64(s.Retries)+2*s.Seconds+10 {
				t.Errorf("the database counted %.0f transactions, the driver %.0f (%d retried), in %.1f s", db, client, s.Retries, s.Seconds)
			}
			// The consistency conditions hold after the run (`tpcc check --all`).
			checkDB, err := experiment.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			check, err := checkDB.CheckTPCC(ctx, engine.CheckOptions{All: true, Seed: uint64(time.Now().UnixNano())})
			checkDB.Close()
			if err != nil || !check.OK {
				t.Fatalf("consistency after a %s run: %v %+v", mode, err, check)
			}
			// The run is in the store with its step.
			run, steps := storedRun(t, resultsDir, d.RunID)
			if run.Status != results.StatusComplete || len(steps) != 1 || steps[0].Name != "rate=1800" {
				t.Fatalf("stored run %s with steps %+v; want complete with its step rate=1800", run.Status, steps)
			}
			checkSecondSeries(t, resultsDir, d.RunID, float64(s.ClientTPM))
		})
	}
}

// checkSecondSeries checks a one-step run's per-second series in the
// store: a point each second, the driver's rate near the step's (the
// seconds of the ramp-up included), New-Order's percentiles in order.
func checkSecondSeries(t *testing.T, dir, runID string, clientTPM float64) {
	t.Helper()
	series := stepSeries(t, dir, runID, "client_tpm", "new_order.p50_ms", "new_order.p95_ms", "new_order.p99_ms")
	rates := series["client_tpm"]
	if len(rates) < 4 {
		t.Fatalf("%d seconds of client_tpm, want at least 4", len(rates))
	}
	var sum float64
	for _, p := range rates {
		sum += p.Value
	}
	if mean := sum / float64(len(rates)); mean < clientTPM/2 || mean > clientTPM*2 {
		t.Errorf("per-second client_tpm averages %.0f, the step's is %.0f", mean, clientTPM)
	}
	for i := range rates {
		p50, p95, p99 := series["new_order.p50_ms"][i].Value, series["new_order.p95_ms"][i].Value, series["new_order.p99_ms"][i].Value
		if p50 <= 0 || p50 > p95 || p95 > p99 {
			t.Errorf("second %d: New-Order p50/p95/p99 %.3f/%.3f/%.3f ms", i+1, p50, p95, p99)
		}
	}
}

// Over a run of more than 10,000 transactions the input audit (5.5.1.5) is
// judged where it has 10,000 samples and passes; the shares with fewer
// samples are inside the spec's bounds all the same (they are dealt from
// decks, not drawn independently). A busy host runs fewer transactions a
// second: the run is then made longer, by what the first one's rate says
// it needs (with a quarter to spare), until it has its 10,000. The
// transactions are offered at a fixed rate (500 a second) rather than as
// fast as they go: a closed loop would take the host's cores from the
// tests beside it for as long as it runs, and the audit counts the inputs
// either way.
func TestRunTPCCAudit(t *testing.T) {
	t.Parallel()
	dsn := tpcctest.Database(t, 2)
	var d tpccDoc
	var total int64
	for duration := 25 * time.Second; total < 10000; {
		if duration > 4*time.Minute {
			t.Fatalf("only %d transactions in the last run: at that rate 10,000 take %v, too long to test the audit", total, duration)
		}
		res, err := runTPCC(t, context.Background(), t.TempDir(), experiment.TPCCConfig{DSN: dsn, VUs: []int{4}, Duration: duration,
			Rates: []float64{30000}, Arrival: driver.ArrivalConstant, LateAfter: time.Second})
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		d = tpccDoc{}
		asDoc(t, res, &d)
		total = 0
		for _, tx := range d.Steps[0].Txn {
			total += tx.Count
		}
		t.Logf("%d transactions in %v", total, duration)
		if total < 10000 {
			duration = time.Duration(float64(duration) * 12500 / float64(max(total, 1))).Round(time.Second)
		}
	}
	s := d.Steps[0]
	judged := 0
	for _, a := range s.Audit {
		if a.Verdict == "fail" || (a.Samples >= 10000 && a.Verdict != "pass") {
			t.Errorf("audit %s = %.3f over %d samples: %s", a.Name, a.Value, a.Samples, a.Verdict)
		}
		if a.Verdict == "pass" {
			judged++
		}
		if a.Verdict == "not-judged" && a.Samples >= 1000 {
			if bounds, ok := auditBounds[a.Name]; ok && (a.Value < bounds[0] || a.Value > bounds[1]) {
				t.Errorf("audit %s = %.3f over %d samples, outside %v", a.Name, a.Value, a.Samples, bounds)
			}
		}
	}
	if judged == 0 {
		t.Fatalf("no audit item judged over %d transactions: %+v", total, s.Audit)
	}
}

var auditBounds = map[string][2]float64{
	"new_order_rollbacks_pct": {0.9, 1.1}, "lines_per_order": {9.5, 10.5}, "remote_order_lines_pct": {0.95, 1.05},
	"remote_payments_pct": {14, 16}, "payment_by_name_pct": {57, 63}, "order_status_by_name_pct": {57, 63},
}

// Killing the server mid-run: the virtual users reconnect once it is back
// and the run completes, with the reconnects counted. The server's
// recovery discards its transaction counters; the step's TPM is counted on
// through that reset, not taken from a count that went back. Most of it is
// waiting on the run's clock, so it runs beside the other tests, paced at
// 3,000 TPM (a closed loop spent two cores for its 12 s).
func TestRunTPCCSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	ctx := context.Background()
	info := tpcctest.Postgres(t, ctx, 1)
	dir := info.DataDir

	done := make(chan struct{})
	var res *experiment.TPCCResult
	var runErr error
	resDir := t.TempDir()
	go func() {
		defer close(done)
		res, runErr = runTPCC(t, ctx, resDir, experiment.TPCCConfig{DSN: info.DSN, VUs: []int{2}, Duration: 12 * time.Second,
			Rates: []float64{3000}, Arrival: driver.ArrivalConstant, LateAfter: time.Second})
	}()
	time.Sleep(3 * time.Second)
	if _, err := server.Stop(ctx, dir, "immediate"); err != nil { // like a crash: no shutdown checkpoint
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if _, err := server.Start(ctx, server.Options{DataDir: dir}); err != nil {
		t.Fatal(err)
	}
	<-done
	if runErr != nil {
		t.Fatalf("run across a restart: %v", runErr)
	}
	var d tpccDoc
	out := asDoc(t, res, &d)
	s := d.Steps[0]
	if s.Reconnects < 2 || s.Txn["new_order"].Count == 0 {
		t.Fatalf("reconnects %d, new orders %d: %s", s.Reconnects, s.Txn["new_order"].Count, out)
	}
	// What it misses is the transactions from the last reading before the
	// crash to the first after the restart: a few seconds of the 12.
	if st := res.Steps[0]; st.CountersReset < 1 || float64(st.TPM) < 0.5*float64(st.ClientTPM) || float64(st.TPM) > 1.05*float64(st.ClientTPM) {
		t.Errorf("TPM %d against the client's %d, %d counter resets; want the reset seen and TPM near the client's", st.TPM, st.ClientTPM, st.CountersReset)
	} else {
		t.Logf("TPM %d against the client's %d across %d counter reset", st.TPM, st.ClientTPM, st.CountersReset)
	}
	for _, p := range stepSeries(t, resDir, res.RunID, "tpm")["tpm"] {
		if p.Value < 0 {
			t.Errorf("a second's TPM of %.0f at %s: the count went back", p.Value, p.T.Format(time.TimeOnly))
		}
	}

	// A server that stops for good 3 s into the interval: the step's end
	// cannot be read, and it is kept, ended at the last reading that came
	// back, with the client's counts as they were then.
	const killAt = 3 * time.Second
	go func() {
		time.Sleep(killAt)
		if _, err := server.Stop(ctx, dir, "immediate"); err != nil {
			t.Error(err)
		}
	}()
	res, runErr = runTPCC(t, ctx, resDir, experiment.TPCCConfig{DSN: info.DSN, VUs: []int{2}, Duration: 6 * time.Second,
		Rates: []float64{3000}, Arrival: driver.ArrivalConstant, LateAfter: time.Second})
	if runErr == nil || !strings.Contains(runErr.Error(), "failed after 0 finished steps and the first") {
		t.Fatalf("run whose server stopped: %v; want it failed, naming the part of its step it kept", runErr)
	}
	if len(res.Steps) != 1 {
		t.Fatalf("%d steps; want the one cut short", len(res.Steps))
	}
	lost := res.Steps[0]
	// The readings come a second apart: the last is 1 to 2 s before the stop.
	if !lost.Interrupted || !lost.ServerLost || lost.Seconds < 0.5 || lost.Seconds > killAt.Seconds() {
		t.Errorf("interrupted %v, server lost %v, %.2f s measured; want both, over less than the %s before the stop",
			lost.Interrupted, lost.ServerLost, lost.Seconds, killAt)
	}
	// Counted at the reading, the client's New-Orders agree with the
	// database's; counted to the end, they were a second's more.
	if !lost.NOPMCheck.OK || lost.NOPMCheck.Client == 0 {
		t.Errorf("NOPM check %+v; want the client's and the database's New-Orders to agree at the last reading", lost.NOPMCheck)
	}
	t.Logf("kept %.2f s of the step: TPM %d (client %d), NOPM %d (client %d), %d errors", lost.Seconds, lost.TPM, lost.ClientTPM, lost.NOPM, lost.ClientNOPM, lost.Errors)
	// TPM counts what the server had published by the reading, which
	// can be a second's less, never more.
	if lost.TPM <= 0 || float64(lost.TPM) > 1.05*float64(lost.ClientTPM) || lost.Errors != 0 {
		t.Errorf("TPM %d against the client's %d, %d errors; want some, at most the client's, and no errors from after the reading",
			lost.TPM, lost.ClientTPM, lost.Errors)
	}
	// Arrivals still queued at the reading, and not yet late, are those
	// of a server keeping pace as the knee counts them (a busy host's
	// server once held 26 of the 101 so, none late).
	want := 3000 * lost.Seconds / 60
	if o := lost.OpenLoop; o == nil || math.Abs(float64(o.Arrivals)-want) > 2 || o.Unserved-o.WaitingAtEnd > 2 {
		t.Errorf("open loop %+v; want about %.0f arrivals in %.2f s, all served or queued and not yet late", o, want, lost.Seconds)
	}
	run, steps := storedRun(t, resDir, res.RunID)
	var kept stored.TPCCStep
	if len(steps) != 1 || json.Unmarshal(steps[0].Metrics, &kept) != nil || !kept.ServerLost {
		t.Errorf("stored: run %s with %d steps; want the step kept, marked server_lost", run.Status, len(steps))
	}
}

// noAutovacuum turns autovacuum off on the TPC-C tables at dsn, so that
// the database's commit counter counts the driver's transactions alone.
func noAutovacuum(t *testing.T, ctx context.Context, dsn string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `DO $$ DECLARE r record; BEGIN
		FOR r IN SELECT c.oid::regclass AS t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		         WHERE c.relkind = 'r' AND n.nspname = current_schema() LOOP
		  EXECUTE format('ALTER TABLE %s SET (autovacuum_enabled = off)', r.t);
		END LOOP; END $$`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
}

// stat is a figure's {"mean","stddev","n","ci95_low","ci95_high"}.
type stat struct {
	Mean   float64  `json:"mean"`
	Stddev float64  `json:"stddev"`
	N      int      `json:"n"`
	Low    *float64 `json:"ci95_low"`
	High   *float64 `json:"ci95_high"`
}

// TestRunTPCCRepeat: 2 VU counts, 3 repetitions each, interleaved. The
// document has one step per VU count with n = 3 and an interval around
// the mean NOPM, which the step's nopm key holds; its repetitions are the
// steps as they ran; the store keeps all six, in the order 1,2,1,2,1,2.
// Its report draws error bars and opens in a browser. BackToBack keeps
// each rate's repetitions together, and the report of two such runs
// compares them rate by rate.
func TestRunTPCCRepeat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := tpcctest.Database(t, 1)
	res := t.TempDir()
	repeated := func(backToBack bool) *experiment.TPCCResult {
		t.Helper()
		out, err := runTPCC(t, ctx, res, experiment.TPCCConfig{DSN: dsn, VUs: []int{1, 2}, Repeat: 3, BackToBack: backToBack,
			Duration: time.Second})
		if err != nil {
			t.Fatalf("run (back to back %v): %v", backToBack, err)
		}
		return out
	}
	var d struct {
		RunID  string `json:"run_id"`
		Repeat int    `json:"repeat"`
		Steps  []struct {
			VUs         int             `json:"vus"`
			NOPM        int64           `json:"nopm"`
			Stats       map[string]stat `json:"stats"`
			Pooled      map[string]any  `json:"txn_pooled"`
			Repetitions []struct {
				Index      int   `json:"index"`
				VUs        int   `json:"vus"`
				Repetition int   `json:"repetition"`
				NOPM       int64 `json:"nopm"`
			} `json:"repetitions"`
		} `json:"steps"`
	}
	out := asDoc(t, repeated(false), &d)
	if d.Repeat != 3 || len(d.Steps) != 2 {
		t.Fatalf("repeat %d, %d steps; want 3 and 2:\n%s", d.Repeat, len(d.Steps), out)
	}
	for i, s := range d.Steps {
		n := s.Stats["nopm"]
		if s.VUs != []int{1, 2}[i] || n.N != 3 || n.Low == nil || n.High == nil || !(*n.Low <= n.Mean && n.Mean <= *n.High) ||
			s.NOPM != int64(math.Round(n.Mean)) {
			t.Errorf("step %d: %d VUs, nopm %d, stats %+v", i, s.VUs, s.NOPM, n)
		}
		var sum int64
		for r, rep := range s.Repetitions {
			sum += rep.NOPM
			if rep.VUs != s.VUs || rep.Repetition != r+1 || rep.Index != 2*r+i {
				t.Errorf("%d VUs, repetition %d: %+v; want index %d", s.VUs, r+1, rep, 2*r+i)
			}
		}
		if len(s.Repetitions) != 3 || math.Abs(float64(sum)/3-n.Mean) > 1e-6 {
			t.Errorf("%d VUs: %d repetitions summing to %d NOPM, mean %v", s.VUs, len(s.Repetitions), sum, n.Mean)
		}
		if p95 := s.Stats["new_order.p95_ms"]; p95.N != 3 || p95.Mean <= 0 || s.Pooled["new_order"] == nil {
			t.Errorf("%d VUs: New-Order p95 %+v, pooled %v", s.VUs, p95, s.Pooled["new_order"])
		}
	}
	if got := storedVUs(t, res, d.RunID); got != "1,2,1,2,1,2" {
		t.Errorf("stored steps' VUs %s; want 1,2,1,2,1,2", got)
	}

	// The report of the run draws the repetitions' intervals as error bars
	// and says so, and a browser opens it cleanly.
	dir := t.TempDir()
	htmlPath := filepath.Join(dir, "one", "report.html")
	writeReport(t, res, report.Options{Runs: []string{d.RunID}, Out: htmlPath})
	html, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "Error bars span the 95% confidence interval of the mean over the repetitions") {
		t.Error("the report's by-VU charts do not say they draw error bars")
	}
	reporttest.CheckInBrowser(t, htmlPath, 8, filepath.Join(reporttest.ArtifactDir(t), "report-repeat.png"))

	// Two open-loop runs of the same workload, each rate's repetitions
	// back to back. The report compares them at the same offered rate:
	// both served what arrived, so their NOPM is the rate's and the
	// verdict says so, and it states the ratio of their New-Order p99s.
	// (Closed-loop runs compared here measured the other tests' load
	// beside one of them.) A run that a loaded host held up for more than
	// a second falls behind its arrivals, so a miss is measured once more,
	// with a new second run, before it counts.
	openRun := func() string {
		t.Helper()
		out, err := runTPCC(t, ctx, res, experiment.TPCCConfig{DSN: dsn, VUs: []int{2}, Rates: []float64{1500, 3000}, Arrival: driver.ArrivalConstant,
			LateAfter: time.Second, Repeat: 3, BackToBack: true, RampUp: time.Second, Duration: 2 * time.Second})
		if err != nil {
			t.Fatalf("open-loop run: %v", err)
		}
		for i, s := range out.Steps { // back to back: 1500, 1500, 1500, 3000, …
			for r, rep := range s.Repetitions {
				if rep.Index != 3*i+r || rep.OfferedTPM != s.OfferedTPM {
					t.Errorf("%g TPM, repetition %d: index %d at %g TPM; want index %d", s.OfferedTPM, r+1, rep.Index, rep.OfferedTPM, 3*i+r)
				}
			}
		}
		return out.RunID
	}
	first := openRun()
	for attempt := 1; ; attempt++ {
		abPath := filepath.Join(dir, fmt.Sprint("ab", attempt), "report.html")
		row, p99 := compareOpenRuns(t, res, first, openRun(), abPath)
		if row == "both held the rate" {
			if !regexp.MustCompile(`^[0-9.]+x \(`).MatchString(p99) {
				t.Errorf("the New-Order p99 comparison at 3,000 TPM: %q", p99)
			}
			break
		}
		if attempt == 2 {
			t.Errorf("two open-loop runs of the same workload: NOPM verdict at 3,000 TPM %q twice", row)
			break
		}
	}
}

// compareOpenRuns reports open-loop runs a and b together and returns, at
// 2 VUs and 3,000 TPM offered, the ratio table's NOPM verdict and the
// finding's New-Order p99 comparison.
func compareOpenRuns(t *testing.T, res, a, b, htmlPath string) (nopmVerdict, p99 string) {
	t.Helper()
	w := writeReport(t, res, report.Options{Runs: []string{a, b}, Labels: map[string]string{a: "first", b: "second"}, Out: htmlPath})
	md, err := os.ReadFile(w.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| second \| 2 at 3,000 TPM \| 3 \|([^\n]*)$`).FindSubmatch(md)
	if row == nil {
		t.Fatalf("the ratio table has no row of second at 2 VUs and 3,000 TPM, n 3:\n%s", md)
	}
	cells := strings.Split(string(row[1]), "|")
	if len(cells) < 6 {
		t.Fatalf("ratio row %q", row[0])
	}
	m := regexp.MustCompile(`second: at 3,000 TPM offered, (.*) the New-Order p99 of first, from the intended start`).FindSubmatch(md)
	if m == nil {
		t.Fatalf("the report of the two runs has no New-Order p99 finding:\n%s", md)
	}
	// The API's comparisons (report.Compare) match the steps as the table
	// does: by offered rate.
	store, err := results.OpenReadOnly(res)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cs, err := report.Compare(context.Background(), store, report.Options{Runs: []string{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(cs, func(c report.Compared) bool {
		return c.Run == b && c.Step == "2 VUs at 3,000 TPM" && c.OfferedTPM == 3000 && c.Figure == "new_order.p99_ms" && c.N == 3 && c.BaseN == 3
	}) {
		t.Errorf("report.Compare has no New-Order p99 at 3,000 TPM over 3 repetitions each: %+v", cs)
	}
	nopmVerdict = strings.TrimSpace(cells[4])
	if !slices.ContainsFunc(cs, func(c report.Compared) bool {
		return c.Run == b && c.OfferedTPM == 3000 && c.Figure == "nopm" && c.Verdict == nopmVerdict
	}) {
		t.Errorf("report.Compare has no NOPM at 3,000 TPM with the table's verdict %q: %+v", nopmVerdict, cs)
	}
	return nopmVerdict, string(m[1])
}

// storedVUs lists the VUs of a run's stored steps, in their order.
func storedVUs(t *testing.T, dir, runID string) string {
	t.Helper()
	_, steps := storedRun(t, dir, runID)
	var vus []string
	for _, s := range steps {
		var doc struct {
			VUs int `json:"vus"`
		}
		if err := json.Unmarshal(s.Metrics, &doc); err != nil {
			t.Fatal(err)
		}
		vus = append(vus, strconv.Itoa(doc.VUs))
	}
	return strings.Join(vus, ",")
}

// TestRunTPCCNoisy: a process spinning on a core beside the run is CPU
// that is neither the server's nor tierbench's: every repetition is flagged
// noisy with the share it took. Discarding noisy repetitions cannot leave
// them all out (nothing else measured the step), so it keeps them and says
// none was discarded. The run is open-loop at 1,200 TPM: the spinner's
// share is judged the same, and a closed loop took the other core from it.
func TestRunTPCCNoisy(t *testing.T) {
	dsn := tpcctest.Database(t, 1)
	proctest.Spinner(t)
	res, err := runTPCC(t, context.Background(), t.TempDir(), experiment.TPCCConfig{DSN: dsn, VUs: []int{1}, Repeat: 2,
		Rates: []float64{1200}, Arrival: driver.ArrivalConstant, LateAfter: time.Second,
		Record: experiment.Record{Noisy: discardNoisy()}, RampUp: time.Second, Duration: 2 * time.Second})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var d struct {
		Steps []struct {
			Discarded   int `json:"discarded_noisy"`
			Repetitions []struct {
				Noisy string             `json:"noisy"`
				Host  map[string]float64 `json:"host"`
			} `json:"repetitions"`
		} `json:"steps"`
	}
	if out := asDoc(t, res, &d); len(d.Steps) != 1 || len(d.Steps[0].Repetitions) != 2 {
		t.Fatalf("%s", out)
	}
	for i, r := range d.Steps[0].Repetitions {
		if !strings.Contains(r.Noisy, "other processes") || r.Host["foreign_cpu_pct"] <= 10 {
			t.Errorf("repetition %d beside a spinning process: noisy %q, foreign CPU %v%%", i+1, r.Noisy, r.Host["foreign_cpu_pct"])
		}
	}
	if d.Steps[0].Discarded != 0 {
		t.Errorf("discarded %d of 2 noisy repetitions; want none, since nothing else measured the step", d.Steps[0].Discarded)
	}
}
