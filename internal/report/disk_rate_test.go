package report

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
)

// ratedDiskRun stores a disk run of a 70% mix on 2 jobs at 100, 200 and
// 400 I/Os a second per job, doing iops[i] in all with a p99 of p99[i] ms.
func ratedDiskRun(t *testing.T, store *results.Store, label string, iops, p99 []float64) string {
	t.Helper()
	ctx := context.Background()
	r, err := store.CreateRun(ctx, "disk", "", map[string]any{"profile": "quick", "target": "/" + label})
	must(t, err)
	for i, rate := range []int{100, 200, 400} {
		dir := func(share float64) *stored.DirStats {
			return &stored.DirStats{IOPS: share * iops[i], MeanMs: p99[i] / 4, P99Ms: p99[i], IOs: uint64(share * iops[i] * 4)}
		}
		p := stored.Point{Name: fmt.Sprintf("4k-randrw70-qd8x2-rate%d", rate), BS: "4k", BSBytes: 4096, RW: "randrw", RWMixRead: 70,
			IODepth: 8, Jobs: 2, RateIOPS: rate, Read: dir(0.7), Write: dir(0.3), Seconds: 4}
		doc, err := json.Marshal(stored.PointStep{Point: p})
		must(t, err)
		must(t, store.AddStep(ctx, results.Step{RunID: r.ID, Index: i, Name: p.Name, StartedAt: t0, MeasureStart: t0, MeasureEnd: t0, Metrics: doc}))
	}
	must(t, store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	return r.ID
}

// Points run at fixed rates: the storage section names each run's knee of
// them, and draws each run's p99 against the I/Os it did, in the order of
// the rates, its knee labelled.
func TestDiskKnees(t *testing.T) {
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	fast := ratedDiskRun(t, store, "fast", []float64{200, 400, 800}, []float64{0.4, 0.5, 0.6})
	// The slow tier falls behind at 800 offered, and its p99 passes ten
	// times the lowest rate's at 400.
	slow := ratedDiskRun(t, store, "slow", []float64{200, 400, 590}, []float64{0.4, 18, 100})
	doc, _, err := Build(context.Background(), store, Options{Runs: []string{fast, slow}, Labels: map[string]string{fast: "fast", slow: "slow"}})
	must(t, err)
	sec := section(doc, "storage")
	got := strings.Join(sec.findings(), "\n")
	for _, want := range []string{
		"fast: knee of 4k-randrw70-qd8x2: 800 IOPS offered (done within 2% of the rate, p99 within 4.000 ms); every rate held",
		"slow: knee of 4k-randrw70-qd8x2: 200 IOPS offered (done within 2% of the rate, p99 within 4.000 ms); at 400 IOPS offered, the p99 completion latency was 18.000 ms, over the 4.000 ms bound.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("storage findings:\n%s\nwant %q", got, want)
		}
	}
	var fig *Figure
	for _, b := range sec.Blocks {
		if b.Figure != nil && b.Figure.ID == "storage-rate-latency-0" {
			fig = b.Figure
		}
	}
	if fig == nil || len(fig.Chart.Series) != 2 {
		t.Fatalf("the rate-latency chart: %+v; want one with a line per run", fig)
	}
	for i, want := range []struct {
		x    []float64
		knee int
	}{{[]float64{200, 400, 800}, 2}, {[]float64{200, 400, 590}, 0}} {
		s := fig.Chart.Series[i]
		for j, p := range s.Points {
			if p.X != want.x[j] || (p.Label == "knee") != (j == want.knee) {
				t.Errorf("%s: point %d at %.0f IOPS, label %q; want %.0f, the knee at point %d", s.Name, j, p.X, p.Label, want.x[j], want.knee)
			}
		}
	}
}
