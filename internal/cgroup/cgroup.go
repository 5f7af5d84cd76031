// Package cgroup caps the memory and throttles the block I/O of a group of
// processes through Linux control groups, v2 or v1, whichever the machine
// offers. tierbench uses it to give a managed database server the memory of
// the machine it emulates (page cache included) and the IOPS and bandwidth of
// the storage tier it emulates.
//
// A group is named tierbench/NAME under a parent cgroup: this process's own
// cgroup when the group can live there, else the hierarchy's root. Keeping
// the group under our own cgroup keeps the server inside whatever limits and
// accounting the launcher set for us (a systemd slice, a container); v2 can
// only do so when our cgroup may delegate the controllers (it holds no
// processes), which is rare, so v2 groups usually sit under the root.
//
// Groups may share one I/O budget (Limits.IOGroup): the servers of one
// emulated storage tier draw from the tier's IOPS and bandwidth together, as
// the databases on one datastore do, while each keeps its own memory cap.
// v1 puts each process in tierbench/NAME of the memory hierarchy and in the
// shared tierbench/IOGROUP of the blkio one, which holds the throttles. v2,
// one hierarchy, nests the group: tierbench/IOGROUP holds io.max (io.max
// limits a subtree as a whole) and tierbench/IOGROUP/NAME the memory cap and
// the processes.
//
// A limit the machine cannot apply is not an error: Applied says why in its
// notes, so a benchmark can run and report that it ran uncapped.
package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/internal/stored"
)

// Limits are what a group should be held to.
type Limits struct {
	// MemoryBytes caps the group's whole memory use, page cache included
	// (v2 memory.max, v1 memory.limit_in_bytes); 0: no cap.
	MemoryBytes int64
	IO          []stored.IOLimit
	// IOGroup, when set, names the group whose I/O budget this one shares:
	// IO is written to tierbench/IOGROUP, not to the group itself, and every
	// group naming IOGROUP draws from that one budget (they must all give
	// the same IO; the last Create's is what holds). It needs IO. The shared
	// group outlives its members: remove it with Open(IOGROUP).Remove once
	// they are gone.
	IOGroup string
}

// unlimited says l throttles nothing.
func unlimited(l stored.IOLimit) bool {
	return l.ReadIOPS == 0 && l.WriteIOPS == 0 && l.ReadBPS == 0 && l.WriteBPS == 0
}

// V1WritebackNote is Applied.IONote's caveat on cgroup v1: blkio charges a
// write to whoever submits it, and buffered writeback is submitted by kernel
// flusher threads, not by the group.
const V1WritebackNote = "v1: buffered writeback is not throttled"

// ErrNotFound says Open found no group of that name.
var ErrNotFound = errors.New("no such cgroup")

// Host is where the kernel's cgroup view is read and written: "/" on a real
// machine, a fixture tree in tests (ROOT/proc/self/mountinfo,
// ROOT/proc/self/cgroup, and the mount points named there under ROOT).
type Host struct {
	root string
	ops  ops
}

// ops are the three changes made to a cgroup file system. Tests replace them
// with a fake that behaves like cgroupfs on plain files.
type ops struct {
	mkdir func(path string) error
	write func(path, data string) error
	rmdir func(path string) error
}

// NewHost reads and writes cgroups under root ("" or "/": this machine).
func NewHost(root string) Host {
	if root == "" {
		root = "/"
	}
	return Host{root: root, ops: ops{
		mkdir: func(p string) error { return os.Mkdir(p, 0o755) },
		write: writeFile,
		rmdir: os.Remove,
	}}
}

// writeFile writes data in one write(2), as cgroup files want it, without
// creating the file: a missing control file means the controller is off.
func writeFile(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Create makes (or reuses) the group tierbench/NAME on this machine; see
// Host.Create.
func Create(name string, lim Limits) (*Group, stored.Applied, error) {
	return NewHost("/").Create(name, lim)
}

// Open finds the existing group tierbench/NAME on this machine; see Host.Open.
func Open(name string) (*Group, error) { return NewHost("/").Open(name) }

// Group is a cgroup made by Create or found by Open. A Group of no
// hierarchy (nothing was usable) is valid: Add and Remove do nothing.
type Group struct {
	host    Host
	name    string
	version int
	members []member
}

// member is the group's directory in one hierarchy, or the shared I/O group
// it draws from.
type member struct {
	dir    string // BASE/tierbench/NAME, or BASE/tierbench/IOGROUP[/NAME] (v2)
	base   string // the cgroup holding tierbench/: where processes go back at Remove
	mount  string // the hierarchy's mount point: the last resort for processes left at Remove
	mem    bool   // memory files live here
	io     bool   // blkio/io files live here
	shared bool   // the shared I/O group (Limits.IOGroup), which Remove leaves
}

// holdsProcs says whether the group's processes are placed in the member:
// not in a v2 shared group, whose processes are its children's.
func (g *Group) holdsProcs(m member) bool { return !(m.shared && g.version == 2) }

// Name is the group's name (without tierbench/).
func (g *Group) Name() string { return g.name }

// Version is 1 or 2, or 0 for a group of no hierarchy.
func (g *Group) Version() int {
	if len(g.members) == 0 {
		return 0
	}
	return g.version
}

// Dirs are the directories a process of the group is placed in, one per
// hierarchy (v1 with an IOGroup: the memory group and the shared blkio one).
func (g *Group) Dirs() []string {
	var dirs []string
	for _, m := range g.members {
		if g.holdsProcs(m) {
			dirs = append(dirs, m.dir)
		}
	}
	return dirs
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$`)

func checkName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("cgroup name %q is not valid (letters, digits, _ . -; not starting with . or -)", name)
	}
	return nil
}

func (lim Limits) validate() error {
	var errs []error
	if lim.MemoryBytes < 0 {
		errs = append(errs, fmt.Errorf("memory cap %d is negative", lim.MemoryBytes))
	}
	seen := map[string]bool{}
	for _, l := range lim.IO {
		if l.ReadIOPS < 0 || l.WriteIOPS < 0 || l.ReadBPS < 0 || l.WriteBPS < 0 {
			errs = append(errs, fmt.Errorf("I/O limit on %s has a negative value", l.Device()))
		}
		if seen[l.Device()] {
			errs = append(errs, fmt.Errorf("device %s is limited twice", l.Device()))
		}
		seen[l.Device()] = true
	}
	if lim.IOGroup != "" {
		if err := checkName(lim.IOGroup); err != nil {
			errs = append(errs, fmt.Errorf("I/O group: %w", err))
		}
		if len(lim.IO) == 0 {
			errs = append(errs, fmt.Errorf("I/O group %s: no I/O limit to share", lim.IOGroup))
		}
	}
	return errors.Join(errs...)
}

// Create makes (or reuses) the group tierbench/NAME in every hierarchy it
// needs, writes the limits, and reads them back. A reused group gets exactly
// these limits: caps and device throttles of an earlier Create that lim does
// not name are lifted. A limit the machine cannot apply (no controller, no
// permission, a v2 controller that cannot be enabled for the group) is not an
// error: Applied says why in its notes, and Applied.Version is 0 when no
// group could be made at all. Errors are bad arguments and unreadable /proc.
func (h Host) Create(name string, lim Limits) (*Group, stored.Applied, error) {
	g := &Group{host: h, name: name}
	if err := checkName(name); err != nil {
		return g, stored.Applied{}, err
	}
	if err := lim.validate(); err != nil {
		return g, stored.Applied{}, err
	}
	if lim.IOGroup == name {
		return g, stored.Applied{}, fmt.Errorf("cgroup %s cannot share the I/O budget of itself", name)
	}
	hs, err := h.Hierarchies()
	if err != nil {
		return g, stored.Applied{}, err
	}
	v2, mem1, blk1 := pick(hs)
	wantMem, wantIO := lim.MemoryBytes > 0, len(lim.IO) > 0
	useV2 := v2 != nil && ((mem1 == nil && blk1 == nil) ||
		(wantMem && v2.has("memory")) || (wantIO && v2.has("io")))

	var n notes
	switch {
	case useV2:
		g.version = 2
		h.createV2(g, *v2, lim, &n)
	case mem1 != nil || blk1 != nil:
		g.version = 1
		h.createV1(g, mem1, blk1, lim, &n)
	default:
		if wantMem {
			n.mem = "no memory cgroup controller (no cgroup file system is mounted)"
		}
		if wantIO {
			n.io = "no blkio/io cgroup controller (no cgroup file system is mounted)"
		}
	}
	if len(g.members) == 0 {
		return g, stored.Applied{MemoryNote: n.mem, IONote: n.io}, nil
	}
	ap, err := g.Read()
	if err != nil {
		return g, ap, err
	}
	n.check(lim, ap)
	ap.MemoryNote, ap.IONote = n.mem, joinNotes(n.io, ap.IONote)
	return g, ap, nil
}

// notes collect why limits did not apply; the first reason of each kind wins.
type notes struct{ mem, io string }

func (n *notes) memf(format string, a ...any) {
	if n.mem == "" {
		n.mem = fmt.Sprintf(format, a...)
	}
}

func (n *notes) iof(format string, a ...any) {
	if n.io == "" {
		n.io = fmt.Sprintf(format, a...)
	}
}

// check compares what was asked with what the files say, for limits that
// failed silently (or whose failure was already explained).
func (n *notes) check(lim Limits, ap stored.Applied) {
	if lim.MemoryBytes > 0 && ap.MemoryMax == 0 {
		n.memf("the memory cap did not take effect (the group reads unlimited)")
	}
	for _, want := range lim.IO {
		if unlimited(want) {
			continue
		}
		i := slices.IndexFunc(ap.IO, func(l stored.IOLimit) bool { return l.Major == want.Major && l.Minor == want.Minor })
		if i < 0 {
			n.iof("the I/O limit on %s did not take effect", want.Device())
			continue
		}
		got := ap.IO[i]
		if (want.ReadIOPS > 0) != (got.ReadIOPS > 0) || (want.WriteIOPS > 0) != (got.WriteIOPS > 0) ||
			(want.ReadBPS > 0) != (got.ReadBPS > 0) || (want.WriteBPS > 0) != (got.WriteBPS > 0) {
			n.iof("the I/O limit on %s took effect only in part", want.Device())
		}
	}
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || strings.Contains(a, b):
		return a
	}
	return a + "; " + b
}

// pick finds the v2 hierarchy and the v1 hierarchies holding memory and blkio.
func pick(hs []Hierarchy) (v2, mem1, blk1 *Hierarchy) {
	for i := range hs {
		hy := &hs[i]
		switch {
		case hy.Version == 2 && v2 == nil:
			v2 = hy
		case hy.Version == 1 && hy.has("memory") && mem1 == nil:
			mem1 = hy
		case hy.Version == 1 && hy.has("blkio") && blk1 == nil:
			blk1 = hy
		}
	}
	return v2, mem1, blk1
}

// candidates are the parents a group may live under, in order of preference:
// this process's own cgroup, then the hierarchy's root.
func (hy Hierarchy) candidates() []string {
	var out []string
	if hy.Own != "" && hy.Own != hy.Mount {
		out = append(out, hy.Own)
	}
	return append(out, hy.Mount)
}

// mkdirs creates parent/tierbench/NAME, accepting what exists already.
func (h Host) mkdirs(parent, name string) (string, error) {
	top := filepath.Join(parent, "tierbench")
	dir := filepath.Join(top, name)
	for _, d := range []string{top, dir} {
		if err := h.ops.mkdir(d); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return dir, nil
}

// existing returns parent/tierbench/NAME, or parent/tierbench/IOGROUP/NAME
// (v2's groups sharing an I/O budget), of the first candidate that has it.
func existing(hy Hierarchy, name string) string {
	for _, c := range hy.candidates() {
		top := filepath.Join(c, "tierbench")
		if dir := filepath.Join(top, name); isDir(dir) {
			return dir
		}
		entries, _ := os.ReadDir(top)
		for _, e := range entries {
			if dir := filepath.Join(top, e.Name(), name); e.IsDir() && isDir(dir) {
				return dir
			}
		}
	}
	return ""
}

// baseOf is the cgroup holding the tierbench/ above dir: dir is
// BASE/tierbench/NAME or BASE/tierbench/IOGROUP/NAME.
func baseOf(dir string) string {
	up := filepath.Dir(dir)
	if filepath.Base(up) != "tierbench" && filepath.Base(filepath.Dir(up)) == "tierbench" {
		return filepath.Dir(filepath.Dir(up))
	}
	return filepath.Dir(up)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Add moves processes into the group (every hierarchy of it). Threads follow
// their process, and children forked later are born in the group.
func (g *Group) Add(pids ...int) error {
	for _, m := range g.members {
		if !g.holdsProcs(m) {
			continue
		}
		for _, pid := range pids {
			if err := g.host.ops.write(filepath.Join(m.dir, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
				return fmt.Errorf("moving process %d into %s: %w", pid, m.dir, err)
			}
		}
	}
	return nil
}

// Read reads the group's limits back from its files.
func (g *Group) Read() (stored.Applied, error) {
	ap := stored.Applied{Version: g.Version()}
	for _, m := range g.members {
		if !m.shared && (ap.Path == "" || m.mem) {
			ap.Path = m.dir
		}
	}
	if ap.Path == "" && len(g.members) > 0 {
		ap.Path = g.members[0].dir
	}
	var errs []error
	for _, m := range g.members {
		if m.mem {
			v, err := readMemory(m.dir, g.version)
			if err != nil {
				errs = append(errs, err)
			}
			ap.MemoryMax = v
		}
		if m.io {
			io, err := readIO(m.dir, g.version)
			if err != nil {
				errs = append(errs, err)
			}
			ap.IO, ap.IOShared = io, m.shared
			if m.dir != ap.Path && (len(io) > 0 || m.shared) {
				ap.IOPath = m.dir
			}
		}
	}
	if g.version == 1 && len(ap.IO) > 0 {
		ap.IONote = V1WritebackNote
	}
	return ap, errors.Join(errs...)
}

// Remove moves the processes still in the group to the parent it was made
// under (or, where the parent may not hold processes, the hierarchy's root)
// and removes the group, and tierbench/ when it is left empty. A shared I/O
// group stays, with the other groups' processes: only this group's own
// leave it.
func (g *Group) Remove() error {
	var own []int
	for _, m := range g.members {
		if !m.shared {
			pids, _ := readProcs(filepath.Join(m.dir, "cgroup.procs"))
			own = append(own, pids...)
		}
	}
	var errs []error
	for _, m := range g.members {
		var err error
		if m.shared {
			err = g.host.leave(m, own)
		} else {
			err = g.host.remove(m)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	g.members = nil
	return errors.Join(errs...)
}

// leave moves the processes of pids that are in the shared group m to the
// cgroup it was made under (the hierarchy's root where that fails).
func (h Host) leave(m member, pids []int) error {
	in, err := readProcs(filepath.Join(m.dir, "cgroup.procs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("leaving cgroup %s: %w", m.dir, err)
	}
	for _, pid := range in {
		if slices.Contains(pids, pid) {
			h.moveOut(m, pid)
		}
	}
	return nil
}

// moveOut moves a process to the member's base cgroup, or its hierarchy's
// root when the base refuses it.
func (h Host) moveOut(m member, pid int) {
	parent := m.base
	if parent == "" {
		parent = baseOf(m.dir)
	}
	if err := h.ops.write(filepath.Join(parent, "cgroup.procs"), strconv.Itoa(pid)); err != nil && parent != m.mount {
		h.ops.write(filepath.Join(m.mount, "cgroup.procs"), strconv.Itoa(pid))
	}
}

func (h Host) remove(m member) error {
	parent := m.base
	if parent == "" {
		parent = baseOf(m.dir)
	}
	var err error
	// A process may fork while we move it; the child lands in the group, so
	// go round until the group is empty.
	for range 10 {
		var pids []int
		pids, err = readProcs(filepath.Join(m.dir, "cgroup.procs"))
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone already
		}
		if err != nil || len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			h.moveOut(m, pid)
		}
	}
	if err != nil {
		return fmt.Errorf("removing cgroup %s: %w", m.dir, err)
	}
	// An exited process stays in the group until it is reaped: wait a little.
	for i := 0; ; i++ {
		err = h.ops.rmdir(m.dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			break
		}
		if !errors.Is(err, syscall.EBUSY) || i == 20 {
			return fmt.Errorf("removing cgroup %s: %w", m.dir, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// tierbench/, when no other group is left in it (a shared I/O group
	// holding this one stays: its owner removes it).
	h.ops.rmdir(filepath.Join(parent, "tierbench"))
	return nil
}

// Open finds the group tierbench/NAME made earlier, by this process or
// another: under this process's cgroup or the root, else anywhere in the
// hierarchies (a process in another cgroup made it). No group: ErrNotFound.
func (h Host) Open(name string) (*Group, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	hs, err := h.Hierarchies()
	if err != nil {
		return nil, err
	}
	v2, mem1, blk1 := pick(hs)
	g := &Group{host: h, name: name}
	find := func(hy *Hierarchy, mem, io bool) {
		if hy == nil {
			return
		}
		dir := existing(*hy, name)
		if dir == "" {
			dir = search(hy.Mount, name)
		}
		if dir == "" {
			return
		}
		base := baseOf(dir)
		if up := filepath.Dir(dir); hy.Version == 2 && filepath.Base(up) != "tierbench" {
			// Nested in a shared I/O group, which holds its io.max.
			g.members = append(g.members, member{dir: dir, base: base, mount: hy.Mount, mem: mem},
				member{dir: up, base: base, mount: hy.Mount, io: io, shared: true})
			return
		}
		g.members = append(g.members, member{dir: dir, base: base, mount: hy.Mount, mem: mem, io: io})
	}
	find(v2, true, true)
	if len(g.members) > 0 {
		g.version = 2
		return g, nil
	}
	g.version = 1
	find(mem1, true, false)
	find(blk1, false, true)
	if len(g.members) == 0 {
		return g, fmt.Errorf("cgroup tierbench/%s: %w", name, ErrNotFound)
	}
	return g, nil
}

// search walks a hierarchy (a few levels deep: groups live near the top) for
// a directory tierbench/NAME or tierbench/IOGROUP/NAME.
func search(mount, name string) string {
	const maxDepth = 8
	var found string
	base := strings.Count(mount, string(filepath.Separator))
	filepath.WalkDir(mount, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.Count(p, string(filepath.Separator))-base > maxDepth {
			return filepath.SkipDir
		}
		up := filepath.Dir(p)
		if d.Name() == name && (filepath.Base(up) == "tierbench" || filepath.Base(filepath.Dir(up)) == "tierbench") {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	return found
}
