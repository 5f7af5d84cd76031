package server

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestMemorySettings(t *testing.T) {
	cases := []struct {
		m    int64
		want map[string]string
	}{
		{0, nil},
		{128 * mib, map[string]string{
			"shared_buffers": "32MB", "effective_cache_size": "96MB",
			"maintenance_work_mem": "64MB", "work_mem": "4MB", // both clamped up
		}},
		{1 * gib, map[string]string{
			"shared_buffers": "256MB", "effective_cache_size": "768MB",
			"maintenance_work_mem": "64MB", "work_mem": "4MB",
		}},
		{3 * gib, map[string]string{
			"shared_buffers": "768MB", "effective_cache_size": "2304MB",
			"maintenance_work_mem": "192MB", "work_mem": "4MB",
		}},
		{16 * gib, map[string]string{
			"shared_buffers": "4GB", "effective_cache_size": "12GB",
			"maintenance_work_mem": "1GB",
			"work_mem":             "13981kB", // 16GiB/1200 = 14316557 bytes = 13981.0 kB
		}},
		{64 * gib, map[string]string{
			"shared_buffers": "16GB", "effective_cache_size": "48GB",
			"maintenance_work_mem": "2GB", // clamped down from 4GB
			"work_mem":             "55924kB",
		}},
		{1024 * gib, map[string]string{
			"shared_buffers": "256GB", "effective_cache_size": "768GB",
			"maintenance_work_mem": "2GB", "work_mem": "256MB", // clamped down from 873.8MB
		}},
		{1000 * 1000 * 1000, map[string]string{ // 1GB (decimal): not whole MB
			"shared_buffers": "244140kB", "effective_cache_size": "732421kB",
			"maintenance_work_mem": "64MB", "work_mem": "4MB",
		}},
	}
	for _, c := range cases {
		if got := MemorySettings(c.m); !reflect.DeepEqual(got, c.want) {
			t.Errorf("MemorySettings(%d) = %v; want %v", c.m, got, c.want)
		}
	}
}

func TestParseServerVersion(t *testing.T) {
	cases := []struct {
		in    string
		ver   string
		major int
	}{
		{"postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)\n", "15.14", 15},
		{"postgres (PostgreSQL) 9.6.24\n", "9.6.24", 9},
		{"postgres (PostgreSQL) 17beta1\n", "17beta1", 17},
	}
	for _, c := range cases {
		v, m, err := parseServerVersion(c.in)
		if err != nil || v != c.ver || m != c.major {
			t.Errorf("parseServerVersion(%q) = %q, %d, %v; want %q, %d", c.in, v, m, err, c.ver, c.major)
		}
	}
	if _, _, err := parseServerVersion("bash: postgres: not found"); err == nil {
		t.Error("nonsense version accepted")
	}
	if got := majorString("9.6.24", 9); got != "9.6" {
		t.Errorf("majorString(9.6.24) = %q", got)
	}
	if got := majorString("15.14", 15); got != "15" {
		t.Errorf("majorString(15.14) = %q", got)
	}
}

// fakeBin makes a directory with initdb, pg_ctl and a postgres that reports version.
func fakeBin(t *testing.T, dir, version string, complete bool) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho 'postgres (PostgreSQL) " + version + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "postgres"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pg_ctl"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if complete {
		if err := os.WriteFile(filepath.Join(dir, "initdb"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindBinaries(t *testing.T) {
	root := t.TempDir()
	deb := filepath.Join(root, "lib", "postgresql")
	fakeBin(t, filepath.Join(deb, "9.6", "bin"), "9.6.24", true)
	fakeBin(t, filepath.Join(deb, "10", "bin"), "10.23", true)
	fakeBin(t, filepath.Join(deb, "15", "bin"), "15.14", true)
	fakeBin(t, filepath.Join(deb, "16", "bin"), "16.4", false) // client only: no initdb
	if err := os.MkdirAll(filepath.Join(deb, "common"), 0o755); err != nil {
		t.Fatal(err)
	}

	// Newest complete version, numerically: 15 (16 lacks initdb; 9.6 < 10 < 15).
	b, err := findBinaries("", "", deb)
	if err != nil || b.Major != 15 || b.Version != "15.14" || b.Dir != filepath.Join(deb, "15", "bin") {
		t.Fatalf("findBinaries = %+v, %v; want 15.14 in 15/bin", b, err)
	}

	// PATH holds only a pg_ctl symlink (Debian): follow it to its real directory.
	onPath := filepath.Join(root, "usr-bin")
	if err := os.MkdirAll(onPath, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(deb, "10", "bin", "pg_ctl"), filepath.Join(onPath, "pg_ctl")); err != nil {
		t.Fatal(err)
	}
	b, err = findBinaries("", "/nonexistent"+string(filepath.ListSeparator)+onPath, deb)
	if err != nil || b.Major != 10 || b.Initdb != filepath.Join(deb, "10", "bin", "initdb") {
		t.Fatalf("findBinaries via PATH = %+v, %v; want 10", b, err)
	}

	// --pg-bin wins over everything.
	b, err = findBinaries(filepath.Join(deb, "9.6", "bin"), onPath, deb)
	if err != nil || b.Major != 9 {
		t.Fatalf("findBinaries --pg-bin = %+v, %v; want 9.6", b, err)
	}
	if _, err := findBinaries(filepath.Join(deb, "16", "bin"), onPath, deb); err == nil {
		t.Error("--pg-bin without initdb accepted")
	}

	_, err = findBinaries("", "", filepath.Join(root, "none"))
	if err == nil || !strings.Contains(err.Error(), "no PostgreSQL server binaries found") || !strings.Contains(err.Error(), "--pg-bin DIR") {
		t.Errorf("no binaries: err = %v", err)
	}
}

func TestSocketDir(t *testing.T) {
	if got := socketDir("/var/tmp/pg", 5432); got != "/var/tmp/pg" {
		t.Errorf("short path: socketDir = %q", got)
	}
	long := "/" + strings.Repeat("d", 100)
	got := socketDir(long, 54321)
	if !strings.HasPrefix(got, "/tmp/tierbench-sock-") || len(got) != len("/tmp/tierbench-sock-")+8 {
		t.Errorf("long path: socketDir = %q", got)
	}
	if socketDir(long, 54321) != got || socketDir(long+"x", 54321) == got {
		t.Error("socketDir is not a stable function of the data directory")
	}
	// The boundary: a socket path of 106 characters fits, 107 does not.
	dir := "/" + strings.Repeat("d", 106-len("/.s.PGSQL.5432")-1)
	if socketDir(dir, 5432) != dir || socketDir(dir+"d", 5432) == dir+"d" {
		t.Errorf("boundary wrong for len %d", len(dir)+len("/.s.PGSQL.5432"))
	}
}

func TestConfigFile(t *testing.T) {
	conf := configFile(5433, "/data/pg", "", 1*gib, 15, map[string]string{"work_mem": "7MB", "fsync": "off", "search_path": "a, 'b'"})
	for _, want := range []string{
		"listen_addresses = '127.0.0.1'\n", "port = 5433\n", "unix_socket_directories = '/data/pg'\n",
		"max_connections = 300\n", "max_wal_size = '4GB'\n", "checkpoint_timeout = '15min'\n",
		"logging_collector = off\n", "shared_buffers = '256MB'\n", "fsync = 'off'\n",
		"search_path = 'a, ''b'''\n",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
	// --set comes after the memory-derived settings, so it wins.
	if strings.Index(conf, "work_mem = '7MB'") < strings.Index(conf, "work_mem = '4MB'") {
		t.Errorf("--set work_mem does not come last:\n%s", conf)
	}
	plain := configFile(5433, "/data/pg", "", 0, 15, nil)
	for _, absent := range []string{"shared_buffers", "fsync", "synchronous_commit", "full_page_writes"} {
		if strings.Contains(plain, absent) {
			t.Errorf("config without --memory/--set sets %s:\n%s", absent, plain)
		}
	}
}

func TestValidSettingName(t *testing.T) {
	for _, ok := range []string{"work_mem", "pg_stat_statements.max", "A1"} {
		if !ValidSettingName(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", "1abc", "work mem", "a=b", "x'y", ".x"} {
		if ValidSettingName(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestClassify(t *testing.T) {
	root := t.TempDir()
	mk := func(dir string, files ...string) string {
		p := filepath.Join(root, dir)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(p, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, f), []byte("15\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	if k, err := classify(filepath.Join(root, "missing")); err != nil || k != dirMissing {
		t.Errorf("missing: %v, %v", k, err)
	}
	if k, err := classify(mk("empty")); err != nil || k != dirEmpty {
		t.Errorf("empty: %v, %v", k, err)
	}
	if k, err := classify(mk("ours", "PG_VERSION", StateFile)); err != nil || k != dirManaged {
		t.Errorf("ours: %v, %v", k, err)
	}
	file := filepath.Join(mk("f", "afile"), "afile")
	for name, dir := range map[string]string{
		"file":       file,
		"foreign":    mk("foreign", "notes.txt"),
		"unmanaged":  mk("unmanaged", "PG_VERSION"),
		"lost+found": mk("mnt", "lost+found/x"),
	} {
		_, err := classify(dir)
		var de *DataDirError
		if !errors.As(err, &de) {
			t.Errorf("%s: err = %v; want a DataDirError", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// copyFile copies only the regions that hold data, into a copy allocated
// whole: a file preallocated to 8 MiB of which 1 MiB at 2 MiB was written
// reads the same in the copy, the copy has at least the source's blocks,
// and its unwritten part stayed unwritten (a hole to SEEK_DATA), not 7 MiB
// of zeros written.
func TestCopyFileDataOnly(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	if err := unix.Fallocate(int(f.Fd()), 0, 0, 8*mib); err != nil {
		f.Close()
		t.Skipf("no fallocate on %s: %v", dir, err) // copyFile then copies every byte
	}
	data := bytes.Repeat([]byte("tierbench"), mib/9+1)[:mib]
	if _, err := f.WriteAt(data, 2*mib); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(context.Background(), src, dst, make([]byte, copyBuffer)); err != nil {
		t.Fatal(err)
	}
	// Where each holds data, before reading them brings their pages into
	// the cache (which lseek counts as data).
	want := [][2]int64{{2 * mib, 3 * mib}}
	if got := dataRegions(int(mustOpen(t, src).Fd()), 8*mib); !slices.Equal(got, want) {
		t.Skipf("the file system tells the source's data at %v, not %v", got, want)
	}
	if got := dataRegions(int(mustOpen(t, dst).Fd()), 8*mib); !slices.Equal(got, want) {
		t.Errorf("the copy holds data at %v; want %v alone (nothing written where the source has none)", got, want)
	}
	var sst, dstat unix.Stat_t
	if err := unix.Stat(src, &sst); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(dst, &dstat); err != nil {
		t.Fatal(err)
	}
	if dstat.Blocks < sst.Blocks {
		t.Errorf("the copy has %d blocks allocated, the source %d; want it allocated whole too", dstat.Blocks, sst.Blocks)
	}
	a, _ := os.ReadFile(src)
	b, _ := os.ReadFile(dst)
	if len(b) != 8*mib || !bytes.Equal(a, b) {
		t.Fatalf("the copy has %d bytes, equal to the source: %v; want the source's 8 MiB", len(b), bytes.Equal(a, b))
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// pg_controldata's report gives the segments a copy needs: from the redo
// point's to the checkpoint's, on its timeline, for a cluster shut down
// cleanly; anything else (a crashed one, a report it cannot read) keeps
// every segment.
func TestParseControlData(t *testing.T) {
	report := func(state, loc, redoFile, tli, size string) string {
		return "pg_control version number:            1300\n" +
			"Database cluster state:               " + state + "\n" +
			"Latest checkpoint location:           " + loc + "\n" +
			"Latest checkpoint's REDO location:    " + loc + "\n" +
			"Latest checkpoint's REDO WAL file:    " + redoFile + "\n" +
			"Latest checkpoint's TimeLineID:       " + tli + "\n" +
			"Bytes per WAL segment:                " + size + "\n"
	}
	for _, c := range []struct {
		out  string
		want walSegments
	}{
		{report("shut down", "0/75D1000", "000000010000000000000007", "1", "16777216"),
			walSegments{"000000010000000000000007", "000000010000000000000007"}},
		// A checkpoint past the redo point's segment; the second 4 GiB of
		// WAL; 64 MiB segments; timeline 3.
		{report("shut down", "1/8000028", "000000030000000100000001", "3", "67108864"),
			walSegments{"000000030000000100000001", "000000030000000100000002"}},
		{report("in production", "0/75D1000", "000000010000000000000007", "1", "16777216"), walSegments{}},
		{report("shut down", "0/75D1000", "000000010000000000000007", "1", "1000"), walSegments{}},
		{report("shut down", "zz", "000000010000000000000007", "1", "16777216"), walSegments{}},
		{"pg_controldata: fatal: could not open file", walSegments{}},
	} {
		if got := parseControlData(c.out); got != c.want {
			t.Errorf("%q: %+v; want %+v", c.out, got, c.want)
		}
	}
	w := walSegments{"000000010000000000000007", "000000010000000000000008"}
	for rel, want := range map[string]bool{
		"pg_wal/000000010000000000000007": true, "pg_wal/000000010000000000000009": false,
		"pg_wal/000000010000000000000006": false, "pg_wal/archive_status/000000010000000000000006.done": false,
		"pg_wal/archive_status/000000010000000000000008.ready": true, "pg_wal/00000002.history": true,
		"pg_wal/archive_status": true, "base/1/000000010000000000000006": true, "PG_VERSION": true,
	} {
		if w.keeps(rel) != want || !(walSegments{}).keeps(rel) {
			t.Errorf("keeps(%s) = %v; want %v (and true with no segments known)", rel, w.keeps(rel), want)
		}
	}
}
