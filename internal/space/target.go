package space

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/devnode"
	"github.com/tierbench/tierbench/internal/mountinfo"
)

// source is one file or device to read, in the order of the scan.
type source struct {
	path string
	size int64 // bytes to read: the file's size at the walk, the device's size
}

// plan is what a scan will read.
type plan struct {
	kind       string // "directory", "file", "device"
	sources    []source
	total      int64    // the sources' bytes
	liveReason string   // a device in use: what uses it
	unreadable []string // inside a directory: what could not be read (permission), skipped
}

// Where the kernel's view of mounts and devices is read. Fixed: tests of
// the device checks pass fixture trees to inUse directly.
const (
	procRoot = "/proc"
	sysRoot  = "/sys"
)

// resolve checks target and lists what to read. A directory is walked
// first, so that the scan's progress knows its total. When ctx ends during
// the walk, resolve returns the plan so far with ctx's error.
func resolve(ctx context.Context, target string) (*plan, error) {
	fi, err := checkTarget(target)
	if err != nil {
		return nil, err
	}
	switch m := fi.Mode(); {
	case m.IsDir():
		return walk(ctx, target, fi)
	case m.IsRegular():
		return &plan{kind: "file", sources: []source{{target, fi.Size()}}, total: fi.Size()}, nil
	}
	return device(target, fi)
}

// checkTarget refuses, as bad input, a target that does not exist, cannot
// be opened for reading, or is neither a directory, a regular file nor a
// block device; it returns the target's (followed) file info. Opening it now
// makes an unreadable target bad input rather than an I/O error halfway.
func checkTarget(target string) (fs.FileInfo, error) {
	if target == "" {
		return nil, badf("no target given; give a directory, a file or a block device")
	}
	fi, err := os.Stat(target)
	if err != nil {
		return nil, statError(target, err)
	}
	m := fi.Mode()
	if !m.IsDir() && !m.IsRegular() && (m&fs.ModeDevice == 0 || m&fs.ModeCharDevice != 0) {
		return nil, badf("%s is a %s; give a directory, a regular file or a block device", target, devnode.Describe(m))
	}
	f, err := openRead(target)
	if err != nil {
		return nil, openError(target, err)
	}
	f.Close()
	return fi, nil
}

// statError turns the errors of stat(target) into bad input where the user can fix them.
func statError(target string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return badf("%s does not exist; give a directory, a file or a block device", target)
	case errors.Is(err, fs.ErrPermission):
		return badf("%s cannot be reached: permission denied; run as a user who can read it or give another path", target)
	case errors.Is(err, syscall.ELOOP):
		return badf("%s is a symlink loop; give a directory, a file or a block device", target)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return badf("%s is too long a path; give a shorter one", target)
	}
	return fmt.Errorf("target %s: %w", target, err)
}

// openError turns the errors of opening target into bad input where the user can fix them.
func openError(target string, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return badf("%s cannot be read: permission denied; run as a user who can read it or give another path", target)
	case errors.Is(err, fs.ErrNotExist):
		return badf("%s does not exist; give a directory, a file or a block device", target)
	}
	return fmt.Errorf("open %s: %w", target, err)
}

// openRead opens path read-only without updating its access time where the
// kernel allows that (O_NOATIME needs the file's owner or CAP_FOWNER): a
// scan should leave no trace on the data it estimates. O_NONBLOCK, which
// reads of files and block devices ignore, keeps the open from hanging on a
// named pipe put where a file was.
func openRead(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOATIME|unix.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrPermission) {
		f, err = os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	}
	return f, err
}

// walk lists the regular files below root in lexical order, as find -xdev
// would: symlinks are not followed and directories on another file system
// (another st_dev: a mount, a btrfs subvolume) are not entered. What cannot
// be read for lack of permission is noted and skipped; what vanishes during
// the walk (a database's temporary files) is skipped silently.
func walk(ctx context.Context, root string, rootInfo fs.FileInfo) (*plan, error) {
	p := &plan{kind: "directory"}
	rootDev := devOf(rootInfo)
	// WalkDir does not follow a symlink, not even the root: walk what it names.
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		resolved, err := filepath.EvalSymlinks(root)
		if err != nil {
			return nil, statError(root, err)
		}
		root = resolved
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			switch {
			case path == root:
				return openError(root, err)
			case errors.Is(err, fs.ErrPermission):
				p.unreadable = append(p.unreadable, path)
				return nil // a directory WalkDir could not read: it goes no further in it
			case errors.Is(err, fs.ErrNotExist):
				return nil
			}
			return fmt.Errorf("walk %s: %w", path, err)
		}
		switch {
		case d.IsDir():
			if path == root {
				return nil
			}
			fi, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			} else if err != nil {
				return fmt.Errorf("walk %s: %w", path, err)
			}
			if devOf(fi) != rootDev {
				return filepath.SkipDir
			}
		case d.Type().IsRegular():
			fi, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			} else if err != nil {
				return fmt.Errorf("walk %s: %w", path, err)
			}
			p.sources = append(p.sources, source{path, fi.Size()})
			p.total += fi.Size()
		}
		return nil // symlinks, pipes, sockets, device nodes: not data a store holds as blocks
	})
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	return p, err
}

func devOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}

// device plans the scan of a block device: its size (lseek to the end,
// which the kernel answers with the device's size as BLKGETSIZE64 does,
// without an ioctl's unsafe pointer), and whether it is in use.
func device(target string, fi fs.FileInfo) (*plan, error) {
	f, err := openRead(target)
	if err != nil {
		return nil, openError(target, err)
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("size of %s: %w", target, err)
	}
	why, err := inUse(procRoot, sysRoot, devnode.Rdev(fi))
	if err != nil {
		return nil, fmt.Errorf("whether %s is in use: %w", target, err)
	}
	return &plan{kind: "device", sources: []source{{target, size}}, total: size, liveReason: why}, nil
}

// blockDev is a device or one of its partitions, as sysfs lists it.
type blockDev struct {
	num  string // MAJ:MIN
	dir  string // its sysfs directory ("" when sysfs does not list it)
	what string // "" for the device, " (its partition sda1)" for a partition
}

// inUse says what uses the block device numbered rdev, or "" when nothing
// does: mounted, itself or one of its partitions (by device number, or by
// mount source: btrfs reports an anonymous 0:N number); swap; or holders
// (device-mapper, LVM, md, dm-crypt), whose volumes may be written. Such a
// device is scanned anyway, but what is read is a file system in use. proc
// and sys are the roots of /proc and /sys.
func inUse(proc, sys string, rdev uint64) (string, error) {
	devs := []blockDev{{num: devnode.Num(rdev)}}
	if dir, err := filepath.EvalSymlinks(filepath.Join(sys, "dev/block", devs[0].num)); err == nil {
		devs[0].dir = dir
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if _, err := os.Stat(filepath.Join(p, "partition")); err != nil {
				continue
			}
			if b, err := os.ReadFile(filepath.Join(p, "dev")); err == nil {
				devs = append(devs, blockDev{num: strings.TrimSpace(string(b)), dir: p, what: " (its partition " + e.Name() + ")"})
			}
		}
	}
	find := func(num string) (blockDev, bool) {
		for _, d := range devs {
			if d.num == num {
				return d, true
			}
		}
		return blockDev{}, false
	}
	mounts, err := mountinfo.Read(filepath.Join(proc, "self/mountinfo"))
	if err != nil {
		return "", err
	}
	for _, m := range mounts {
		d, ok := find(m.Device)
		if !ok {
			d, ok = find(nodeNum(m.Source))
		}
		if ok {
			return "mounted" + d.what + " on " + m.Point, nil
		}
	}
	if b, err := os.ReadFile(filepath.Join(proc, "swaps")); err == nil {
		for _, line := range strings.Split(string(b), "\n")[1:] {
			if fields := mountinfo.Fields(line); len(fields) > 0 {
				if d, ok := find(nodeNum(mountinfo.Unescape(fields[0]))); ok {
					return "in use as swap" + d.what, nil
				}
			}
		}
	}
	for _, d := range devs {
		if d.dir == "" {
			continue
		}
		if hs, _ := os.ReadDir(filepath.Join(d.dir, "holders")); len(hs) > 0 {
			return "held" + d.what + " by " + hs[0].Name() + " (device-mapper, LVM or md)", nil
		}
	}
	return "", nil
}

// nodeNum is the number (MAJ:MIN) of the block device node at path, or "-"
// when path is not one (which no device number equals).
func nodeNum(path string) string {
	if !strings.HasPrefix(path, "/") {
		return "-"
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&fs.ModeDevice == 0 || fi.Mode()&fs.ModeCharDevice != 0 {
		return "-"
	}
	return devnode.Num(devnode.Rdev(fi))
}
