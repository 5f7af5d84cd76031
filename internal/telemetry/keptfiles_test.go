package telemetry

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// keptPIDs lists the processes r keeps a file of.
func keptPIDs(r *treeCPU) []int {
	var pids []int
	for k := range r.files {
		if !slices.Contains(pids, k.pid) {
			pids = append(pids, k.pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// A treeCPU that keeps its files open reads what one that opens them each
// time reads, fresh at every reading; it closes the files of a process
// that has exited, and close leaves no descriptor behind.
func TestTreeCPUKeepsFiles(t *testing.T) {
	if _, ok := procChildren("/proc", os.Getpid()); !ok {
		testenv.SkipOrFail(t, "this kernel has no /proc/PID/task/TID/children")
	}
	// A shell with two children: one sleeps, one burns CPU for a while.
	cmd := exec.Command("sh", "-c", `sleep 60 & i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done & wait`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	root := cmd.Process.Pid
	before := openFDs(t) // cmd.Process holds a pidfd
	kept := newTreeCPU("/proc", false)
	t.Cleanup(kept.close)
	for deadline := time.Now().Add(20 * time.Second); len(kept.tree) < 3 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		kept.ticksSince([]int{root})
	}
	if len(kept.tree) < 3 {
		t.Fatalf("the shell's two children not found: tree %v", kept.tree)
	}
	tree := slices.Sorted(slices.Values(kept.tree))
	if got := keptPIDs(kept); !slices.Equal(got, tree) {
		t.Errorf("files kept of %v; want those of the tree %v", got, tree)
	}
	if n := openFDs(t) - before; n < 2*len(tree) {
		t.Errorf("%d more descriptors open than before; want at least a stat and a children file for each of %v", n, tree)
	}

	// Readings through kept files move: the busy child's ticks grow.
	var total uint64
	for deadline := time.Now().Add(20 * time.Second); total == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		ticks, found := kept.ticksSince([]int{root})
		if !found[0] {
			t.Fatal("the shell is gone")
		}
		total += ticks[0]
	}
	if total == 0 {
		t.Error("no ticks counted through kept files while a child burnt CPU")
	}
	// And they agree with a reading that opens every file.
	fresh := &treeCPU{root: "/proc"}
	fresh.ticksSince([]int{root})
	if got := slices.Sorted(slices.Values(fresh.tree)); !slices.Equal(got, slices.Sorted(slices.Values(kept.tree))) {
		t.Errorf("tree %v through kept files, %v opening them", kept.tree, got)
	}

	// The sleeping child exits (the shell reaps it): its files are closed
	// at the next reading.
	var sleeper int
	for _, p := range kept.tree {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm"); err == nil && string(b) == "sleep\n" {
			sleeper = p
		}
	}
	if sleeper == 0 {
		t.Fatalf("no sleep in the tree %v", kept.tree)
	}
	if err := syscall.Kill(sleeper, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); slices.Contains(kept.tree, sleeper) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		kept.ticksSince([]int{root})
	}
	if slices.Contains(kept.tree, sleeper) || slices.Contains(keptPIDs(kept), sleeper) {
		t.Errorf("pid %d exited: tree %v, files kept of %v; want it in neither", sleeper, kept.tree, keptPIDs(kept))
	}
	kept.close()
	if n := openFDs(t); n != before {
		t.Errorf("%d descriptors open after close; want %d, as before", n, before)
	}
}

// The kernel's threads are read flat: the children of kthreadd, and no
// children file of any of them.
func TestTreeCPUFlatKernel(t *testing.T) {
	kt := kthreadd("/proc")
	if kt == 0 {
		t.Skip("no kernel threads visible in /proc")
	}
	flat := newTreeCPU("/proc", true)
	defer flat.close()
	flat.ticksSince([]int{kt})
	full := &treeCPU{root: "/proc"}
	full.ticksSince([]int{kt})
	if len(flat.tree) < 2 {
		t.Fatalf("kernel threads %v; want kthreadd's children", flat.tree)
	}
	missing := 0
	for _, p := range full.tree {
		if !slices.Contains(flat.tree, p) {
			missing++
		}
	}
	// Workers come and go between the two readings.
	if missing > len(full.tree)/10 {
		t.Errorf("%d of the %d kernel threads found through every children file are not in the flat tree", missing, len(full.tree))
	}
	for k := range flat.files {
		if k.kind == childrenFile && k.pid != kt {
			t.Errorf("a children file of kernel thread %d is kept: the flat tree reads kthreadd's only", k.pid)
		}
	}
}
