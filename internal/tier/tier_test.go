package tier_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/tier"
)

// requireRoot skips unless the tier can really be made: root, with losetup,
// mkfs.ext4 and mount. As root, a missing tool fails the test under CI=true.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: emulated tiers need root (losetup and mount)")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required in CI: %v", tool, err)
			}
			t.Skipf("skipping: %v", err)
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
	if mountinfoHas(t, im.MountPoint) {
		t.Errorf("%s is still mounted", im.MountPoint)
	}
	if l := loopBacking(t, im.File); len(l) != 0 {
		t.Errorf("%v still bound to %s", l, im.File)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Remove left %v in %s", entries, dir)
	}
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
