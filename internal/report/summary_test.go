package report

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/threshold"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// checkOf is a consistency check after a run: the eleven conditions that
// apply after transactions ran (3.3.2.11 holds only right after the load),
// those named violated.
func checkOf(violated ...string) tpcc.CheckResult {
	res := tpcc.CheckResult{OK: len(violated) == 0, Warehouses: 2}
	for _, def := range tpcc.Conditions {
		c := tpcc.Condition{ID: def.ID, Title: def.Title, OK: true, Scope: "all"}
		switch {
		case def.LoadOnly:
			c.Scope = "not-applicable"
		case strings.Contains(" "+strings.Join(violated, " ")+" ", " "+def.ID+" "):
			c.OK, c.Violations = false, 3
		}
		res.Conditions = append(res.Conditions, c)
	}
	return res
}

// verdicts judges nopm>=1000 and new_order.p99<=40ms on each step of a
// server's run, as the run stores them.
func verdicts(sv engineServer) []threshold.Verdict {
	var out []threshold.Verdict
	for i, st := range sv.steps {
		name := plural(st.vus, "VU", "VUs")
		out = append(out,
			threshold.Verdict{Threshold: "nopm>=1000", Step: i, Name: name, Key: "nopm", Value: float64(st.nopm), Limit: 1000, Pass: st.nopm >= 1000},
			threshold.Verdict{Threshold: "new_order.p99<=40ms", Step: i, Name: name, Key: "txn.new_order.p99_ms", Value: st.p99Ms, Limit: 40,
				Pass: st.p99Ms <= 40})
	}
	return out
}

// summaryStore holds what a two-tier scenario leaves, with known figures:
// a TPC-C run on a fast tier and one on an emulated tier (whose NOPM peaks
// before its largest step and fails a threshold at its first), each with
// thresholds and a consistency check (the emulated tier's violates two
// conditions); a backup run on each tier; a durability run.
func summaryStore(t *testing.T) (*results.Store, []string) {
	t.Helper()
	ctx := context.Background()
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	const group = "tiers-20261121-030000"
	fast := engineServer{"postgres", "fast", "fast", 1 << 30, postgresSettings, []engineStep{
		{vus: 1, tpm: 2300, nopm: 1000, p95Ms: 10, p99Ms: 15},
		{vus: 2, tpm: 4600, nopm: 2000, p95Ms: 12, p99Ms: 20},
		{vus: 4, tpm: 6900, nopm: 3000, p95Ms: 20, p99Ms: 30},
	}}
	emulated := engineServer{"postgres", "emulated", "emulated", 1 << 30, postgresSettings, []engineStep{
		{vus: 1, tpm: 1610, nopm: 700, p95Ms: 20, p99Ms: 30},
		{vus: 2, tpm: 2990, nopm: 1300, p95Ms: 24, p99Ms: 36},
		{vus: 4, tpm: 2760, nopm: 1200, p95Ms: 26, p99Ms: 39},
	}}
	var ids []string
	checks := []tpcc.CheckResult{checkOf(), checkOf("3.3.2.4", "3.3.2.6")}
	for i, sv := range []engineServer{fast, emulated} {
		id := engineRun(t, store, group, sv)
		must(t, store.SetDocument(ctx, id, results.DocThresholds, verdicts(sv)))
		must(t, store.SetDocument(ctx, id, results.DocCheck, checks[i]))
		ids = append(ids, id)
	}
	for _, tier := range []struct {
		label   string
		seconds [2]float64 // backup, restore
	}{{"fast backups", [2]float64{10, 20}}, {"emulated backups", [2]float64{25, 30}}} {
		var phases []any
		for cycle := 1; cycle <= 2; cycle++ {
			for p, phase := range []string{"backup", "restore"} {
				phases = append(phases, stored.PhaseResult{Phase: stored.Phase{Cycle: cycle, Phase: phase, Method: "pg_basebackup",
					Seconds: tier.seconds[p], Bytes: 1e9, MBps: 1e3 / tier.seconds[p]}})
			}
		}
		ids = append(ids, writerStore(t, store, "backup", map[string]any{"label": tier.label}, phases...))
	}
	var cycles []any
	for i, excess := range []int64{1, 3} {
		cycles = append(cycles, stored.DurabilityCycle{Cycle: i + 1, Count1: 1000, Count2: 1500 + excess, Acknowledged: 510, Committed: 500,
			RolledBack: 10, Found: 500, Excess: excess, ExcessBound: 4, Consistency: true, StartedAt: t0, FaultAt: t0.Add(time.Minute),
			RanSeconds: 60, RecoverySeconds: 5, OK: true})
	}
	ids = append(ids, writerStore(t, store, "durability", map[string]any{"label": "kill", "fault": "kill"}, cycles...))
	return store, ids
}

// The summary leads the report with the findings of the sections below:
// peak NOPM, the tier's loss, the thresholds breached, the consistency and
// durability verdicts, the backups' slowdown. Its Markdown matches the
// golden file; the HTML shows it first, the environment last.
func TestSummaryGolden(t *testing.T) {
	store, ids := summaryStore(t)
	out := filepath.Join(t.TempDir(), "report.html")
	w, err := Write(context.Background(), store, Options{Runs: ids, Out: out, Version: "test", Now: t0})
	must(t, err)
	if w.Sections[0] != "summary" || w.Sections[len(w.Sections)-1] != "environment" {
		t.Errorf("sections %v; want the summary first and the environment last", w.Sections)
	}
	md, err := os.ReadFile(w.Markdown)
	must(t, err)
	_, summary, ok := strings.Cut(string(md), "\n## Summary\n")
	if !ok {
		t.Fatalf("the Markdown has no summary:\n%s", md)
	}
	summary, _, _ = strings.Cut(summary, "\n## ")
	golden(t, "summary.md", summary)

	// Each finding is said once in its section too: the summary repeats
	// the sections, it does not compute its own.
	doc, _, err := Build(context.Background(), store, Options{Runs: ids})
	must(t, err)
	var said []string
	for _, s := range doc.Sections[1:] {
		texts, _ := contents(s)
		said = append(said, texts...)
	}
	walk(doc.Sections[0].Blocks, func(b Block) {
		if b.List == nil {
			t.Errorf("the summary holds a block that is not a list of findings: %+v", b)
			return
		}
		wantSaid(t, said, b.List.Items...)
	})

	html, err := os.ReadFile(w.HTML)
	must(t, err)
	first := regexp.MustCompile(`<section id="([^"]+)">`).FindStringSubmatch(string(html))
	if first == nil || first[1] != "summary" {
		t.Errorf("the first section of the HTML is %v; want the summary", first)
	}
	if !strings.Contains(string(html), `<h3><a href="#thresholds">Thresholds</a></h3>`) ||
		!strings.Contains(string(html), "<li>emulated: 1 of 2 thresholds breached: nopm&gt;=1000 at step 1 (1 VU).</li>") {
		t.Error("the HTML summary does not list the thresholds' finding under a link to its section")
	}
}

// A threshold that matched no step is breached with its note; the table
// shows every verdict, pass or FAIL.
func TestThresholds(t *testing.T) {
	rd := &runData{Run: results.Run{ID: "r1", Kind: "disk"}, Label: "nvme", Thresholds: []threshold.Verdict{
		{Threshold: "read.iops>=1000", Step: 0, Name: "randread-4k-qd1", Key: "read.iops", Value: 900, Limit: 1000},
		{Threshold: "read.iops>=1000", Step: 1, Name: "randread-4k-qd32", Key: "read.iops", Value: 52000, Limit: 1000, Pass: true},
		{Threshold: "write.p99.9<=5ms", Step: -1, Limit: 5, Note: "no point has write.p99.9"},
	}}
	want := "nvme: 2 of 2 thresholds breached: read.iops>=1000 at point 1 (randread-4k-qd1); write.p99.9<=5ms (no point has write.p99.9)."
	if got := thresholdSentence(rd); got != want {
		t.Errorf("sentence %q;\nwant %q", got, want)
	}
	rd.Thresholds[1].Pass, rd.Thresholds[1].Value = false, 800
	want = "nvme: 2 of 2 thresholds breached: read.iops>=1000 at points 1 (randread-4k-qd1) and 2 (randread-4k-qd32); write.p99.9<=5ms (no point has write.p99.9)."
	if got := thresholdSentence(rd); got != want {
		t.Errorf("sentence %q;\nwant %q", got, want)
	}
	rows := [][]string{
		{"read.iops>=1000", "1 (randread-4k-qd1)", "read.iops", "900", "1,000", "FAIL"},
		{"read.iops>=1000", "2 (randread-4k-qd32)", "read.iops", "800", "1,000", "FAIL"},
		{"write.p99.9<=5ms", "none", "–", "–", "5.00", "FAIL: no point has write.p99.9"},
	}
	if got := thresholdTable(rd); strings.Join(got.Header, ",") != "threshold,point,figure,value,limit,verdict" || !reflect.DeepEqual(got.Rows, rows) {
		t.Errorf("table %v %v;\nwant rows %v", got.Header, got.Rows, rows)
	}
	rd.Thresholds = rd.Thresholds[:2]
	if got, want := thresholdSentence(rd), "nvme: its threshold was breached: read.iops>=1000 at points 1 (randread-4k-qd1) and 2 (randread-4k-qd32)."; got != want {
		t.Errorf("sentence %q; want %q", got, want)
	}
	rd.Thresholds[0].Pass, rd.Thresholds[1].Pass = true, true
	if got, want := thresholdSentence(rd), "nvme: its threshold read.iops>=1000 held at every point."; got != want {
		t.Errorf("sentence %q; want %q", got, want)
	}
}

// The open-loop table's schedule jitter is the wake-ups' p99, or "–" for a
// step whose arrivals were all due when claimed (every VU busy): no VU
// waited, and 0 would claim wake-ups on time that never happened.
func TestOpenLoopJitter(t *testing.T) {
	step := func(waits int64, p99 float64) tpccStep {
		return tpccStep{stored.TPCCStep{VUs: 8, OpenLoop: &stored.OpenLoop{OfferedTPM: 12000, Arrival: "poisson",
			ScheduleJitter: metrics.Summary{Count: waits, P99Ms: p99}}}}
	}
	tab := openLoopTable([]*runData{{Label: "slow", TPCC: []tpccStep{step(900, 0.25), step(0, 0)}}})
	if tab == nil || len(tab.Rows) != 2 {
		t.Fatalf("table %+v; want two rows", tab)
	}
	last := len(tab.Header) - 1
	if got := [2]string{tab.Rows[0][last], tab.Rows[1][last]}; got != [2]string{"0.25", "–"} {
		t.Errorf("schedule jitter column %q (header %q); want 0.25 and –", got, tab.Header[last])
	}
}

// A ratio reads with two decimals, or from 100 up as a whole number with
// thousands marked: a slow tier's queue makes ratios in the thousands. Its
// interval reads the same way, the lower bound at least 0.
func TestTimes(t *testing.T) {
	for v, want := range map[float64]string{0.617: "0.62x", 38.9: "38.90x", 2903.05: "2,903x", math.NaN(): "–"} {
		if got := times(v); got != want {
			t.Errorf("times(%g) = %q; want %q", v, got, want)
		}
	}
	for _, c := range []struct {
		low, high float64
		want      string
	}{{0.614, 0.88, "0.61–0.88"}, {-0.3, 1.8, "0.00–1.80"}, {1200.12, 4000, "1,200–4,000"}} {
		if got := interval(c.low, c.high); got != c.want {
			t.Errorf("interval(%g, %g) = %q; want %q", c.low, c.high, got, c.want)
		}
	}
}
