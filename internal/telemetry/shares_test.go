package telemetry

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/proctest"
	"github.com/tierbench/tierbench/internal/stored"
)

// fakeProc is a /proc fixture: processes with their parent and CPU ticks,
// and /proc/stat's cpu line, written anew by write.
type fakeProc struct {
	t     *testing.T
	root  string
	procs map[int]*fakeProcess
}

type fakeProcess struct {
	comm         string
	ppid         int
	utime, stime uint64
	cutime       uint64 // its reaped children's ticks
}

func newFakeProc(t *testing.T) *fakeProc {
	return &fakeProc{t: t, root: t.TempDir(), procs: map[int]*fakeProcess{}}
}

// write lays out every process's stat and children files and /proc/stat's
// cpu line from ticks (user nice system idle iowait irq softirq steal).
func (f *fakeProc) write(cpu [8]uint64) {
	f.t.Helper()
	entries, _ := os.ReadDir(f.root)
	for _, e := range entries { // processes gone since the last write
		if pid, err := strconv.Atoi(e.Name()); err == nil && f.procs[pid] == nil {
			os.RemoveAll(filepath.Join(f.root, e.Name()))
		}
	}
	children := map[int][]string{}
	for pid, p := range f.procs {
		children[p.ppid] = append(children[p.ppid], strconv.Itoa(pid))
	}
	for pid, p := range f.procs {
		dir := filepath.Join(f.root, strconv.Itoa(pid))
		task := filepath.Join(dir, "task", strconv.Itoa(pid))
		if err := os.MkdirAll(task, 0o755); err != nil {
			f.t.Fatal(err)
		}
		stat := fmt.Sprintf("%d (%s) S %d 0 0 0 -1 0 0 0 0 0 %d %d %d 0 20 0 1 0 0\n", pid, p.comm, p.ppid, p.utime, p.stime, p.cutime)
		kids := strings.Join(children[pid], " ")
		if kids != "" {
			kids += " "
		}
		for name, content := range map[string]string{filepath.Join(dir, "stat"): stat, filepath.Join(task, "children"): kids} {
			if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
				f.t.Fatal(err)
			}
		}
	}
	line := "cpu "
	for _, v := range cpu {
		line += " " + strconv.FormatUint(v, 10)
	}
	if err := os.WriteFile(filepath.Join(f.root, "stat"), []byte(line+" 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\n"), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// TestShares: on 2 cores over 1 s (200 ticks), 150 busy ticks of which 10
// are interrupts, the kernel's threads used 20 ticks and the workload 60:
// kernel 30 ticks (15%), workload 60 (30%), others the 60 left (30%).
func TestShares(t *testing.T) {
	prev := CPUCounters{}
	cur := CPUCounters{User: 1.0, System: 0.4, IRQ: 0.04, SoftIRQ: 0.06, Idle: 0.4, IOWait: 0.1}
	got := shares(prev, cur, 60, 20)
	want := Shares{WorkloadPct: 30, KernelPct: 15, ForeignPct: 30}
	if math.Abs(got.WorkloadPct-want.WorkloadPct) > 1e-9 || math.Abs(got.KernelPct-want.KernelPct) > 1e-9 ||
		math.Abs(got.ForeignPct-want.ForeignPct) > 1e-9 {
		t.Errorf("shares = %+v; want %+v", got, want)
	}
	// Ticks read a moment apart from /proc/stat may exceed the busy time:
	// the shares never pass it, and others are never negative.
	got = shares(prev, cur, 500, 20)
	if got.ForeignPct != 0 || math.Abs(got.WorkloadPct+got.KernelPct-75) > 1e-9 {
		t.Errorf("workload beyond the busy time: %+v; want the busy 75%% split between workload and kernel, nothing left", got)
	}
	if (shares(cur, cur, 1, 1) != Shares{}) {
		t.Error("no time elapsed: want zero shares")
	}
}

// TestSessionShares reads a fixture /proc twice through a session: the
// server's, tierbench's and the Workload's trees are the workload, the
// kernel's threads and interrupts the kernel, the rest other processes'.
// A workload process that exits between the readings takes none of its
// past CPU with it, and what it used after the last reading comes back
// when its parent reaps it, as does a child too short-lived to be seen; a
// new one counts whole; a daemon that leaves the tree alive is another's.
func TestSessionShares(t *testing.T) {
	f := newFakeProc(t)
	f.procs = map[int]*fakeProcess{
		1: {comm: "init"},
		2: {comm: "kthreadd"}, 10: {comm: "loop0", ppid: 2}, 11: {comm: "kworker/u4:1-loop0", ppid: 2},
		100: {comm: "tierbench", ppid: 1}, 101: {comm: "fio", ppid: 100, utime: 5000}, 103: {comm: "postgres", ppid: 100, utime: 300},
		200: {comm: "postgres", ppid: 1}, 201: {comm: "postgres: backend", ppid: 200, utime: 7000},
		300: {comm: "postgres", ppid: 1},
		400: {comm: "make", ppid: 1},
	}
	f.write([8]uint64{100000, 0, 20000, 500000, 0, 0, 0, 0})
	var w Workload
	w.Add(300)
	s := &Session{cfg: Config{ProcRoot: f.root, ServerPID: 200, SelfPID: 100, Workload: &w, Interval: time.Second}, warned: map[string]bool{},
		work: &treeCPU{root: f.root}, kern: &treeCPU{root: f.root}, kthread: kthreadd(f.root)}
	if s.kthread != 2 {
		t.Fatalf("kthreadd = %d; want 2", s.kthread)
	}
	var err error
	if s.host, err = NewHostReader(f.root); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var p prev
	if _, ok := s.read(ctx, &p); ok {
		t.Fatal("the first reading is only a baseline")
	}
	p.at = time.Now().Add(-time.Second) // one second between the readings
	// Over that second, 2 cores = 200 ticks: 156 busy (user 110, system
	// 36, irq 4, softirq 6), idle 44.
	f.procs[10].stime += 12  // the loop device's worker
	f.procs[11].stime += 8   // a kworker
	f.procs[100].utime += 10 // tierbench
	// fio exits after 15 more ticks, and tierbench reaps it: its 5000 past
	// ticks are not given back, the 15 come as tierbench's cutime, as do
	// the 7 of a psql that started and ended within the second.
	delete(f.procs, 101)
	f.procs[100].cutime += 5015 + 7
	f.procs[102] = &fakeProcess{comm: "fio", ppid: 100, utime: 20} // a new fio job
	f.procs[103].ppid, f.procs[103].utime = 1, 304                 // a daemon whose starter exited: no longer tierbench's
	f.procs[201].utime += 25                                       // a backend of the server under test
	f.procs[300].utime += 5                                        // another instance's server
	f.procs[400].utime += 40                                       // someone's build
	f.write([8]uint64{100110, 0, 20036, 500044, 0, 4, 6, 0})
	x, ok := s.read(ctx, &p)
	if !ok || x.Shares == nil {
		t.Fatalf("second reading: ok %v, shares %v", ok, x.Shares)
	}
	// workload 10+15+7+20+25+5 = 82 ticks (41%), kernel 20+10 (15%),
	// others 40+4 (22%).
	want := Shares{WorkloadPct: 41, KernelPct: 15, ForeignPct: 22}
	if d := math.Abs(x.Shares.WorkloadPct-want.WorkloadPct) + math.Abs(x.Shares.KernelPct-want.KernelPct) +
		math.Abs(x.Shares.ForeignPct-want.ForeignPct); d > 1e-6 {
		t.Errorf("shares %+v; want %+v", *x.Shares, want)
	}
	// 25 ticks of one core's 100 a second, over the interval the reading
	// measured: a busy host may have taken a while since p.at was set.
	if want := 25 / x.Interval.Seconds(); math.Abs(x.ServerCPUPct-want) > 0.5 {
		t.Errorf("server CPU %.2f%% of a core; want %.2f (25 ticks in %s)", x.ServerCPUPct, want, x.Interval)
	}
	v := x.Values()
	if v["host.foreign_cpu_pct"] != x.Shares.ForeignPct || v["host.kernel_cpu_pct"] != x.Shares.KernelPct {
		t.Errorf("series values %v lack the shares", v)
	}
	a := Summarize([]Sample{x})
	if a.Host["foreign_cpu_pct"] != x.Shares.ForeignPct || a.Host["workload_cpu_pct"] != x.Shares.WorkloadPct {
		t.Errorf("aggregate host %v lacks the shares", a.Host)
	}

	// A server on this host whose processes cannot be seen: no shares.
	s.cfg.ServerUnseen = true
	p.at = time.Now().Add(-time.Second)
	f.procs[400].utime += 40
	f.write([8]uint64{100150, 0, 20036, 500204, 0, 4, 6, 0})
	if x, _ := s.read(ctx, &p); x.Shares != nil {
		t.Errorf("unseen server: shares %+v; want none", *x.Shares)
	}
}

// TestKthreadd: only a process 2 named kthreadd with no parent is the
// kernel's thread parent (in a container's PID namespace 2 is anything).
func TestKthreadd(t *testing.T) {
	f := newFakeProc(t)
	f.procs = map[int]*fakeProcess{2: {comm: "sh", ppid: 1}}
	f.write([8]uint64{})
	if k := kthreadd(f.root); k != 0 {
		t.Errorf("process 2 is sh: kthreadd = %d; want 0", k)
	}
	if k := kthreadd(t.TempDir()); k != 0 {
		t.Errorf("no process 2: kthreadd = %d; want 0", k)
	}
}

// TestSessionForeignSpinner samples the real host while a process spins:
// outside the workload it is other processes' CPU; once in the Workload,
// it is the workload's. The bounds are loose (a spinning process gets at
// least 20% of a core on a loaded 2-core machine: a CI host once gave it
// 39.97%) and one-sided, since other tests may run beside it and add to
// either share.
func TestSessionForeignSpinner(t *testing.T) {
	pid := proctest.Spinner(t)
	var w Workload
	s, err := Start(context.Background(), Config{Interval: 200 * time.Millisecond, Workload: &w})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	cores := float64(len(mustCPUs(t)))
	floor := 20 / cores // 20% of one core, as a share of all cores
	measure := func() stored.Aggregate {
		from := time.Now()
		time.Sleep(1500 * time.Millisecond)
		return Summarize(s.Samples(from, time.Now()))
	}
	a := measure()
	if f := a.Host["foreign_cpu_pct"]; f < floor {
		t.Errorf("a spinning process outside the workload: other processes %.1f%% of all cores; want at least %.1f%% (host %v)", f, floor, a.Host)
	}
	w.Add(pid)
	time.Sleep(300 * time.Millisecond) // a sample's interval that straddles the Add
	a = measure()
	if wl := a.Host["workload_cpu_pct"]; wl < floor {
		t.Errorf("the spinning process in the workload: workload %.1f%% of all cores; want at least %.1f%% (host %v)", wl, floor, a.Host)
	}
}

// mustCPUs lists /proc/stat's per-CPU lines.
func mustCPUs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	var cpus []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "cpu") && !strings.HasPrefix(l, "cpu ") {
			cpus = append(cpus, l)
		}
	}
	return cpus
}

// BenchmarkTicksSince: one sample's reading of who used the CPU on this
// host, as a session takes it each second: tierbench's own tree (here the
// test's) and the kernel's threads.
func BenchmarkTicksSince(b *testing.B) {
	k := kthreadd("/proc")
	if k == 0 {
		b.Skip("no kernel threads visible in /proc")
	}
	work, kern := &treeCPU{root: "/proc"}, &treeCPU{root: "/proc"}
	roots := []int{0, os.Getpid()}
	work.ticksSince(roots)
	kern.ticksSince([]int{k})
	b.ReportAllocs()
	for b.Loop() {
		work.ticksSince(roots)
		kern.ticksSince([]int{k})
	}
	b.ReportMetric(float64(len(kern.last)), "kthreads")
}
