package fio

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/devnode"
	"github.com/tierbench/tierbench/internal/testenv"
	"golang.org/x/sys/unix"
)

// needRoot skips a test that needs root (mknod, loop devices), except under CI, which must run it.
func needRoot(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t, "mknod, loop devices")
}

// wantRefused fails unless err wraps ErrRefused and its text holds every one of want.
func wantRefused(t *testing.T, err error, want ...string) {
	t.Helper()
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("got error %v, want a refusal", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not mention %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("refusal %q is not one line", err)
	}
}

func exists(path string) bool { _, err := os.Lstat(path); return err == nil }

func realTempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTargetDirectory(t *testing.T) {
	dir := realTempDir(t)
	tg, err := PrepareTarget(dir, TargetOptions{Size: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "tierbench-fio.dat")
	if tg.Kind != "directory" || tg.File != file || tg.Size != 1<<20 || tg.Path != dir {
		t.Fatalf("target = %+v", tg)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 0 {
		t.Fatalf("test file: %v %v", fi, err)
	}
	if !IsTierbenchFile(file) || !exists(file+".tierbench") {
		t.Fatal("test file is not marked as tierbench's")
	}
	if err := tg.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if exists(file) || exists(file+".tierbench") {
		t.Error("Cleanup left the test file or its mark")
	}
	if err := tg.Cleanup(); err != nil {
		t.Errorf("second Cleanup: %v", err)
	}
}

func TestTargetDirectoryKeepAndReuse(t *testing.T) {
	dir := realTempDir(t)
	file := filepath.Join(dir, "tierbench-fio.dat")
	first, err := PrepareTarget(dir, TargetOptions{Size: 1 << 20, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if !IsTierbenchFile(file) {
		t.Fatal("--keep did not keep the marked test file")
	}
	// The kept file is still empty (fio never ran), so its size cannot stand in for --size.
	_, err = PrepareTarget(dir, TargetOptions{})
	wantRefused(t, err, "--size")

	if err := os.WriteFile(file, make([]byte, 4096), 0o600); err != nil { // as fio would lay it out
		t.Fatal(err)
	}
	second, err := PrepareTarget(dir, TargetOptions{})
	if err != nil {
		t.Fatalf("reuse: %v", err)
	}
	if second.File != file || second.Size != 4096 {
		t.Errorf("reused target = %+v", second)
	}
	if err := second.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if !IsTierbenchFile(file) {
		t.Error("Cleanup removed a test file this run reused")
	}
}

func TestTargetDirectoryForeignFileInTheWay(t *testing.T) {
	dir := realTempDir(t)
	file := filepath.Join(dir, "tierbench-fio.dat")
	if err := os.WriteFile(file, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, o := range []TargetOptions{{Size: 1 << 20}, {Size: 1 << 20, OverwriteFile: true}} {
		_, err := PrepareTarget(dir, o)
		wantRefused(t, err, file, "in the way", "another directory")
	}
	if b, _ := os.ReadFile(file); string(b) != "precious" || exists(file+".tierbench") {
		t.Error("the foreign file was touched")
	}
}

func TestTargetDirectoryWithoutRoom(t *testing.T) {
	dir := realTempDir(t)
	_, err := PrepareTarget(dir, TargetOptions{Size: 1 << 60})
	wantRefused(t, err, dir, "free", "--size")
	if exists(filepath.Join(dir, "tierbench-fio.dat")) {
		t.Error("a refused target left a test file behind")
	}
	_, err = PrepareTarget(dir, TargetOptions{})
	wantRefused(t, err, "--size")
}

func TestTargetNewFile(t *testing.T) {
	dir := realTempDir(t)
	file := filepath.Join(dir, "new.dat")
	_, err := PrepareTarget(file, TargetOptions{})
	wantRefused(t, err, "--size")

	tg, err := PrepareTarget(file, TargetOptions{Size: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Kind != "file" || tg.File != file || !IsTierbenchFile(file) {
		t.Fatalf("target = %+v, marked %v", tg, IsTierbenchFile(file))
	}
	if err := tg.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if exists(file) || exists(file+".tierbench") {
		t.Error("Cleanup left the new file or its mark")
	}
}

func TestTargetForeignFile(t *testing.T) {
	dir := realTempDir(t)
	file := filepath.Join(dir, "data.bin")
	if err := os.WriteFile(file, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := PrepareTarget(file, TargetOptions{})
	wantRefused(t, err, file, "not created by tierbench", "--overwrite-file")

	tg, err := PrepareTarget(file, TargetOptions{OverwriteFile: true})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Kind != "file" || tg.Size != 8192 {
		t.Errorf("target = %+v", tg)
	}
	if err := tg.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if !exists(file) || exists(file+".tierbench") || IsTierbenchFile(file) {
		t.Error("a foreign file was removed or marked")
	}
}

func TestTargetReplacedFileIsForeign(t *testing.T) {
	dir := realTempDir(t)
	file := filepath.Join(dir, "run.dat")
	tg, err := PrepareTarget(file, TargetOptions{Size: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// Someone puts another file at the same path (a new inode) while the mark stays.
	tmp := filepath.Join(dir, "other")
	if err := os.WriteFile(tmp, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	if IsTierbenchFile(file) {
		t.Fatal("a replaced file still counts as tierbench's")
	}
	_, err = PrepareTarget(file, TargetOptions{Size: 1 << 20})
	wantRefused(t, err, "--overwrite-file")
	if err := tg.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "theirs" {
		t.Error("Cleanup removed the file that replaced the test file")
	}
}

func TestTargetOddPaths(t *testing.T) {
	dir := realTempDir(t)

	_, err := PrepareTarget("/dev/null", TargetOptions{Size: 1 << 20, OverwriteFile: true})
	wantRefused(t, err, "/dev/null", "character device")

	_, err = PrepareTarget(filepath.Join(dir, "missing", "f.dat"), TargetOptions{Size: 1 << 20})
	wantRefused(t, err, filepath.Join(dir, "missing"), "does not exist")

	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = PrepareTarget(filepath.Join(plain, "f.dat"), TargetOptions{Size: 1 << 20})
	wantRefused(t, err, plain+" is not a directory")

	loop := filepath.Join(dir, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	_, err = PrepareTarget(loop, TargetOptions{Size: 1 << 20})
	wantRefused(t, err, "symlink loop")

	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	_, err = PrepareTarget(dangling, TargetOptions{Size: 1 << 20})
	wantRefused(t, err, "does not exist")

	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = PrepareTarget(fifo, TargetOptions{Size: 1 << 20, OverwriteFile: true})
	wantRefused(t, err, "named pipe")

	_, err = PrepareTarget(dir, TargetOptions{Size: -1})
	wantRefused(t, err, "--size")
}

// TestTargetMountedDevice makes block-device nodes for the (mounted) filesystem that holds the test's temporary
// directory. Where that filesystem has no real block device (overlayfs, tmpfs: major 0), sysfs does not know
// the number, and the guard must refuse for that reason instead.
func TestTargetMountedDevice(t *testing.T) {
	needRoot(t)
	dir := realTempDir(t)
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	major, minor := unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))
	node := filepath.Join(dir, "disk")
	other := filepath.Join(dir, "other-disk")
	if err := unix.Mknod(node, unix.S_IFBLK|0o600, int(unix.Mkdev(major, minor))); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mknod(other, unix.S_IFBLK|0o600, int(unix.Mkdev(major, minor+1))); err != nil {
		t.Fatal(err)
	}

	_, err := PrepareTarget(node, TargetOptions{})
	wantRefused(t, err, node+" is a block device", "--destroy-data-on "+node)

	_, err = PrepareTarget(node, TargetOptions{DestroyDataOn: other, EvenIfFormatted: true})
	wantRefused(t, err, "--destroy-data-on "+other, node)

	_, err = PrepareTarget(node, TargetOptions{DestroyDataOn: "/dev/null", EvenIfFormatted: true})
	wantRefused(t, err, "/dev/null is not a block device", node)

	// A device name that does not exist must not turn into a new file.
	for _, p := range []string{"/dev/tierbench-no-such-disk", filepath.Join(dir, "no-such-disk")} {
		_, err = PrepareTarget(p, TargetOptions{Size: 1 << 20, DestroyDataOn: p})
		wantRefused(t, err, p, "no such block device")
		if exists(p) {
			os.Remove(p)
			t.Errorf("%s was created", p)
		}
	}

	// The same device through a symlink is still the same device; it is refused only because it is in use.
	link := filepath.Join(dir, "by-id")
	if err := os.Symlink(node, link); err != nil {
		t.Fatal(err)
	}
	for _, o := range []TargetOptions{{DestroyDataOn: link, EvenIfFormatted: true}, {DestroyDataOn: node}} {
		_, err = PrepareTarget(node, o)
		if exists(filepath.Join("/sys/dev/block", devnode.Num(uint64(st.Dev)))) {
			wantRefused(t, err, node, "is mounted on /", "unmount")
		} else {
			t.Logf("%d:%d is not a block device in sysfs (overlay or tmpfs?)", major, minor)
			wantRefused(t, err, node, "/sys/dev/block")
		}
	}
}

// TestTargetLoopDevice attaches images as read-only loop devices (the images are written as files first; no
// block device is ever opened for writing) to check signature detection, sizes and the accepted path.
func TestTargetLoopDevice(t *testing.T) {
	needRoot(t)
	dir := realTempDir(t)
	attach := func(name string, prepare ...string) string {
		t.Helper()
		img := filepath.Join(dir, name)
		f, err := os.Create(img)
		if err != nil {
			t.Fatal(err)
		}
		err = f.Truncate(64 << 20)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(prepare) > 0 {
			if out, err := exec.Command(prepare[0], append(prepare[1:], img)...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", prepare, err, out)
			}
		}
		out, err := exec.Command("losetup", "--read-only", "--find", "--show", img).CombinedOutput()
		if err != nil {
			testenv.SkipOrFail(t, "no loop devices here: %v: %s", err, out)
		}
		dev := strings.TrimSpace(string(out))
		t.Cleanup(func() { exec.Command("losetup", "--detach", dev).Run() })
		return dev
	}

	blank := attach("blank.img")
	tg, err := PrepareTarget(blank, TargetOptions{DestroyDataOn: blank})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Kind != "device" || tg.File != blank || tg.Size != 64<<20 {
		t.Errorf("target = %+v", tg)
	}
	if err := tg.Cleanup(); err != nil || !exists(blank) {
		t.Errorf("Cleanup of a device: %v", err)
	}
	tg, err = PrepareTarget(blank, TargetOptions{DestroyDataOn: blank, Size: 1 << 20})
	if err != nil || tg.Size != 1<<20 {
		t.Errorf("--size within the device: %+v, %v", tg, err)
	}
	_, err = PrepareTarget(blank, TargetOptions{DestroyDataOn: blank, Size: 128 << 20})
	wantRefused(t, err, "--size", "larger than")

	ext4 := attach("ext4.img", "mkfs.ext4", "-q", "-F")
	_, err = PrepareTarget(ext4, TargetOptions{DestroyDataOn: ext4})
	wantRefused(t, err, ext4+" holds an ext4 filesystem", "--even-if-formatted")
	if _, err := PrepareTarget(ext4, TargetOptions{DestroyDataOn: ext4, EvenIfFormatted: true}); err != nil {
		t.Errorf("--even-if-formatted: %v", err)
	}

	swap := attach("swap.img", "mkswap", "-q")
	_, err = PrepareTarget(swap, TargetOptions{DestroyDataOn: swap})
	wantRefused(t, err, "swap", "--even-if-formatted")
}

// TestTargetDeviceInUse feeds the guard fixture sysfs and proc trees for a disk with one partition, which is in
// turn mounted, used as swap and held by device-mapper.
func TestTargetDeviceInUse(t *testing.T) {
	needRoot(t)
	dir := realTempDir(t)
	oldSys, oldProc := sysRoot, procRoot
	sysRoot, procRoot = filepath.Join(dir, "sys"), filepath.Join(dir, "proc")
	t.Cleanup(func() { sysRoot, procRoot = oldSys, oldProc })

	// Numbers no real device here uses; the nodes exist only in dir and are never opened.
	disk, part := unix.Mkdev(259, 4000), unix.Mkdev(259, 4001)
	node, partNode := filepath.Join(dir, "vdz"), filepath.Join(dir, "vdz1")
	for n, rdev := range map[string]uint64{node: disk, partNode: part} {
		if err := unix.Mknod(n, unix.S_IFBLK|0o600, int(rdev)); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	devDir := filepath.Join(sysRoot, "devices/virtual/block/vdz")
	write(filepath.Join(devDir, "size"), "131072\n")
	write(filepath.Join(devDir, "vdz1/partition"), "1\n")
	write(filepath.Join(devDir, "vdz1/dev"), "259:4001\n")
	if err := os.MkdirAll(filepath.Join(devDir, "vdz1/holders"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(sysRoot, "dev/block"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(devDir, filepath.Join(sysRoot, "dev/block/259:4000")); err != nil {
		t.Fatal(err)
	}
	const rootMount = "1 0 254:0 / / rw - ext4 /dev/vda rw\n"
	write(filepath.Join(procRoot, "swaps"), "Filename Type Size Used Priority\n")
	o := TargetOptions{DestroyDataOn: node, EvenIfFormatted: true}

	write(filepath.Join(procRoot, "self/mountinfo"), rootMount+"2 1 259:4001 / /mnt/my\\040data rw - xfs /dev/whatever rw\n")
	_, err := PrepareTarget(node, o)
	wantRefused(t, err, "/dev/vdz1 (a partition of "+node+") is mounted on /mnt/my data")

	// btrfs reports an anonymous device number; the mount source still names the partition.
	write(filepath.Join(procRoot, "self/mountinfo"), rootMount+"2 1 0:77 / /srv rw - btrfs "+partNode+" rw\n")
	_, err = PrepareTarget(node, o)
	wantRefused(t, err, "is mounted on /srv")

	write(filepath.Join(procRoot, "self/mountinfo"), rootMount)
	write(filepath.Join(procRoot, "swaps"), "Filename Type Size Used Priority\n"+partNode+" partition 1024 0 -2\n")
	_, err = PrepareTarget(node, o)
	wantRefused(t, err, "/dev/vdz1 (a partition of "+node+") is in use as swap")

	write(filepath.Join(procRoot, "swaps"), "Filename Type Size Used Priority\n")
	write(filepath.Join(devDir, "vdz1/holders/dm-3"), "")
	_, err = PrepareTarget(node, o)
	wantRefused(t, err, "in use by dm-3")

	// Free at last: the whole device, 131072 sectors of 512 bytes.
	os.Remove(filepath.Join(devDir, "vdz1/holders/dm-3"))
	tg, err := PrepareTarget(node, o)
	if err != nil || tg.Size != 64<<20 || tg.Kind != "device" {
		t.Fatalf("free device: %+v, %v", tg, err)
	}
	// Without --even-if-formatted the guard must probe the partition too, and /dev/vdz1 is not its node here.
	_, err = PrepareTarget(node, TargetOptions{DestroyDataOn: node})
	wantRefused(t, err, "--even-if-formatted")

	// A device sysfs does not know (overlayfs and tmpfs report major 0) cannot be vetted, so it is refused.
	sysRoot = filepath.Join(dir, "empty-sys")
	_, err = PrepareTarget(node, o)
	wantRefused(t, err, node, "/dev/block", "cannot tell")
}
