package experiment_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/fio/fiotest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
)

type diskDir struct {
	IOPS   float64 `json:"iops"`
	MBps   float64 `json:"mbps"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// diskStat is a figure's {"mean","stddev","n","ci95_low","ci95_high"}.
type diskStat struct {
	Mean   float64  `json:"mean"`
	Stddev float64  `json:"stddev"`
	N      int      `json:"n"`
	Low    *float64 `json:"ci95_low"`
	High   *float64 `json:"ci95_high"`
}

// A sweep of 2 points, 3 repetitions each, interleaved. The document has
// one entry per point, in the order given, with n = 3 and a 95% interval
// around the mean IOPS, which the point's iops key holds; percentiles
// pooled from the merged histograms; the repetitions as they ran. The
// store keeps all six, each with its histogram, in the order A,B,A,B,A,B;
// back to back keeps each point's repetitions together (A,A,B,B). This was
// the CLI's TestDiskRunRepeat; the text view of a repeated run stays there.
func TestRunDiskRepeatSweep(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	res, target := t.TempDir(), t.TempDir()
	sweep := func(repeat int, backToBack bool) *experiment.DiskResult {
		t.Helper()
		out, err := experiment.RunDisk(context.Background(), experiment.DiskConfig{
			Record: experiment.Record{Results: res, Telemetry: experiment.DefaultTelemetry},
			Target: target, Profile: "ad-hoc", Repeat: repeat, BackToBack: backToBack,
			Points:        fio.Sweep(fio.Spec{}, []int64{4096}, []string{fio.RandRead}, nil, []int{1}, []int{1, 2}),
			Settings:      fio.Settings{Duration: time.Second, Direct: true},
			TargetOptions: fio.TargetOptions{Size: 16 << 20},
		}, experiment.Nop{})
		if err != nil {
			t.Fatalf("disk run (repeat %d, back to back %v): %v", repeat, backToBack, err)
		}
		return out
	}
	var doc struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
		Repeat int    `json:"repeat"`
		Points []struct {
			Name       string              `json:"name"`
			Repetition int                 `json:"repetition"`
			Read       *diskDir            `json:"read"`
			Stats      map[string]diskStat `json:"stats"`
			Pooled     struct {
				Read *diskDir `json:"read"`
			} `json:"pooled"`
			Repetitions []struct {
				Name       string   `json:"name"`
				Repetition int      `json:"repetition"`
				Read       *diskDir `json:"read"`
			} `json:"repetitions"`
		} `json:"points"`
	}
	out := asDoc(t, sweep(3, false), &doc)
	names := []string{"4k-randread-qd1x1", "4k-randread-qd2x1"}
	if doc.Status != "complete" || doc.Repeat != 3 || len(doc.Points) != 2 {
		t.Fatalf("status %s, repeat %d, %d points; want complete, 3 and 2:\n%s", doc.Status, doc.Repeat, len(doc.Points), out)
	}
	for i, p := range doc.Points {
		iops := p.Stats["read.iops"]
		if p.Name != names[i] || p.Repetition != 0 || p.Read == nil || iops.N != 3 || iops.Low == nil || iops.High == nil ||
			!(*iops.Low <= iops.Mean && iops.Mean <= *iops.High) || math.Abs(p.Read.IOPS-iops.Mean) > 1e-6*iops.Mean {
			t.Errorf("point %d: %s, repetition %d, read %+v, read.iops stats %+v", i, p.Name, p.Repetition, p.Read, iops)
		}
		if mb := p.Stats["read.mbps"]; mb.N != 3 || mb.Low == nil || !(*mb.Low <= mb.Mean && mb.Mean <= *mb.High) {
			t.Errorf("%s: read.mbps stats %+v", p.Name, mb)
		}
		if s := p.Stats["read.p99_ms"]; s.N != 3 || math.Abs(s.Mean-p.Read.P99Ms) > 1e-9 {
			t.Errorf("%s: read.p99_ms stats %+v, read p99 %v", p.Name, s, p.Read.P99Ms)
		}
		if pr := p.Pooled.Read; pr == nil || !(0 < pr.P50Ms && pr.P50Ms <= pr.P99Ms && pr.P99Ms <= pr.MaxMs) {
			t.Errorf("%s: pooled read %+v", p.Name, pr)
		}
		var sum float64
		for r, rep := range p.Repetitions {
			sum += rep.Read.IOPS
			if rep.Name != p.Name || rep.Repetition != r+1 {
				t.Errorf("%s, repetition %d: %s, %d", p.Name, r+1, rep.Name, rep.Repetition)
			}
		}
		if len(p.Repetitions) != 3 || math.Abs(sum/3-iops.Mean) > 1e-6*iops.Mean {
			t.Errorf("%s: %d repetitions averaging %v IOPS, mean %v", p.Name, len(p.Repetitions), sum/3, iops.Mean)
		}
	}
	if got := storedPoints(t, res, doc.RunID, "read.clat_ns"); got != "qd1x1#1 qd2x1#1 qd1x1#2 qd2x1#2 qd1x1#3 qd2x1#3" {
		t.Errorf("stored steps %s; want the points interleaved, each repetition with its histogram", got)
	}

	if got := storedPoints(t, res, sweep(2, true).RunID, "read.clat_ns"); got != "qd1x1#1 qd1x1#2 qd2x1#1 qd2x1#2" {
		t.Errorf("back to back: stored steps %s", got)
	}
}

// storedPoints lists a disk run's stored steps in their order as
// "qdDEPTHxJOBS#REPETITION", checking that each has the histogram hist.
func storedPoints(t *testing.T, dir, runID, hist string) string {
	t.Helper()
	store, err := results.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	steps, err := store.Steps(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, s := range steps {
		var doc struct {
			Name       string `json:"name"`
			Repetition int    `json:"repetition"`
		}
		if err := json.Unmarshal(s.Metrics, &doc); err != nil {
			t.Fatal(err)
		}
		if s.Index != i || s.Name != doc.Name {
			t.Errorf("step %d: index %d, name %s in a document of %s", i, s.Index, s.Name, doc.Name)
		}
		if h, err := store.Histogram(ctx, runID, i, hist); err != nil || len(h) == 0 {
			t.Errorf("step %d (%s): no %s histogram (%v)", i, doc.Name, hist, err)
		}
		got = append(got, fmt.Sprintf("%s#%d", strings.TrimPrefix(doc.Name, "4k-randread-"), doc.Repetition))
	}
	return strings.Join(got, " ")
}

type diskDoc struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Points []struct {
		Name    string             `json:"name"`
		BS      string             `json:"bs"`
		RW      string             `json:"rw"`
		IODepth int                `json:"iodepth"`
		Jobs    int                `json:"jobs"`
		Read    *diskDir           `json:"read"`
		Write   *diskDir           `json:"write"`
		Host    map[string]float64 `json:"host"`
		Device  map[string]float64 `json:"device"`
	} `json:"points"`
}

// The quick profile on a temporary directory: every point measured, with
// ordered percentiles, a per-second series as long as the point, its job
// file stored, and the test file gone afterwards. This was the CLI's
// TestDiskRunQuick.
func TestRunDiskQuickProfile(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	target, res := t.TempDir(), t.TempDir()
	cfg, err := experiment.ProfileConfig("quick", 3*time.Second, time.Second, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Results, cfg.Telemetry, cfg.Target = res, experiment.DefaultTelemetry, target
	result, err := experiment.RunDisk(context.Background(), cfg, experiment.Nop{})
	if err != nil {
		t.Fatal(err)
	}
	var doc diskDoc
	out := asDoc(t, result, &doc)
	want := []string{"4k-randrw70-qd8x2", "4k-randread-qd1x1", "256k-read-qd8x1", "256k-write-qd8x1"}
	if len(doc.Points) != len(want) || doc.Status != "complete" {
		t.Fatalf("status %s, %d points, want %d\n%s", doc.Status, len(doc.Points), len(want), out)
	}
	for i, p := range doc.Points {
		if p.Name != want[i] {
			t.Errorf("point %d is %s, want %s", i, p.Name, want[i])
		}
		reads, writes := p.RW != "write" && p.RW != "randwrite", p.RW == "write" || p.RW == "randwrite" || p.RW == "randrw"
		if (p.Read != nil) != reads || (p.Write != nil) != writes {
			t.Errorf("%s: read %v write %v, want read %t write %t", p.Name, p.Read, p.Write, reads, writes)
		}
		for dir, d := range map[string]*diskDir{"read": p.Read, "write": p.Write} {
			if d == nil {
				continue
			}
			if d.IOPS <= 0 || d.MBps <= 0 || d.MeanMs <= 0 {
				t.Errorf("%s %s: IOPS %.0f, MB/s %.1f, mean %.3f ms: want all > 0", p.Name, dir, d.IOPS, d.MBps, d.MeanMs)
			}
			// fio's percentiles are the upper values of its histogram's
			// bins, 64 to a power of two: one may pass the exact maximum by
			// up to a bin's width, 1/64 of it.
			if !(0 < d.P50Ms && d.P50Ms <= d.P95Ms && d.P95Ms <= d.P99Ms && d.P99Ms <= d.P999Ms && d.P999Ms <= d.MaxMs*(1+1.0/64)) {
				t.Errorf("%s %s: percentiles out of order: %+v", p.Name, dir, *d)
			}
		}
	}
	// Telemetry of each point: the host, and the device under the target,
	// which saw the sequential writes.
	for _, p := range doc.Points {
		if _, ok := p.Host["cpu_iowait_pct"]; !ok {
			t.Errorf("%s: no host telemetry: %v", p.Name, p.Host)
		}
	}
	if w := doc.Points[3].Device["w_iops"]; w <= 0 {
		t.Errorf("%s: device w_iops %.0f, want > 0 (device telemetry %v)", doc.Points[3].Name, w, doc.Points[3].Device)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("the target directory still holds %v after the run", entries)
	}

	store, err := results.OpenReadOnly(res)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	run, err := store.Run(ctx, doc.RunID)
	if err != nil || run.Kind != "disk" || run.Status != "complete" || !strings.Contains(string(run.Params), "fio-") {
		t.Fatalf("stored run %+v (%v): want a complete disk run with the fio version", run, err)
	}
	steps, err := store.Steps(ctx, doc.RunID)
	if err != nil || len(steps) != len(want) {
		t.Fatalf("%d stored steps (%v), want %d", len(steps), err, len(want))
	}
	for i, st := range steps {
		var m struct {
			JobFile string `json:"job_file"`
		}
		if err := json.Unmarshal(st.Metrics, &m); err != nil || !strings.Contains(m.JobFile, "rw=") {
			t.Errorf("step %d keeps no job file: %s", i, st.Metrics)
		}
		dir := "read"
		if doc.Points[i].Read == nil {
			dir = "write"
		}
		pts, err := store.Points(ctx, doc.RunID, dir+".iops", i)
		if err != nil || len(pts) < 2 || len(pts) > 4 {
			t.Errorf("point %s: %d seconds of %s.iops (%v), want about 3", st.Name, len(pts), dir, err)
		}
		if h, err := store.Histogram(ctx, doc.RunID, i, dir+".clat_ns"); err != nil || len(h) == 0 {
			t.Errorf("point %s: no stored %s histogram (%v)", st.Name, dir, err)
		}
	}
}

// A disk run given fractions measures each point uncapped first, then
// offers it each fraction of that with fio's Poisson-paced rate_iops, and
// finds the knee: at a quarter of the maximum the device keeps up, at
// four times it cannot. A rate list beside fractions, a fraction of 0 and
// a rate that is not whole I/Os are refused before anything runs.
func TestRunDiskRateFractions(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	target, dir := t.TempDir(), t.TempDir()
	cfg := experiment.DiskConfig{
		Record: experiment.Record{Results: dir, Telemetry: experiment.DefaultTelemetry},
		Target: target, Profile: "ad-hoc", Repeat: 1, RateFractions: []float64{25, 400},
		Points:        []fio.Spec{{Name: "4k-randread-qd1x1", BS: 4096, RW: fio.RandRead, IODepth: 1, Jobs: 1}},
		Settings:      fio.Settings{Duration: 2 * time.Second, Direct: true},
		TargetOptions: fio.TargetOptions{Size: 16 << 20},
	}
	// Direct I/O: the device's latency bounds the maximum. Reads from the
	// page cache made it the CPU fio got, which on a loaded host changed
	// tenfold between the maximum and the rates (CI run 43 failed all
	// three tries). A host as loaded as CI's can still starve fio of the
	// CPU it needs at a quarter of the maximum it measured moments before
	// (CI run 30 did 93.9% of it), or starve the maximum itself, which
	// four times over then meets (92 IOPS measured, 367 held); such a run
	// says nothing about the knee, so it is run again, three times at most.
	held := func(p stored.Point) bool {
		return math.Abs(p.Read.IOPS-float64(p.RateIOPS)) <= 0.02*float64(p.RateIOPS)+3*math.Sqrt(float64(p.RateIOPS)*p.Seconds)/p.Seconds
	}
	var out *experiment.DiskResult
	for try := 1; ; try++ {
		var err error
		rec := &recorder{}
		out, err = experiment.RunDisk(context.Background(), cfg, rec)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Points) != 3 || out.Points[0].RateIOPS != 0 || out.Points[0].Read == nil {
			t.Fatalf("points %+v; want the uncapped one, then two rated", out.Points)
		}
		// The uncapped point is counted with those that follow it.
		var counts []string
		for _, p := range rec.progress {
			if p.Point != nil {
				counts = append(counts, fmt.Sprintf("%d/%d", p.Point.Index+1, p.Point.Count))
			}
		}
		if !slices.Equal(counts, []string{"1/3", "2/3", "3/3"}) {
			t.Errorf("the points' progress %v; want 1/3, 2/3, 3/3", counts)
		}
		// The knee's own rule (2%, no allowance for chance) must hold
		// at the low rate too, or the knee falls below it.
		low := out.Points[1]
		if try == 3 || low.Read == nil || held(low) && len(out.Knees) == 1 && out.Knees[0].OfferedIOPS != 0 && out.Knees[0].NextIOPS != 0 {
			break
		}
		t.Logf("try %d: fio did %.0f of %d IOPS offered at a quarter of the maximum, %.0f IOPS; knees %+v; running again",
			try, low.Read.IOPS, low.RateIOPS, out.Points[0].Read.IOPS, out.Knees)
	}
	most := out.Points[0].Read.IOPS
	for i, f := range []float64{0.25, 4} {
		p := out.Points[1+i]
		if want := int(math.Round(f * most)); p.RateIOPS != want || p.Name != fmt.Sprintf("4k-randread-qd1x1-rate%d", want) {
			t.Errorf("point %d: %s at rate %d; want %g of %.0f IOPS = %d", i+1, p.Name, p.RateIOPS, f, most, want)
		}
	}
	// Poisson arrivals: the count strays by chance, three standard
	// deviations of it at most.
	if low := out.Points[1]; low.Read == nil || !held(low) {
		t.Errorf("a quarter of the maximum: %.0f IOPS done at a rate of %d over %.1f s", low.Read.IOPS, low.RateIOPS, low.Seconds)
	}
	if len(out.Knees) != 1 || out.Knees[0].OfferedIOPS != float64(out.Points[1].RateIOPS) || out.Knees[0].NextIOPS != float64(out.Points[2].RateIOPS) ||
		!strings.Contains(out.Knees[0].Why, "were done") {
		t.Errorf("knees %+v; want one at %d IOPS, %d not held", out.Knees, out.Points[1].RateIOPS, out.Points[2].RateIOPS)
	}
	for _, c := range []struct {
		mut  func(*experiment.DiskConfig)
		want string
	}{
		{func(c *experiment.DiskConfig) { c.RatesIOPS = []float64{100} }, "rate_iops has both rates and fractions"},
		{func(c *experiment.DiskConfig) { c.RateFractions = []float64{0} }, `rate_iops "0%" is out of range`},
		{func(c *experiment.DiskConfig) { c.RateFractions, c.RatesIOPS = nil, []float64{10.5} }, "rate_iops 10.5 is not a rate"},
		{func(c *experiment.DiskConfig) { c.RateFractions, c.KneeP99 = nil, time.Millisecond },
			"knee_p99 1ms bounds the knee of rates, and no rate_iops list is given; give rate_iops too, or leave knee_p99 out"},
	} {
		bad := cfg
		c.mut(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v; want %q", err, c.want)
		}
	}
}
