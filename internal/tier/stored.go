package tier

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// StoredBytes is what a tier's file system holds for the files under a
// path: their data, that data as the extents holding it were before
// compression, and the disk space those take.
type StoredBytes struct {
	Logical      int64   `json:"logical_bytes"`      // the files' data: compsize's Referenced; ext4: their sizes summed
	Uncompressed int64   `json:"uncompressed_bytes"` // the extents before compression: compsize's Uncompressed; ext4: as Disk
	Disk         int64   `json:"disk_bytes"`         // the space they take: compsize's Disk Usage; ext4: the files' allocated blocks
	Ratio        float64 `json:"ratio"`              // Uncompressed / Disk: 1 uncompressed; 0 when nothing is stored
	Tool         string  `json:"tool"`               // "compsize" or "stat"
}

// Stored is what the tier's file system holds under path: a directory or
// file inside the tier (a relative path is taken from the mount point), or
// "" for the whole of it. For btrfs the figures are compsize's (Debian
// package btrfs-compsize), which reads the extents from the file system's
// trees; for ext4, which neither compresses nor shares extents, they are the
// files' sizes and allocated blocks (stat). It syncs the file system first:
// ext4 allocates blocks and btrfs compresses only at writeback, so until then
// data in the page cache is stored nowhere yet.
func (im *Image) Stored(ctx context.Context, path string) (StoredBytes, error) {
	dev := im.Device
	if dev == "" {
		dev = loopOf(im.File)
	}
	if dev == "" || !mountedFrom(im.MountPoint, dev) {
		return StoredBytes{}, fmt.Errorf("emulated tier %q is not mounted at %s: its file system cannot be measured", im.Name, im.MountPoint)
	}
	p, err := im.inside(path)
	if err != nil {
		return StoredBytes{}, err
	}
	if err := syncFS(p); err != nil {
		return StoredBytes{}, err
	}
	if im.FS == "btrfs" {
		return compsize(ctx, p)
	}
	return statStored(p)
}

// inside resolves path to a file or directory in the tier's mount.
func (im *Image) inside(path string) (string, error) {
	p := path
	if p == "" {
		p = im.MountPoint
	} else if !filepath.IsAbs(p) {
		p = filepath.Join(im.MountPoint, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(im.MountPoint, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s is not inside the emulated tier %q, mounted at %s", path, im.Name, im.MountPoint)
	}
	return real, nil
}

// syncFS writes back the whole file system holding p (syncfs(2)), btrfs's
// compression and extent tree commit included.
func syncFS(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", p, err)
	}
	return nil
}

// compsize measures p with compsize -b. Without subvolumes of their own to
// skip, -x is not given: a snapshot inside the tier is on its disk too.
func compsize(ctx context.Context, p string) (StoredBytes, error) {
	stdout, stderr, err := command(ctx, "compsize", "-b", p)
	if err != nil {
		// It exits 1 with no TOTAL when there is no file data to count.
		switch strings.TrimSpace(stderr) {
		case "No files.", "All empty or still-delalloced files.":
			return StoredBytes{Tool: "compsize"}, nil
		}
		return StoredBytes{}, err
	}
	return parseCompsize(stdout)
}

// parseCompsize reads the TOTAL line of compsize -b:
//
//	Type       Perc     Disk Usage   Uncompressed Referenced
//	TOTAL        3%     471040       12972032     12972032
func parseCompsize(out string) (StoredBytes, error) {
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) != 5 || f[0] != "TOTAL" {
			continue
		}
		var n [3]int64
		for i, s := range f[2:] {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil || v < 0 {
				return StoredBytes{}, fmt.Errorf("compsize's TOTAL line %q does not hold byte counts (is it compsize -b?)", strings.TrimSpace(line))
			}
			n[i] = v
		}
		return stored(n[2], n[1], n[0], "compsize"), nil
	}
	return StoredBytes{}, fmt.Errorf("compsize printed no TOTAL line: %q", out)
}

func stored(logical, uncompressed, disk int64, tool string) StoredBytes {
	s := StoredBytes{Logical: logical, Uncompressed: uncompressed, Disk: disk, Tool: tool}
	if disk > 0 {
		s.Ratio = float64(uncompressed) / float64(disk)
	}
	return s
}

// statStored sums the sizes and allocated blocks of the regular files under
// p on its file system, each inode once (hard links), as compsize counts
// each extent once. A file that goes while it is counted (a database's
// temporary file) is left out.
func statStored(p string) (StoredBytes, error) {
	var root unix.Stat_t
	if err := unix.Stat(p, &root); err != nil {
		return StoredBytes{}, fmt.Errorf("stat %s: %w", p, err)
	}
	seen := map[uint64]bool{}
	var logical, disk int64
	err := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && q != p {
				return nil
			}
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		var st unix.Stat_t
		if err := unix.Lstat(q, &st); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("stat %s: %w", q, err)
		}
		if st.Dev != root.Dev { // another file system mounted inside: not the tier's
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || seen[st.Ino] {
			return nil
		}
		seen[st.Ino] = true
		logical += st.Size
		disk += st.Blocks * 512
		return nil
	})
	if err != nil {
		return StoredBytes{}, err
	}
	return stored(logical, disk, disk, "stat"), nil
}
