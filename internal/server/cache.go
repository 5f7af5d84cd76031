package server

import (
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// DropCache drops what the page cache holds of the files under dir and
// reports whether it did, for every file. It asks the kernel per file
// (POSIX_FADV_DONTNEED), which touches nothing else on the host, unlike
// /proc/sys/vm/drop_caches. Dirty pages are written first (fdatasync),
// since the kernel keeps them otherwise: a PostgreSQL data directory after a
// checkpoint, or a backup that was synced, has none or few.
func DropCache(dir string) bool {
	ok := true
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil // a file that went away meanwhile: nothing to drop
		}
		f, err := os.Open(path)
		if err != nil {
			ok = false
			return nil
		}
		defer f.Close()
		fd := int(f.Fd())
		unix.Fdatasync(fd)
		if unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED) != nil {
			ok = false
		}
		return nil
	})
	return ok && err == nil
}
