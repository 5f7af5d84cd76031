// Package tier makes emulated storage tiers: an ext4 or btrfs file system on
// a loop device over a sparse image file, mounted for tierbench's use. Its own
// block device (loopN) is what gives a tier its identity: the cgroup
// throttles of internal/cgroup act on it alone, so one disk can host a
// "NVMe-like" and a "SATA-like" tier side by side, and telemetry counts each
// tier's I/O apart.
//
// The loop device runs with direct I/O where the kernel allows it, so the
// image's blocks are not cached a second time in the host's page cache: the
// tier's file system has one page cache, like a real disk's.
//
// A btrfs tier can compress inline (zstd or lzo) and go without data
// checksums, as storage that compresses what it is given does; Stored says
// what its file system really holds.
//
// Everything a tier is lives in DIR: tierbench-tier-NAME.img (the image),
// tierbench-tier-NAME/ (the mount point) and tierbench-tier-NAME.img.tierbench
// (a mark recording that tierbench made both, and their identities).
// Nothing else is ever touched.
package tier

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/mountinfo"
	"github.com/tierbench/tierbench/internal/systool"
)

// MinSize is the smallest image: ext4 with a journal needs a few MiB (btrfs,
// in mixed mode, as many), and a tier smaller than this holds nothing worth
// measuring.
const MinSize = 16 << 20

// Image is one emulated tier.
type Image struct {
	Name       string `json:"name"`
	File       string `json:"file"`        // DIR/tierbench-tier-NAME.img
	Device     string `json:"device"`      // /dev/loopN; "" when not attached
	MountPoint string `json:"mount_point"` // DIR/tierbench-tier-NAME
	Mounted    bool   `json:"mounted"`
	Size       int64  `json:"size"`
	FS         string `json:"fs"`       // "ext4" or "btrfs"
	Compress   string `json:"compress"` // btrfs's inline compression: "none", "zstd" or "lzo"; ext4: "none"
	Checksum   bool   `json:"checksum"` // data checksums: btrfs's, unless turned off; ext4 has none
}

// Options choose a tier's file system. The zero value is ext4, which Create
// makes.
type Options struct {
	FS string // "ext4" (the default, "") or "btrfs"
	// Compress is btrfs's inline compression: "none" (the default, ""),
	// "zstd" or "lzo", mounted as compress-force=ALG (see spec.mountOptions).
	Compress string
	// Checksum is btrfs's data checksums: nil or true, on (btrfs's
	// default); false, off (mount option nodatasum). Without them btrfs
	// does not compress, so false needs Compress "none".
	Checksum *bool
}

// spec is a tier's file system as Options chose it, every default filled
// in: what the mark records and re-opening must match.
type spec struct {
	FS       string
	Compress string
	Checksum bool
}

// Check says whether a tier can have these options: nil, or what is wrong
// and what would be right (a scenario checks its targets with it before
// anything runs).
func (o Options) Check() error {
	_, err := o.spec()
	return err
}

// spec checks o and fills in its defaults.
func (o Options) spec() (spec, error) {
	switch o.FS {
	case "", "ext4":
		// "none" is what ext4 does; anything else is a btrfs option, refused
		// rather than ignored so that no run believes it compressed.
		if o.Compress != "" && o.Compress != "none" {
			return spec{}, fmt.Errorf("compression %q needs file system btrfs: ext4 does not compress", o.Compress)
		}
		if o.Checksum != nil {
			return spec{}, errors.New("data checksums are a btrfs option: ext4 has none to turn on or off; use file system btrfs or leave checksums unset")
		}
		return spec{FS: "ext4", Compress: "none"}, nil
	case "btrfs":
		s := spec{FS: "btrfs", Compress: o.Compress, Checksum: o.Checksum == nil || *o.Checksum}
		switch o.Compress {
		case "", "none":
			s.Compress = "none"
		case "zstd", "lzo":
		default:
			return spec{}, fmt.Errorf("compression %q is not known: use \"none\", \"zstd\" or \"lzo\"", o.Compress)
		}
		// btrfs(5): "If nodatacow or nodatasum are enabled, compression is
		// disabled." The kernel takes both mount options without a word and
		// stores every file uncompressed.
		if s.Compress != "none" && !s.Checksum {
			return spec{}, fmt.Errorf("compression %s with data checksums off is not possible: btrfs does not compress files without checksums (nodatasum), so nothing would be compressed; keep checksums on or use compression none", s.Compress)
		}
		return s, nil
	}
	return spec{}, fmt.Errorf("file system %q is not one a tier can have: use \"ext4\" or \"btrfs\"", o.FS)
}

func (s spec) String() string {
	if s.FS != "btrfs" {
		return s.FS
	}
	sum := "on"
	if !s.Checksum {
		sum = "off"
	}
	return fmt.Sprintf("btrfs (compression %s, data checksums %s)", s.Compress, sum)
}

// mountOptions are the options of s that live in the mount, not in the file
// system: btrfs applies compression and nodatasum to what is written while
// mounted with them, so every mount must give them again ("" for none).
//
// compress-force, not compress: with compress, btrfs first guesses from a
// sample whether data is worth compressing, and once an attempt on a file
// does not shrink it, marks the file never to be compressed again
// (btrfs(5), INCOMPRESSIBLE DATA), so what a tier stores would depend on
// what a database happened to write first. Storage that compresses inline
// tries every block; compress-force likewise tries every extent (128 KiB)
// and keeps the compressed one only where it is smaller, so what is stored
// follows from the data alone. The price is CPU spent on incompressible
// data, which such storage pays too.
func (s spec) mountOptions() string {
	if s.FS != "btrfs" {
		return ""
	}
	var o []string
	if s.Compress != "none" {
		o = append(o, "compress-force="+s.Compress)
	}
	if !s.Checksum {
		o = append(o, "nodatasum")
	}
	return strings.Join(o, ",")
}

func (im *Image) spec() spec { return spec{FS: im.FS, Compress: im.Compress, Checksum: im.Checksum} }

// ErrNotFound says Open found no tier of that name in the directory.
var ErrNotFound = errors.New("no such emulated tier")

// Where the kernel's view of loop devices and mounts is read; fixed, since
// the tests of this package need the real thing anyway (root, losetup).
const (
	sysBlock   = "/sys/block"
	mountTable = "/proc/self/mountinfo"
)

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

func paths(dir, name string) (file, mark, mnt string) {
	base := filepath.Join(dir, "tierbench-tier-"+name)
	return base + ".img", base + ".img.tierbench", base
}

// mark is the sidecar recording what tierbench made: the image file and the
// mount point directory, by device and inode, and the file system with its
// options, which btrfs does not keep itself (see spec.mountOptions).
type mark struct {
	CreatedBy string `json:"created_by"`
	Name      string `json:"name"`
	Size      int64  `json:"size"`
	Created   string `json:"created"`
	ImageDev  uint64 `json:"image_dev"`
	ImageIno  uint64 `json:"image_ino"`
	MountDev  uint64 `json:"mount_dev"`
	MountIno  uint64 `json:"mount_ino"`
	// Absent in marks from before btrfs, which were all ext4.
	FS       string `json:"fs,omitempty"`
	Compress string `json:"compress,omitempty"` // btrfs only
	Checksum *bool  `json:"checksum,omitempty"` // btrfs only
}

// Create makes the tier NAME in dir: a sparse image of size bytes, formatted
// ext4, attached to a free loop device (direct I/O on) and mounted at
// dir/tierbench-tier-NAME. A tier tierbench made there before (an earlier run,
// a crash) is brought back up as it is — attached and mounted, not
// reformatted — when its size matches. Anything else in the way is refused.
// It needs root, for losetup and mount.
func Create(ctx context.Context, dir, name string, size int64) (*Image, error) {
	return CreateWith(ctx, dir, name, size, Options{})
}

// CreateWith is Create with the file system o chooses. A tier that exists
// must have been made with the same file system and options, as with the
// same size: re-opening never changes what a tier is.
func CreateWith(ctx context.Context, dir, name string, size int64, o Options) (*Image, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("tier name %q is not valid: use up to 32 lowercase letters, digits, - and _", name)
	}
	if size < MinSize {
		return nil, fmt.Errorf("tier size %d is below the minimum of %d MiB", size, MinSize>>20)
	}
	want, err := o.spec()
	if err != nil {
		return nil, fmt.Errorf("emulated tier %q: %w", name, err)
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("creating an emulated tier needs root (losetup and mount)")
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, err
	}
	file, markFile, mnt := paths(dir, name)

	if im, err := Open(dir, name); err == nil {
		if im.Size != size {
			return nil, fmt.Errorf("emulated tier %q exists in %s with size %d, not %d: remove it first", name, dir, im.Size, size)
		}
		if got := im.spec(); got != want {
			return nil, fmt.Errorf("emulated tier %q exists in %s with %v, not %v: remove it first", name, dir, got, want)
		}
		return im, im.up(ctx)
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	for _, p := range []string{file, markFile, mnt} {
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("%s is in the way and tierbench did not make it; remove it or use another name or directory", p)
		}
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil, err
	}
	// The image is sparse: the blocks are taken when the tier is written. If
	// they could run out, the tier's file system would see I/O errors.
	if free := int64(st.Bavail) * st.Bsize; free < size {
		return nil, fmt.Errorf("an emulated tier of %d bytes does not fit in %s (%d bytes free)", size, dir, free)
	}

	im := &Image{Name: name, File: file, MountPoint: mnt, Size: size, FS: want.FS, Compress: want.Compress, Checksum: want.Checksum}
	// Undo on failure exactly what this call made, nothing else.
	var madeDir, madeFile, madeMark, ok bool
	defer func() {
		if ok {
			return
		}
		if madeMark {
			im.teardown(context.WithoutCancel(ctx), markFile) // the mark says the rest is ours
			return
		}
		if madeFile {
			os.Remove(file)
		}
		if madeDir {
			os.Remove(mnt)
		}
	}()
	if err := os.Mkdir(mnt, 0o755); err != nil {
		return nil, err
	}
	madeDir = true
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	madeFile = true
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	m := mark{CreatedBy: "tierbench", Name: name, Size: size, Created: time.Now().UTC().Format(time.RFC3339), FS: want.FS}
	if want.FS == "btrfs" {
		m.Compress, m.Checksum = want.Compress, &want.Checksum
	}
	if m.ImageDev, m.ImageIno, err = identity(file); err != nil {
		return nil, err
	}
	if m.MountDev, m.MountIno, err = identity(mnt); err != nil {
		return nil, err
	}
	if err := writeMark(markFile, m); err != nil {
		return nil, err
	}
	madeMark = true
	if err := mkfs(ctx, want.FS, file, size); err != nil {
		return nil, err
	}
	if err := im.up(ctx); err != nil {
		return nil, err
	}
	ok = true
	return im, nil
}

// mixedBelow is the size under which a btrfs tier keeps data and metadata in
// the same block groups (mkfs.btrfs --mixed), as mkfs.btrfs(8) recommends
// below 1 GiB: apart, each kind reserves whole block groups, and a small file
// system runs out of space for one while the other's stand empty. Below
// about 109 MiB, mkfs.btrfs makes nothing else.
const mixedBelow = 1 << 30

// mkfs formats file, the image Create has just made, with file system fs.
func mkfs(ctx context.Context, fs, file string, size int64) error {
	if fs == "btrfs" {
		// No -f: the file is fresh zeros, and without it mkfs.btrfs refuses
		// to write over any file system it finds, one more guard. Metadata
		// is DUP apart from data (single), btrfs's default on one device; in
		// mixed mode both are single.
		args := []string{"-q"}
		if size < mixedBelow {
			args = append(args, "--mixed")
		}
		return run(ctx, "mkfs.btrfs", append(args, file)...)
	}
	// lazy_itable_init=0 and lazy_journal_init=0: initialise everything now,
	// or ext4lazyinit would write inode tables in the background during the
	// benchmark. On a fresh sparse file mke2fs discards (punches) first and
	// then knows the tables read as zeros, so this costs nothing.
	return run(ctx, "mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=0,lazy_journal_init=0", file)
}

// up attaches and mounts a tier that exists on disk, as far as it is not yet.
func (im *Image) up(ctx context.Context) error {
	if im.Device == "" {
		dev, err := attach(ctx, im.File)
		if err != nil {
			return err
		}
		im.Device = dev
	}
	if !im.Mounted {
		args := []string{"-t", im.FS}
		if o := im.spec().mountOptions(); o != "" {
			args = append(args, "-o", o)
		}
		if err := run(ctx, "mount", append(args, im.Device, im.MountPoint)...); err != nil {
			return err
		}
		im.Mounted = true
	}
	return nil
}

// attach binds file to a free loop device, with direct I/O when the backing
// file system supports it (losetup only warns when it does not).
func attach(ctx context.Context, file string) (string, error) {
	out, err := output(ctx, "losetup", "--find", "--show", "--direct-io=on", file)
	if err != nil {
		return "", err
	}
	dev := strings.TrimSpace(out)
	if !strings.HasPrefix(dev, "/dev/loop") {
		return "", fmt.Errorf("losetup printed %q, not a loop device", out)
	}
	return dev, nil
}

// Open finds the tier NAME that tierbench made in dir, attached or not, for
// reuse or cleanup. Not there: ErrNotFound. Files of that name that
// tierbench did not make: an error.
func Open(dir, name string) (*Image, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("tier name %q is not valid", name)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	file, markFile, mnt := paths(dir, name)
	b, err := os.ReadFile(markFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("emulated tier %q in %s: %w", name, dir, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var m mark
	if err := json.Unmarshal(b, &m); err != nil || m.CreatedBy != "tierbench" || m.Name != name {
		return nil, fmt.Errorf("%s is not a mark tierbench wrote; leaving the tier %q alone", markFile, name)
	}
	s, err := Options{FS: m.FS, Compress: m.Compress, Checksum: m.Checksum}.spec()
	if err != nil {
		return nil, fmt.Errorf("%s records a file system tierbench cannot make (%v); leaving the tier %q alone", markFile, err, name)
	}
	if d, i, err := identity(file); err != nil || d != m.ImageDev || i != m.ImageIno {
		return nil, fmt.Errorf("%s is not the image tierbench made (%v); leaving it alone", file, err)
	}
	im := &Image{Name: name, File: file, MountPoint: mnt, Size: m.Size, FS: s.FS, Compress: s.Compress, Checksum: s.Checksum}
	im.Device = loopOf(file)
	if im.Device != "" {
		im.Mounted = mountedFrom(mnt, im.Device)
	}
	if !im.Mounted {
		// Not mounted: the directory must still be the one we made.
		if d, i, err := identity(mnt); err != nil || d != m.MountDev || i != m.MountIno {
			return nil, fmt.Errorf("%s is not the mount point tierbench made (%v); leaving it alone", mnt, err)
		}
	}
	return im, nil
}

// Remove unmounts the tier, detaches its loop device and deletes the image,
// its mark and the mount point. Safe to call on a tier half made or half
// removed.
func (im *Image) Remove(ctx context.Context) error {
	_, markFile, _ := paths(filepath.Dir(im.File), im.Name)
	return im.teardown(ctx, markFile)
}

func (im *Image) teardown(ctx context.Context, markFile string) error {
	var errs []error
	if im.Device == "" {
		im.Device = loopOf(im.File)
	}
	if im.Device != "" && mountedFrom(im.MountPoint, im.Device) {
		// A server just stopped may take a moment to close its last
		// files (a CI run's umount found the target busy once): a busy
		// target is tried again for up to 5 s.
		err := run(ctx, "umount", im.MountPoint)
		for deadline := time.Now().Add(5 * time.Second); err != nil && strings.Contains(err.Error(), "busy") && time.Now().Before(deadline); {
			time.Sleep(250 * time.Millisecond)
			err = run(ctx, "umount", im.MountPoint)
		}
		if err != nil {
			// A process still has files open there: say so, keep the rest.
			return fmt.Errorf("%w (is something still using %s?)", err, im.MountPoint)
		}
	}
	im.Mounted = false
	if im.Device != "" && loopOf(im.File) == im.Device {
		if err := run(ctx, "losetup", "--detach", im.Device); err != nil {
			errs = append(errs, err)
		} else {
			im.Device = ""
		}
	}
	for _, p := range []string{im.File, markFile} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(im.MountPoint); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// loopOf is the loop device whose backing file is file ("" if none), from
// /sys/block/loop*/loop/backing_file.
func loopOf(file string) string {
	want := file
	if real, err := filepath.EvalSymlinks(file); err == nil {
		want = real
	}
	dirs, _ := filepath.Glob(filepath.Join(sysBlock, "loop*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "loop", "backing_file"))
		if err != nil {
			continue
		}
		if strings.TrimSpace(string(b)) == want {
			return "/dev/" + filepath.Base(d)
		}
	}
	return ""
}

// mountedFrom says whether dev is mounted at mnt (/proc/self/mountinfo).
func mountedFrom(mnt, dev string) bool {
	mounts, err := mountinfo.Read(mountTable)
	if err != nil {
		return false
	}
	for _, m := range mounts {
		if m.Point == mnt && m.Source == dev {
			return true
		}
	}
	return false
}

func identity(p string) (dev, ino uint64, err error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return 0, 0, err
	}
	return st.Dev, st.Ino, nil
}

func writeMark(p string, m mark) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func run(ctx context.Context, name string, args ...string) error {
	_, err := output(ctx, name, args...)
	return err
}

func output(ctx context.Context, name string, args ...string) (string, error) {
	stdout, _, err := command(ctx, name, args...)
	return stdout, err
}

// command runs name and returns what it printed; its error holds its
// stderr, or which package to install when it is missing.
func command(ctx context.Context, name string, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	path, lerr := systool.LookPath(name) // losetup, mkfs.* and compsize are in /usr/sbin
	if lerr != nil {
		path = name // not found: Run says so below
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.Join(strings.Fields(errOut.String()), " ")
		if errors.Is(err, exec.ErrNotFound) {
			msg = "install the Debian package " + packages[name]
		}
		return out.String(), errOut.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, msg)
	}
	return out.String(), errOut.String(), nil
}

// packages are the Debian packages of the commands run here.
var packages = map[string]string{
	"losetup":    "util-linux",
	"mount":      "util-linux",
	"umount":     "util-linux",
	"mkfs.ext4":  "e2fsprogs",
	"mkfs.btrfs": "btrfs-progs",
	"compsize":   "btrfs-compsize",
}
