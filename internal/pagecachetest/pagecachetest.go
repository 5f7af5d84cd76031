// Package pagecachetest helps tests see what the page cache holds of a
// file.
package pagecachetest

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Resident counts the pages of path that are in the page cache.
func Resident(t testing.TB, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// CachedFile writes an 8 MiB file at dir/rel (dir not on tmpfs, whose
// pages cannot be dropped), reads it back so that it is in the page cache,
// and returns its path and page count. A file system that does not cache
// it fails the test.
func CachedFile(t testing.TB, dir, rel string) (string, int) {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 8<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	pages := len(data) / os.Getpagesize()
	if n := Resident(t, path); n < pages/2 {
		t.Fatalf("only %d of %d pages of %s cached after a read: this file system does not cache as expected", n, pages, path)
	}
	return path, pages
}

// TempDir is a directory for CachedFile, removed when the test ends: under
// /var/tmp, since /tmp may be tmpfs.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "tierbench-cache-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
