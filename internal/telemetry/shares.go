package telemetry

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Who used the host's CPU. A repetition measured while something else
// used the host says as much about that neighbour as about the storage,
// so each sample splits the host's busy time (user, system, interrupts)
// into three shares of all cores:
//
//   - the workload's: tierbench's own process tree (its virtual users, fio,
//     the backup tools it runs), the server under test's tree, and every
//     process in the run's Workload set (a scenario's other instances, a
//     restored copy being verified);
//   - the kernel's: its threads (children of kthreadd: the loop device's
//     workers, kswapd, the block layer's kworkers) and interrupt time, which
//     an emulated tier or a busy device makes part of the workload;
//   - other processes': the rest, what the noisy-host judgement reads.
//
// A process's CPU over an interval is the growth of its utime+stime since
// the previous sample, read per process rather than as a tree's sum: a
// backend or a fio job that exits takes its whole past CPU out of a sum,
// which would read as the tree giving CPU back and as others taking it.
// What a process used in its last part-interval before exiting comes back
// through its parent's reaped-children ticks (ticksSince); only a process
// whose parent is outside the trees loses it to other processes'.

// Workload is the set of processes, beside tierbench's own and the run's
// server, whose CPU belongs to the experiment: the servers of a scenario's
// other instances, a restored copy a backup run starts. Each counts with
// its descendants. Several runs of one tierbench share one set; it is safe
// for concurrent use, and a nil *Workload is empty.
type Workload struct {
	mu   sync.Mutex
	pids map[int]int // pid -> how many Adds it has not had Removes for
}

// Add puts pid (and its descendants) in the set; pid <= 0 is ignored.
func (w *Workload) Add(pid int) {
	if w == nil || pid <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pids == nil {
		w.pids = map[int]int{}
	}
	w.pids[pid]++
}

// Remove takes back one Add of pid.
func (w *Workload) Remove(pid int) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pids[pid] <= 1 {
		delete(w.pids, pid)
		return
	}
	w.pids[pid]--
}

// PIDs is the set now, in ascending order.
func (w *Workload) PIDs() []int {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.pids))
}

// Shares is who used the host's CPU over an interval, each in percent of
// all cores; with idle, iowait and steal they add up to 100.
type Shares struct {
	WorkloadPct float64 // tierbench, the server under test, the Workload set
	KernelPct   float64 // kernel threads and interrupt time
	ForeignPct  float64 // other processes: the busy time left
}

// shares splits the busy time between two CPU readings given the ticks the
// workload's and the kernel's threads used meanwhile. Tick counts and
// /proc/stat are sampled at slightly different instants, so a share is
// clamped to what is left of the busy time.
func shares(prev, cur CPUCounters, workloadTicks, kernelTicks uint64) Shares {
	d := func(p, c float64) float64 { return max(c-p, 0) }
	irq := d(prev.IRQ, cur.IRQ) + d(prev.SoftIRQ, cur.SoftIRQ)
	busy := d(prev.User, cur.User) + d(prev.Nice, cur.Nice) + d(prev.System, cur.System) + irq
	total := busy + d(prev.Idle, cur.Idle) + d(prev.IOWait, cur.IOWait) + d(prev.Steal, cur.Steal)
	if total <= 0 {
		return Shares{}
	}
	kernel := min(busy, irq+float64(kernelTicks)/procUserHZ)
	work := min(busy-kernel, float64(workloadTicks)/procUserHZ)
	pct := func(v float64) float64 { return v / total * 100 }
	return Shares{WorkloadPct: pct(work), KernelPct: pct(kernel), ForeignPct: pct(busy - kernel - work)}
}

// kthreadd is the kernel's thread parent, whose children are every kernel
// thread; 0 when this /proc shows none (a container's own PID namespace).
func kthreadd(procRoot string) int {
	b, err := os.ReadFile(filepath.Join(procRoot, "2", "stat"))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if !bytes.HasPrefix(b, []byte("2 (kthreadd)")) || i < 0 || !bytes.HasPrefix(b[i:], []byte(") S 0 ")) && !bytes.HasPrefix(b[i:], []byte(") R 0 ")) {
		return 0
	}
	return 2
}

// procTicks is a process's CPU at a reading: its own ticks (utime+stime),
// those of the children it has reaped (cutime+cstime), and the root whose
// tree it was counted in.
type procTicks struct {
	own, reaped uint64
	root        int
}

// ticksSince reads the trees of roots and returns, for each root, the
// ticks (utime+stime, 1/USER_HZ s) its processes used since the previous
// call, and whether the root itself was found. A process in two trees
// counts in the first. A process seen last time counts its growth; a new
// one its whole time (it started, or joined a tree, in the interval).
//
// A process that exits between two readings would take with it what it
// used after the last one; its parent, once it reaps it, gains its whole
// time (and its reaped children's) as cutime+cstime. So a process's
// growth in reaped ticks counts too, less what the session had already
// counted of the processes of its tree that are gone (owed, per root): what
// is left is the lost part, and the whole of children too short-lived to be
// seen at all (a pg_ctl, a psql).
func (r *treeCPU) ticksSince(roots []int) (ticks []uint64, found []bool) {
	ticks, found = make([]uint64, len(roots)), make([]bool, len(roots))
	next := make(map[int]procTicks, len(r.last))
	if r.owed == nil {
		r.owed = map[int]uint64{}
	}
	gains := make([]uint64, len(roots)) // reaped ticks, per root
	r.tree = r.tree[:0]
	for ri, root := range roots {
		if root <= 0 || slices.Contains(r.tree, root) {
			continue
		}
		start := len(r.tree)
		r.tree = append(r.tree, root)
		for i := start; i < len(r.tree); i++ {
			p := r.tree[i]
			st, err := r.stat(p)
			if err != nil {
				continue // gone, or not readable: its CPU is not counted
			}
			if i == start {
				found[ri] = true
			}
			now := procTicks{own: st.utime + st.stime, reaped: st.cutime + st.cstime, root: root}
			next[p] = now
			if was, ok := r.last[p]; ok && was.own <= now.own && was.reaped <= now.reaped {
				ticks[ri] += now.own - was.own
				gains[ri] += now.reaped - was.reaped
			} else if r.last != nil {
				ticks[ri] += now.own // new since the last reading (or a reused pid)
			}
			if r.flat && i != start {
				continue
			}
			if !r.children(p, st.threads) && i == start {
				if tree, err := procTreeScan(r.root, p); err == nil { // no children files on this kernel
					for _, c := range tree[1:] {
						r.tree = addPID(r.tree, c)
					}
				}
			}
		}
	}
	for p, was := range r.last {
		if _, ok := next[p]; ok {
			continue
		}
		// Gone from the tree: exited, its parent to reap it (owed), or
		// moved out of it alive (a daemon's parent exited), owing nothing.
		if _, err := r.stat(p); err != nil && procVanished(err) {
			r.owed[was.root] += was.own + was.reaped
		}
	}
	for ri, root := range roots {
		repaid := min(gains[ri], r.owed[root])
		r.owed[root] -= repaid
		ticks[ri] += gains[ri] - repaid
	}
	r.last = next
	r.endReading()
	return ticks, found
}
