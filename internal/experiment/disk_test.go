package experiment_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/results"
)

// requireFio fails under CI=true and skips elsewhere when fio is missing.
func requireFio(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("fio"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("fio is not installed, and CI=true: integration tests must run (make setup installs it)")
		}
		t.Skip("fio is not installed (make setup installs it)")
	}
}

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
	requireFio(t)
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
