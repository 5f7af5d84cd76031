package backup

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of path that are in the page cache.
func resident(t *testing.T, path string) int {
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

// A file just written and read is in the page cache; dropCache evicts it,
// and leaves it when the options keep the cache.
func TestDropCache(t *testing.T) {
	// Not t.TempDir: /tmp may be tmpfs, whose pages cannot be dropped.
	dir, err := os.MkdirTemp("/var/tmp", "tierbench-cache-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "sub", "base", "16384")
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
	if n := resident(t, path); n < pages/2 {
		t.Skipf("only %d of %d pages cached after a read: this file system does not cache as expected", n, pages)
	}
	if (Options{KeepCache: true}).dropCache(dir) {
		t.Error("KeepCache: dropCache says it dropped")
	}
	if n := resident(t, path); n < pages/2 {
		t.Errorf("KeepCache: %d of %d pages left in the cache", n, pages)
	}
	if !(Options{}).dropCache(dir) {
		t.Error("dropCache reports failure")
	}
	if n := resident(t, path); n > pages/10 {
		t.Errorf("after dropCache %d of %d pages still cached", n, pages)
	}
}
