package scenario

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// recorder is an Executor that records the calls the runner makes, and fails
// or cancels where a test asks.
type recorder struct {
	calls      []string
	failOn     string // a call name that returns an error
	cancelOn   string // a call name that cancels the run's context
	cancel     context.CancelFunc
	cleanupErr error
	cleanupCtx error // the cleanup context's Err()
}

var _ Executor = (*recorder)(nil)

func (r *recorder) do(ctx context.Context, call string) error {
	r.calls = append(r.calls, call)
	name, _, _ := strings.Cut(call, " ")
	if name == r.cancelOn {
		r.cancel()
		return ctx.Err()
	}
	if name == r.failOn {
		return fmt.Errorf("%s broke", name)
	}
	return nil
}

func (r *recorder) PrepareTarget(ctx context.Context, t Target) (string, error) {
	return "/prepared/" + t.Name, r.do(ctx, "prepare "+t.Name)
}
func (r *recorder) StartServers(ctx context.Context, s Server, t Target, inst []string) error {
	return r.do(ctx, fmt.Sprintf("start %s on %s %s", s.Name, t.Path, strings.Join(inst, ",")))
}
func (r *recorder) Disk(ctx context.Context, st *DiskStep) error {
	return r.do(ctx, "disk "+st.Target)
}
func (r *recorder) TPCCBuild(ctx context.Context, st *TPCCBuildStep) error {
	return r.do(ctx, "build "+st.Server)
}
func (r *recorder) TPCCRun(ctx context.Context, st *TPCCRunStep) error {
	return r.do(ctx, "run "+st.Server)
}
func (r *recorder) TPCHBuild(ctx context.Context, st *TPCHBuildStep) error {
	return r.do(ctx, "tpch-build "+st.Server)
}
func (r *recorder) TPCHRun(ctx context.Context, st *TPCHRunStep) error {
	return r.do(ctx, "tpch-run "+st.Server)
}
func (r *recorder) Backup(ctx context.Context, st *BackupStep) error {
	return r.do(ctx, "backup "+st.Server)
}
func (r *recorder) Neighbours(ctx context.Context, st *NeighboursStep) error {
	return r.do(ctx, "neighbours "+strings.Join(st.TPCC, ",")+"/"+strings.Join(st.Backup, ","))
}
func (r *recorder) Check(ctx context.Context, st *CheckStep) error {
	return r.do(ctx, "check "+st.Server)
}
func (r *recorder) Durability(ctx context.Context, st *DurabilityStep) error {
	return r.do(ctx, "durability "+st.Server)
}
func (r *recorder) Space(ctx context.Context, st *SpaceStep) error {
	return r.do(ctx, "space "+st.Server+st.Target)
}
func (r *recorder) Stop(ctx context.Context, st *StopStep) error {
	return r.do(ctx, "stop "+st.Server+" "+strings.Join(st.Instances, ","))
}
func (r *recorder) Report(ctx context.Context, st *ReportStep) error {
	return r.do(ctx, "report")
}
func (r *recorder) Cleanup(ctx context.Context) error {
	r.calls = append(r.calls, "cleanup")
	r.cleanupCtx = ctx.Err()
	return r.cleanupErr
}

const runnerScenario = `name: order
targets:
  - {name: t1, path: /a}
  - {name: t2, path: /b}
servers:
  - {name: a, engine: postgres, target: t1}
  - {name: b, engine: postgres, target: t2, count: 2}
steps:
  - disk: {target: t2}
  - tpcc-build: {server: a, warehouses: 1}
  - tpcc-run: {server: a, vus: 1, rampup: 0s, duration: 1s}
  - neighbours: {tpcc: [a, b-1], backup: [b-2], vus: 1, rampup: 0s, duration: 1m, cycles: 1}
  - check: {server: b}
  - report
`

func TestRunOrder(t *testing.T) {
	sc, err := Parse("order.yaml", []byte(runnerScenario), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	var progress []string
	err = Run(context.Background(), sc, r, func(step, total int, st Step) {
		progress = append(progress, fmt.Sprintf("%d/%d %s", step, total, st.Kind))
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"prepare t1", "prepare t2",
		"disk t2",
		"start a on /prepared/t1 a", "build a",
		"run a",
		"start b on /prepared/t2 b-1,b-2", "neighbours a,b-1/b-2",
		"check b",
		"report",
		"cleanup",
	}
	if !reflect.DeepEqual(r.calls, want) {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(r.calls, "\n"), strings.Join(want, "\n"))
	}
	wantProgress := []string{"1/6 disk", "2/6 tpcc-build", "3/6 tpcc-run", "4/6 neighbours", "5/6 check", "6/6 report"}
	if !reflect.DeepEqual(progress, wantProgress) {
		t.Errorf("progress: %v", progress)
	}
}

// A stopped server is started again by the next step that needs it, and a
// stop step does not start a server only to stop it.
func TestRunStopStep(t *testing.T) {
	sc, err := Parse("stop.yaml", []byte(`name: stop
targets: [{name: t1, path: /a}]
servers:
  - {name: a, engine: postgres, target: t1, count: 2}
  - {name: b, engine: postgres, target: t1}
steps:
  - tpcc-build: {server: a, warehouses: 1}
  - stop: {server: a}
  - stop: {server: b}
  - tpcc-run: {server: a, vus: 1, rampup: 0s, duration: 1s}
`), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	if err := Run(context.Background(), sc, r, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"prepare t1", "start a on /prepared/t1 a-1,a-2", "build a", "stop a a-1,a-2", "stop b b",
		"start a on /prepared/t1 a-1,a-2", "run a", "cleanup"}
	if !reflect.DeepEqual(r.calls, want) {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(r.calls, "\n"), strings.Join(want, "\n"))
	}
}

func TestRunStopsAtAFailedStep(t *testing.T) {
	sc, _ := Parse("order.yaml", []byte(runnerScenario), "", nil)
	r := &recorder{failOn: "run", cleanupErr: errors.New("loop device busy")}
	err := Run(context.Background(), sc, r, nil)
	if err == nil || !strings.Contains(err.Error(), "scenario order, step 3 of 6 (tpcc-run, line 11): run broke") ||
		!strings.Contains(err.Error(), "cleaning up: loop device busy") {
		t.Errorf("error: %v", err)
	}
	if got := r.calls[len(r.calls)-2:]; !reflect.DeepEqual(got, []string{"run a", "cleanup"}) {
		t.Errorf("calls end with %v", got)
	}

	r = &recorder{failOn: "prepare"}
	err = Run(context.Background(), sc, r, nil)
	if err == nil || !strings.Contains(err.Error(), "preparing target t1 (/a): prepare broke") ||
		!reflect.DeepEqual(r.calls, []string{"prepare t1", "cleanup"}) {
		t.Errorf("a failed target: %v, calls %v", err, r.calls)
	}

	r = &recorder{failOn: "start"}
	err = Run(context.Background(), sc, r, nil)
	if err == nil || !strings.Contains(err.Error(), "step 2 of 6 (tpcc-build, line 10): starting server a: start broke") {
		t.Errorf("a failed start: %v", err)
	}
}

func TestRunCancelled(t *testing.T) {
	sc, _ := Parse("order.yaml", []byte(runnerScenario), "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &recorder{cancelOn: "build", cancel: cancel}
	err := Run(ctx, sc, r, nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "step 2 of 6 (tpcc-build") {
		t.Errorf("error: %v", err)
	}
	if got := r.calls[len(r.calls)-2:]; !reflect.DeepEqual(got, []string{"build a", "cleanup"}) || r.cleanupCtx != nil {
		t.Errorf("calls end with %v; cleanup context: %v", got, r.cleanupCtx)
	}

	// Cancelled between steps: the next step does not start.
	ctx, cancel = context.WithCancel(context.Background())
	r = &recorder{}
	err = Run(ctx, sc, r, func(step, _ int, _ Step) {
		if step == 3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "step 4 of 6 (neighbours, line 12): interrupted before it started") {
		t.Errorf("error: %v", err)
	}
	// A step the executor finished despite the cancellation counts as done.
	if got := r.calls[len(r.calls)-2:]; !reflect.DeepEqual(got, []string{"run a", "cleanup"}) {
		t.Errorf("calls end with %v", got)
	}
}
