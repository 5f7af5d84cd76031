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
)

func TestTraceParseLine(t *testing.T) {
	cases := []struct {
		line string
		ok   bool
		want blockEvent
	}{
		{
			line: "             fio-1234    [001] .....  12345.678901: block_rq_issue: 254,0 W 4096 () 123456 + 8 none,0,0 [fio]\n",
			ok:   true,
			want: blockEvent{dev: 254<<20 | 0, sector: 123456, nrSector: 8, tsNs: 12345678901000},
		},
		{
			line: "          <idle>-0       [000] ..s1.  12345.679001: block_rq_complete: 254,0 W () 123456 + 8 none,0,0 [0]\n",
			ok:   true,
			want: blockEvent{complete: true, dev: 254 << 20, sector: 123456, nrSector: 8, tsNs: 12345679001000},
		},
		{
			// Older kernels: no ioprio; a comm with spaces and colons; nanosecond clock.
			line: " kworker/u8:2 x-77 [003] d..2. 7.123456789: block_rq_issue: 8,16 WS 524288 () 2048 + 1024 [kworker/u8:2 x]",
			ok:   true,
			want: blockEvent{dev: 8<<20 | 16, sector: 2048, nrSector: 1024, tsNs: 7123456789},
		},
		{
			// SCSI passthrough fills cmd with hex bytes.
			line: "  sg-9 [002] ..... 100.000001: block_rq_complete: 8,0 N (12 00 00 00 24 00) 0 + 0 none,0,0 [0]",
			ok:   true,
			want: blockEvent{complete: true, dev: 8 << 20, tsNs: 100000001000},
		},
		{
			// A flush: no sectors.
			line: "  jbd2/vda-8 [000] ..... 50.5: block_rq_issue: 254,0 FF 0 () 0 + 0 none,0,0 [jbd2/vda-8]",
			ok:   true,
			want: blockEvent{dev: 254 << 20, tsNs: 50500000000},
		},
		{line: "  fio-1234 [001] ..... 12345.678901: block_rq_insert: 254,0 W 4096 () 123456 + 8 none,0,0 [fio]"},
		{line: "CPU:3 [LOST 1234 EVENTS]"},
		{line: "  <...>-1 [000] ..... 1.000000: tracing_mark_write: tierbench: closing"},
		{line: ""},
		{line: "\n"},
		{line: ": block_rq_issue: "},
		{line: "x 1.000001: block_rq_issue: "},
		{line: "x 1.000001: block_rq_issue: 254"},
		{line: "x 1.000001: block_rq_issue: 254,"},
		{line: "x 1.000001: block_rq_issue: 254,0 W 4096 ("},
		{line: "x 1.000001: block_rq_issue: 254,0 W 4096 () "},
		{line: "x 1.000001: block_rq_issue: 254,0 W 4096 () 12 +"},
		{line: "x 1.000001: block_rq_issue: 254,0 W 4096 () 12 + "},
		{line: "x 1.000001: block_rq_issue: 254,0 W 4096 () 12 - 8"},
		{line: "x 1.000001: block_rq_issue: 4096,0 W 4096 () 12 + 8"},                // major beyond 12 bits
		{line: "x 1.000001: block_rq_issue: 8,1048576 W 4096 () 12 + 8"},             // minor beyond 20 bits
		{line: "x 1.000001: block_rq_issue: 8,0 W 4096 () 99999999999999999999 + 8"}, // sector overflows
		{line: "x 1.000001: block_rq_issue: 8,0 W 4096 () 12 + 99999999999"},         // nr_sector overflows
		{line: "x 1000001: block_rq_issue: 8,0 W 4096 () 12 + 8"},                    // no fraction
		{line: "x 1.0000000001: block_rq_issue: 8,0 W 4096 () 12 + 8"},               // finer than ns
		{line: "x 1.00a001: block_rq_issue: 8,0 W 4096 () 12 + 8"},                   // junk in time
		{line: "x .000001: block_rq_issue: 8,0 W 4096 () 12 + 8"},                    // no seconds
		{line: "1.000001: block_rq_issue: 8,0 W 4096 () 12 + 8", ok: true, want: blockEvent{dev: 8 << 20, sector: 12, nrSector: 8, tsNs: 1000001000}},
	}
	for _, c := range cases {
		got, ok := parseBlockLine([]byte(c.line))
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("parseBlockLine(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

// At 50k IOPS the parser sees 100k lines a second: it must not allocate.
func TestTraceParseLineAllocs(t *testing.T) {
	line := []byte("  fio-1234  [001] ..... 12345.678901: block_rq_complete: 254,0 W () 123456 + 8 none,0,0 [0]\n")
	if n := testing.AllocsPerRun(1000, func() { parseBlockLine(line) }); n != 0 {
		t.Errorf("parseBlockLine allocates %v times a line", n)
	}
}

func TestTraceParseLineNoPanic(t *testing.T) {
	line := []byte("  fio-1234  [001] ..... 12345.678901: block_rq_issue: 254,0 W 4096 () 123456 + 8 none,0,0 [fio]")
	// Every truncation and every single-byte corruption: no panic, whatever the result.
	for i := range line {
		parseBlockLine(line[:i])
		for _, b := range []byte{0, ' ', '(', ')', ',', '.', '+', ':', '9', 0xff} {
			c := append([]byte(nil), line...)
			c[i] = b
			parseBlockLine(c)
		}
	}
}

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
		skipOrFail(t, "%v", err)
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
		skipOrFail(t, "%v", err)
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
			skipOrFail(t, "creating a tracefs instance: %v", err)
		}
		t.Cleanup(func() { os.Remove(d) })
		if err := writeTraceFile(filepath.Join(d, "events", "block", "block_rq_issue", "enable"), "1"); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := StartBlockTracer(res.Leaves)
	if err != nil {
		skipOrFail(t, "%v", err)
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
