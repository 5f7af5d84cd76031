package experiment_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/threshold"
)

// A TPC-H run on an SF 0.01 build: with the validation parameters every
// answer is the reference's; a changed row makes one wrong, which
// completes the run and fails its verdict naming the query; two power
// tests and two streams with the refresh functions store every query and
// move the build's update sets on, after which validation is refused; a
// query past the timeout is recorded as timed out, not dropped.
func TestRunTPCH(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	db, err := experiment.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := experiment.BuildTPCH(ctx, db, experiment.TPCHBuildConfig{Scale: 0.01, BuildVUs: 2}, experiment.Nop{}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	dir := t.TempDir()
	run := func(mut func(*experiment.TPCHRunConfig)) (*experiment.TPCHRunResult, error) {
		cfg := experiment.NewTPCHRunConfig()
		cfg.Results, cfg.DSN, cfg.Telemetry.Interval = dir, dsn, 0
		mut(&cfg)
		return experiment.RunTPCH(ctx, cfg, experiment.Nop{})
	}

	out, err := run(func(c *experiment.TPCHRunConfig) { c.Validation = true })
	if err != nil || !out.AnswersChecked || len(out.Power) != 1 || len(out.Power[0].Queries) != 22 || out.Refresh || out.GeoMean.N != 1 {
		t.Fatalf("validation: %+v, %v; want 22 checked answers and no refresh", out, err)
	}
	// The server's own time beside the client's; the session's analytic
	// settings recorded with the run.
	for _, q := range out.Power[0].Queries {
		if q.ServerSeconds <= 0 || q.ServerSeconds > q.Seconds {
			t.Errorf("%s: server %.6f s, client %.6f s; want the server's time, within the client's", q.Name(), q.ServerSeconds, q.Seconds)
		}
	}
	store, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := store.Run(ctx, out.RunID)
	store.Close()
	var params stored.TPCHParams
	if err != nil || json.Unmarshal(shown.Params, &params) != nil || params.Settings["work_mem"] == "" {
		t.Errorf("run params %s (%v); want the session's work_mem", shown.Params, err)
	}

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string) {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	exec("UPDATE region SET r_name = 'ATLANTIS' WHERE r_regionkey = 2") // ASIA: Q5's region
	out, err = run(func(c *experiment.TPCHRunConfig) { c.Validation = true })
	var verdict *experiment.Verdict
	if !errors.As(err, &verdict) || out == nil || out.Status != results.StatusComplete || len(out.Wrong) == 0 || !strings.Contains(err.Error(), "Q5") ||
		experiment.OutcomeOf(err) != experiment.VerdictFailed {
		t.Errorf("a wrong answer: %v (%+v); want a failed verdict naming Q5 on a complete run", err, out)
	}
	exec("UPDATE region SET r_name = 'ASIA' WHERE r_regionkey = 2")

	// Thresholds are judged on each power test and on the throughput
	// test; a breach completes the run and fails it.
	ts, err := threshold.Parse(stored.KindTPCH, []string{"geomean<=1h", "q1.rows==4", "composite_qph>0", "q6.seconds<1ns"})
	if err != nil {
		t.Fatal(err)
	}
	out, err = run(func(c *experiment.TPCHRunConfig) { c.Repeat, c.Streams, c.Seed, c.Thresholds = 2, 2, 99, ts })
	var breached *experiment.Breached
	if !errors.As(err, &breached) || out == nil || out.Status != results.StatusComplete {
		t.Fatalf("thresholds: %v; want q6.seconds<1ns breached on a complete run", err)
	}
	failed := map[string]int{}
	for _, v := range out.Thresholds {
		if !v.Pass {
			failed[v.Threshold]++
		}
	}
	if len(out.Thresholds) != 7 || len(failed) != 1 || failed["q6.seconds<1ns"] != 2 {
		t.Errorf("verdicts %+v; want 7, only q6.seconds<1ns failing, on both power tests", out.Thresholds)
	}
	if len(out.Power) != 2 || len(out.Power[1].Queries) != 24 || out.Throughput == nil || len(out.Throughput.Queries) != 2*22+2*2 ||
		out.GeoMean.N != 2 || !out.GeoMean.HasCI() || out.Composite <= 0 || out.Throughput.ThroughputAtSize <= 0 {
		t.Errorf("two power tests and two streams: %+v", out)
	}
	store, err = results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := store.Steps(ctx, out.RunID)
	store.Close()
	if err != nil || len(steps) != 2*24+2*22+4 || !strings.HasPrefix(steps[0].Name, "power 1 RF1") {
		t.Errorf("%d steps stored (%v), the first %q; want 96, power 1 RF1 first", len(steps), err, steps[0].Name)
	}
	var rf1, rf2 int
	if err := conn.QueryRow(ctx, "SELECT rf1_sets, rf2_sets FROM tpch_meta").Scan(&rf1, &rf2); err != nil || rf1 != 4 || rf2 != 4 {
		t.Errorf("update sets applied: %d and %d (%v); want 4 each", rf1, rf2, err)
	}
	if _, err := run(func(c *experiment.TPCHRunConfig) { c.Validation = true }); !errors.Is(err, experiment.ErrInvalid) || !strings.Contains(err.Error(), "refresh functions applied") {
		t.Errorf("validation after refreshes: %v; want it refused", err)
	}

	// Interrupted after its third query: what finished is kept, the run
	// says so.
	ictx, cancel := context.WithCancel(ctx)
	icfg := experiment.NewTPCHRunConfig()
	icfg.Results, icfg.DSN, icfg.Telemetry.Interval, icfg.NoRefresh, icfg.Repeat = dir, dsn, 0, true, 5
	out, err = experiment.RunTPCH(ictx, icfg, &cancelAfter{n: 3, cancel: cancel})
	cancel()
	var interrupted *experiment.Interrupted
	if !errors.As(err, &interrupted) || out == nil || out.Status != results.StatusInterrupted || len(out.Power) == 0 ||
		!out.Power[0].Incomplete || len(out.Power[0].Queries) != 3 {
		t.Errorf("interrupted: %v (%+v); want an interrupted run keeping its finished queries", err, out)
	}

	out, err = run(func(c *experiment.TPCHRunConfig) { c.NoRefresh, c.Timeout = true, experiment.MinTPCHTimeout })
	timedOut := 0
	for _, q := range out.Power[0].Queries {
		if q.Status == stored.TPCHTimeout {
			timedOut++
			if q.Seconds < 0.009 || !strings.Contains(q.Error, "timed out") {
				t.Errorf("%s: timed out after %.3f s: %s", q.Name(), q.Seconds, q.Error)
			}
		}
	}
	if err != nil || len(out.Power[0].Queries) != 22 || timedOut == 0 || !out.Power[0].Incomplete {
		t.Errorf("a 10 ms timeout: %d of %d queries timed out (%v); want some, every query kept", timedOut, len(out.Power[0].Queries), err)
	}
}

// cancelAfter cancels a run once it has reported n results.
type cancelAfter struct {
	experiment.Nop
	n      int
	cancel func()
}

func (c *cancelAfter) Result(experiment.Result) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
}
