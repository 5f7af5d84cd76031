package experiment_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/driver"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/fio/fiotest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/stored"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// recorder is a front end of its own: an Observer that keeps every event.
type recorder struct {
	mu       sync.Mutex
	notes    []string
	started  []experiment.Started
	progress []experiment.Progress
	ticks    []experiment.Tick
	results  []experiment.Result
	onResult func(experiment.Result)
}

func (r *recorder) Note(msg string) { r.mu.Lock(); r.notes = append(r.notes, msg); r.mu.Unlock() }
func (r *recorder) Started(s experiment.Started) {
	r.mu.Lock()
	r.started = append(r.started, s)
	r.mu.Unlock()
}
func (r *recorder) Progress(p experiment.Progress) {
	r.mu.Lock()
	r.progress = append(r.progress, p)
	r.mu.Unlock()
}
func (r *recorder) Tick(t experiment.Tick) { r.mu.Lock(); r.ticks = append(r.ticks, t); r.mu.Unlock() }
func (r *recorder) Result(x experiment.Result) {
	r.mu.Lock()
	r.results = append(r.results, x)
	r.mu.Unlock()
	if r.onResult != nil {
		r.onResult(x)
	}
}

// storedRun reads a run and its steps back from the store.
func storedRun(t *testing.T, dir, id string) (results.Run, []results.Step) {
	t.Helper()
	store, err := results.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	run, err := store.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := store.Steps(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return run, steps
}

// stepSeries reads a run's first step's per-second series, by name.
func stepSeries(t *testing.T, dir, runID string, names ...string) map[string][]results.Point {
	t.Helper()
	store, err := results.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	series := map[string][]results.Point{}
	for _, name := range names {
		if series[name], err = store.Points(context.Background(), runID, name, 0); err != nil {
			t.Fatal(err)
		}
	}
	return series
}

func buildTPCC(t *testing.T, ctx context.Context, dsn string) {
	t.Helper()
	db, err := experiment.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec := &recorder{}
	res, err := experiment.Build(ctx, db, engine.BuildOptions{Warehouses: 1, Workers: 2}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.results) != 1 || rec.results[0].Build != res || len(rec.progress) == 0 || rec.progress[0].Build == nil {
		t.Fatalf("the build told its observer %d results and %d progress events; want its result once and its progress", len(rec.results), len(rec.progress))
	}
}

// A TPC-C run driven from a front end of its own, with no cobra: every step
// reaches the observer as a result and the store, ticks carry the driver's
// seconds, and the stored run is complete with the placement it was given.
func TestRunTPCC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	buildTPCC(t, ctx, dsn)
	dir := t.TempDir()
	rec := &recorder{}
	out, err := experiment.RunTPCC(ctx, experiment.TPCCConfig{
		Record: experiment.Record{Results: dir, Group: "g1", Placement: stored.Placement{Label: "fast", Instance: "db-1"},
			Telemetry: experiment.DefaultTelemetry},
		DSN: dsn, VUs: []int{1, 2}, RampUp: time.Second, Duration: 2 * time.Second, Repeat: 1,
	}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != results.StatusComplete || len(out.Steps) != 2 || out.Steps[1].VUs != 2 || out.Mode != engine.ModeRoutines {
		t.Fatalf("result %+v; want 2 complete steps in routines mode", out)
	}
	if len(rec.started) != 1 || rec.started[0].RunID != out.RunID || rec.started[0].Kind != stored.KindTPCC {
		t.Fatalf("started %+v; want the run %s once", rec.started, out.RunID)
	}
	if p, ok := rec.started[0].Params.(*stored.TPCCParams); !ok || p.Warehouses != 1 || p.Label != "fast" {
		t.Errorf("started with params %#v; want the TPC-C parameters of a 1-warehouse schema labelled fast", rec.started[0].Params)
	}
	var steps int
	for _, r := range rec.results {
		if r.TPCC != nil {
			if r.TPCC != out.Steps[steps] {
				t.Errorf("result %d is not the run's step %d", steps, steps)
			}
			steps++
		}
	}
	if steps != 2 {
		t.Errorf("%d step results reached the observer; want 2", steps)
	}
	measured := 0
	for _, tk := range rec.ticks {
		if tk.TPCC == nil {
			t.Fatal("a TPC-C tick without the driver's second")
		}
		if tk.TPCC.Phase == "measure" {
			measured++
		}
	}
	if measured < 2 {
		t.Errorf("%d measured ticks; want at least one per measured second of both steps", measured)
	}
	run, stored := storedRun(t, dir, out.RunID)
	if run.Status != results.StatusComplete || run.Group != "g1" || len(stored) != 2 {
		t.Fatalf("stored run %s in %q with %d steps; want complete in g1 with 2", run.Status, run.Group, len(stored))
	}
	var params map[string]any
	if err := json.Unmarshal(run.Params, &params); err != nil || params["label"] != "fast" || params["instance"] != "db-1" {
		t.Errorf("stored params %s; want the placement's label and instance", run.Params)
	}
}

// Cancelling the context ends a run as interrupted: the error says so and
// what was kept, and the store keeps the finished step and the one cut
// short, whose interval ends where it was cut, with its counters read at
// that edge as at a deadline's.
func TestRunTPCCInterrupted(t *testing.T) {
	t.Parallel()
	dsn := tpcctest.Database(t, 1)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{onResult: func(r experiment.Result) {
		if r.TPCC != nil && r.TPCC.Index == 0 {
			time.AfterFunc(1500*time.Millisecond, cancel) // during the second step
		}
	}}
	const duration = 4 * time.Second
	out, err := experiment.RunTPCC(ctx, experiment.TPCCConfig{Record: experiment.Record{Results: dir}, DSN: dsn,
		VUs: []int{1}, Rates: []float64{1200, 1500}, Arrival: driver.ArrivalConstant, LateAfter: time.Second, // open loop: two steps, a VU not saturating a core
		Duration: duration, Repeat: 1}, rec)
	var in *experiment.Interrupted
	if !errors.As(err, &in) || out == nil || in.RunID != out.RunID {
		t.Fatalf("err %v, result %v; want *Interrupted naming the run", err, out)
	}
	if len(out.Steps) != 2 || out.Steps[0].Interrupted || !out.Steps[1].Interrupted {
		t.Fatalf("%d steps; want the finished one and the one cut short, marked", len(out.Steps))
	}
	cut := out.Steps[1]
	if cut.Seconds <= 0 || cut.Seconds >= duration.Seconds() || !cut.NOPMCheck.OK || cut.ClientNOPM <= 0 {
		t.Errorf("the step cut short: %.2f s measured of %s, NOPM check %+v, client NOPM %d; want a shorter interval whose counters agree",
			cut.Seconds, duration, cut.NOPMCheck, cut.ClientNOPM)
	}
	if want := fmt.Sprintf("1 finished step and the first %.1f s of step 2", cut.Seconds); in.Kept != want {
		t.Errorf("kept %q; want %q", in.Kept, want)
	}
	if out.Knee == nil || out.Knee.OfferedTPM != 1200 || out.Knee.NextTPM != 0 {
		t.Errorf("knee %+v; want the finished rate's, the step cut short left out", out.Knee)
	}
	run, steps := storedRun(t, dir, out.RunID)
	if run.Status != results.StatusInterrupted || len(steps) != 2 || out.Status != results.StatusInterrupted {
		t.Fatalf("stored %s with %d steps; want interrupted with 2", run.Status, len(steps))
	}
	var stored2 stored.TPCCStep
	if err := json.Unmarshal(steps[1].Metrics, &stored2); err != nil || !stored2.Interrupted {
		t.Errorf("the stored second step: %s (%v); want it marked interrupted", steps[1].Metrics, err)
	}
}

// Bad input is ErrInvalid, found before anything is recorded.
func TestInvalid(t *testing.T) {
	dir := t.TempDir()
	for name, err := range map[string]error{
		"unknown scheme": func() error {
			_, err := experiment.RunTPCC(context.Background(), experiment.TPCCConfig{Record: experiment.Record{Results: dir}, DSN: "ftp://x"}, experiment.Nop{})
			return err
		}(),
		"no points": func() error {
			_, err := experiment.RunDisk(context.Background(), experiment.DiskConfig{Record: experiment.Record{Results: dir}, Target: dir}, experiment.Nop{})
			return err
		}(),
		"unknown profile": func() error { _, err := experiment.ProfileConfig("nosuch", 0, 0, 0); return err }(),
	} {
		if !errors.Is(err, experiment.ErrInvalid) {
			t.Errorf("%s: %v; want ErrInvalid", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tierbench.db")); err == nil {
		t.Error("bad input recorded a run")
	}
}

// A disk run from a front end of its own: one ad-hoc point on a temporary
// directory, told to the observer as it starts and ends, stored with fio's
// I/O engine under the key ioengine, and its test file removed.
func TestRunDisk(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	target, dir := t.TempDir(), t.TempDir()
	spec := fio.Spec{Name: "4k-randread-qd1", BS: 4096, RW: fio.RandRead, IODepth: 1, Jobs: 1}
	rec := &recorder{}
	out, err := experiment.RunDisk(context.Background(), experiment.DiskConfig{
		Record: experiment.Record{Results: dir, Telemetry: experiment.DefaultTelemetry},
		Target: target, Profile: "ad-hoc", Points: []fio.Spec{spec}, Repeat: 1,
		Settings:      fio.Settings{Duration: 2 * time.Second, Direct: false},
		TargetOptions: fio.TargetOptions{Size: 16 << 20},
	}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != results.StatusComplete || len(out.Points) != 1 || out.Points[0].Read == nil || out.Points[0].Read.IOPS <= 0 {
		t.Fatalf("result %+v; want one point with read IOPS", out)
	}
	var point, layout, results0 int
	for _, p := range rec.progress {
		if p.Point != nil && p.Point.Spec.Name == spec.Name && p.Point.Count == 1 {
			point++
		}
		if p.Layout != nil {
			layout++
		}
	}
	for _, r := range rec.results {
		if r.Point != nil && r.Point.Name == spec.Name {
			results0++
		}
	}
	if point != 1 || layout == 0 || results0 != 1 {
		t.Errorf("observer heard %d point starts, %d layout events, %d point results; want 1, some, 1", point, layout, results0)
	}
	run, steps := storedRun(t, dir, out.RunID)
	var params map[string]any
	if err := json.Unmarshal(run.Params, &params); err != nil {
		t.Fatal(err)
	}
	if params["ioengine"] != out.IOEngine || params["engine"] != nil || len(steps) != 1 {
		t.Errorf("stored params %s with %d steps; want ioengine %q (no engine key) and 1 step", run.Params, len(steps), out.IOEngine)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("the test file is still there: %v", entries)
	}
}
