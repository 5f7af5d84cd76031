package fio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/devnode"
	"github.com/tierbench/tierbench/internal/mountinfo"
	"github.com/tierbench/tierbench/internal/systool"
	"github.com/tierbench/tierbench/internal/units"
)

// The guard decides what fio may write to. A directory gets a test file of
// tierbench's own, refused when free space is short and removed afterwards
// unless kept. A file must be one tierbench created (it records the file's
// identity beside it), or the user says --overwrite-file. A block device
// needs --destroy-data-on naming it again; a mounted one (or one in use as
// swap or under device-mapper/md) is always refused, and one that holds a
// filesystem or partition table only passes with --even-if-formatted. Every
// refusal is one line naming the reason and the flag that would allow it.

// ErrRefused marks a target the guard will not let fio write to; the CLI maps it to exit 2.
var ErrRefused = errors.New("target refused")

// Where the guard reads the kernel's view of devices and mounts; tests may point them at fixture trees.
var (
	sysRoot  = "/sys"
	procRoot = "/proc"
)

const (
	testFileName = "tierbench-fio.dat" // the test file tierbench creates in a directory target
	markSuffix   = ".tierbench"        // FILE.tierbench records that tierbench created FILE
	minMargin    = 64 << 20            // free space left over: max(1% of the filesystem, 64 MiB)
)

// TargetOptions are the user's flags that widen what the guard allows.
type TargetOptions struct {
	Size            int64  // bytes fio may use; 0 = the kind's default (an existing file's size, the whole device)
	Keep            bool   // keep the test file tierbench created (it stays recognisable as tierbench's)
	OverwriteFile   bool   // allow a file tierbench did not create
	DestroyDataOn   string // must name the same block device as the target
	EvenIfFormatted bool   // allow a device holding a filesystem, partition table, RAID or LVM signature
}

// Target is what fio may write to, as the guard allowed it.
type Target struct {
	Path string // as given
	Kind string // "directory", "file" or "device"
	File string // what fio opens: the test file in the directory, the file, or the device
	Size int64  // bytes fio may use

	created bool // this run created File (and its mark)
	keep    bool
}

// refusal is an ErrRefused whose text is only the reason, so it reads as one line.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return ErrRefused }

func refusef(format string, a ...any) error { return &refusal{fmt.Sprintf(format, a...)} }

// PrepareTarget checks path and options and readies the file fio will use; it writes nothing to an existing
// file or device. Errors wrap ErrRefused when the user can fix them with flags or another path.
func PrepareTarget(path string, o TargetOptions) (*Target, error) {
	if o.Size < 0 {
		return nil, refusef("--size %d is negative; give a size such as 1GiB", o.Size)
	}
	if err := CheckPath(path); err != nil {
		return nil, &refusal{"--target: " + err.Error()}
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return prepareNewFile(path, o)
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, refusef("%s is a symlink loop; give a directory, a file or a block device", path)
	}
	if err != nil {
		return nil, err
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	m := fi.Mode()
	switch {
	case m.IsDir():
		t := &Target{Path: path, Kind: "directory", File: filepath.Join(resolved, testFileName)}
		return prepareFile(t, o)
	case m.IsRegular():
		t := &Target{Path: path, Kind: "file", File: resolved}
		return prepareFile(t, o)
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0:
		t := &Target{Path: path, Kind: "device", File: resolved}
		return prepareDevice(t, devnode.Rdev(fi), o)
	}
	return nil, refusef("%s is a %s; give a directory, a file or a block device", path, devnode.Describe(m))
}

// Cleanup removes the test file this run created, unless Keep; a kept or reused tierbench file stays. Files
// tierbench did not create and devices are never removed. Safe to call twice.
func (t *Target) Cleanup() error {
	if !t.created || t.keep {
		return nil
	}
	t.created = false
	// Remove only what is still ours: if something replaced the file during the run, leave it alone.
	if IsTierbenchFile(t.File) {
		if err := os.Remove(t.File); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.Remove(t.File + markSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// prepareNewFile creates the file target path, which does not exist yet.
func prepareNewFile(path string, o TargetOptions) (*Target, error) {
	if _, err := os.Lstat(path); err == nil {
		dest, _ := os.Readlink(path)
		return nil, refusef("%s is a symlink to %s, which does not exist; give a directory, a file or a block device", path, dest)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, refusef("%s cannot be created: directory %s does not exist; create it or give another path", path, dir)
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, refusef("%s cannot be created: %s is not a directory; give another path", path, dir)
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	// A mistyped device name must not become a regular file in /dev (which lives in RAM).
	if o.DestroyDataOn != "" || resolved == "/dev" || strings.HasPrefix(resolved, "/dev/") {
		return nil, refusef("%s does not exist: there is no such block device; check the name (lsblk lists them)", path)
	}
	t := &Target{Path: path, Kind: "file", File: filepath.Join(resolved, filepath.Base(path))}
	return prepareFile(t, o)
}

// prepareFile readies t.File for a directory or file target: it creates and marks a new test file, reuses one
// tierbench created earlier, or (file targets, with --overwrite-file) accepts a foreign file.
func prepareFile(t *Target, o TargetOptions) (*Target, error) {
	t.keep = o.Keep
	dir := filepath.Dir(t.File)
	fi, err := os.Lstat(t.File)
	if errors.Is(err, fs.ErrNotExist) {
		if o.Size == 0 {
			return nil, refusef("%s does not exist yet: give --size for the test file tierbench will create", t.File)
		}
		if err := checkFree(dir, o.Size, 0); err != nil {
			return nil, err
		}
		if err := createMarked(t.File); err != nil {
			return nil, err
		}
		t.created, t.Size = true, o.Size
		return t, nil
	}
	if err != nil {
		return nil, err
	}
	if !IsTierbenchFile(t.File) {
		if t.Kind == "directory" {
			return nil, refusef("%s is in the way: tierbench did not create it; remove it or give another directory", t.File)
		}
		if !o.OverwriteFile {
			return nil, refusef("%s was not created by tierbench; to let fio overwrite it, add --overwrite-file", t.File)
		}
	}
	t.Size = o.Size
	if t.Size == 0 {
		t.Size = fi.Size()
	}
	if t.Size == 0 {
		return nil, refusef("%s is empty: give --size for fio to lay it out", t.File)
	}
	if err := checkFree(dir, t.Size, allocated(fi)); err != nil {
		return nil, err
	}
	return t, nil
}

// allocated is the space a file already occupies on disk, which fio reuses.
func allocated(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}

// checkFree refuses when dir's filesystem cannot take a file of size bytes, of which have are already allocated,
// and still keep max(1% of the filesystem, 64 MiB) free.
func checkFree(dir string, size, have int64) error {
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil {
		return fmt.Errorf("free space of %s: %w", dir, err)
	}
	bs := s.Frsize
	if bs <= 0 {
		bs = s.Bsize
	}
	free, total := mulSat(s.Bavail, bs), mulSat(s.Blocks, bs)
	margin := max(total/100, minMargin)
	grow := max(size-have, 0)
	if free-margin >= grow {
		return nil
	}
	need := grow + margin
	if need < grow { // overflow
		need = math.MaxInt64
	}
	more := ""
	if have > 0 {
		more = " more"
	}
	return refusef("%s has %s free, a %s test file needs %s%s; give a smaller --size or another directory",
		dir, units.FormatSize(free), units.FormatSize(size), units.FormatSize(need), more)
}

// mulSat multiplies a block count by a block size, saturating instead of overflowing.
func mulSat(n uint64, bs int64) int64 {
	if bs <= 0 || n > uint64(math.MaxInt64/bs) {
		return math.MaxInt64
	}
	return int64(n) * bs
}

// mark is the content of FILE.tierbench. dev and ino tie it to the file as created, so a file put in its place
// later is not mistaken for tierbench's; btime (when the filesystem records it) also catches a reused inode.
type mark struct {
	CreatedBy string `json:"created_by"`
	Dev       uint64 `json:"dev"`
	Ino       uint64 `json:"ino"`
	Created   string `json:"created"`
	BtimeNs   int64  `json:"btime_ns,omitempty"`
}

// createMarked creates an empty file (fio lays it out) and its mark; O_EXCL so neither follows a symlink nor
// replaces anything.
func createMarked(file string) error {
	side := file + markSuffix
	if _, err := os.Lstat(side); err == nil {
		if _, ok := readMark(side); !ok {
			return refusef("%s is in the way: tierbench did not write it; remove it or give another path", side)
		}
		if err := os.Remove(side); err != nil { // a stale mark of a file since removed
			return err
		}
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("create test file: %w", err)
	}
	f.Close()
	m := mark{CreatedBy: "tierbench", Created: time.Now().UTC().Format(time.RFC3339)}
	m.Dev, m.Ino, m.BtimeNs, err = identity(file)
	if err == nil {
		err = writeMark(side, m)
	}
	if err != nil {
		os.Remove(file)
		return fmt.Errorf("mark test file %s: %w", file, err)
	}
	return nil
}

func writeMark(side string, m mark) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(side, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(side)
	}
	return err
}

func readMark(side string) (mark, bool) {
	var m mark
	b, err := os.ReadFile(side)
	if err != nil || json.Unmarshal(b, &m) != nil || m.CreatedBy != "tierbench" {
		return m, false
	}
	return m, true
}

// identity returns path's device, inode and birth time (0 when unknown), without following a symlink.
func identity(path string) (dev, ino uint64, btimeNs int64, err error) {
	var x unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &x); err == nil {
		if x.Mask&unix.STATX_BTIME != 0 {
			btimeNs = x.Btime.Sec*1e9 + int64(x.Btime.Nsec)
		}
		return unix.Mkdev(x.Dev_major, x.Dev_minor), x.Ino, btimeNs, nil
	}
	var st unix.Stat_t // statx may be unavailable (old kernel, sandbox)
	if err := unix.Lstat(path, &st); err != nil {
		return 0, 0, 0, err
	}
	return uint64(st.Dev), st.Ino, 0, nil
}

// IsTierbenchFile reports whether path is a test file tierbench created (and has not been replaced since).
func IsTierbenchFile(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	m, ok := readMark(path + markSuffix)
	if !ok {
		return false
	}
	dev, ino, btime, err := identity(path)
	return err == nil && dev == m.Dev && ino == m.Ino && (m.BtimeNs == 0 || btime == 0 || btime == m.BtimeNs)
}

// prepareDevice lets fio at the block device t.File (device number rdev) only when --destroy-data-on names it
// too and the device is not in use or (without --even-if-formatted) formatted.
func prepareDevice(t *Target, rdev uint64, o TargetOptions) (*Target, error) {
	if o.DestroyDataOn == "" {
		return nil, refusef("%s is a block device: fio would destroy its data; to allow it, add --destroy-data-on %s", t.Path, t.Path)
	}
	named, err := filepath.EvalSymlinks(o.DestroyDataOn)
	if err != nil {
		return nil, refusef("--destroy-data-on %s: %v; to allow writing to %s, add --destroy-data-on %s", o.DestroyDataOn, unwrapPath(err), t.Path, t.Path)
	}
	fi, err := os.Stat(named)
	if err != nil {
		return nil, err
	}
	if m := fi.Mode(); m&fs.ModeDevice == 0 || m&fs.ModeCharDevice != 0 {
		return nil, refusef("--destroy-data-on %s is not a block device; to allow writing to %s, add --destroy-data-on %s",
			o.DestroyDataOn, t.Path, t.Path)
	}
	if devnode.Rdev(fi) != rdev {
		return nil, refusef("--destroy-data-on %s names device %s, but %s is device %s; to allow writing to %s, add --destroy-data-on %s",
			o.DestroyDataOn, devnode.Num(devnode.Rdev(fi)), t.Path, devnode.Num(rdev), t.Path, t.Path)
	}
	size, err := checkDevice(t.File, rdev, o.EvenIfFormatted)
	if err != nil {
		return nil, err
	}
	t.Size = size
	if o.Size > 0 {
		if o.Size > size {
			return nil, refusef("--size %s is larger than %s (%s); give a --size of at most %s",
				units.FormatSize(o.Size), t.File, units.FormatSize(size), units.FormatSize(size))
		}
		t.Size = o.Size
	}
	return t, nil
}

// blockDev is a block device or one of its partitions as sysfs lists it.
type blockDev struct {
	name string // kernel name: sdb, sdb1
	dir  string // its sysfs directory
	num  string // MAJ:MIN
	node string // what to call it in messages and pass to blkid
}

// checkDevice refuses a device (node, number rdev) that is mounted, used as swap or held by device-mapper/md,
// through itself or a partition, and, unless evenIfFormatted, one holding a recognisable signature. It returns
// the device's size in bytes.
func checkDevice(node string, rdev uint64, evenIfFormatted bool) (int64, error) {
	num := devnode.Num(rdev)
	dir, err := filepath.EvalSymlinks(filepath.Join(sysRoot, "dev/block", num))
	if err != nil {
		return 0, refusef("%s (%s) is not in %s/dev/block, so tierbench cannot tell whether it is in use; give a real block device",
			node, num, sysRoot)
	}
	devs := append([]blockDev{{name: filepath.Base(dir), dir: dir, num: num, node: node}}, partitions(dir)...)
	if err := checkMounts(devs); err != nil {
		return 0, err
	}
	if err := checkSwaps(devs); err != nil {
		return 0, err
	}
	for _, d := range devs {
		if hs, _ := os.ReadDir(filepath.Join(d.dir, "holders")); len(hs) > 0 {
			return 0, refusef("%s is in use by %s (device-mapper, LVM or RAID; see %s/class/block/%s/holders); stop that first, no flag allows it",
				describe(d, node), hs[0].Name(), sysRoot, d.name)
		}
	}
	if !evenIfFormatted {
		for _, d := range devs {
			if err := checkSignature(d, node); err != nil {
				return 0, err
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "size"))
	if err != nil {
		return 0, err
	}
	sectors, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || sectors <= 0 {
		return 0, refusef("%s has no usable size (%s/size reads %q)", node, dir, strings.TrimSpace(string(b)))
	}
	return sectors * 512, nil // sysfs counts 512-byte sectors whatever the device's block size
}

// partitions lists the partitions of the device whose sysfs directory is dir: subdirectories with a partition file.
func partitions(dir string) []blockDev {
	ents, _ := os.ReadDir(dir)
	var out []blockDev
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(p, "partition")); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(p, "dev"))
		if err != nil {
			continue
		}
		out = append(out, blockDev{name: e.Name(), dir: p, num: strings.TrimSpace(string(b)), node: "/dev/" + e.Name()})
	}
	return out
}

// describe names d in a message: the device itself, or "/dev/sdb1 (a partition of /dev/sdb)".
func describe(d blockDev, node string) string {
	if d.node == node {
		return node
	}
	return d.node + " (a partition of " + node + ")"
}

// checkMounts refuses when mountinfo lists any of devs, by device number or by mount source (btrfs reports an
// anonymous 0:N number, so the source is the only link).
func checkMounts(devs []blockDev) error {
	mounts, err := mountinfo.Read(filepath.Join(procRoot, "self/mountinfo"))
	if err != nil {
		return refusef("cannot tell whether %s is mounted: %v", devs[0].node, err)
	}
	for _, m := range mounts {
		for _, d := range devs {
			if m.Device == d.num || isNode(m.Source, d.num) {
				return refusef("%s is mounted on %s; unmount it first, no flag allows writing to a mounted device",
					describe(d, devs[0].node), m.Point)
			}
		}
	}
	return nil
}

// checkSwaps refuses when /proc/swaps lists any of devs.
func checkSwaps(devs []blockDev) error {
	b, err := os.ReadFile(filepath.Join(procRoot, "swaps"))
	if err != nil {
		return refusef("cannot tell whether %s is used as swap: %v", devs[0].node, err)
	}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		fields := mountinfo.Fields(line)
		if len(fields) == 0 {
			continue
		}
		for _, d := range devs {
			if isNode(mountinfo.Unescape(fields[0]), d.num) {
				return refusef("%s is in use as swap; run swapoff first, no flag allows it", describe(d, devs[0].node))
			}
		}
	}
	return nil
}

// isNode reports whether path is a block device node with number num (MAJ:MIN).
func isNode(path, num string) bool {
	if !strings.HasPrefix(path, "/") {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0 && devnode.Num(devnode.Rdev(fi)) == num
}

// checkSignature asks blkid (in low-level probing mode, read-only) whether d holds a filesystem, partition
// table, RAID or LVM signature; exit status 2 means it found none.
func checkSignature(d blockDev, node string) error {
	if !isNode(d.node, d.num) {
		return refusef("cannot tell whether %s holds a filesystem: %s is not its device node; add --even-if-formatted if you are sure",
			describe(d, node), d.node)
	}
	blkid, err := systool.LookPath("blkid") // /usr/sbin, outside an ordinary user's PATH
	if err != nil {
		return refusef("cannot tell whether %s holds a filesystem: blkid (util-linux) is not installed; add --even-if-formatted if you are sure",
			describe(d, node))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, blkid, "-p", "-o", "export", d.node).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		return nil
	}
	if err != nil {
		return refusef("cannot tell whether %s holds a filesystem: blkid -p failed (%v); add --even-if-formatted if you are sure",
			describe(d, node), err)
	}
	kv := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	var found []string
	if t := kv["TYPE"]; t != "" {
		kind := "signature"
		switch kv["USAGE"] {
		case "filesystem":
			kind = "filesystem"
		case "raid":
			kind = "RAID/LVM signature"
		case "crypto":
			kind = "encrypted volume"
		}
		found = append(found, article(t)+" "+t+" "+kind)
	}
	if t := kv["PTTYPE"]; t != "" {
		found = append(found, article(t)+" "+t+" partition table")
	}
	if len(found) == 0 {
		return nil
	}
	sort.Strings(found)
	return refusef("%s holds %s; fio would destroy it; to allow it, add --even-if-formatted",
		describe(d, node), strings.Join(found, " and "))
}

// article picks "a" or "an" for how a signature name is read aloud: an ext4, an xfs, a btrfs.
func article(name string) string {
	if name != "" && strings.ContainsRune("aeiouxAEIOUX", rune(name[0])) {
		return "an"
	}
	return "a"
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
