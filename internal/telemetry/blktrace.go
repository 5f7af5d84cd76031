package telemetry

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"
)

// Histogram range: 1 µs .. 60 s at 2 significant digits, values in µs.
const (
	latencyMinUs   = 1
	latencyMaxUs   = 60 * 1000 * 1000
	latencySigFigs = 2
)

// An issue without a completion for this long was lost (a dropped event, a
// request that completed through another path): forget it. pruneEvery keeps
// the sweep off the per-line path.
const (
	staleIssueNs = int64(30 * time.Second)
	pruneEveryNs = int64(5 * time.Second)
)

// The per-CPU ring buffer. 4 MiB a CPU holds seconds of 50k IOPS traffic
// (~100 bytes an event pair) if the reader stalls; the total is capped so a
// 256-CPU host does not pin a gigabyte of kernel memory.
const (
	traceBufferKBPerCPU = 4096
	traceBufferKBTotal  = 128 * 1024
	traceBufferKBMin    = 1024
)

// readPause is how long events gather in the ring buffer between two
// reads of it: a quiet device costs ten reads a second a CPU.
const readPause = 100 * time.Millisecond

var blockEvents = []string{"block_rq_issue", "block_rq_complete"}

// BlockTracer pairs block_rq_issue and block_rq_complete events for a set of
// devices in a private tracefs instance (instances/tierbench-<pid>-<n>,
// removed on Close, so the global trace buffer and other tracers are
// untouched) and keeps a latency histogram per interval.
type BlockTracer struct {
	dir    string // the tracefs instance
	layout *rawLayout
	cpus   []int         // per_cpu/cpuN/trace_pipe_raw, non-blocking
	stop   chan struct{} // closed by Close: the reader drains once more and exits
	done   chan struct{} // closed when the reader goroutine exits

	mu    sync.Mutex
	cur   *hdrhistogram.Histogram // this interval, recorded by the reader
	spare *hdrhistogram.Histogram // the previous one, reset, ready to swap in

	devFilter  string        // the filter expression without sampling
	sectorless atomic.Uint64 // events with no sectors read: the filter keeps them out
	oneIn      int           // requests traced: one in oneIn (1 or sampleOneIn)
	lastSwap   time.Time     // when the current interval began

	closeOnce sync.Once
	closeErr  error
}

// StartBlockTracer starts tracing the given devices (kernel names; a
// partition is traced as its disk, since the tracepoints report the disk).
// Its error says, in one line, why tracing is not possible here, so callers
// can print it once and carry on without latency percentiles.
func StartBlockTracer(devices []string) (*BlockTracer, error) {
	if len(devices) == 0 {
		return nil, errors.New("block tracing: no devices to trace")
	}
	if uid := os.Geteuid(); uid != 0 {
		return nil, fmt.Errorf("block tracing needs root (running as uid %d)", uid)
	}
	tracefs, err := findTracefs()
	if err != nil {
		return nil, err
	}
	for _, ev := range blockEvents {
		if !exists(filepath.Join(tracefs, "events", "block", ev)) {
			return nil, fmt.Errorf("block tracing: kernel has no %s tracepoint in %s/events/block", ev, tracefs)
		}
	}
	var terms []string
	for _, name := range devices {
		maj, min, err := traceDevNumber(name)
		if err != nil {
			return nil, fmt.Errorf("block tracing: %w", err)
		}
		term := fmt.Sprintf("dev == %d", kernelDev(maj, min))
		if !slices.Contains(terms, term) {
			terms = append(terms, term)
		}
	}
	// Requests with no sectors (cache flushes: one per fdatasync, so one per
	// commit of a database) cannot be paired (see pairer) and, having sector
	// 0, would pass every sampling mask: leave them out in the kernel, which
	// then neither records nor formats them.
	filter := "(" + strings.Join(terms, " || ") + ") && nr_sector != 0"

	removeStaleInstances(filepath.Join(tracefs, "instances"))
	dir, err := makeInstance(filepath.Join(tracefs, "instances"))
	if err != nil {
		return nil, err
	}
	t := &BlockTracer{
		dir:       dir,
		done:      make(chan struct{}),
		cur:       newLatencyHistogram(),
		spare:     newLatencyHistogram(),
		devFilter: filter,
		oneIn:     1,
		lastSwap:  time.Now(),
		stop:      make(chan struct{}),
	}
	if err := t.configure(filter); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("block tracing: %w", err)
	}
	if t.layout, err = readRawLayout(dir); err == nil {
		t.cpus, err = openPerCPU(dir)
	}
	if err != nil {
		t.disable()
		os.Remove(dir)
		return nil, fmt.Errorf("block tracing: %w", err)
	}
	go t.read()
	return t, nil
}

// openPerCPU opens the instance's per_cpu/cpuN/trace_pipe_raw files, as
// plain non-blocking descriptors that Go's network poller never sees (the
// reader polls them on a timer): os.Open would register them with the
// runtime's epoll set, and every traced request would then wake the poller
// for nothing, a scheduler wake-up per block request charged to tierbench.
func openPerCPU(dir string) ([]int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "per_cpu", "cpu*", "trace_pipe_raw"))
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no per_cpu/cpu*/trace_pipe_raw in %s", dir)
	}
	var fds []int
	for _, f := range files {
		fd, oerr := unix.Open(f, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if oerr != nil {
			err = &os.PathError{Op: "open", Path: f, Err: oerr}
			break
		}
		fds = append(fds, fd)
	}
	if err != nil {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, err
	}
	return fds, nil
}

// findTracefs returns the tracefs mount, mounting it at /sys/kernel/tracing
// when it is absent (we are root by now).
func findTracefs() (string, error) {
	primary := filepath.Join(sysRoot, "kernel", "tracing")
	for _, dir := range []string{primary, filepath.Join(sysRoot, "kernel", "debug", "tracing")} {
		if exists(filepath.Join(dir, "instances")) {
			return dir, nil
		}
	}
	if err := unix.Mount("tracefs", primary, "tracefs", 0, ""); err != nil {
		return "", fmt.Errorf("block tracing: no tracefs mounted, and mounting it at %s failed: %v", primary, err)
	}
	if !exists(filepath.Join(primary, "instances")) {
		return "", fmt.Errorf("block tracing: tracefs mounted at %s has no instances directory", primary)
	}
	return primary, nil
}

// traceDevNumber maps a kernel device name to the MAJ:MIN the tracepoints
// report: a partition's requests carry its disk's number.
func traceDevNumber(name string) (uint32, uint32, error) {
	if maj, min, err := readDevNumber(filepath.Join(sysRoot, "block", name, "dev")); err == nil {
		return maj, min, nil
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(sysRoot, "class", "block", name))
	if err != nil {
		return 0, 0, fmt.Errorf("block device %q not found in %s/block or %s/class/block", name, sysRoot, sysRoot)
	}
	if exists(filepath.Join(dir, "partition")) {
		dir = filepath.Dir(dir)
	}
	return readDevNumber(filepath.Join(dir, "dev"))
}

// kernelDev is the kernel's internal dev_t (MINORBITS = 20), which the
// tracepoint filter compares against, not the userspace encoding.
func kernelDev(major, minor uint32) uint32 { return major<<20 | minor }

// removeStaleInstances removes the instances of tierbench processes that
// are gone. A tierbench killed with SIGKILL cannot remove its own, and a
// leaked instance keeps its events enabled: every block request on the host
// then pays for a trace record that nobody reads. An instance whose process
// lives (or whose PID was reused) is left alone, as is one still open.
func removeStaleInstances(instances string) {
	entries, err := os.ReadDir(instances)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := instancePID(e.Name())
		if !ok || pid == os.Getpid() || exists(filepath.Join(procRoot, strconv.Itoa(pid))) {
			continue
		}
		dir := filepath.Join(instances, e.Name())
		writeTraceFile(filepath.Join(dir, "tracing_on"), "0")
		disableEvents(dir)
		os.Remove(dir)
	}
}

// instancePID reads the PID out of an instance name tierbench-<pid>-<n>.
func instancePID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "tierbench-")
	if !ok {
		return 0, false
	}
	p, n, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	if _, nerr := strconv.Atoi(n); err != nil || nerr != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

func makeInstance(instances string) (string, error) {
	pid := os.Getpid()
	for n := 0; n < 1000; n++ {
		dir := filepath.Join(instances, fmt.Sprintf("tierbench-%d-%d", pid, n))
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("block tracing: tracefs refused to create an instance: %v", err)
		}
	}
	return "", fmt.Errorf("block tracing: no free instance name under %s", instances)
}

func (t *BlockTracer) configure(filter string) error {
	kb := traceBufferKBPerCPU
	if n := runtime.NumCPU(); n*kb > traceBufferKBTotal {
		kb = max(traceBufferKBTotal/n, traceBufferKBMin)
	}
	if err := writeTraceFile(filepath.Join(t.dir, "buffer_size_kb"), strconv.Itoa(kb)); err != nil {
		return err
	}
	// The default "local" clock is not synchronised across CPUs, and a request
	// is often issued on one CPU and completed on another.
	if err := writeTraceFile(filepath.Join(t.dir, "trace_clock"), "mono"); err != nil {
		if err := writeTraceFile(filepath.Join(t.dir, "trace_clock"), "global"); err != nil {
			return err
		}
	}
	for _, ev := range blockEvents {
		evDir := filepath.Join(t.dir, "events", "block", ev)
		if err := writeTraceFile(filepath.Join(evDir, "filter"), filter); err != nil {
			return err
		}
		if err := writeTraceFile(filepath.Join(evDir, "enable"), "1"); err != nil {
			return err
		}
	}
	return writeTraceFile(filepath.Join(t.dir, "tracing_on"), "1")
}

func (t *BlockTracer) disable() { disableEvents(t.dir) }

// disableEvents turns off the block events of the tracefs instance dir.
func disableEvents(dir string) {
	for _, ev := range blockEvents {
		writeTraceFile(filepath.Join(dir, "events", "block", ev, "enable"), "0")
	}
}

// writeTraceFile writes without O_CREATE or O_TRUNC: tracefs files exist or
// the kernel lacks the feature.
func writeTraceFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return nil
}

// Collect returns the latencies of the requests that completed since the last
// Collect (or since Start), and starts a new interval.
func (t *BlockTracer) Collect() Latency {
	h := t.CollectHist()
	lat := tracerLatency(h)
	h.Reset()
	t.mu.Lock()
	if t.spare == nil {
		t.spare = h
	}
	t.mu.Unlock()
	return lat
}

// CollectHist is Collect returning the interval's histogram itself (values
// in µs, 1 µs .. 60 s, 2 significant digits), for callers that merge
// intervals into a step's percentiles; the caller owns it. It also adapts
// the sampling to the request rate (see OneIn).
func (t *BlockTracer) CollectHist() *hdrhistogram.Histogram {
	t.mu.Lock()
	h := t.cur
	t.cur = t.spare
	t.spare = nil
	if t.cur == nil { // the spare was handed out by CollectHist
		t.cur = newLatencyHistogram()
	}
	t.mu.Unlock()
	now := time.Now()
	rate := float64(h.TotalCount()) * float64(t.oneIn) / now.Sub(t.lastSwap).Seconds()
	t.lastSwap = now
	if want := samplingFor(rate, t.oneIn); want != t.oneIn {
		t.setSampling(want)
	}
	return h
}

// Sampling keeps the tracer cheap at high request rates: the kernel writes a
// record of every traced event on the I/O's path, charged to whoever issued
// it (the database), and tierbench reads each one. Above 2,000 requests per
// second only one request in 8 is traced, above 16,000 one in 64 (about
// 1,000 a second either way): those whose sector has bits 3-5 (3-8) clear,
// chosen by address, not by latency, so the percentiles stay unbiased; issue
// and completion carry the same sector, so pairs stay whole. Going back down waits for the rate to
// fall to half the threshold, so the sampling does not flap.
var samplingLevels = []struct {
	oneIn int
	mask  int
	above float64 // requests per second
}{{1, 0, 0}, {8, 0x38, 2000}, {64, 0x1f8, 16000}}

// samplingFor picks the sampling for a request rate, given the current one.
func samplingFor(rate float64, cur int) int {
	want := 1
	for _, l := range samplingLevels {
		above := l.above
		if l.oneIn <= cur {
			above /= 2 // hysteresis: stay at a level until the rate halves
		}
		if rate > above {
			want = l.oneIn
		}
	}
	return want
}

// OneIn is the tracer's current sampling: one request in OneIn is traced.
func (t *BlockTracer) OneIn() int { return t.oneIn }

func (t *BlockTracer) setSampling(oneIn int) {
	filter := t.devFilter
	for _, l := range samplingLevels {
		if l.oneIn == oneIn && l.mask != 0 {
			filter += fmt.Sprintf(" && !(sector & %d)", l.mask)
		}
	}
	for _, ev := range blockEvents {
		if writeTraceFile(filepath.Join(t.dir, "events", "block", ev, "filter"), filter) != nil {
			return // keep what works
		}
	}
	t.oneIn = oneIn
}

// Close stops tracing and removes the tracefs instance.
func (t *BlockTracer) Close() error {
	t.closeOnce.Do(func() {
		var errs []error
		t.disable()
		close(t.stop)
		select {
		case <-t.done:
		case <-time.After(5 * time.Second):
			errs = append(errs, errors.New("ring buffer reader did not stop"))
		}
		for _, fd := range t.cpus {
			if err := unix.Close(fd); err != nil {
				errs = append(errs, fmt.Errorf("close trace_pipe_raw: %w", err))
			}
		}
		writeTraceFile(filepath.Join(t.dir, "tracing_on"), "0")
		if err := os.Remove(t.dir); err != nil {
			errs = append(errs, fmt.Errorf("remove tracefs instance: %w", err))
		}
		t.closeErr = errors.Join(errs...)
	})
	return t.closeErr
}

// read drains the per-CPU ring buffers every readPause until Close, and
// once more then. Each round's events, from all CPUs, are sorted by time
// before they are paired, since a request is often issued on one CPU and
// completed on another; latencies are recorded one lock per round.
func (t *BlockTracer) read() {
	defer close(t.done)
	buf := make([]byte, 64<<10) // a read returns one page of the buffer: 4 KiB unless buffer_subbuf_size_kb says more
	p := newPairer()
	var evs []blockEvent
	var lat []int64
	timer := time.NewTimer(readPause)
	defer timer.Stop()
	for stopping := false; !stopping; {
		select {
		case <-t.stop:
			stopping = true
		case <-timer.C:
			timer.Reset(readPause)
		}
		evs = evs[:0]
		for _, fd := range t.cpus {
			for {
				n, err := unix.Read(fd, buf)
				if err == unix.EINTR {
					continue
				}
				if err != nil || n <= 0 { // EAGAIN: this CPU's buffer is drained
					break
				}
				evs = t.layout.parsePage(buf[:n], evs)
			}
		}
		slices.SortFunc(evs, func(a, b blockEvent) int {
			if c := cmp.Compare(a.tsNs, b.tsNs); c != 0 {
				return c
			}
			return cmp.Compare(boolInt(a.complete), boolInt(b.complete)) // an issue before a completion at the same time
		})
		lat = lat[:0]
		for _, ev := range evs {
			if ev.nrSector == 0 {
				t.sectorless.Add(1)
			}
			if ns, ok := p.add(ev); ok {
				lat = append(lat, ns)
			}
		}
		p.endRound()
		t.record(lat)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (t *BlockTracer) record(latNs []int64) {
	if len(latNs) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ns := range latNs {
		us := min(max(ns/1000, latencyMinUs), latencyMaxUs)
		t.cur.RecordValue(us) // in range by construction
	}
}

func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(latencyMinUs, latencyMaxUs, latencySigFigs)
}

func tracerLatency(h *hdrhistogram.Histogram) Latency {
	n := h.TotalCount()
	if n == 0 {
		return Latency{}
	}
	return Latency{
		Count: uint64(n),
		P50Ms: float64(h.ValueAtQuantile(50)) / 1000,
		P95Ms: float64(h.ValueAtQuantile(95)) / 1000,
		P99Ms: float64(h.ValueAtQuantile(99)) / 1000,
	}
}

// blockEvent is one block_rq_issue or block_rq_complete record.
type blockEvent struct {
	complete bool
	dev      uint32 // kernel encoding, major<<20 | minor
	sector   uint64
	nrSector uint32
	tsNs     int64 // trace clock
}

type reqKey struct {
	dev    uint32
	sector uint64
}

// pairer matches completions to issues by (dev, sector). Requests with no
// sectors (flushes) all share sector 0 on a device and cannot be told apart,
// so they are left out.
//
// The reader takes each CPU's buffer in turn, so an issue written on one CPU
// just after its buffer was read, and completed on another before that one's
// was, arrives a round after its completion: a completion without an issue
// waits (as an orphan) until the end of the next round for one issued
// before it.
type pairer struct {
	inflight  map[reqKey]int64 // issue time
	orphans   map[reqKey]orphan
	round     int
	lastPrune int64
}

type orphan struct {
	tsNs  int64 // completion time
	round int
}

func newPairer() *pairer {
	return &pairer{inflight: make(map[reqKey]int64), orphans: make(map[reqKey]orphan)}
}

// add takes one event and, for a completion whose issue it saw (or an issue
// whose completion came first, see pairer), returns the latency in
// nanoseconds.
func (p *pairer) add(ev blockEvent) (int64, bool) {
	if ev.nrSector == 0 {
		return 0, false
	}
	if ev.tsNs-p.lastPrune > pruneEveryNs {
		p.prune(ev.tsNs)
	}
	key := reqKey{ev.dev, ev.sector}
	if !ev.complete {
		if o, ok := p.orphans[key]; ok && o.tsNs >= ev.tsNs {
			delete(p.orphans, key)
			return o.tsNs - ev.tsNs, true
		}
		p.inflight[key] = ev.tsNs // a requeued request is issued again; the last issue counts
		return 0, false
	}
	issued, ok := p.inflight[key]
	if !ok {
		p.orphans[key] = orphan{ev.tsNs, p.round}
		return 0, false
	}
	delete(p.inflight, key)
	lat := ev.tsNs - issued
	if lat < 0 {
		return 0, false
	}
	return lat, true
}

// endRound ends a round of reads: orphans from before this round are
// dropped (their issues were never traced).
func (p *pairer) endRound() {
	for k, o := range p.orphans {
		if o.round < p.round {
			delete(p.orphans, k)
		}
	}
	p.round++
}

func (p *pairer) prune(now int64) {
	p.lastPrune = now
	for k, ts := range p.inflight {
		if now-ts > staleIssueNs {
			delete(p.inflight, k)
		}
	}
}
