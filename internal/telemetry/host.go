package telemetry

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
//
// One made by newTreeCPU also keeps those files open from one reading to
// the next and reads them again from the start (pread): one system call
// a file instead of four (open, read, the read that finds the end, close),
// and no walk of the path. A kept file of a process that has exited fails
// with ESRCH, even when its pid has been given to a new process since, and
// is then opened again by its path. On the 2-core reference machine a
// reading of a tree of 9 went from 198 to 62 µs, of the kernel's 62
// threads (read flat) from 1.17 to 0.33 ms (BenchmarkTreeCPU,
// BenchmarkTreeCPUKernel).
type treeCPU struct {
	root string
	buf  []byte
	tree []int
	last map[int]procTicks // each process's CPU at the last ticksSince
	owed map[int]uint64    // per root: ticks counted of its tree's exited processes, which their parents' reaped ticks bring again

	// flat says only the roots have children: the kernel's threads, all
	// children of kthreadd.
	flat bool
	// files are the kept files (nil: none are kept), each with the
	// reading that last used it; gen is the current reading's number.
	files map[procFile]keptFile
	gen   uint64
}

// procFile names a /proc file treeCPU reads: a process's stat, or the
// children file of one of its threads (tid), or its task directory.
type procFile struct {
	pid, tid int
	kind     procFileKind
}

type procFileKind uint8

const (
	statFile procFileKind = iota
	childrenFile
	taskDir
)

// keptFile is an open /proc file and the reading that last used it.
type keptFile struct {
	fd  int
	dir *os.File // a task directory
	gen uint64
}

// maxKeptFiles bounds the files a treeCPU keeps open; past it, files are
// opened and closed each reading, as without keeping.
const maxKeptFiles = 4096

// newTreeCPU is a treeCPU that keeps its files open between readings; its
// close closes them.
func newTreeCPU(procRoot string, flat bool) *treeCPU {
	return &treeCPU{root: procRoot, flat: flat, files: map[procFile]keptFile{}}
}

func (k procFile) path(root string) string {
	proc := filepath.Join(root, strconv.Itoa(k.pid))
	switch k.kind {
	case childrenFile:
		return filepath.Join(proc, "task", strconv.Itoa(k.tid), "children")
	case taskDir:
		return filepath.Join(proc, "task")
	}
	return filepath.Join(proc, "stat")
}

// read reads file k whole: through its kept descriptor when there is one,
// else by its path, keeping the new descriptor when r keeps files.
func (r *treeCPU) read(k procFile) ([]byte, error) {
	if f, ok := r.files[k]; ok {
		if b, err := preadAll(&r.buf, f.fd); err == nil {
			f.gen = r.gen
			r.files[k] = f
			return b, nil
		}
		unix.Close(f.fd) // the process is gone; its pid may be another's now
		delete(r.files, k)
	}
	path := k.path(r.root)
	if r.files == nil || len(r.files) >= maxKeptFiles {
		return readInto(&r.buf, path)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	b, err := preadAll(&r.buf, fd)
	if err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	r.files[k] = keptFile{fd: fd, gen: r.gen}
	return b, nil
}

// endReading closes the kept files the reading just ended did not use:
// those of processes and threads gone or out of the trees.
func (r *treeCPU) endReading() {
	for k, f := range r.files {
		if f.gen != r.gen {
			closeKept(f)
			delete(r.files, k)
		}
	}
	r.gen++
}

// close closes every kept file.
func (r *treeCPU) close() {
	for k, f := range r.files {
		closeKept(f)
		delete(r.files, k)
	}
}

func closeKept(f keptFile) {
	if f.dir != nil {
		f.dir.Close()
	} else {
		unix.Close(f.fd)
	}
}

// preadAll reads the file open as fd from its start into *buf, growing
// it as needed.
func preadAll(buf *[]byte, fd int) ([]byte, error) {
	if len(*buf) == 0 {
		*buf = make([]byte, 4096)
	}
	b, n := *buf, 0
	for {
		if n == len(b) {
			b = append(b, make([]byte, len(b))...)
			*buf = b
		}
		m, err := unix.Pread(fd, b[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return b[:n], nil
		}
		n += m
	}
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
	tids := []int{p}
	if threads != 1 {
		tids = r.threadIDs(p)
	}
	found := false
	for _, tid := range tids {
		b, err := r.read(procFile{pid: p, tid: tid, kind: childrenFile})
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

// threadIDs lists the entries of /proc/p/task (none when it is gone),
// unsorted: the names alone, no stat of each. A kept directory is read
// again from its start; one of a process gone is opened again by its path.
func (r *treeCPU) threadIDs(p int) []int {
	k := procFile{pid: p, kind: taskDir}
	var names []string
	read := false
	if f, ok := r.files[k]; ok {
		var err error
		if _, err = f.dir.Seek(0, io.SeekStart); err == nil {
			names, err = f.dir.Readdirnames(-1)
		}
		if read = err == nil; read {
			f.gen = r.gen
			r.files[k] = f
		} else {
			closeKept(f)
			delete(r.files, k)
		}
	}
	if !read {
		d, err := os.Open(k.path(r.root))
		if err != nil {
			return nil
		}
		if names, err = d.Readdirnames(-1); err != nil || r.files == nil || len(r.files) >= maxKeptFiles {
			d.Close()
		} else {
			r.files[k] = keptFile{dir: d, gen: r.gen}
		}
	}
	tids := make([]int, 0, len(names))
	for _, n := range names {
		if t, err := strconv.Atoi(n); err == nil {
			tids = append(tids, t)
		}
	}
	return tids
}

// stat reads /proc/p/stat.
func (r *treeCPU) stat(p int) (procStat, error) {
	b, err := r.read(procFile{pid: p, kind: statFile})
	if err != nil {
		return procStat{}, err
	}
	st, ok := parseProcStat(b)
	if !ok {
		return procStat{}, fmt.Errorf("%s: unexpected format", procFile{pid: p, kind: statFile}.path(r.root))
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
	b, err := preadAll(buf, fd)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return b, nil
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
