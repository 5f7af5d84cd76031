package results

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// A run written by another host's store comes over whole: steps, series,
// histograms and documents, every time moved by the shift, under the
// scenario's group and the given parameters.
func TestImport(t *testing.T) {
	ctx := context.Background()
	src, _ := openTemp(t)
	r, err := src.CreateRun(ctx, "backup", "", map[string]string{"target": "/remote"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	st := Step{RunID: r.ID, Index: 0, Name: "cycle 1", StartedAt: t0, MeasureStart: t0.Add(time.Second), MeasureEnd: t0.Add(9 * time.Second),
		Metrics:    json.RawMessage(`{"backup_s":8}`),
		Points:     []Point{{Name: "dev.total.w_mbps", Step: 0, T: t0.Add(2 * time.Second), Value: 42}},
		Histograms: map[string][]byte{"lat": []byte("bins")}}
	if err := src.AddStep(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := src.AddPoints(ctx, r.ID, []Point{{Name: "host.cpu_idle_pct", Step: NoStep, T: t0.Add(3 * time.Second), Value: 90}}); err != nil {
		t.Fatal(err)
	}
	if err := src.SetDocument(ctx, r.ID, "environment", map[string]string{"host": "h1"}); err != nil {
		t.Fatal(err)
	}
	if err := src.FinishRun(ctx, r.ID, StatusComplete, map[string]int{"cycles": 1}); err != nil {
		t.Fatal(err)
	}

	dst, _ := openTemp(t)
	shift := -1500 * time.Millisecond
	err = dst.Import(ctx, src, r.ID, ImportOptions{Group: "cluster-1", Params: json.RawMessage(`{"instance":"h1db"}`), Shift: shift, Host: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := dst.Run(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Group != "cluster-1" || got.Host != "h1" || got.Status != StatusComplete || string(got.Params) != `{"instance":"h1db"}` ||
		string(got.Summary) != `{"cycles":1}` {
		t.Errorf("imported run = %+v", got)
	}
	orig, _ := src.Run(ctx, r.ID)
	if !got.StartedAt.Equal(orig.StartedAt.Add(shift)) || got.FinishedAt == nil || !got.FinishedAt.Equal(orig.FinishedAt.Add(shift)) {
		t.Errorf("times %v..%v; want %v..%v shifted by %v", got.StartedAt, got.FinishedAt, orig.StartedAt, orig.FinishedAt, shift)
	}
	steps, err := dst.Steps(ctx, r.ID)
	if err != nil || len(steps) != 1 {
		t.Fatalf("steps %v, %v", steps, err)
	}
	if !steps[0].MeasureStart.Equal(t0.Add(time.Second+shift)) || string(steps[0].Metrics) != `{"backup_s":8}` {
		t.Errorf("step = %+v", steps[0])
	}
	pts, err := dst.Points(ctx, r.ID, "dev.total.w_mbps", AllSteps)
	if err != nil || len(pts) != 1 || pts[0].Value != 42 || !pts[0].T.Equal(t0.Add(2*time.Second+shift)) || pts[0].Step != 0 {
		t.Errorf("points %+v, %v", pts, err)
	}
	pts, err = dst.Points(ctx, r.ID, "host.cpu_idle_pct", AllSteps)
	if err != nil || len(pts) != 1 || pts[0].Step != NoStep {
		t.Errorf("unstepped points %+v, %v", pts, err)
	}
	if h, err := dst.Histogram(ctx, r.ID, 0, "lat"); err != nil || string(h) != "bins" {
		t.Errorf("histogram %q, %v", h, err)
	}
	if d, err := dst.Document(ctx, r.ID, "environment"); err != nil || string(d) != `{"host":"h1"}` {
		t.Errorf("document %s, %v", d, err)
	}
	// Twice is refused, and leaves the first copy as it was.
	if err := dst.Import(ctx, src, r.ID, ImportOptions{}); err == nil {
		t.Error("a second import of the same run succeeded")
	}
	if steps, _ := dst.Steps(ctx, r.ID); len(steps) != 1 {
		t.Errorf("after a refused import: %d steps", len(steps))
	}
	if err := dst.Import(ctx, src, "nope", ImportOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown run: %v; want ErrNotFound", err)
	}
}
