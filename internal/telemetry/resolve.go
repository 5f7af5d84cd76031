package telemetry

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/mountinfo"
)

// Roots of the pseudo filesystems the readers in this file (and the block
// tracer) look at. Tests point them at fixture trees.
var (
	sysRoot  = "/sys"
	procRoot = "/proc"
)

// Resolution says which block devices hold a path, so the sampler knows which
// rows of /proc/diskstats and which tracepoint devices belong to the target.
type Resolution struct {
	Path         string   `json:"path"`
	Mount        string   `json:"mount"`         // mount point holding Path
	FSType       string   `json:"fstype"`        // as mountinfo names it: ext4, xfs, btrfs, tmpfs
	Source       string   `json:"source"`        // mount source, e.g. /dev/vda1
	Options      string   `json:"options"`       // the mount's options, then the superblock's not already said
	MemoryBacked bool     `json:"memory_backed"` // tmpfs, ramfs: no device
	Devices      []string `json:"devices"`       // kernel names of every device in the chain, top first
	Leaves       []string `json:"leaves"`        // whole disks at the bottom; totals sum these only
	Note         string   `json:"note,omitempty"`
}

// maxDepth bounds the device chain (loop on dm on md on partitions …); real
// stacks are a handful deep, so hitting it means sysfs is odd, not deep.
const maxDepth = 16

var memoryFS = map[string]bool{"tmpfs": true, "ramfs": true, "devtmpfs": true, "hugetlbfs": true}

var networkFS = map[string]bool{
	"nfs": true, "nfs4": true, "cifs": true, "smb3": true, "smbfs": true, "9p": true,
	"ceph": true, "glusterfs": true, "afs": true, "lustre": true, "virtiofs": true,
	"fuse": true, // fuse.sshfs and friends by prefix; fuseblk sits on a block device and resolves
}

// ResolvePath finds the mount holding path and every block device beneath it.
// A path that does not exist yet resolves through its nearest existing parent;
// a block device node resolves to itself.
func ResolvePath(path string) (Resolution, error) {
	r := resolver{active: map[string]bool{}}
	return r.path(path)
}

// resolver carries the cycle guard through the recursion (a loop device whose
// backing file lives on a filesystem on that same loop device, dm tables
// pointing at each other in a broken sysfs). active holds only what is being
// walked right now, so a diamond (two slaves on one disk) is walked twice and
// deduplicated, while a cycle stops.
type resolver struct {
	active map[string]bool
	depth  int
}

func (r *resolver) path(path string) (Resolution, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Resolution{Path: path}, fmt.Errorf("resolve %s: %w", path, err)
	}
	existing, st, err := statNearest(abs)
	if err != nil {
		return Resolution{Path: abs}, fmt.Errorf("resolve %s: %w", path, err)
	}
	isBlock := st.Mode&unix.S_IFMT == unix.S_IFBLK
	dev := st.Dev
	if isBlock {
		dev = st.Rdev
	}
	res, err := r.at(abs, existing, dev, isBlock)
	if err != nil {
		return res, fmt.Errorf("resolve %s: %w", path, err)
	}
	return res, nil
}

// statNearest stats path, or its nearest existing parent, after following
// symlinks so the mount point comparison sees the real location.
func statNearest(path string) (string, unix.Stat_t, error) {
	var st unix.Stat_t
	p := path
	for {
		if err := unix.Stat(p, &st); err == nil {
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				real = p
			}
			return real, st, nil
		} else if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) {
			return p, st, &fs.PathError{Op: "stat", Path: p, Err: err}
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p, st, &fs.PathError{Op: "stat", Path: path, Err: unix.ENOENT}
		}
		p = parent
	}
}

// at resolves a path whose nearest existing part is existing, held by dev
// (or, for a block device node, being dev). It reads only procRoot and
// sysRoot, apart from stat'ing a mount source or a loop backing file.
func (r *resolver) at(path, existing string, dev uint64, isBlock bool) (Resolution, error) {
	res := Resolution{Path: path, Devices: []string{}, Leaves: []string{}}
	mounts, err := readMountinfo(filepath.Join(procRoot, "self", "mountinfo"))
	if err != nil && !isBlock {
		return res, err
	}
	major, minor := unix.Major(dev), unix.Minor(dev)

	if isBlock {
		res.Source = path
		if m, ok := mountOfDevice(mounts, major, minor); ok {
			res.Mount, res.FSType, res.Options = m.point, m.fstype, m.options
		}
		r.device(&res, major, minor)
		return res, nil
	}

	m, ok := mountOf(mounts, existing, major, minor)
	if !ok {
		res.Note = fmt.Sprintf("no mount in mountinfo holds %s (device %d:%d)", existing, major, minor)
		return res, nil
	}
	res.Mount, res.FSType, res.Source, res.Options = m.point, m.fstype, m.source, m.options

	switch {
	case memoryFS[m.fstype]:
		res.MemoryBacked = true
		res.Note = m.fstype + " is memory-backed: no block device to sample"
		return res, nil
	case networkFS[m.fstype] || strings.HasPrefix(m.fstype, "fuse."):
		res.Note = m.fstype + " is a network or userspace filesystem: no local block device to sample"
		return res, nil
	case m.fstype == "overlay":
		// The writes land in upperdir; follow it.
		if upper := superOption(m.superOpts, "upperdir"); upper != "" {
			return r.follow(res, upper, "overlay upperdir")
		}
		res.Note = "overlay without upperdir: no block device to sample"
		return res, nil
	}

	if major == 0 {
		// btrfs (and any filesystem that spans devices) reports an anonymous
		// 0:N device; the mount source names a real one.
		smaj, smin, ok := sourceDevice(m.source)
		if !ok {
			res.Note = fmt.Sprintf("%s reports anonymous device %d:%d and its source %q is not a block device", m.fstype, major, minor, m.source)
			return res, nil
		}
		major, minor = smaj, smin
	}
	r.device(&res, major, minor)
	return res, nil
}

// follow resolves another path (an overlay's upperdir) and adopts its devices
// while keeping this mount's identity.
func (r *resolver) follow(res Resolution, path, what string) (Resolution, error) {
	key := "path:" + path
	if r.depth >= maxDepth || r.active[key] {
		res.Note = what + " " + path + " loops back on itself"
		return res, nil
	}
	r.active[key] = true
	r.depth++
	sub, err := r.path(path)
	r.depth--
	delete(r.active, key)
	if err != nil {
		return res, err
	}
	res.MemoryBacked = sub.MemoryBacked
	res.Devices, res.Leaves = sub.Devices, sub.Leaves
	if sub.Note != "" {
		res.Note = what + " " + path + ": " + sub.Note
	}
	return res, nil
}

// device walks MAJ:MIN through sysfs into res.Devices and res.Leaves.
func (r *resolver) device(res *Resolution, major, minor uint32) {
	link := filepath.Join(sysRoot, "dev", "block", fmt.Sprintf("%d:%d", major, minor))
	dir, err := filepath.EvalSymlinks(link)
	if err != nil {
		res.Note = fmt.Sprintf("device %d:%d not found in sysfs (%s)", major, minor, link)
		return
	}
	note := r.walk(res, dir)
	if len(res.Leaves) == 0 && res.Note == "" {
		if note == "" {
			note = fmt.Sprintf("no whole disk found beneath device %d:%d", major, minor)
		}
		res.Note = note
	}
}

// walk adds the device at sysfs directory dir and everything beneath it. It
// returns why nothing was found beneath, when that happens.
func (r *resolver) walk(res *Resolution, dir string) (note string) {
	if r.active[dir] || r.depth >= maxDepth {
		return "device chain loops back through " + filepath.Base(dir)
	}
	r.active[dir] = true
	r.depth++
	defer func() {
		r.depth--
		delete(r.active, dir)
	}()

	name := filepath.Base(dir)
	res.Devices = appendUnique(res.Devices, name)

	// A partition's parent directory in sysfs is its disk.
	if exists(filepath.Join(dir, "partition")) {
		return r.walk(res, filepath.Dir(dir))
	}

	// A bound loop device: the I/O goes to its backing file's devices.
	if b, err := os.ReadFile(filepath.Join(dir, "loop", "backing_file")); err == nil {
		backing := strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)")
		before := len(res.Leaves)
		sub, err := r.path(backing)
		if err == nil {
			for _, d := range sub.Devices {
				res.Devices = appendUnique(res.Devices, d)
			}
			for _, l := range sub.Leaves {
				res.Leaves = appendUnique(res.Leaves, l)
			}
		}
		if len(res.Leaves) > before {
			return ""
		}
		// Backed by memory or by something we cannot see: the loop device's
		// own counters are the best there is.
		res.Leaves = appendUnique(res.Leaves, name)
		why := "unresolvable"
		if err != nil {
			why = err.Error()
		} else if sub.Note != "" {
			why = sub.Note
		}
		res.Note = fmt.Sprintf("%s's backing file %s: %s; sampling %s itself", name, backing, why, name)
		return ""
	}

	// dm and md: every slave, recursively.
	slaves, _ := os.ReadDir(filepath.Join(dir, "slaves"))
	if len(slaves) == 0 {
		res.Leaves = appendUnique(res.Leaves, name)
		return ""
	}
	for _, s := range slaves {
		sdir, err := filepath.EvalSymlinks(filepath.Join(dir, "slaves", s.Name()))
		if err != nil {
			note = fmt.Sprintf("slave %s of %s not found in sysfs", s.Name(), name)
			continue
		}
		if n := r.walk(res, sdir); n != "" {
			note = n
		}
	}
	return note
}

type mountEntry struct {
	major, minor uint32
	point        string
	fstype       string
	source       string
	superOpts    string
	options      string // per-mount options and superOpts, deduplicated
}

// readMountinfo parses proc(5) mountinfo lines (mountinfo.Parse).
func readMountinfo(path string) ([]mountEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mountEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if m, ok := parseMountinfoLine(sc.Text()); ok {
			out = append(out, m)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

func parseMountinfoLine(line string) (mountEntry, bool) {
	mi, ok := mountinfo.Parse(line)
	if !ok {
		return mountEntry{}, false
	}
	maj, min, ok := parseMajMin(mi.Device)
	if !ok {
		return mountEntry{}, false
	}
	m := mountEntry{major: maj, minor: min, point: mi.Point, fstype: mi.FSType, source: mi.Source, superOpts: mi.SuperOptions}
	var opts []string
	for _, o := range strings.Split(mi.Options+","+m.superOpts, ",") {
		if o != "" && !slices.Contains(opts, o) {
			opts = append(opts, o)
		}
	}
	m.options = strings.Join(opts, ",")
	return m, true
}

func parseMajMin(s string) (uint32, uint32, bool) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return 0, 0, false
	}
	maj, err1 := strconv.ParseUint(a, 10, 32)
	min, err2 := strconv.ParseUint(b, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uint32(maj), uint32(min), true
}

// mountOf picks the mount holding path: same device, longest mount point that
// is a prefix of path; the later line wins a tie (it is mounted on top). When
// no line has the device (a btrfs subvolume's own anonymous device), the
// longest prefix of any device is taken.
func mountOf(mounts []mountEntry, path string, major, minor uint32) (mountEntry, bool) {
	best, bestAny := -1, -1
	for i, m := range mounts {
		if !hasPathPrefix(path, m.point) {
			continue
		}
		if bestAny < 0 || len(m.point) >= len(mounts[bestAny].point) {
			bestAny = i
		}
		if m.major == major && m.minor == minor && (best < 0 || len(m.point) >= len(mounts[best].point)) {
			best = i
		}
	}
	if best < 0 {
		best = bestAny
	}
	if best < 0 {
		return mountEntry{}, false
	}
	return mounts[best], true
}

// mountOfDevice finds where a device node's filesystem is mounted, if it is.
func mountOfDevice(mounts []mountEntry, major, minor uint32) (mountEntry, bool) {
	for _, m := range mounts {
		if m.major == major && m.minor == minor {
			return m, true
		}
	}
	return mountEntry{}, false
}

func hasPathPrefix(path, prefix string) bool {
	if prefix == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func superOption(opts, key string) string {
	for _, o := range strings.Split(opts, ",") {
		if v, ok := strings.CutPrefix(o, key+"="); ok {
			return v
		}
	}
	return ""
}

// sourceDevice finds the device number of a mount source such as /dev/sdb
// or /dev/mapper/vg-lv: sysfs by name first (so fixture trees work), then the
// device node itself.
func sourceDevice(source string) (uint32, uint32, bool) {
	if !strings.HasPrefix(source, "/dev/") {
		return 0, 0, false
	}
	if b, err := os.ReadFile(filepath.Join(sysRoot, "class", "block", filepath.Base(source), "dev")); err == nil {
		if maj, min, ok := parseMajMin(string(b)); ok {
			return maj, min, true
		}
	}
	var st unix.Stat_t
	if err := unix.Stat(source, &st); err == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK {
		return unix.Major(st.Rdev), unix.Minor(st.Rdev), true
	}
	return 0, 0, false
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func appendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// readDevNumber reads a sysfs "dev" file ("8:16\n").
func readDevNumber(path string) (uint32, uint32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	maj, min, ok := parseMajMin(string(bytes.TrimSpace(b)))
	if !ok {
		return 0, 0, fmt.Errorf("%s: malformed device number %q", path, bytes.TrimSpace(b))
	}
	return maj, min, nil
}
