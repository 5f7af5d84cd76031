package telemetry

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// procUserHZ is the tick rate of /proc/<pid>/stat's utime and stime. procfs
// assumes the same 100 (USER_HZ, fixed on every Linux architecture it
// supports) when it converts /proc/stat to seconds.
const procUserHZ = 100

// HostReader reads host CPU and memory from a /proc tree.
type HostReader struct {
	fs   procfs.FS
	stat string // /proc/stat
	buf  []byte
}

// NewHostReader returns a reader of the /proc tree at procRoot.
func NewHostReader(procRoot string) (*HostReader, error) {
	pfs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, fmt.Errorf("host telemetry: %w", err)
	}
	return &HostReader{fs: pfs, stat: filepath.Join(procRoot, "stat")}, nil
}

// CPUCounters is one reading of /proc/stat's aggregate "cpu" line, in
// seconds. Guest time is left out: the kernel already counts it in User
// (and guest_nice in Nice).
type CPUCounters struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal float64
}

// CPU reads the aggregate CPU counters. It parses the first line of
// /proc/stat itself, into a buffer it keeps: procfs's FS.Stat parses every
// line with fmt.Sscan, the per-interrupt counts included, 0.1 ms of CPU a
// reading on the host under test against 14 µs.
func (r *HostReader) CPU() (CPUCounters, error) {
	b, err := readInto(&r.buf, r.stat)
	if err != nil {
		return CPUCounters{}, fmt.Errorf("host telemetry: read stat: %w", err)
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	c, ok := parseCPULine(line)
	if !ok {
		return CPUCounters{}, fmt.Errorf("host telemetry: %s does not start with a cpu line: %.60q", r.stat, line)
	}
	return c, nil
}

// parseCPULine reads /proc/stat's "cpu  user nice system idle iowait irq
// softirq steal guest guest_nice" line (ticks of 1/USER_HZ s); kernels
// before 2.6.11 end it after fewer fields, which then count 0.
func parseCPULine(line []byte) (CPUCounters, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("cpu "))
	if !ok {
		return CPUCounters{}, false
	}
	var c CPUCounters
	fields := [...]*float64{&c.User, &c.Nice, &c.System, &c.Idle, &c.IOWait, &c.IRQ, &c.SoftIRQ, &c.Steal}
	n := 0
	for _, f := range bytes.Fields(rest) {
		v, used := parseUintPrefix(f)
		if used == 0 || used != len(f) {
			return CPUCounters{}, false
		}
		if n < len(fields) {
			*fields[n] = float64(v) / procUserHZ
		}
		n++
	}
	if n < 4 {
		return CPUCounters{}, false
	}
	return c, true
}

// CPURates turns two readings into percentages of all cores: each field's
// share of the total delta, all 0 when nothing elapsed. A counter that went
// backwards (a reset) counts as 0 for that field.
func CPURates(prev, cur CPUCounters) CPU {
	d := func(p, c float64) float64 { return max(c-p, 0) }
	user := d(prev.User, cur.User) + d(prev.Nice, cur.Nice)
	system := d(prev.System, cur.System) + d(prev.IRQ, cur.IRQ) + d(prev.SoftIRQ, cur.SoftIRQ)
	iowait := d(prev.IOWait, cur.IOWait)
	idle := d(prev.Idle, cur.Idle)
	steal := d(prev.Steal, cur.Steal)
	total := user + system + iowait + idle + steal
	if total <= 0 {
		return CPU{}
	}
	pct := func(v float64) float64 { return v / total * 100 }
	return CPU{
		UserPct:   pct(user),
		SystemPct: pct(system),
		IOWaitPct: pct(iowait),
		IdlePct:   pct(idle),
		StealPct:  pct(steal),
	}
}

// Memory reads /proc/meminfo. Used and cache follow free(1) before procps-ng
// 4 (which switched to MemTotal - MemAvailable): used = MemTotal - MemFree -
// cache, cache = Buffers + Cached + SReclaimable.
func (r *HostReader) Memory() (Memory, error) {
	mi, err := r.fs.Meminfo()
	if err != nil {
		return Memory{}, fmt.Errorf("host telemetry: read meminfo: %w", err)
	}
	if mi.MemTotalBytes == nil || mi.MemFreeBytes == nil {
		return Memory{}, errors.New("host telemetry: meminfo lacks MemTotal or MemFree")
	}
	v := func(p *uint64) int64 {
		if p == nil {
			return 0
		}
		return int64(*p)
	}
	total, free := v(mi.MemTotalBytes), v(mi.MemFreeBytes)
	cache := v(mi.BuffersBytes) + v(mi.CachedBytes) + v(mi.SReclaimableBytes)
	used := total - free - cache
	if used < 0 { // as free(1): cache figures can exceed what they subtract from
		used = total - free
	}
	return Memory{
		UsedBytes:      used,
		CacheBytes:     cache,
		DirtyBytes:     v(mi.DirtyBytes),
		WritebackBytes: v(mi.WritebackBytes),
	}, nil
}

// treeCPU reads process trees' CPU time (ticksSince), once a second for
// the workload and the kernel's threads, so on the host under test: it reads each process's stat file
// and, a PostgreSQL process having one thread, its one children file, two
// reads a process into a buffer it keeps. procfs's Proc.Stat (a fmt.Sscan
// of 52 fields) and a glob of the process's threads took eight times the
// CPU: 0.8 ms against 0.1 ms for a tree of 9 (BenchmarkTreeCPU).
type treeCPU struct {
	root string
	buf  []byte
	tree []int
	last map[int]procTicks // each process's CPU at the last ticksSince
	owed map[int]uint64    // per root: ticks counted of its tree's exited processes, which their parents' reaped ticks bring again
}

// children appends p's children not yet listed to r.tree, from the children
// file of each of its threads, and reports false when p has none to read.
//
// With threads 1 that is the one file of the process's own task; with any
// other count (0: not known) the files of every thread.
//
// The threads are the names in /proc/p/task, read as they are: a glob of
// task/*/children would stat every thread's file before reading it, which
// made a tree of one 17-thread process cost four times as much.
func (r *treeCPU) children(p, threads int) bool {
	task := filepath.Join(r.root, strconv.Itoa(p), "task")
	tids := []string{strconv.Itoa(p)}
	if threads != 1 {
		tids = r.threadIDs(task)
	}
	found := false
	for _, tid := range tids {
		b, err := readInto(&r.buf, filepath.Join(task, tid, "children"))
		if err != nil {
			continue // the thread or process is gone, or the kernel has no such files
		}
		found = true
		for len(b) > 0 {
			v, n := parseUintPrefix(b)
			if n == 0 {
				b = b[1:]
				continue
			}
			b = b[n:]
			r.tree = addPID(r.tree, int(v))
		}
	}
	return found
}

// threadIDs lists the entries of a /proc/p/task directory (none when it is
// gone), unsorted: the names alone, no stat of each.
func (r *treeCPU) threadIDs(task string) []string {
	f, err := os.Open(task)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	return names
}

// stat reads /proc/p/stat.
func (r *treeCPU) stat(p int) (procStat, error) {
	path := filepath.Join(r.root, strconv.Itoa(p), "stat")
	b, err := readInto(&r.buf, path)
	if err != nil {
		return procStat{}, err
	}
	st, ok := parseProcStat(b)
	if !ok {
		return procStat{}, fmt.Errorf("%s: unexpected format", path)
	}
	return st, nil
}

// readInto reads a small /proc file into *buf, growing it as needed, and
// returns what it read.
func readInto(buf *[]byte, path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	if len(*buf) == 0 {
		*buf = make([]byte, 4096)
	}
	b, n := *buf, 0
	for {
		if n == len(b) {
			b = append(b, make([]byte, len(b))...)
			*buf = b
		}
		m, err := unix.Read(fd, b[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			return b[:n], nil
		}
		n += m
	}
}

// procStat is what the session reads of a /proc/PID/stat line: CPU ticks
// (1/USER_HZ s) the process used, those of its children it has reaped, and
// its thread count.
type procStat struct {
	utime, stime   uint64
	cutime, cstime uint64
	threads        int
}

// parseProcStat reads utime (field 14), stime (15), cutime (16), cstime
// (17) and num_threads (20) of a /proc/PID/stat line, counting fields after
// the last ')', which ends the command name (itself free to hold spaces and
// parentheses).
func parseProcStat(b []byte) (st procStat, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	b = b[i+1:]
	var got int
	for field := 2; len(b) > 0 && got < 5; {
		if b[0] == ' ' {
			b = b[1:]
			field++
			continue
		}
		v, n := parseUintPrefix(b)
		if field >= 14 && field <= 17 || field == 20 {
			if n == 0 || (n < len(b) && b[n] != ' ' && b[n] != '\n') {
				return procStat{}, false
			}
			switch field {
			case 14:
				st.utime = v
			case 15:
				st.stime = v
			case 16:
				st.cutime = v
			case 17:
				st.cstime = v
			default:
				st.threads = int(v)
			}
			got++
		}
		// Skip the rest of the field.
		j := bytes.IndexByte(b, ' ')
		if j < 0 {
			break
		}
		b = b[j:]
	}
	return st, got == 5
}

// parseUintPrefix reads the decimal digits at the start of b and says how
// many it used; 0 means none (or an overflow).
func parseUintPrefix(b []byte) (uint64, int) {
	var v uint64
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		if n >= 19 {
			return 0, 0
		}
		v = v*10 + uint64(b[n]-'0')
		n++
	}
	return v, n
}

// ProcTree lists pid and its live descendants, pid first. They come from
// /proc/N/task/T/children, a read per process of the tree; where the kernel
// has no such files, from every process's ppid, a read per process on the
// host (a few milliseconds on a busy one). A pid that is gone is its own
// whole tree.
func ProcTree(procRoot string, pid int) ([]int, error) {
	if tree, ok := procChildren(procRoot, pid); ok {
		return tree, nil
	}
	return procTreeScan(procRoot, pid)
}

// procChildren lists pid and its descendants through the children files of
// all their threads, or reports false when pid has none to read.
func procChildren(procRoot string, pid int) ([]int, bool) {
	r := &treeCPU{root: procRoot, tree: []int{pid}}
	if !r.children(pid, 0) {
		return nil, false
	}
	for i := 1; i < len(r.tree); i++ {
		r.children(r.tree[i], 0)
	}
	return r.tree, true
}

// addPID appends pid to a tree being listed unless it is there already: a
// pid reused while the host is read could otherwise make a cycle, and a
// process listed twice would count its CPU twice.
func addPID(tree []int, pid int) []int {
	if slices.Contains(tree, pid) {
		return tree
	}
	return append(tree, pid)
}

// procTreeScan lists pid and its descendants through every process's ppid.
func procTreeScan(procRoot string, pid int) ([]int, error) {
	pfs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, err
	}
	procs, err := pfs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	children := make(map[int][]int)
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			if procVanished(err) {
				continue
			}
			return nil, fmt.Errorf("pid %d: %w", p.PID, err)
		}
		children[st.PPID] = append(children[st.PPID], p.PID)
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		for _, c := range children[tree[i]] {
			tree = addPID(tree, c)
		}
	}
	return tree, nil
}

// procVanished reports whether err means the process exited while we read it.
func procVanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}
