package report

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/report/chart"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
)

// repeatedDiskRun stores a `disk run --repeat 3` of two points, their
// repetitions interleaved (A1 B1 A2 B2 A3 B3) as the run stores them: a
// random read (reads only) and a random 70/30 mix (both directions), each
// repetition with a second-by-second read IOPS trace.
func repeatedDiskRun(t *testing.T, store *results.Store) string {
	t.Helper()
	ctx := context.Background()
	r, err := store.CreateRun(ctx, "disk", "", map[string]any{"profile": "quick", "target": "/data", "repeat": 3})
	must(t, err)
	dir := func(iops, mbps, mean, p99, p999 float64) *stored.DirStats {
		return &stored.DirStats{IOPS: iops, MBps: mbps, MeanMs: mean, P50Ms: mean, P95Ms: p99 / 2, P99Ms: p99, P999Ms: p999,
			MaxMs: 2 * p999, IOs: uint64(iops * 10)}
	}
	var pts []results.Point
	index := 0
	for rep := range 3 {
		f := float64(rep)
		for _, p := range []stored.Point{
			{Name: "4k-randread-qd8x1", BS: "4k", BSBytes: 4096, RW: "randread", IODepth: 8, Jobs: 1,
				Read:      dir(9000+1000*f, 36+4*f, 0.8+0.1*f, 2+0.5*f, 4+f),
				UsrCPUPct: 10 + 2*f, SysCPUPct: 2 + f, Seconds: 10},
			{Name: "4k-randrw70-qd8x1", BS: "4k", BSBytes: 4096, RW: "randrw", RWMixRead: 70, IODepth: 8, Jobs: 1,
				Read:      dir(7000+500*f, 28+2*f, 0.2+0.1*f, 0.6+0.1*f, 1+0.2*f),
				Write:     dir(3000+200*f, 12+f, 0.5+0.1*f, 1+0.5*f, 2+f),
				UsrCPUPct: 5 + f, SysCPUPct: 1 + 0.5*f, Seconds: 10},
		} {
			p.Repetition = rep + 1
			doc, err := json.Marshal(stored.PointStep{Point: p, JobFile: "[global]\nname=" + p.Name + "\n"})
			must(t, err)
			start := t0.Add(time.Duration(index) * 12 * time.Second)
			must(t, store.AddStep(ctx, results.Step{RunID: r.ID, Index: index, Name: p.Name, StartedAt: start,
				MeasureStart: start.Add(2 * time.Second), MeasureEnd: start.Add(12 * time.Second), Metrics: doc}))
			for sec := range 10 {
				ts := start.Add(time.Duration(2+sec) * time.Second)
				pts = append(pts, results.Point{Name: "read.iops", Step: index, T: ts, Value: p.Read.IOPS * (1 + float64(sec%2)/20)},
					results.Point{Name: "read.clat_ms", Step: index, T: ts, Value: p.Read.MeanMs})
			}
			index++
		}
	}
	must(t, store.AddPoints(ctx, r.ID, pts))
	must(t, store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	return r.ID
}

// A repeated disk run reads as one point per name whose figures are the
// means over its repetitions, and its charts carry each figure's 95%
// interval over them: the plotted direction's Stats for a point with one
// direction (and the worse direction's p99), each repetition's own sum or
// mean for a figure over both.
func TestRepeatedDiskRun(t *testing.T) {
	ctx := context.Background()
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	id := repeatedDiskRun(t, store)

	doc, runs, err := Build(ctx, store, Options{Runs: []string{id}})
	must(t, err)
	rd := runs[0]
	if len(rd.Disk) != 2 || rd.Disk[0].Name != "4k-randread-qd8x1" || rd.Disk[1].Name != "4k-randrw70-qd8x1" {
		t.Fatalf("disk points %v; want the two points, once each, in the order they ran", pointNames(runs))
	}
	for i, d := range rd.Disk {
		if want := []int{i, i + 2, i + 4}; !reflect.DeepEqual(d.Indexes, want) || d.Index != i || len(d.Repetitions) != 3 {
			t.Errorf("%s: step %d, steps %v, %d repetitions; want step %d, steps %v, 3 repetitions",
				d.Name, d.Index, d.Indexes, len(d.Repetitions), i, want)
		}
		if s := d.Stats["read.iops"]; s.N != 3 || !s.HasCI() {
			t.Errorf("%s: read.iops stats %+v; want n = 3 with an interval", d.Name, s)
		}
	}

	// One row per point, with the means and how many repetitions they are over.
	_, tables := contents(doc.Sections...)
	tab := tables["storage-points"]
	if tab == nil {
		t.Fatal("no points table")
	}
	want := [][]string{
		{rd.Label, "4k-randread-qd8x1", "3", "10,000", "40.0", "0.90", "2.50", "5.00", "–", "–", "–", "–", "–", "12.0 / 3.00 %"},
		{rd.Label, "4k-randrw70-qd8x1", "3", "7,500", "30.0", "0.30", "0.70", "1.20", "3,200", "13.0", "0.60", "1.50", "3.00", "6.00 / 1.50 %"},
	}
	if !reflect.DeepEqual(tab.Rows, want) {
		t.Errorf("points table rows\n%q\nwant\n%q", tab.Rows, want)
	}
	if tab.Header[2] != "n" || !strings.Contains(tab.Caption, "means over its n repetitions") {
		t.Errorf("points table header %q, caption %q; want an n column and a caption saying the figures are means", tab.Header, tab.Caption)
	}

	figs := map[string]*Figure{}
	for _, s := range doc.Sections {
		walk(s.Blocks, func(b Block) {
			if b.Figure != nil {
				figs[b.Figure.ID] = b.Figure
			}
		})
	}
	// interval is the 95% interval of xs, as the chart points must carry it.
	interval := func(xs ...float64) stats.Summary { return stats.Of(xs) }
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	check := func(fig string, i int, y float64, ci stats.Summary) {
		t.Helper()
		f := figs[fig]
		if f == nil {
			t.Errorf("no figure %s", fig)
			return
		}
		// A bar per point in the run's one series; a family line per point.
		var pts []chart.Point
		if f.Chart.Kind == chart.Bar && len(f.Chart.Series) == 1 {
			pts = f.Chart.Series[0].Points
		} else {
			for _, s := range f.Chart.Series {
				pts = append(pts, s.Points...)
			}
		}
		if i >= len(pts) {
			t.Errorf("%s: no point %d among %d", fig, i, len(pts))
			return
		}
		pt := pts[i]
		if !(pt.Low < pt.High) || !pt.HasBar() {
			t.Errorf("%s, point %d: interval %g–%g; want Low < High", fig, i, pt.Low, pt.High)
		}
		if !near(pt.Y, y) || !near(pt.Low, ci.Low) || !near(pt.High, ci.High) {
			t.Errorf("%s, point %d: %g (%g–%g); want %g (%g–%g)", fig, i, pt.Y, pt.Low, pt.High, y, ci.Low, ci.High)
		}
		if !(pt.Low < pt.Y && pt.Y < pt.High) {
			t.Errorf("%s, point %d: %g outside its interval %g–%g", fig, i, pt.Y, pt.Low, pt.High)
		}
	}
	// IOPS: read.iops's Stats; the mix's reads and writes summed per repetition.
	check("storage-iops", 0, 10000, interval(9000, 10000, 11000))
	check("storage-iops", 1, 10700, interval(10000, 10700, 11400))
	check("storage-mbps", 0, 40, interval(36, 40, 44))
	check("storage-mbps", 1, 43, interval(40, 43, 46))
	// p99: the read's; the mix's worse direction (writes, 1.5 ms against 0.7).
	check("storage-p99", 0, 2.5, interval(2, 2.5, 3))
	check("storage-p99", 1, 1.5, interval(1, 1.5, 2))
	// Average latency against IOPS: read.mean_ms's Stats; the mix's
	// IOPS-weighted mean over its directions, per repetition.
	weighted := func(r, ri, w, wi float64) float64 { return (r*ri + w*wi) / (ri + wi) }
	check("storage-iops-latency", 0, 0.9, interval(0.8, 0.9, 1.0))
	check("storage-iops-latency", 1, weighted(0.3, 7500, 0.6, 3200),
		interval(weighted(0.2, 7000, 0.5, 3000), weighted(0.3, 7500, 0.6, 3200), weighted(0.4, 8000, 0.7, 3400)))
	if f := figs["storage-iops-latency"]; f != nil && !strings.Contains(f.Caption, errorBarNote) {
		t.Errorf("the IOPS-latency figure's caption %q does not explain its error bars", f.Caption)
	}

	// Each repetition's per-second trace, from its own measured interval.
	if f := figs["storage-trace-0-iops"]; f == nil {
		t.Error("no per-second IOPS trace of the first point")
	} else {
		var names []string
		for _, s := range f.Chart.Series {
			names = append(names, s.Name)
			if len(s.Points) != 10 || s.Points[0].X != 0 {
				t.Errorf("trace %s: %d points from %g s; want 10 from 0 s", s.Name, len(s.Points), s.Points[0].X)
			}
		}
		if want := []string{"reads, repetition 1", "reads, repetition 2", "reads, repetition 3"}; !reflect.DeepEqual(names, want) {
			t.Errorf("trace series %q; want %q", names, want)
		}
	}

	// And the report renders.
	w, err := Write(ctx, store, Options{Runs: []string{id}, Out: filepath.Join(t.TempDir(), "report.html"), Version: "test", Now: t0})
	must(t, err)
	if w.HTML == "" || w.Markdown == "" {
		t.Errorf("wrote %+v; want the HTML and the Markdown", w)
	}
}

// Two repeated disk runs of the same points on the same target: the ratio
// table compares each point over the repetitions, and two identical runs
// are not distinguishable.
func TestRepeatedDiskRatios(t *testing.T) {
	ctx := context.Background()
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	a, b := repeatedDiskRun(t, store), repeatedDiskRun(t, store)
	doc, _, err := Build(ctx, store, Options{Runs: []string{a, b}})
	must(t, err)
	_, tables := contents(doc.Sections...)
	rt := tables["storage-ratios"]
	if rt == nil || len(rt.Rows) != 2 {
		t.Fatalf("ratio table %+v; want a row per point", rt)
	}
	for _, row := range rt.Rows {
		// run, point, n, IOPS ratio, IOPS verdict, MB/s, avg latency, p99 ratio, p99 verdict
		if row[2] != "3" || !strings.HasPrefix(row[3], "1.00x (") || row[4] != "not distinguishable at n=3" || row[8] != "not distinguishable at n=3" {
			t.Errorf("ratio row %q: want n 3, 1.00x with an interval, not distinguishable", row)
		}
	}
}
