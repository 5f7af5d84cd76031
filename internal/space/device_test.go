package space

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/systree"
	"github.com/tierbench/tierbench/internal/testenv"
)

func TestInUseFixtures(t *testing.T) {
	sys := systree.Build(t, filepath.Join("testdata", "inuse", "sys.txt"))
	proc, err := filepath.Abs(filepath.Join("testdata", "inuse", "proc"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		maj, min uint32
		want     string
	}{
		{8, 16, "mounted (its partition sdb1) on /srv/my data"},
		{8, 17, "mounted on /srv/my data"},
		{8, 18, ""}, // sdb2: its sibling's mount is not its own
		{8, 32, "held by dm-0 (device-mapper, LVM or md)"},
		{8, 48, ""},
		{8, 64, "mounted on /mnt/whole"},
		{8, 80, ""}, // not in sysfs: nothing lists it
	} {
		got, err := inUse(proc, sys, unix.Mkdev(tc.maj, tc.min))
		if err != nil || got != tc.want {
			t.Errorf("inUse(%d:%d) = %q, %v; want %q", tc.maj, tc.min, got, err, tc.want)
		}
	}
	if _, err := inUse(t.TempDir(), sys, unix.Mkdev(8, 16)); err == nil {
		t.Error("no mount table: no error")
	}
}

// TestInUseByNode: a mount (btrfs: an anonymous 0:N number) or a swap area
// found by its source's device node. Root makes the node.
func TestInUseByNode(t *testing.T) {
	needRoot(t)
	sys := systree.Build(t, filepath.Join("testdata", "inuse", "sys.txt"))
	dir := t.TempDir()
	node := filepath.Join(dir, "fixture-sdd")
	if err := unix.Mknod(node, unix.S_IFBLK|0o600, int(unix.Mkdev(8, 48))); err != nil {
		t.Fatal(err)
	}
	proc := filepath.Join(dir, "proc")
	writeFile(t, proc, "self/mountinfo", []byte("40 21 0:45 / /srv/btrfs rw - btrfs "+node+" rw\n"))
	got, err := inUse(proc, sys, unix.Mkdev(8, 48))
	if want := "mounted on /srv/btrfs"; err != nil || got != want {
		t.Errorf("inUse = %q, %v; want %q", got, err, want)
	}
	writeFile(t, proc, "self/mountinfo", nil)
	writeFile(t, proc, "swaps", []byte("Filename\tType\tSize\tUsed\tPriority\n"+node+"\tpartition\t1024\t0\t-2\n"))
	got, err = inUse(proc, sys, unix.Mkdev(8, 48))
	if want := "in use as swap"; err != nil || got != want {
		t.Errorf("inUse = %q, %v; want %q", got, err, want)
	}
}

// needRoot skips a test that needs root, except under CI=true, which must run it.
func needRoot(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t, "mknod, losetup, mount")
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestLiveDevice scans a loop device holding ext4 with two copies of a
// 1 MiB file: mounted, the scan is flagged live; unmounted, not. Both see
// the whole device and the copies' duplicate blocks.
func TestLiveDevice(t *testing.T) {
	needRoot(t)
	for _, tool := range []string{"losetup", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.SkipOrFail(t, "%v", err)
		}
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "fs.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 32<<20); err != nil {
		t.Fatal(err)
	}
	// 4 KiB file-system blocks, so that each data block is one scan block.
	run(t, "mkfs.ext4", "-q", "-F", "-b", "4096", img)
	out, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	if err != nil {
		testenv.SkipOrFail(t, "no loop device (losetup: %v: %s)", err, strings.TrimSpace(string(out)))
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(dev, mnt, "ext4", 0, ""); err != nil {
		t.Fatalf("mount %s: %v", dev, err)
	}
	mounted := true
	unmount := func() {
		if mounted {
			if err := unix.Unmount(mnt, 0); err != nil {
				t.Errorf("umount %s: %v", mnt, err)
			}
			mounted = false
		}
	}
	t.Cleanup(unmount)
	data := randomBlock(4242, 1<<20)
	writeFile(t, mnt, "one", data)
	writeFile(t, mnt, "two", data)
	run(t, "sync", "-f", filepath.Join(mnt, "two"))

	check := func(r *Result) {
		t.Helper()
		checkInvariants(t, r)
		if r.Kind != "device" || r.Files != 0 || r.LogicalBytes != 32<<20 || r.Blocks != 8192 {
			t.Errorf("kind %s files %d logical %d blocks %d", r.Kind, r.Files, r.LogicalBytes, r.Blocks)
		}
		// The copies' 256 blocks twice; ext4's metadata besides; most of it zero.
		if r.DuplicateBlocks < 256 || r.UniqueBlocks < 256 || r.ZeroBlocks < 6000 {
			t.Errorf("unique %d duplicate %d zero %d", r.UniqueBlocks, r.DuplicateBlocks, r.ZeroBlocks)
		}
		if c := r.Compression["lz4"]; c.StoredBytes < 256*4096 {
			t.Errorf("lz4 stored %d bytes: less than the random file", c.StoredBytes)
		}
	}
	r := scan(t, dev, Options{})
	t.Logf("mounted: %d blocks, %d zero, %d unique, %d duplicate; %s", r.Blocks, r.ZeroBlocks, r.UniqueBlocks, r.DuplicateBlocks, r.LiveReason)
	if !r.Live || !strings.Contains(r.LiveReason, "mounted on "+mnt) {
		t.Errorf("mounted: live %v (%q)", r.Live, r.LiveReason)
	}
	check(r)
	unmount()
	r = scan(t, dev, Options{})
	if r.Live || r.LiveReason != "" {
		t.Errorf("unmounted: live %v (%q)", r.Live, r.LiveReason)
	}
	check(r)
}
