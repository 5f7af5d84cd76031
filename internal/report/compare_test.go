package report

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
)

// orderFinding states an order of targets only when the interval of their
// ratio excludes 1: three instances a tier that agree are ordered; two
// that disagree wildly (the case that once read as a finding) are not.
func TestOrderFinding(t *testing.T) {
	agree := []*tally{
		{phase: "beside backups", target: "fast", nopm: []float64{0.90, 0.88, 0.92}},
		{phase: "beside backups", target: "slow", nopm: []float64{0.55, 0.57, 0.53}},
	}
	get := func(tl *tally) []float64 { return tl.nopm }
	b := orderFinding("beside backups", "of its baseline NOPM", "kept", agree, get)
	if len(b) != 1 || !strings.HasPrefix(b[0].Text, "TPC-C beside backups kept the most of its baseline NOPM on fast (0.90x) and the least on slow (0.55x): "+
		"fast against slow is 1.64x (95% CI ") || !strings.HasSuffix(b[0].Text, ": higher).") {
		t.Errorf("a clear order: %+v", b)
	}
	noisy := []*tally{
		{phase: "beside backups", target: "slow", nopm: []float64{0.47, 1.09}},
		{phase: "beside backups", target: "fast", nopm: []float64{0.70, 0.78}},
	}
	b = orderFinding("beside backups", "of its baseline NOPM", "kept", noisy, get)
	if len(b) != 1 || !strings.Contains(b[0].Text, "an order not distinguishable from noise") || !strings.Contains(b[0].Text, "not distinguishable at n=2") ||
		strings.Contains(b[0].Text, "kept the most") {
		t.Errorf("a noisy order: %+v", b)
	}
	if b := orderFinding("beside backups", "x", "kept", agree[:1], get); b != nil {
		t.Errorf("one target: %+v", b)
	}
}

// A neighbours step repeated three times: a run per repetition and
// instance. The report pools each instance's runs into one row (n = 3,
// the mean NOPM), compares each with its pooled baseline with an
// interval, and shows the backup seconds that overlapped each instance's
// measured interval, from the backup run's stored phases.
func TestNeighboursRepeated(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const group = "paper-5-neighbours-20261126-030000"
	for _, base := range []float64{1000, 1010, 990} {
		f.neighbourRun(t, group, "fast", "fast-1", "baseline", base, 10)
		f.neighbourRun(t, group, "fast", "fast-2", "baseline", base+100, 10)
		f.neighbourRun(t, group, "fast", "fast-1", "beside backups", base/2, 20)
		f.neighbourRun(t, group, "fast", "fast-2", "beside backups", (base+100)/2, 20)
	}
	// fast-3's backups: a 30 s backup starting 20 s into the measured
	// interval (0–40 s, neighbourRun's) overlaps it by 20 s.
	r, err := f.store.CreateRun(ctx, "backup", group, map[string]any{"instance": "fast-3", "role": "backup"})
	must(t, err)
	doc, _ := json.Marshal(stored.PhaseResult{Phase: stored.Phase{Cycle: 1, Phase: "backup", Method: "pg_basebackup", Seconds: 30}})
	must(t, f.store.AddStep(ctx, results.Step{RunID: r.ID, Index: 0, Name: "backup 1", StartedAt: t0.Add(20 * time.Second),
		MeasureStart: t0.Add(20 * time.Second), MeasureEnd: t0.Add(50 * time.Second), Metrics: doc}))
	must(t, f.store.FinishRun(ctx, r.ID, results.StatusComplete, nil))

	d, _, err := Build(ctx, f.store, Options{Group: group})
	must(t, err)
	texts, tables := contents(section(d, "neighbours"))
	inst := tables["neighbours-instances"]
	if inst == nil || len(inst.Rows) != 4 {
		t.Fatalf("per-instance table %+v; want a pooled row per instance and phase (4)", inst)
	}
	for _, row := range inst.Rows {
		// phase, instance, target, role, VUs, n, TPM, NOPM, NO p95 ms, backup seconds overlapping
		if row[5] != "3" || row[9] != "20.0" {
			t.Errorf("row %q: want n 3 and 20 s of backup overlapping", row)
		}
	}
	ratios := tables["neighbours-ratios"]
	if ratios == nil || len(ratios.Rows) != 2 {
		t.Fatalf("ratios %+v; want one per instance", ratios)
	}
	for _, row := range ratios.Rows {
		if row[4] != "3" || !strings.HasPrefix(row[7], "0.50x (") || row[8] != "lower" {
			t.Errorf("ratio row %q: want n 3, 0.50x with an interval, lower", row)
		}
	}
	wantSaid(t, texts, "On fast: TPC-C instances beside backups kept 0.50x (95% CI 0.50–0.50, n=2) their baseline NOPM; New-Order p95 2.00x (95% CI 2.00–2.00, n=2) "+
		"(means of the per-instance ratios of 2 instances, each at its largest step; the intervals are over the instances).")
}

// A run's noisy repetition is listed in the noisy table. A report with
// DiscardNoisy (or a run that ran with --discard-noisy) leaves it out of
// the means: the step's NOPM is the mean of the other two.
func TestNoisyRepetitions(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r, err := f.store.CreateRun(ctx, "tpcc", "", map[string]any{"label": "db"})
	must(t, err)
	for i, nopm := range []int64{1000, 400, 1100} {
		s := stored.TPCCStep{Index: i, VUs: 2, Repetition: i + 1, NOPM: nopm, TPM: 2 * nopm, MeasureStart: t0, MeasureEnd: t0.Add(10 * time.Second),
			Host: map[string]float64{"cpu_steal_pct": 0, "foreign_cpu_pct": 3}}
		if i == 1 {
			s.Noisy, s.Host["foreign_cpu_pct"], s.Host["kernel_cpu_pct"] = "other processes 48.0% of all cores > 10%", 48, 6
		}
		doc, err := json.Marshal(s)
		must(t, err)
		must(t, f.store.AddStep(ctx, results.Step{RunID: r.ID, Index: i, Name: "vus=2", StartedAt: t0, MeasureStart: t0,
			MeasureEnd: t0.Add(10 * time.Second), Metrics: doc}))
	}
	must(t, f.store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	for _, tc := range []struct {
		discard   bool
		nopm      int64
		discarded int
		in        string
	}{{false, 833, 0, "yes"}, {true, 1050, 1, "no (discarded)"}} {
		d, runs, err := Build(ctx, f.store, Options{Runs: []string{r.ID}, DiscardNoisy: tc.discard})
		must(t, err)
		if g := runs[0].TPCC; len(g) != 1 || g[0].NOPM != tc.nopm || g[0].Discarded != tc.discarded {
			t.Fatalf("discard %v: grouped %+v; want NOPM %d, %d discarded", tc.discard, g, tc.nopm, tc.discarded)
		}
		_, tables := contents(section(d, "tpcc"))
		noisy := tables["tpcc-noisy"]
		want := [][]string{{"db", "2", "2", "other processes 48.0% of all cores > 10%", "0.0 %", "48.0 %", "6.0 %", tc.in}}
		if noisy == nil || !reflect.DeepEqual(noisy.Rows, want) {
			t.Errorf("discard %v: noisy table %+v; want rows %q", tc.discard, noisy, want)
		}
	}
}

// poolBackups merges one instance's backup runs (one per repetition of a
// neighbours step), numbering their cycles on; other runs stay apart.
func TestPoolBackups(t *testing.T) {
	run := func(instance string, secs ...float64) *runData {
		rd := &runData{Place: stored.Placement{Instance: instance}}
		for i, s := range secs {
			rd.Backup = append(rd.Backup, stored.PhaseResult{Phase: stored.Phase{Cycle: i + 1, Phase: "backup", Seconds: s}})
		}
		return rd
	}
	got := poolBackups([]*runData{run("fast-3", 1, 2), run("slow-3", 5), run("fast-3", 3), run("", 9), run("", 8)})
	if len(got) != 4 {
		t.Fatalf("%d runs; want fast-3 pooled, slow-3, and the two of no instance", len(got))
	}
	var cycles []int
	for _, b := range got[0].Backup {
		cycles = append(cycles, b.Cycle)
	}
	if !reflect.DeepEqual(cycles, []int{1, 2, 3}) || got[0].Backup[2].Seconds != 3 || len(got[1].Backup) != 1 {
		t.Errorf("pooled fast-3 cycles %v (%+v), slow-3 %d", cycles, got[0].Backup, len(got[1].Backup))
	}
}

// Disk points and backup phases flagged noisy are listed in their own
// sections' tables; with DiscardNoisy a noisy point repetition leaves the
// point's mean, and a noisy backup leaves the backups' mean duration that
// a comparison with another run uses.
func TestNoisyPointsAndPhases(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	dr, err := f.store.CreateRun(ctx, "disk", "", map[string]any{"label": "disk"})
	must(t, err)
	for i, iops := range []float64{1000, 100, 1200} {
		p := stored.PointStep{Point: stored.Point{Name: "4k-randread-qd1x1", BS: "4k", BSBytes: 4096, RW: "randread", IODepth: 1, Jobs: 1,
			Repetition: i + 1, Read: &stored.DirStats{IOPS: iops, MBps: iops * 4096 / 1e6, MeanMs: 1, P99Ms: 2},
			Host: map[string]float64{"cpu_steal_pct": 0, "foreign_cpu_pct": 2, "kernel_cpu_pct": 1}}}
		if i == 1 {
			p.Noisy, p.Host["foreign_cpu_pct"] = "other processes 40.0% of all cores > 10%", 40
		}
		doc, err := json.Marshal(p)
		must(t, err)
		must(t, f.store.AddStep(ctx, results.Step{RunID: dr.ID, Index: i, Name: p.Name, StartedAt: t0, MeasureStart: t0,
			MeasureEnd: t0.Add(10 * time.Second), Metrics: doc}))
	}
	must(t, f.store.FinishRun(ctx, dr.ID, results.StatusComplete, nil))
	var backups []string
	for _, run := range []struct {
		label string
		secs  []float64 // backup seconds per cycle; the second cycle's backup of "noisy" is noisy
	}{{"quiet", []float64{10, 10, 10}}, {"noisy", []float64{10, 30, 10}}} {
		r, err := f.store.CreateRun(ctx, "backup", "", map[string]any{"label": run.label})
		must(t, err)
		for i, secs := range run.secs {
			for j, phase := range []string{"backup", "restore"} {
				ph := stored.PhaseResult{Phase: stored.Phase{Cycle: i + 1, Phase: phase, Method: "pg_basebackup", Seconds: secs, Bytes: 1e9, MBps: 1e9 / 1e6 / secs,
					Started: t0, Ended: t0.Add(time.Duration(secs) * time.Second)}, Host: map[string]float64{"foreign_cpu_pct": 1}}
				if run.label == "noisy" && i == 1 && phase == "backup" {
					ph.Noisy, ph.Host["foreign_cpu_pct"] = "other processes 55.0% of all cores > 10%", 55
				}
				doc, err := json.Marshal(ph)
				must(t, err)
				must(t, f.store.AddStep(ctx, results.Step{RunID: r.ID, Index: 2*i + j, Name: fmt.Sprintf("%s %d", phase, i+1), StartedAt: t0,
					MeasureStart: ph.Started, MeasureEnd: ph.Ended, Metrics: doc}))
			}
		}
		must(t, f.store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
		backups = append(backups, r.ID)
	}
	for _, tc := range []struct {
		discard  bool
		iops     float64
		in       string
		backupIn string
		said     string
		warn     string // the runs section's warning, after its first sentence
	}{
		{false, 766.67, "yes", "yes", "noisy against quiet, means over cycles: backups took 1.67x as long",
			" The means count them, so the findings below say as much about the neighbours as about the storage where they rest on them; " +
				"tierbench report --discard-noisy leaves them out wherever their step has quiet repetitions, and a rerun on a quiet host settles the rest."},
		{true, 1100, "no (discarded)", "no (discarded)", "noisy against quiet, means over cycles: backups took 1.00x as long",
			" All are left out of the means (--discard-noisy)."},
	} {
		d, runs, err := Build(ctx, f.store, Options{Runs: []string{dr.ID}, DiscardNoisy: tc.discard})
		must(t, err)
		if got := runs[0].Disk[0].Read.IOPS; math.Abs(got-tc.iops) > 0.01 {
			t.Errorf("discard %v: point IOPS %.2f; want %.2f", tc.discard, got, tc.iops)
		}
		_, tables := contents(section(d, "storage"))
		want := [][]string{{"disk", "4k-randread-qd1x1", "2", "other processes 40.0% of all cores > 10%", "0.0 %", "40.0 %", "1.0 %", tc.in}}
		if got := tables["storage-noisy"]; got == nil || !reflect.DeepEqual(got.Rows, want) {
			t.Errorf("discard %v: storage noisy table %+v; want rows %q", tc.discard, got, want)
		}
		texts, _ := contents(section(d, "runs"))
		wantSaid(t, texts, "1 of 3 disk points were measured on a noisy host (other processes took up to 40.0%)."+tc.warn)
		d, _, err = Build(ctx, f.store, Options{Runs: backups, DiscardNoisy: tc.discard})
		must(t, err)
		texts, tables = contents(section(d, "backup"))
		want = [][]string{{"noisy", "backup", "2", "other processes 55.0% of all cores > 10%", "–", "55.0 %", "–", tc.backupIn}}
		if got := tables["backup-noisy"]; got == nil || !reflect.DeepEqual(got.Rows, want) {
			t.Errorf("discard %v: backup noisy table %+v; want rows %q", tc.discard, got, want)
		}
		found := false
		for _, s := range texts {
			found = found || strings.Contains(s, tc.said)
		}
		if !found {
			t.Errorf("discard %v: no finding %q in %q", tc.discard, tc.said, texts)
		}
	}
}

// A ratio's interval over two wildly different instances reaches below 0
// (t is 12.71 at n = 2); no ratio of NOPMs is, so the report shows 0.
func TestRatioIntervalAtLeast0(t *testing.T) {
	if got := meanRatioText([]float64{0.37, 1.21}); !strings.HasPrefix(got, "0.79x (95% CI 0.00–") || !strings.HasSuffix(got, ", n=2)") {
		t.Errorf("meanRatioText = %q; want 0.79x with a lower bound of 0.00", got)
	}
	c := stats.Compare([]float64{1, 9}, []float64{1, 9}) // A's mean is not distinguishable from 0
	if got := ciVerdict(c); c.HasCI() && strings.Contains(got, "CI -") {
		t.Errorf("ciVerdict = %q; want no negative bound", got)
	}
}

// At an offered rate that both runs served, their NOPM is the rate's: the
// ratio table says so rather than judging repetitions that constant
// arrivals make nearly identical, where a few transactions more read as
// "higher". A run that fell behind is judged as ever.
func TestNOPMVerdictAtARate(t *testing.T) {
	// run makes a run of three repetitions at 3,000 TPM offered over 2 s
	// (100 arrivals each), completing served of them, new of which
	// New-Orders, each repetition one New-Order more than the last.
	run := func(label string, served, new int64) *runData {
		var reps []*stored.TPCCStep
		for r := range int64(3) {
			no := new + r
			reps = append(reps, &stored.TPCCStep{VUs: 2, TPM: served * 30, NOPM: no * 30,
				OpenLoop: &stored.OpenLoop{OfferedTPM: 3000, Arrival: "constant", Arrivals: 100},
				Txn:      map[string]metrics.Summary{"new_order": {Count: no, P99Ms: 5}, "payment": {Count: served - no, P99Ms: 3}}})
		}
		rd := &runData{Label: label}
		for _, s := range stored.GroupTPCC(reps, stored.KeysOf(reps)) {
			rd.TPCC = append(rd.TPCC, tpccStep{*s})
		}
		return rd
	}
	verdictOf := func(runs ...*runData) string {
		t.Helper()
		for _, b := range tpccComparison(runs) {
			if b.Table != nil {
				return b.Table.Rows[0][slices.Index(b.Table.Header, "NOPM verdict")]
			}
		}
		t.Fatal("no ratio table")
		return ""
	}
	first, second := run("first", 100, 44), run("second", 99, 48)
	if c := compareStat(second.TPCC[0], first.TPCC[0], "nopm"); c.Verdict != stats.Higher {
		t.Fatalf("the repetitions compare as %q; the case needs them to read as higher", c.Verdict)
	}
	if got := verdictOf(first, second); got != bothHeld {
		t.Errorf("two runs that served their arrivals: NOPM verdict %q; want %q", got, bothHeld)
	}
	if got := verdictOf(first, run("behind", 90, 40)); got != "lower" {
		t.Errorf("a run that served 90 of 100 arrivals: NOPM verdict %q; want lower", got)
	}

	// An instance beside backups, against its baseline, judged alike.
	first.Place = stored.Placement{Instance: "db1", Target: "fast", Phase: phaseBaseline}
	second.Place = stored.Placement{Instance: "db1", Target: "fast", Phase: "beside backups"}
	for _, b := range neighboursRatios([]*runData{first, second}) {
		if b.Table != nil {
			if got := b.Table.Rows[0][slices.Index(b.Table.Header, "NOPM verdict")]; got != bothHeld {
				t.Errorf("beside backups: NOPM verdict %q; want %q", got, bothHeld)
			}
			return
		}
	}
	t.Error("no neighbours ratio table")
}
