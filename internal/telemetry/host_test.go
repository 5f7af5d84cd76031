package telemetry

import (
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/tierbench/tierbench/internal/testenv"
)

// hostNear compares floats that went through /100 and sums: exact up to
// rounding.
func hostNear(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func hostReadCPU(t *testing.T, procRoot string) CPUCounters {
	t.Helper()
	r, err := NewHostReader(procRoot)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.CPU()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHostCPURates(t *testing.T) {
	prev := hostReadCPU(t, "testdata/host-t0/proc")
	cur := hostReadCPU(t, "testdata/host-t1/proc")
	if !hostNear(prev.User, 10) || !hostNear(prev.Steal, 0.5) {
		t.Fatalf("t0 counters = %+v, want User 10 s, Steal 0.5 s", prev)
	}
	// Deltas in ticks: user 250 + nice 50, system 100 + irq 20 + softirq 30,
	// idle 450, iowait 80, steal 20; total 1000. Guest (+100) is already in
	// user and must not count twice.
	want := CPU{UserPct: 30, SystemPct: 15, IOWaitPct: 8, IdlePct: 45, StealPct: 2}
	hostAssertCPU(t, CPURates(prev, cur), want)
}

func TestHostCPURatesReset(t *testing.T) {
	prev := CPUCounters{User: 100, Idle: 100}
	cur := CPUCounters{User: 50, Idle: 160, System: 40} // user went backwards
	hostAssertCPU(t, CPURates(prev, cur), CPU{IdlePct: 60, SystemPct: 40})
	hostAssertCPU(t, CPURates(cur, cur), CPU{}) // nothing elapsed
}

func hostAssertCPU(t *testing.T, got, want CPU) {
	t.Helper()
	if !hostNear(got.UserPct, want.UserPct) || !hostNear(got.SystemPct, want.SystemPct) ||
		!hostNear(got.IOWaitPct, want.IOWaitPct) || !hostNear(got.IdlePct, want.IdlePct) ||
		!hostNear(got.StealPct, want.StealPct) {
		t.Errorf("CPURates = %+v, want %+v", got, want)
	}
}

func TestHostMemory(t *testing.T) {
	r, err := NewHostReader("testdata/host-t0/proc")
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Memory()
	if err != nil {
		t.Fatal(err)
	}
	const kB = 1024
	want := Memory{
		UsedBytes:      (16000000 - 2000000 - 300000 - 5000000 - 700000) * kB,
		CacheBytes:     (300000 + 5000000 + 700000) * kB,
		DirtyBytes:     12345 * kB,
		WritebackBytes: 678 * kB,
	}
	if got != want {
		t.Errorf("Memory = %+v, want %+v", got, want)
	}
}

// wholeTicks is the CPU ticks (utime+stime) pid's tree has used so far, as
// ticksSince counts a tree it has not read before, and whether pid was found.
func wholeTicks(root string, pid int) (uint64, bool) {
	r := &treeCPU{root: root, last: map[int]procTicks{}}
	ticks, found := r.ticksSince([]int{pid})
	return ticks[0], found[0]
}

func TestProcTreeCPUFixture(t *testing.T) {
	// 1 -> 2 -> 3, and 4 -> 5 beside them; utime/stime in ticks of 1/100 s.
	const root = "testdata/host-proctree/proc"
	for _, tc := range []struct {
		pid   int
		ticks uint64
	}{
		{1, 357 + 83}, // (100+250+7, 50+30+3) ticks
		{2, 257 + 33},
		{3, 7 + 3},
		{4, 1999 + 1999},
	} {
		got, found := wholeTicks(root, tc.pid)
		if !found || got != tc.ticks {
			t.Errorf("pid %d: %d ticks (found %v); want %d", tc.pid, got, found, tc.ticks)
		}
	}
	if _, found := wholeTicks(root, 42); found {
		t.Error("a missing pid: found")
	}
}

// Two processes each the other's parent (a pid reused while the host was
// read) are each counted once, whether the tree comes from the children
// files or from every process's parent.
func TestProcTreeCPUCycle(t *testing.T) {
	for _, tc := range []struct {
		root string
		pid  int
		tree []int
	}{
		{"testdata/host-proccycle/proc", 6, []int{6, 7}},          // no children files: the ppid scan
		{"testdata/host-proccycle-children/proc", 8, []int{8, 9}}, // children files
	} {
		tree, err := ProcTree(tc.root, tc.pid)
		if err != nil || !slices.Equal(tree, tc.tree) {
			t.Errorf("%s: ProcTree(%d) = %v, %v; want %v", tc.root, tc.pid, tree, err, tc.tree)
		}
		if got, found := wholeTicks(tc.root, tc.pid); !found || got != 300+30 {
			t.Errorf("%s: pid %d's tree: %d ticks (found %v); want 330 ((100+200, 10+20) ticks)", tc.root, tc.pid, got, found)
		}
	}
}

func TestProcTreeCPUSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	// Burn well over one 10 ms tick so utime or stime moves.
	x := 0
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
		x++
	}
	_ = x
	if got, found := wholeTicks("/proc", os.Getpid()); !found || got == 0 {
		t.Errorf("this process's tree: %d ticks (found %v); want > 0", got, found)
	}
}

// The children files and the ppid scan find the same tree: a shell with a
// child that has burnt CPU of its own.
func TestProcTreeCPUChildrenMatchScan(t *testing.T) {
	if _, ok := procChildren("/proc", os.Getpid()); !ok {
		testenv.SkipOrFail(t, "this kernel has no /proc/PID/task/TID/children")
	}
	cmd := exec.Command("sh", "-c", `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 30 & wait`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var tree []int
	for deadline := time.Now().Add(20 * time.Second); len(tree) < 2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		tree, _ = procChildren("/proc", cmd.Process.Pid)
	}
	if len(tree) < 2 {
		t.Fatalf("the shell's child (sleep) not found: tree %v", tree)
	}
	pfs, err := procfs.NewFS("/proc")
	if err != nil {
		t.Fatal(err)
	}
	scanned, err := procTreeScan("/proc", cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	var ticks uint64
	for _, pid := range scanned {
		p, err := pfs.Proc(pid)
		if err != nil {
			t.Fatal(err)
		}
		st, err := p.Stat()
		if err != nil {
			t.Fatal(err)
		}
		ticks += uint64(st.UTime + st.STime)
	}
	slices.Sort(scanned)
	slices.Sort(tree)
	if !slices.Equal(scanned, tree) {
		t.Errorf("children files give %v, the ppid scan %v", tree, scanned)
	}
	if got, found := wholeTicks("/proc", cmd.Process.Pid); !found || got < ticks || ticks == 0 {
		t.Errorf("the shell's tree: %d ticks (found %v), the scan's stats %d (want equal, and > 0)", got, found, ticks)
	}
}

func TestParseProcStat(t *testing.T) {
	for _, c := range []struct {
		line string
		want procStat
		ok   bool
	}{
		{"1 (init) S 0 1 1 0 -1 4194560 1000 0 0 0 100 50 0 0 20 0 1 0 12345 10485760 2560\n", procStat{100, 50, 0, 0, 1}, true},
		// A command name with spaces and parentheses; a multi-threaded
		// process that has reaped children.
		{"77 (a) b (c) R 1 77 77 0 -1 0 0 0 0 0 7 3 40 2 20 0 12 0 9 0 0", procStat{7, 3, 40, 2, 12}, true},
		{"77 (x) R 1 77 77 0 -1 0 0 0 0 0 18446744073709551615 3 0 0 20 0 1 0", procStat{}, false}, // utime overflows
		{"77 (x) R 1 77 77 0 -1 0 0 0 0 0 7 3 0 0 20 0", procStat{}, false},                        // cut before num_threads
		{"77 (x) R 1 77 77 0 -1 0 0 0 0 0 7x 3 0 0 20 0 1 0", procStat{}, false},                   // junk in utime
		{"77 (x) R 1 77 77 0 -1 0 0 0 0 0 7 3 -1 0 20 0 1 0", procStat{}, false},                   // a negative cutime
		{"77 x R 1 77", procStat{}, false},
		{"", procStat{}, false},
	} {
		got, ok := parseProcStat([]byte(c.line))
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("parseProcStat(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

// BenchmarkTreeCPU: one reading of a shell's tree of eight children, as the
// session reads the server's each second.
func BenchmarkTreeCPU(b *testing.B) {
	cmd := exec.Command("sh", "-c", "for i in 1 2 3 4 5 6 7 8; do sleep 60 & done; wait")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	benchTreeReadings(b, cmd.Process.Pid, false, 9)
}

// BenchmarkTreeCPUKernel reads the kernel's threads as a session does,
// against every file opened each time and every thread's children read.
func BenchmarkTreeCPUKernel(b *testing.B) {
	kt := kthreadd("/proc")
	if kt == 0 {
		b.Skip("no kernel threads visible in /proc")
	}
	benchTreeReadings(b, kt, true, 2)
}

// benchTreeReadings times readings of root's tree, once it has at least
// size processes, by a treeCPU that opens its files each time ("opened",
// every process's children read) and by one that keeps them ("kept", flat
// as given).
func benchTreeReadings(b *testing.B, root int, flat bool, size int) {
	for _, kept := range []bool{false, true} {
		name := "opened"
		if kept {
			name = "kept"
		}
		b.Run(name, func(b *testing.B) {
			r := &treeCPU{root: "/proc"}
			if kept {
				r = newTreeCPU("/proc", flat)
				defer r.close()
			}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				r.ticksSince([]int{root})
				if len(r.tree) >= size {
					break
				}
				if time.Now().After(deadline) {
					b.Skipf("the tree of %d has %v; want %d processes", root, r.tree, size)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, found := r.ticksSince([]int{root}); !found[0] {
					b.Fatalf("%d is gone", root)
				}
			}
			b.ReportMetric(float64(len(r.tree)), "procs")
		})
	}
}

func TestParseCPULine(t *testing.T) {
	for _, c := range []struct {
		line string
		want CPUCounters
		ok   bool
	}{
		{"cpu  100 20 30 400 5 6 7 8 9 10", CPUCounters{1, 0.2, 0.3, 4, 0.05, 0.06, 0.07, 0.08}, true},
		{"cpu 100 20 30 400", CPUCounters{User: 1, Nice: 0.2, System: 0.3, Idle: 4}, true}, // an old kernel's four fields
		{"cpu 100 20 30", CPUCounters{}, false},
		{"cpu0 100 20 30 400 5 6 7 8", CPUCounters{}, false},
		{"cpu  100 20 x 400 5 6 7 8", CPUCounters{}, false},
		{"cpu  100 20 -30 400 5 6 7 8", CPUCounters{}, false},
		{"intr 1 2 3 4", CPUCounters{}, false},
		{"", CPUCounters{}, false},
	} {
		got, ok := parseCPULine([]byte(c.line))
		if ok != c.ok || got != c.want {
			t.Errorf("parseCPULine(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

// The host's own /proc/stat reads as procfs reads it: procfs's reading,
// taken between two of ours, lies between them.
func TestHostCPUMatchesProcfs(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc")
	}
	before := hostReadCPU(t, "/proc")
	pfs, err := procfs.NewFS("/proc")
	if err != nil {
		t.Fatal(err)
	}
	st, err := pfs.Stat()
	if err != nil {
		t.Fatal(err)
	}
	after := hostReadCPU(t, "/proc")
	p := st.CPUTotal
	for _, f := range []struct {
		name        string
		lo, mid, hi float64
	}{
		{"user", before.User, p.User, after.User}, {"nice", before.Nice, p.Nice, after.Nice},
		{"system", before.System, p.System, after.System}, {"idle", before.Idle, p.Idle, after.Idle},
		{"iowait", before.IOWait, p.Iowait, after.IOWait}, {"irq", before.IRQ, p.IRQ, after.IRQ},
		{"softirq", before.SoftIRQ, p.SoftIRQ, after.SoftIRQ}, {"steal", before.Steal, p.Steal, after.Steal},
	} {
		if f.mid < f.lo-1e-9 || f.mid > f.hi+1e-9 || f.hi <= 0 && f.name == "idle" {
			t.Errorf("%s: procfs %v, ours %v before and %v after", f.name, f.mid, f.lo, f.hi)
		}
	}
}

// BenchmarkTreeCPUThreads reads the tree of this process, whose threads
// (a Go program's several) each have a children file: the case of a
// workload tierbench runs in-process, or of MariaDB's one mariadbd.
func BenchmarkTreeCPUThreads(b *testing.B) {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 16 { // threads of their own, as a busy process has
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			<-stop
		}()
	}
	b.Cleanup(func() { close(stop); wg.Wait() })
	benchTreeReadings(b, os.Getpid(), false, 1)
}

// A child that a thread other than the main one started is in the tree:
// the children files of every thread are read, not the process's own
// alone. Each of several threads starts one.
func TestTreeCPUChildrenOfThreads(t *testing.T) {
	if _, ok := procChildren("/proc", os.Getpid()); !ok {
		testenv.SkipOrFail(t, "this kernel has no /proc/PID/task/TID/children")
	}
	var pids []int
	var mu sync.Mutex
	var started sync.WaitGroup
	hold := make(chan struct{}) // the threads live on until the tree is read
	defer close(hold)
	for range 4 {
		started.Add(1)
		go func() {
			runtime.LockOSThread() // a thread of its own; never unlocked, so it ends with the goroutine
			cmd := exec.Command("sleep", "30")
			err := cmd.Start()
			if err == nil {
				t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
				mu.Lock()
				pids = append(pids, cmd.Process.Pid)
				mu.Unlock()
			} else {
				t.Error(err)
			}
			started.Done()
			<-hold
		}()
	}
	started.Wait()
	r := &treeCPU{root: "/proc"}
	r.ticksSince([]int{os.Getpid()})
	for _, p := range pids {
		if !slices.Contains(r.tree, p) {
			t.Errorf("child %d of a thread is not in the tree %v", p, r.tree)
		}
	}
}
