package report

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
)

// tpchRun stores a TPC-H run of two power tests on tier label whose query
// n takes base·n seconds (times 1.1 in the second test), with a wrong
// answer for Q5 when wrong, and a throughput test of two streams taking
// tput seconds. Query n of slower takes slower[n] times as long again,
// reading 30 MB/s instead of 100.
func tpchRun(t *testing.T, store *results.Store, label, engine string, base float64, wrong bool, tput float64, slower map[int]float64) string {
	t.Helper()
	ctx := context.Background()
	r, err := store.CreateRun(ctx, stored.KindTPCH, "tiers", stored.TPCHParams{Engine: engine, Scale: 1, Seed: 7, Validate: wrong,
		Refresh: true, Streams: 2, Repeat: 2, Placement: stored.Placement{Label: label}})
	must(t, err)
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	idx := 0
	add := func(q stored.TPCHQuery, at time.Time) {
		b, err := json.Marshal(q)
		must(t, err)
		idx++
		must(t, store.AddStep(ctx, results.Step{RunID: r.ID, Index: idx, Name: q.Name(), StartedAt: at, MeasureStart: at,
			MeasureEnd: at.Add(time.Duration(q.Seconds * float64(time.Second))), Metrics: b}))
	}
	for rep := 1; rep <= 2; rep++ {
		add(stored.TPCHQuery{Test: stored.TPCHPower, Rep: rep, Refresh: "RF1", Seconds: 0.5, Status: stored.TPCHOK}, t0)
		for n := 1; n <= 22; n++ {
			q := stored.TPCHQuery{Test: stored.TPCHPower, Rep: rep, Query: n, Seconds: base * float64(n) * (1 + 0.1*float64(rep-1)),
				Status: stored.TPCHOK, ReadMBps: 100}
			if k, ok := slower[n]; ok {
				q.Seconds, q.ReadMBps = q.Seconds*k, 30
			}
			if wrong && n == 5 {
				q.Status, q.Error = stored.TPCHWrong, "Q5: row 1 differs"
			}
			add(q, t0)
		}
	}
	for s := 1; s <= 2; s++ {
		for n := 1; n <= 22; n++ {
			// The streams span [t0+100 s, t0+100 s+tput].
			at := t0.Add(100*time.Second + time.Duration(float64(n-1)/21*(tput-1)*float64(time.Second)))
			add(stored.TPCHQuery{Test: stored.TPCHThroughput, Stream: s, Query: n, Seconds: 1, Status: stored.TPCHOK}, at)
		}
	}
	must(t, store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	return r.ID
}

// Two tiers' TPC-H runs: each query's power-test time as a bar per tier,
// the geometric means with their intervals over two power tests, the
// throughput@size from the streams' span, a wrong answer as a finding,
// and the ratio of the geometric means.
func TestTPCHSection(t *testing.T) {
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	fast := tpchRun(t, store, "nvme", "postgres", 0.1, false, 40, nil)
	slow := tpchRun(t, store, "sata", "postgres", 0.3, true, 80, nil)
	doc, _, err := Build(context.Background(), store, Options{Runs: []string{fast, slow}})
	must(t, err)
	sec := section(doc, "tpch")
	if sec == nil {
		t.Fatalf("no tpch section; sections %v", sectionIDs(doc))
	}
	var fig *Figure
	tables := map[string]*Table{}
	walk(sec.Blocks, func(b Block) {
		if b.Figure != nil && b.Figure.ID == "tpch-queries" {
			fig = b.Figure
		}
		if b.Table != nil {
			tables[b.Table.ID] = b.Table
		}
	})
	if fig == nil || len(fig.Chart.Categories) != 22 || len(fig.Chart.Series) != 2 {
		t.Fatalf("chart %+v; want 22 queries, a series per tier", fig)
	}
	// Q10 on sata: 3 s and 3.3 s, a mean of 3.15.
	if y := fig.Chart.Series[1].Points[9].Y; math.Abs(y-3.15) > 1e-9 || fig.Chart.Series[1].Name != "sata" {
		t.Errorf("sata's Q10 bar is %g (%s); want 3.15", y, fig.Chart.Series[1].Name)
	}
	runs := tables["tpch-runs"]
	if runs == nil || len(runs.Rows) != 2 {
		t.Fatalf("runs table %+v", runs)
	}
	// Geometric mean of base·n over n = 1..22 is base·(22!)^(1/22).
	g := math.Exp(lgammaOf(23) / 22)
	for i, want := range []float64{0.1 * g, 0.3 * g} {
		mean := (want + want*1.1) / 2
		if got := runs.Rows[i][3]; !strings.HasPrefix(got, fmt.Sprintf("%.3f ± ", mean)) {
			t.Errorf("%s's geometric mean %q; want %.3f with an interval", runs.Rows[i][0], got, mean)
		}
	}
	if tp := runs.Rows[0][5]; !strings.HasPrefix(tp, "3960.0 ") { // 2·22·3600/40 · SF 1
		t.Errorf("nvme's throughput@size %q; want 3960.0", tp)
	}
	if a := runs.Rows[1][6]; !strings.Contains(a, "WRONG: power 1 Q5, power 2 Q5") {
		t.Errorf("sata's answers %q; want both Q5s wrong", a)
	}
	found := strings.Join(sec.findings(), "\n")
	if !strings.Contains(found, "sata: wrong answers for power 1 Q5") || !strings.Contains(found, "sata's geometric mean query time is 3.00x") {
		t.Errorf("findings %q; want the wrong answers and sata 3.00x nvme", found)
	}
	if q := tables["tpch-per-query"]; q == nil || len(q.Rows) != 22 || q.Rows[0][1] != "0.105 (100 MB/s)" {
		t.Errorf("per-query table %+v; want Q1 on nvme 0.105 s at 100 MB/s", q)
	}
}

// Two tiers on each of two engines: each engine's tiers are compared with
// each other, never across engines.
func TestTPCHSectionPerEngine(t *testing.T) {
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	ids := []string{
		tpchRun(t, store, "pg fast", "postgres", 0.1, false, 40, nil),
		tpchRun(t, store, "pg slow", "postgres", 0.2, false, 40, nil),
		tpchRun(t, store, "maria fast", "mariadb", 0.5, false, 40, nil),
		tpchRun(t, store, "maria slow", "mariadb", 2, false, 40, map[int]float64{21: 3, 9: 2}),
	}
	doc, _, err := Build(context.Background(), store, Options{Runs: ids})
	must(t, err)
	sec := section(doc, "tpch")
	found := strings.Join(sec.findings(), "\n")
	// maria slow: 4x, Q21 12x, Q9 8x: a geometric mean 4·6^(1/22) = 4.34x.
	for _, want := range []string{"pg slow's geometric mean query time is 2.00x", "maria slow's geometric mean query time is 4.34x",
		"Against maria fast, the queries that lost most on maria slow: Q21 12.0x (30.0 vs 100.0 MB/s read), Q9 8.0x (30.0 vs 100.0 MB/s read), Q"} {
		if !strings.Contains(found, want) {
			t.Errorf("findings %q; want %q", found, want)
		}
	}
	if strings.Contains(found, "maria fast's geometric mean") {
		t.Errorf("findings %q compare engines with each other; want tiers per engine", found)
	}
	var lost *Table
	walk(sec.Blocks, func(b Block) {
		if b.Table != nil && b.Table.ID == "tpch-lost" {
			lost = b.Table
		}
	})
	if lost == nil || len(lost.Rows) != 6 || lost.Rows[3][0] != "maria slow" || lost.Rows[3][2] != "Q21" || lost.Rows[3][3] != "12.00x" {
		t.Errorf("lost-most table %+v; want three queries per comparison, maria slow's Q21 12.00x first of its three", lost)
	}
}

func lgammaOf(x float64) float64 { v, _ := math.Lgamma(x); return v }
