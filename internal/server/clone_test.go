package server_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// A stopped managed directory cloned: both servers run side by side, on
// different ports, each with the row; the clone has the source's files,
// modes and owners, but not its pid file or log.
func TestClone(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	ctx := testContext(t)
	base := pgtest.TempDir(t)
	src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
	stopAtEnd(t, src)
	stopAtEnd(t, dst)

	info, err := server.Start(ctx, server.Options{DataDir: src})
	if err != nil {
		t.Fatal(err)
	}
	exec(t, ctx, info.DSN, "CREATE TABLE keep (x int); INSERT INTO keep VALUES (42)")
	// WAL in several segments, and a checkpoint that recycles the old ones
	// as future ones: a copy needs none of them but the last checkpoint's.
	for range 3 {
		exec(t, ctx, info.DSN, "INSERT INTO keep SELECT 0 FROM generate_series(1, 1000); DELETE FROM keep WHERE x = 0; SELECT pg_switch_wal()")
	}
	exec(t, ctx, info.DSN, "CHECKPOINT")

	// Refused while the source runs, and nothing is made.
	var de *server.DataDirError
	if err := server.Clone(ctx, src, dst); !errors.As(err, &de) || !strings.Contains(err.Error(), "running") {
		t.Errorf("Clone of a running server: err = %v", err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused Clone left %s: %v", dst, err)
	}
	if _, err := server.Stop(ctx, src, ""); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if err := server.Clone(ctx, src, dst); err != nil {
		t.Fatal(err)
	}
	t.Logf("clone of a fresh cluster: %v", time.Since(start))
	for _, name := range []string{"postmaster.pid", server.LogFile} {
		if _, err := os.Lstat(filepath.Join(dst, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("clone has %s: %v", name, err)
		}
	}
	compareTrees(t, src, dst)
	if a, b := segments(t, src), segments(t, dst); len(a) < 3 || len(b) != 1 || !slices.Contains(a, b[0]) {
		t.Errorf("WAL segments: the source's %v, the clone's %v; want one of the source's several, the shutdown checkpoint's", a, b)
	}
	// Neither side stays cached: each server brings its own data in, in
	// its own memory cgroup.
	for _, dir := range []string{src, dst} {
		if pages, cached := cachedPages(t, dir); cached > pages/10 {
			t.Errorf("%s: %d of %d pages of its files in the page cache after the clone; want them dropped", dir, cached, pages)
		}
	}

	a, err := server.Start(ctx, server.Options{DataDir: src, NewPort: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := server.Start(ctx, server.Options{DataDir: dst, NewPort: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Port == b.Port || a.Port == info.Port || b.Port == info.Port || a.PID == b.PID {
		t.Errorf("ports %d (source, before %d) and %d (clone); pids %d, %d", a.Port, info.Port, b.Port, a.PID, b.PID)
	}
	for _, i := range []server.Info{a, b} {
		if got := query(t, ctx, i.DSN, "SELECT x::text FROM keep"); got != "42" {
			t.Errorf("%s: keep.x = %q", i.DataDir, got)
		}
	}
	// Each server has its own data: a change to the clone stays there.
	exec(t, ctx, b.DSN, "UPDATE keep SET x = 7")
	if got := query(t, ctx, a.DSN, "SELECT x::text FROM keep"); got != "42" {
		t.Errorf("source after the clone changed: keep.x = %q", got)
	}
}

// isSegment says whether rel is a WAL segment of a PostgreSQL data
// directory, which a clone copies only when needed (segments).
func isSegment(rel string) bool {
	name, ok := strings.CutPrefix(rel, "pg_wal/")
	return ok && len(name) == 24 && strings.Trim(name, "0123456789ABCDEF") == ""
}

// segments lists the WAL segments in dir.
func segments(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "pg_wal"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if isSegment("pg_wal/" + e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names
}

// cachedPages counts the pages of dir's regular files, and how many of
// them are in the page cache (mincore). WAL segments are left out: those
// a clone does not copy it does not read either, and the pages the source
// server wrote into them stay its own.
func cachedPages(t *testing.T, dir string) (pages, cached int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if rel, _ := filepath.Rel(dir, p); isSegment(rel) {
			return nil
		}
		fi, err := d.Info()
		if err != nil || fi.Size() == 0 {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return err
		}
		defer unix.Munmap(m)
		vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
		if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			return e
		}
		for _, v := range vec {
			pages++
			if v&1 != 0 {
				cached++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages, cached
}

// compareTrees checks that dst holds src's entries (bar the pid file, log
// and sockets) with the same type, mode, owner, size and symlink target.
func compareTrees(t *testing.T, src, dst string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "postmaster.pid" || rel == "postmaster.opts" || rel == server.LogFile || d.Type()&fs.ModeSocket != 0 ||
			strings.HasPrefix(rel, ".s.PGSQL.") || isSegment(rel) {
			return nil
		}
		a, err := os.Lstat(p)
		if err != nil {
			return err
		}
		b, err := os.Lstat(filepath.Join(dst, rel))
		if err != nil {
			t.Errorf("clone lacks %s: %v", rel, err)
			return nil
		}
		as, bs := a.Sys().(*syscall.Stat_t), b.Sys().(*syscall.Stat_t)
		if a.Mode() != b.Mode() || as.Uid != bs.Uid || as.Gid != bs.Gid || (a.Mode().IsRegular() && a.Size() != b.Size()) {
			t.Errorf("%s: source %v %d:%d %d bytes; clone %v %d:%d %d bytes", rel, a.Mode(), as.Uid, as.Gid, a.Size(),
				b.Mode(), bs.Uid, bs.Gid, b.Size())
		}
		if a.Mode()&fs.ModeSymlink != 0 {
			la, _ := os.Readlink(p)
			lb, _ := os.Readlink(filepath.Join(dst, rel))
			if la != lb {
				t.Errorf("symlink %s: %q; clone %q", rel, la, lb)
			}
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("compared only %d entries", n)
	}
}

func TestCloneRefuses(t *testing.T) {
	ctx := testContext(t)
	var de *server.DataDirError
	base := pgtest.TempDir(t)

	// Not a managed directory: a foreign one, a missing one.
	foreign := filepath.Join(base, "foreign")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "PG_VERSION"), []byte("15\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{foreign, filepath.Join(base, "missing")} {
		if err := server.Clone(ctx, src, filepath.Join(base, "dst")); !errors.As(err, &de) || !strings.Contains(err.Error(), "not a tierbench-managed") {
			t.Errorf("Clone of %s: err = %v", src, err)
		}
	}

	// A managed-looking source (the check is by its files), into a
	// non-empty directory, a file, or itself: refused, nothing touched.
	src := filepath.Join(base, "src")
	if err := os.MkdirAll(src, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"PG_VERSION", server.StateFile} {
		if err := os.WriteFile(filepath.Join(src, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	full := filepath.Join(base, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dst, want := range map[string]string{
		full:                             "is not empty",
		filepath.Join(full, "notes.txt"): "not a directory",
		filepath.Join(src, "inside"):     "inside the data directory",
		src:                              "inside the data directory",
	} {
		if err := server.Clone(ctx, src, dst); !errors.As(err, &de) || !strings.Contains(err.Error(), want) {
			t.Errorf("Clone into %s: err = %v; want %q", dst, err, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(full, "notes.txt")); string(b) != "mine" {
		t.Error("the non-empty target was touched")
	}

	// Cancelled: an error, and nothing left behind.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	dst := filepath.Join(base, "cancelled")
	if err := server.Clone(cctx, src, dst); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Clone: err = %v", err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a cancelled Clone left %s: %v", dst, err)
	}
}

// Every start rewrites pg_hba.conf: a directory made before replication
// was allowed gets it, so pg_basebackup can connect.
func TestServerStartRewritesHba(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	ctx := testContext(t)
	dataDir := filepath.Join(pgtest.TempDir(t), "data")
	stopAtEnd(t, dataDir)
	if _, err := server.Start(ctx, server.Options{DataDir: dataDir}); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Stop(ctx, dataDir, ""); err != nil {
		t.Fatal(err)
	}
	hba := filepath.Join(dataDir, "pg_hba.conf")
	old := "local all all scram-sha-256\nhost all all 127.0.0.1/32 scram-sha-256\n"
	if err := os.WriteFile(hba, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Start(ctx, server.Options{DataDir: dataDir}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"local replication all scram-sha-256", "host replication all 127.0.0.1/32 scram-sha-256",
		"local all all scram-sha-256", "host all all 127.0.0.1/32 scram-sha-256"} {
		if !strings.Contains(string(b), line+"\n") {
			t.Errorf("pg_hba.conf lacks %q:\n%s", line, b)
		}
	}
	fi, err := os.Stat(hba)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("pg_hba.conf: %v, %v; want mode 0600", fi.Mode(), err)
	}
}
