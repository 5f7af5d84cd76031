package tier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/mountinfo"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/internal/tier"
)

// requireRoot skips unless the tier can really be made: root, with losetup,
// mkfs.ext4 and mount. As root, a missing tool fails the test under CI=true.
func requireRoot(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t, "losetup and mount")
	requireTools(t, "losetup", "mkfs.ext4", "mount", "umount")
}

// requireBtrfs is requireRoot for btrfs tiers: mkfs.btrfs (btrfs-progs) and
// compsize (btrfs-compsize) too.
func requireBtrfs(t *testing.T) {
	t.Helper()
	requireRoot(t)
	requireTools(t, "mkfs.btrfs", "compsize")
}

func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.SkipOrFail(t, "%v", err)
		}
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// removeAtEnd tears the tier down whatever happens to the test.
func removeAtEnd(t *testing.T, dir, name string) {
	t.Cleanup(func() {
		im, err := tier.Open(dir, name)
		if errors.Is(err, tier.ErrNotFound) {
			return
		}
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		if err := im.Remove(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
}

func mountinfoHas(t *testing.T, point string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == point {
			return true
		}
	}
	return false
}

// loopBacking lists the loop devices bound to file.
func loopBacking(t *testing.T, file string) []string {
	t.Helper()
	var out []string
	dirs, _ := filepath.Glob("/sys/block/loop*")
	for _, d := range dirs {
		if b, err := os.ReadFile(filepath.Join(d, "loop", "backing_file")); err == nil && strings.TrimSpace(string(b)) == file {
			out = append(out, filepath.Base(d))
		}
	}
	return out
}

func TestImage(t *testing.T) {
	requireRoot(t)
	ctx := testContext(t)
	dir := t.TempDir()
	removeAtEnd(t, dir, "t1")

	start := time.Now()
	im, err := tier.Create(ctx, dir, "t1", 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Create in %v: %+v", time.Since(start), *im)
	loop := filepath.Base(im.Device)
	if !strings.HasPrefix(im.Device, "/dev/loop") || !im.Mounted || im.MountPoint != filepath.Join(dir, "tierbench-tier-t1") ||
		im.File != filepath.Join(dir, "tierbench-tier-t1.img") {
		t.Fatalf("Create = %+v", *im)
	}
	if dio, err := os.ReadFile(filepath.Join("/sys/block", loop, "loop", "dio")); err == nil {
		t.Logf("%s direct I/O: %s", loop, strings.TrimSpace(string(dio)))
	}

	data := bytes.Repeat([]byte("tierbench"), 100000)
	if err := os.WriteFile(filepath.Join(im.MountPoint, "hello"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := telemetry.ResolvePath(im.MountPoint)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Devices) == 0 || res.Devices[0] != loop || res.FSType != "ext4" {
		t.Errorf("ResolvePath(%s) = %+v; want %s first, ext4", im.MountPoint, res, loop)
	}
	name, maj, min, err := server.DeviceFor(filepath.Join(im.MountPoint, "hello"))
	if err != nil || name != loop || maj != 7 {
		t.Errorf("DeviceFor = %s %d:%d, %v; want %s", name, maj, min, err, loop)
	}

	// Create again: the same tier back, untouched.
	again, err := tier.Create(ctx, dir, "t1", 64<<20)
	if err != nil || again.Device != im.Device || !again.Mounted {
		t.Errorf("Create again = %+v, %v; want the same tier", again, err)
	}
	if _, err := tier.Create(ctx, dir, "t1", 128<<20); err == nil {
		t.Error("Create with another size reused the tier")
	}

	// After a crash that left it unmounted: Open sees that, Create brings it
	// back without reformatting.
	if out, err := exec.Command("umount", im.MountPoint).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v %s", err, out)
	}
	o, err := tier.Open(dir, "t1")
	if err != nil || o.Mounted || o.Device != im.Device {
		t.Fatalf("Open after umount = %+v, %v", o, err)
	}
	if _, err := tier.Create(ctx, dir, "t1", 64<<20); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(im.MountPoint, "hello")); err != nil || !bytes.Equal(got, data) {
		t.Errorf("the file written before did not survive: %v", err)
	}

	if err := im.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	requireGone(t, im, dir)
	if _, err := tier.Open(dir, "t1"); !errors.Is(err, tier.ErrNotFound) {
		t.Errorf("Open after Remove = %v; want ErrNotFound", err)
	}
}

func TestImageRefuses(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	if _, err := tier.Create(ctx, dir, "Bad/Name", 64<<20); err == nil {
		t.Error("a bad name was accepted")
	}
	if _, err := tier.Create(ctx, dir, "small", 1<<20); err == nil {
		t.Error("a 1 MiB tier was accepted")
	}
	// Files tierbench did not make are left alone.
	foreign := filepath.Join(dir, "tierbench-tier-x.img")
	if err := os.WriteFile(foreign, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "tierbench-tier-y"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := "in the way"
	if os.Geteuid() != 0 {
		want = "needs root"
	}
	for _, name := range []string{"x", "y"} {
		removeAtEnd(t, dir, name)
		_, err := tier.Create(ctx, dir, name, 64<<20)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Create(%s) = %v; want %q", name, err, want)
		} else {
			t.Logf("Create(%s): %v", name, err)
		}
	}
	if b, err := os.ReadFile(foreign); err != nil || string(b) != "mine" {
		t.Errorf("the foreign image was touched: %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("Create left %d entries in %s; want the 2 foreign ones", len(entries), dir)
	}
}

// mountOf is the mount at point in /proc/self/mountinfo.
func mountOf(t *testing.T, point string) (mountinfo.Mount, bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if m, ok := mountinfo.Parse(line); ok && m.Point == point {
			return m, true
		}
	}
	return mountinfo.Mount{}, false
}

// hasOption says whether the option list opts holds name, with or without a
// value (compress-force=zstd:3 holds compress-force=zstd).
func hasOption(opts, name string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == name || strings.HasPrefix(o, name+"=") || strings.HasPrefix(o, name+":") {
			return true
		}
	}
	return false
}

// requireGone checks that nothing of the tier is left in dir.
func requireGone(t *testing.T, im *tier.Image, dir string) {
	t.Helper()
	if mountinfoHas(t, im.MountPoint) {
		t.Errorf("%s is still mounted", im.MountPoint)
	}
	if l := loopBacking(t, im.File); len(l) != 0 {
		t.Errorf("%v still bound to %s", l, im.File)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Remove left %v in %s", entries, dir)
	}
	if _, err := tier.Open(dir, im.Name); !errors.Is(err, tier.ErrNotFound) {
		t.Errorf("Open after Remove = %v; want ErrNotFound", err)
	}
}

// compressible is size bytes of repeated text, as a database's pages of
// similar rows are: zstd and lzo shrink it many times over.
func compressible(size int) []byte {
	line := []byte("tierbench row 0042: the same customer, the same order, the same warehouse\n")
	return bytes.Repeat(line, size/len(line)+1)[:size]
}

func TestBtrfs(t *testing.T) {
	requireBtrfs(t)
	on, off := true, false
	for _, c := range []struct {
		name       string
		o          tier.Options
		compress   string
		checksum   bool
		mount, not []string // options the mount must show, and must not
	}{
		{"zstd", tier.Options{FS: "btrfs", Compress: "zstd"}, "zstd", true, []string{"compress-force=zstd"}, []string{"nodatasum", "compress"}},
		{"lzo", tier.Options{FS: "btrfs", Compress: "lzo", Checksum: &on}, "lzo", true, []string{"compress-force=lzo"}, []string{"nodatasum", "compress"}},
		{"none", tier.Options{FS: "btrfs"}, "none", true, nil, []string{"nodatasum", "compress", "compress-force"}},
		{"nosum", tier.Options{FS: "btrfs", Compress: "none", Checksum: &off}, "none", false, []string{"nodatasum"}, []string{"compress", "compress-force"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testContext(t)
			dir := t.TempDir()
			removeAtEnd(t, dir, c.name)

			start := time.Now()
			im, err := tier.CreateWith(ctx, dir, c.name, 256<<20, c.o)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("CreateWith in %v: %+v", time.Since(start), *im)
			if !im.Mounted || !strings.HasPrefix(im.Device, "/dev/loop") || im.FS != "btrfs" || im.Compress != c.compress || im.Checksum != c.checksum {
				t.Fatalf("CreateWith = %+v; want btrfs mounted, compress %s, checksum %v", *im, c.compress, c.checksum)
			}
			m, ok := mountOf(t, im.MountPoint)
			if !ok || m.FSType != "btrfs" || m.Source != im.Device {
				t.Fatalf("mountinfo at %s = %+v, %v; want btrfs from %s", im.MountPoint, m, ok, im.Device)
			}
			t.Logf("mount options: %s", m.SuperOptions)
			for _, o := range c.mount {
				if !hasOption(m.SuperOptions, o) {
					t.Errorf("mounted with %s; want %s", m.SuperOptions, o)
				}
			}
			for _, o := range c.not {
				if hasOption(m.SuperOptions, o) {
					t.Errorf("mounted with %s; want no %s", m.SuperOptions, o)
				}
			}

			if s, err := im.Stored(ctx, ""); err != nil || s != (tier.StoredBytes{Tool: "compsize"}) {
				t.Errorf("Stored of the empty tier = %+v, %v; want nothing, by compsize", s, err)
			}
			const size = 32 << 20
			data := filepath.Join(im.MountPoint, "data")
			if err := os.Mkdir(data, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(data, "rows"), compressible(size), 0o644); err != nil {
				t.Fatal(err)
			}
			// No sync here: Stored's own must bring the data to disk.
			s, err := im.Stored(ctx, data)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("Stored(%s): %+v", c.name, s)
			if s.Tool != "compsize" || s.Logical != size || s.Uncompressed != size {
				t.Errorf("Stored = %+v; want %d bytes referenced and uncompressed, by compsize", s, size)
			}
			if c.compress != "none" {
				if s.Ratio <= 3 || s.Disk*3 >= s.Uncompressed {
					t.Errorf("Stored = %+v; want %s to keep repeated text in under a third", s, c.compress)
				}
			} else if s.Disk != s.Uncompressed || s.Ratio != 1 {
				t.Errorf("Stored = %+v; want the data stored as it is, ratio 1", s)
			}
			if all, err := im.Stored(ctx, ""); err != nil || all != s {
				t.Errorf("Stored of the whole tier = %+v, %v; want %+v, the data directory's", all, err, s)
			}
			if rel, err := im.Stored(ctx, "data"); err != nil || rel != s {
				t.Errorf("Stored(\"data\") = %+v, %v; want %+v", rel, err, s)
			}
			for _, p := range []string{dir, "..", "/"} {
				if _, err := im.Stored(ctx, p); err == nil || !strings.Contains(err.Error(), "not inside") {
					t.Errorf("Stored(%s) = %v; want it refused as outside the tier", p, err)
				}
			}

			if err := im.Remove(ctx); err != nil {
				t.Fatal(err)
			}
			requireGone(t, im, dir)
			if _, err := im.Stored(ctx, ""); err == nil || !strings.Contains(err.Error(), "not mounted") {
				t.Errorf("Stored after Remove = %v; want not mounted", err)
			}
		})
	}
}

// TestBtrfsAgain: a btrfs tier comes back with its options, after a crash
// too (btrfs keeps them only in the mount), and with no others.
func TestBtrfsAgain(t *testing.T) {
	requireBtrfs(t)
	ctx := testContext(t)
	dir := t.TempDir()
	removeAtEnd(t, dir, "b1")
	zstd := tier.Options{FS: "btrfs", Compress: "zstd"}
	im, err := tier.CreateWith(ctx, dir, "b1", 256<<20, zstd)
	if err != nil {
		t.Fatal(err)
	}
	data := compressible(1 << 20)
	if err := os.WriteFile(filepath.Join(im.MountPoint, "hello"), data, 0o644); err != nil {
		t.Fatal(err)
	}

	on, off := true, false
	// The same options, spelt out: the same tier.
	again, err := tier.CreateWith(ctx, dir, "b1", 256<<20, tier.Options{FS: "btrfs", Compress: "zstd", Checksum: &on})
	if err != nil || again.Device != im.Device || !again.Mounted || again.Compress != "zstd" {
		t.Errorf("CreateWith again = %+v, %v; want the same tier", again, err)
	}
	for _, o := range []tier.Options{
		{},
		{FS: "btrfs"},
		{FS: "btrfs", Compress: "lzo"},
		{FS: "btrfs", Checksum: &off},
	} {
		_, err := tier.CreateWith(ctx, dir, "b1", 256<<20, o)
		if err == nil || !strings.Contains(err.Error(), "remove it first") {
			t.Errorf("CreateWith(%+v) on the zstd tier = %v; want it refused", o, err)
		} else {
			t.Logf("CreateWith(%+v): %v", o, err)
		}
	}

	if out, err := exec.Command("umount", im.MountPoint).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v %s", err, out)
	}
	o, err := tier.Open(dir, "b1")
	if err != nil || o.Mounted || o.FS != "btrfs" || o.Compress != "zstd" || !o.Checksum {
		t.Fatalf("Open after umount = %+v, %v; want btrfs zstd, unmounted", o, err)
	}
	if _, err := o.Stored(ctx, ""); err == nil || !strings.Contains(err.Error(), "not mounted") {
		t.Errorf("Stored when unmounted = %v; want not mounted", err)
	}
	if _, err := tier.CreateWith(ctx, dir, "b1", 256<<20, zstd); err != nil {
		t.Fatal(err)
	}
	if m, ok := mountOf(t, im.MountPoint); !ok || !hasOption(m.SuperOptions, "compress-force=zstd") {
		t.Errorf("mounted again with %q; want compress-force=zstd", m.SuperOptions)
	}
	if got, err := os.ReadFile(filepath.Join(im.MountPoint, "hello")); err != nil || !bytes.Equal(got, data) {
		t.Errorf("the file written before did not survive: %v", err)
	}

	if err := im.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	requireGone(t, im, dir)
}

func TestExt4Stored(t *testing.T) {
	requireRoot(t)
	ctx := testContext(t)
	dir := t.TempDir()
	removeAtEnd(t, dir, "e1")
	im, err := tier.CreateWith(ctx, dir, "e1", 64<<20, tier.Options{FS: "ext4"})
	if err != nil {
		t.Fatal(err)
	}
	if im.FS != "ext4" || im.Compress != "none" || im.Checksum {
		t.Errorf("CreateWith = %+v; want ext4, no compression, no data checksums", *im)
	}
	// Create's default is the same tier; btrfs on it is refused.
	if again, err := tier.Create(ctx, dir, "e1", 64<<20); err != nil || again.Device != im.Device {
		t.Errorf("Create on the ext4 tier = %+v, %v; want the same tier", again, err)
	}
	if _, err := tier.CreateWith(ctx, dir, "e1", 64<<20, tier.Options{FS: "btrfs"}); err == nil || !strings.Contains(err.Error(), "remove it first") {
		t.Errorf("CreateWith btrfs on the ext4 tier = %v; want it refused", err)
	}

	const size = 8 << 20
	sub := filepath.Join(im.MountPoint, "data")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "rows"), compressible(size), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "small"), []byte("tierbench\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A hard link is the same blocks: counted once.
	if err := os.Link(filepath.Join(sub, "rows"), filepath.Join(sub, "rows.link")); err != nil {
		t.Fatal(err)
	}
	s, err := im.Stored(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Stored: %+v", s)
	logical := int64(size + len("tierbench\n"))
	if s.Tool != "stat" || s.Logical != logical || s.Disk < logical || s.Disk > logical+16<<10 || s.Uncompressed != s.Disk || s.Ratio != 1 {
		t.Errorf("Stored = %+v; want %d bytes logical, allocated as much (to a few blocks), ratio 1, by stat", s, logical)
	}
	if err := im.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	requireGone(t, im, dir)
}

func TestOptionsRefused(t *testing.T) {
	ctx := testContext(t)
	on, off := true, false
	for _, c := range []struct {
		o    tier.Options
		want string
	}{
		{tier.Options{FS: "btrfs", Compress: "zstd", Checksum: &off}, "does not compress files without checksums"},
		{tier.Options{FS: "btrfs", Compress: "lzo", Checksum: &off}, "does not compress files without checksums"},
		{tier.Options{Compress: "zstd"}, "needs file system btrfs"},
		{tier.Options{FS: "ext4", Compress: "lzo"}, "needs file system btrfs"},
		{tier.Options{FS: "ext4", Checksum: &on}, "btrfs option"},
		{tier.Options{Checksum: &off}, "btrfs option"},
		{tier.Options{FS: "xfs"}, `file system "xfs" is not one a tier can have`},
		{tier.Options{FS: "btrfs", Compress: "zlib"}, `compression "zlib" is not known`},
	} {
		dir := t.TempDir()
		_, err := tier.CreateWith(ctx, dir, "r1", 256<<20, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CreateWith(%+v) = %v; want %q", c.o, err, c.want)
		} else {
			t.Logf("CreateWith(%+v): %v", c.o, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("the refused CreateWith(%+v) left %v", c.o, entries)
		}
	}
}

// TestOldMark: a mark from before btrfs, without the file system, is ext4;
// one naming a file system tierbench cannot make leaves the tier alone.
func TestOldMark(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "tierbench-tier-old")
	if err := os.WriteFile(base+".img", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	var img, mnt unix.Stat_t
	if err := unix.Lstat(base+".img", &img); err != nil {
		t.Fatal(err)
	}
	if err := unix.Lstat(base, &mnt); err != nil {
		t.Fatal(err)
	}
	ids := fmt.Sprintf(`"image_dev":%d,"image_ino":%d,"mount_dev":%d,"mount_ino":%d`, img.Dev, img.Ino, mnt.Dev, mnt.Ino)
	for _, c := range []struct{ mark, fs, err string }{
		{`{"created_by":"tierbench","name":"old","size":67108864,"created":"2024-01-01T00:00:00Z",` + ids + `}`, "ext4", ""},
		{`{"created_by":"tierbench","name":"old","size":67108864,` + ids + `,"fs":"btrfs","compress":"lzo","checksum":true}`, "btrfs", ""},
		{`{"created_by":"tierbench","name":"old","size":67108864,` + ids + `,"fs":"xfs"}`, "", "cannot make"},
		{`{"created_by":"tierbench","name":"old","size":67108864,` + ids + `,"compress":"zstd"}`, "", "cannot make"},
	} {
		if err := os.WriteFile(base+".img.tierbench", []byte(c.mark+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		im, err := tier.Open(dir, "old")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Open with the mark %s = %+v, %v; want %q", c.mark, im, err, c.err)
			}
			continue
		}
		if err != nil || im.FS != c.fs || im.Size != 64<<20 {
			t.Errorf("Open with the mark %s = %+v, %v; want %s", c.mark, im, err, c.fs)
		} else if c.fs == "ext4" && (im.Compress != "none" || im.Checksum) {
			t.Errorf("Open with the old mark = %+v; want ext4 with no options", *im)
		}
	}
}
