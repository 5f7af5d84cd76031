package telemetry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

func TestTracePairer(t *testing.T) {
	const ms = int64(time.Millisecond)
	issue := func(dev uint32, sector uint64, ts int64) blockEvent {
		return blockEvent{dev: dev, sector: sector, nrSector: 8, tsNs: ts}
	}
	complete := func(dev uint32, sector uint64, ts int64) blockEvent {
		e := issue(dev, sector, ts)
		e.complete = true
		return e
	}
	vda, vdb := uint32(254<<20), uint32(254<<20|16)

	p := newPairer()
	steps := []struct {
		ev     blockEvent
		wantNs int64
		wantOK bool
	}{
		{ev: issue(vda, 100, 1000*ms)},
		{ev: issue(vdb, 100, 1000*ms+1)}, // same sector, other device
		{ev: issue(vda, 200, 1001*ms)},
		{ev: complete(vda, 200, 1003*ms+500_000), wantNs: 2*ms + 500_000, wantOK: true},
		{ev: complete(vda, 100, 1004*ms), wantNs: 4 * ms, wantOK: true},
		{ev: complete(vda, 100, 1005*ms)}, // already paired
		{ev: complete(vdb, 100, 1010*ms+1), wantNs: 10 * ms, wantOK: true},
		{ev: complete(vda, 999, 1011*ms)}, // issue never seen
		// A requeued request: the last issue counts.
		{ev: issue(vda, 300, 1020*ms)},
		{ev: issue(vda, 300, 1025*ms)},
		{ev: complete(vda, 300, 1026*ms), wantNs: ms, wantOK: true},
		// Flushes are left out.
		{ev: blockEvent{dev: vda, tsNs: 1030 * ms}},
		{ev: blockEvent{complete: true, dev: vda, tsNs: 1031 * ms}},
	}
	for i, s := range steps {
		ns, ok := p.add(s.ev)
		if ok != s.wantOK || ns != s.wantNs {
			t.Errorf("step %d %+v: got %d, %v; want %d, %v", i, s.ev, ns, ok, s.wantNs, s.wantOK)
		}
	}
	if len(p.inflight) != 0 {
		t.Errorf("inflight left: %v", p.inflight)
	}

	// An issue whose completion never comes is dropped after 30 s.
	p.add(issue(vda, 400, 2000*ms))
	p.add(issue(vda, 500, 2000*ms+staleIssueNs))
	if len(p.inflight) != 2 {
		t.Fatalf("inflight = %d, want 2", len(p.inflight))
	}
	p.add(issue(vda, 600, 2000*ms+staleIssueNs+pruneEveryNs+1))
	if _, ok := p.inflight[reqKey{vda, 400}]; ok {
		t.Errorf("stale issue kept: %v", p.inflight)
	}
	if ns, ok := p.add(complete(vda, 500, 2001*ms+staleIssueNs)); !ok || ns != ms {
		t.Errorf("fresh issue lost in prune: %d, %v", ns, ok)
	}
}

// An issue read a round after its completion (another CPU's buffer, read
// earlier in the round) still pairs, but only with a completion after it
// and only until the end of the next round.
func TestTracePairerLateIssue(t *testing.T) {
	const ms = int64(time.Millisecond)
	vda := uint32(254 << 20)
	ev := func(complete bool, sector uint64, ts int64) blockEvent {
		return blockEvent{complete: complete, dev: vda, sector: sector, nrSector: 8, tsNs: ts}
	}
	p := newPairer()
	for _, e := range []blockEvent{ev(true, 1, 10*ms), ev(true, 2, 10*ms), ev(true, 3, 10*ms)} {
		if _, ok := p.add(e); ok {
			t.Fatalf("%+v paired with nothing", e)
		}
	}
	p.endRound()
	if ns, ok := p.add(ev(false, 1, 7*ms)); !ok || ns != 3*ms {
		t.Errorf("late issue: %d, %v; want %d, true", ns, ok, 3*ms)
	}
	if _, ok := p.add(ev(false, 2, 11*ms)); ok {
		t.Error("an issue after the orphan's completion paired with it")
	}
	p.endRound()
	if _, ok := p.add(ev(false, 3, 9*ms)); ok {
		t.Error("an orphan outlived the round after its own")
	}
	if len(p.orphans) != 0 {
		t.Errorf("orphans left: %v", p.orphans)
	}
}

func TestTracerCollect(t *testing.T) {
	tr := &BlockTracer{cur: newLatencyHistogram(), spare: newLatencyHistogram()}
	if got := tr.Collect(); got != (Latency{}) {
		t.Errorf("empty interval = %+v", got)
	}
	var lat []int64
	for i := int64(1); i <= 100; i++ {
		lat = append(lat, i*int64(time.Millisecond)) // 1 ms .. 100 ms
	}
	tr.record(lat)
	got := tr.Collect()
	if got.Count != 100 {
		t.Errorf("count = %d, want 100", got.Count)
	}
	// 2 significant digits: within 1%.
	near := func(v, want float64) bool { return v >= want*0.99 && v <= want*1.01 }
	if !near(got.P50Ms, 50) || !near(got.P95Ms, 95) || !near(got.P99Ms, 99) {
		t.Errorf("percentiles = %+v, want about 50/95/99 ms", got)
	}
	if got := tr.Collect(); got != (Latency{}) {
		t.Errorf("second interval = %+v, want empty", got)
	}
	// Out of range: clamped to 1 µs and 60 s rather than dropped.
	tr.record([]int64{0, int64(2 * time.Minute)})
	if got := tr.Collect(); got.Count != 2 || got.P50Ms > 0.002 || !near(got.P99Ms, 60000) {
		t.Errorf("clamped interval = %+v, want 2 at 1 µs and 60 s", got)
	}
	tr.record([]int64{int64(3 * time.Millisecond)})
	if got := tr.Collect(); got.Count != 1 || !near(got.P99Ms, 3) {
		t.Errorf("third interval = %+v", got)
	}
	tr.record([]int64{int64(7 * time.Millisecond), int64(8 * time.Millisecond)})
	h := tr.CollectHist()
	if h.TotalCount() != 2 || h.Max() < 7900 || h.Max() > 8100 {
		t.Errorf("CollectHist: count %d max %d µs, want 2 and about 8000", h.TotalCount(), h.Max())
	}
	if got := tr.Collect(); got != (Latency{}) {
		t.Errorf("after CollectHist = %+v, want empty", got)
	}
}

func TestTracerLive(t *testing.T) {
	requireRoot(t)
	dir, res := realDiskDir(t)
	if len(res.Leaves) == 0 {
		t.Fatalf("%s resolved to no leaves: %+v", dir, res)
	}
	tr, err := StartBlockTracer(res.Leaves)
	if err != nil {
		testenv.SkipOrFail(t, "%v", err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			tr.Close()
		}
	})
	if _, err := os.Stat(tr.dir); err != nil {
		t.Fatalf("instance: %v", err)
	}

	f, err := os.CreateTemp(dir, "tierbench-trace-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for range 8 {
		if _, err := f.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	var got Latency
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		if got = tr.Collect(); got.Count > 0 {
			break
		}
	}
	t.Logf("devices %v: %+v", res.Leaves, got)
	if got.Count == 0 {
		t.Errorf("no completed requests traced on %v", res.Leaves)
	}
	if !(got.P50Ms <= got.P95Ms && got.P95Ms <= got.P99Ms) {
		t.Errorf("percentiles out of order: %+v", got)
	}
	// The Sync above flushes the device's cache (when it has one): the
	// kernel's filter must keep those sectorless requests out of trace_pipe.
	if n := tr.sectorless.Load(); n != 0 {
		t.Errorf("%d events without sectors (cache flushes) reached trace_pipe; the filter should drop them", n)
	}

	closed = true
	if err := tr.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := os.Stat(tr.dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("instance %s still there after Close: %v", tr.dir, err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(tr.dir), "tierbench-*")); len(m) != 0 {
		t.Logf("other tierbench instances present (other runs?): %v", m)
	}
}

func TestTracerStartErrors(t *testing.T) {
	if _, err := StartBlockTracer(nil); err == nil {
		t.Error("no devices: want an error")
	}
	requireRoot(t)
	if _, err := StartBlockTracer([]string{"no-such-disk"}); err == nil {
		t.Error("unknown device: want an error")
	}
}

// A tierbench killed with SIGKILL leaves its tracefs instance behind with the
// block events enabled; the next tracer removes it, and leaves alone the
// instance of a process that still runs.
func TestTracerRemovesStaleInstances(t *testing.T) {
	requireRoot(t)
	_, res := realDiskDir(t)
	tracefs, err := findTracefs()
	if err != nil {
		testenv.SkipOrFail(t, "%v", err)
	}
	instances := filepath.Join(tracefs, "instances")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(instances, fmt.Sprintf("tierbench-%d-7", dead.Process.Pid))
	alive := filepath.Join(instances, fmt.Sprintf("tierbench-%d-7", os.Getppid()))
	for _, d := range []string{stale, alive} {
		if err := os.Mkdir(d, 0o755); err != nil {
			testenv.SkipOrFail(t, "creating a tracefs instance: %v", err)
		}
		t.Cleanup(func() { os.Remove(d) })
		if err := writeTraceFile(filepath.Join(d, "events", "block", "block_rq_issue", "enable"), "1"); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := StartBlockTracer(res.Leaves)
	if err != nil {
		testenv.SkipOrFail(t, "%v", err)
	}
	defer tr.Close()
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("instance of the dead process %d still there: %v", dead.Process.Pid, err)
	}
	if _, err := os.Stat(alive); err != nil {
		t.Errorf("instance of the live process %d removed: %v", os.Getppid(), err)
	}
}

func TestInstancePID(t *testing.T) {
	for name, want := range map[string]int{
		"tierbench-123-0": 123, "tierbench-9-12": 9, "tierbench-x-0": 0, "tierbench-12": 0,
		"other-12-0": 0, "tierbench--0": 0, "tierbench-0-0": 0, "tierbench-5-x": 0,
	} {
		got, ok := instancePID(name)
		if ok != (want != 0) || got != want {
			t.Errorf("instancePID(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
}
