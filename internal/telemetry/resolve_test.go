package telemetry

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/systree"
	"github.com/tierbench/tierbench/internal/testenv"
)

func requireRoot(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t, "devices, mounts and block tracing")
}

func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.SkipOrFail(t, "needs %s: %v", tool, err)
		}
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// useFixture points sysRoot and procRoot at testdata/<name>: proc/ as it is,
// sys/ written out from sys.txt into a temp dir.
func useFixture(t *testing.T, name string) {
	t.Helper()
	proc, err := filepath.Abs(filepath.Join("testdata", name, "proc"))
	if err != nil {
		t.Fatal(err)
	}
	sys := systree.Build(t, filepath.Join("testdata", name, "sys.txt"))
	oldSys, oldProc := sysRoot, procRoot
	sysRoot, procRoot = sys, proc
	t.Cleanup(func() { sysRoot, procRoot = oldSys, oldProc })
}

func TestResolveFixtures(t *testing.T) {
	cases := []struct {
		fixture      string
		path         string
		major, minor uint32
		want         Resolution
		wantNote     bool
	}{
		{
			fixture: "resolve-partition", path: "/srv/my data/db/base", major: 8, minor: 1,
			want: Resolution{Mount: "/srv/my data", FSType: "xfs", Source: "/dev/sda1",
				Devices: []string{"sda1", "sda"}, Leaves: []string{"sda"}},
		},
		{
			// "/srv/my data/subway" is not under the "/srv/my data/sub" mount.
			fixture: "resolve-partition", path: "/srv/my data/subway", major: 8, minor: 1,
			want: Resolution{Mount: "/srv/my data", FSType: "xfs", Source: "/dev/sda1",
				Devices: []string{"sda1", "sda"}, Leaves: []string{"sda"}},
		},
		{
			// A bind mount of the same device: the longest matching prefix wins.
			fixture: "resolve-partition", path: "/bind/x", major: 8, minor: 1,
			want: Resolution{Mount: "/bind", FSType: "xfs", Source: "/dev/sda1",
				Devices: []string{"sda1", "sda"}, Leaves: []string{"sda"}},
		},
		{
			fixture: "resolve-partition", path: "/home/u", major: 8, minor: 2,
			want: Resolution{Mount: "/", FSType: "ext4", Source: "/dev/sda2",
				Devices: []string{"sda2", "sda"}, Leaves: []string{"sda"}},
		},
		{
			fixture: "resolve-partition", path: "/run/db", major: 0, minor: 25,
			want: Resolution{Mount: "/run", FSType: "tmpfs", Source: "tmpfs", MemoryBacked: true,
				Devices: []string{}, Leaves: []string{}},
			wantNote: true,
		},
		{
			fixture: "resolve-partition", path: "/mnt/nfs/db", major: 0, minor: 50,
			want: Resolution{Mount: "/mnt/nfs", FSType: "nfs4", Source: "fileserver:/export",
				Devices: []string{}, Leaves: []string{}},
			wantNote: true,
		},
		{
			fixture: "resolve-dm", path: "/var/lib/postgresql/16/main", major: 253, minor: 0,
			want: Resolution{Mount: "/var/lib/postgresql", FSType: "xfs", Source: "/dev/mapper/vg-data",
				Devices: []string{"dm-0", "sda", "sdb1", "sdb"}, Leaves: []string{"sda", "sdb"}},
		},
		{
			// dm-1 and dm-2 name each other as slaves: the walk must stop.
			fixture: "resolve-dm", path: "/mnt/broken/x", major: 253, minor: 1,
			want: Resolution{Mount: "/mnt/broken", FSType: "ext4", Source: "/dev/mapper/broken",
				Devices: []string{"dm-1", "dm-2"}, Leaves: []string{}},
			wantNote: true,
		},
		{
			fixture: "resolve-btrfs", path: "/data/pg", major: 0, minor: 45,
			want: Resolution{Mount: "/data", FSType: "btrfs", Source: "/dev/nvme0n1p2",
				Devices: []string{"nvme0n1p2", "nvme0n1"}, Leaves: []string{"nvme0n1"}},
		},
		{
			// A subvolume has its own anonymous device that no mountinfo line names.
			fixture: "resolve-btrfs", path: "/data/pg/sub", major: 0, minor: 47,
			want: Resolution{Mount: "/data", FSType: "btrfs", Source: "/dev/nvme0n1p2",
				Devices: []string{"nvme0n1p2", "nvme0n1"}, Leaves: []string{"nvme0n1"}},
		},
	}
	for _, c := range cases {
		t.Run(c.fixture+c.path, func(t *testing.T) {
			useFixture(t, c.fixture)
			r := resolver{active: map[string]bool{}}
			got, err := r.at(c.path, c.path, unix.Mkdev(c.major, c.minor), false)
			if err != nil {
				t.Fatal(err)
			}
			if (got.Note != "") != c.wantNote {
				t.Errorf("note = %q, want note: %v", got.Note, c.wantNote)
			}
			c.want.Path, c.want.Note = c.path, got.Note
			if !resolutionEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestResolveFixtureBlockDevice(t *testing.T) {
	useFixture(t, "resolve-dm")
	r := resolver{active: map[string]bool{}}
	got, err := r.at("/dev/sdb1", "/dev/sdb1", unix.Mkdev(8, 17), true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"sdb1", "sdb"}; !slices.Equal(got.Devices, want) {
		t.Errorf("devices = %v, want %v", got.Devices, want)
	}
	if want := []string{"sdb"}; !slices.Equal(got.Leaves, want) {
		t.Errorf("leaves = %v, want %v", got.Leaves, want)
	}
}

func TestResolveFixtureMissingDevice(t *testing.T) {
	useFixture(t, "resolve-partition")
	r := resolver{active: map[string]bool{}}
	got, err := r.at("/srv/my data/x", "/srv/my data/x", unix.Mkdev(8, 99), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Leaves) != 0 || !strings.Contains(got.Note, "not found in sysfs") {
		t.Errorf("got %+v, want no leaves and a not-found note", got)
	}
}

func resolutionEqual(a, b Resolution) bool {
	return a.Path == b.Path && a.Mount == b.Mount && a.FSType == b.FSType && a.Source == b.Source &&
		a.MemoryBacked == b.MemoryBacked && a.Note == b.Note &&
		slices.Equal(a.Devices, b.Devices) && slices.Equal(a.Leaves, b.Leaves)
}

// realDiskDir is a directory on a real block device: t.TempDir(), unless the
// temp dir is memory-backed here, then the package source directory.
func realDiskDir(t *testing.T) (string, Resolution) {
	t.Helper()
	dir := t.TempDir()
	res, err := ResolvePath(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.MemoryBacked {
		if dir, err = os.Getwd(); err != nil {
			t.Fatal(err)
		}
		if res, err = ResolvePath(dir); err != nil {
			t.Fatal(err)
		}
	}
	return dir, res
}

func TestResolvePathRealDir(t *testing.T) {
	dir, res := realDiskDir(t)
	t.Logf("%s: %+v", dir, res)
	if len(res.Leaves) == 0 {
		t.Fatalf("%s resolved to no leaves: %+v", dir, res)
	}
	if res.Mount == "" || res.FSType == "" {
		t.Errorf("mount or fstype missing: %+v", res)
	}

	// A path that does not exist yet resolves through its parent.
	notYet, err := ResolvePath(filepath.Join(dir, "not", "yet"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(notYet.Leaves, res.Leaves) || notYet.Mount != res.Mount {
		t.Errorf("nonexistent child resolved to %+v, want the parent's %+v", notYet, res)
	}

	// The leaf's device node, where /dev has it, resolves to itself.
	node := "/dev/" + res.Leaves[0]
	if _, err := os.Stat(node); err == nil {
		dev, err := ResolvePath(node)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(dev.Devices, []string{res.Leaves[0]}) || !slices.Equal(dev.Leaves, []string{res.Leaves[0]}) {
			t.Errorf("%s resolved to %+v", node, dev)
		}
	}
}

func TestResolvePathTmpfs(t *testing.T) {
	var dir string
	if os.Geteuid() == 0 {
		requireTools(t, "mount", "umount")
		dir = t.TempDir()
		run(t, "mount", "-t", "tmpfs", "-o", "size=1m", "tierbench-test", dir)
		t.Cleanup(func() { exec.Command("umount", dir).Run() })
	} else if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		dir = "/dev/shm"
	} else {
		testenv.SkipOrFail(t, "needs root to mount a tmpfs, and there is no /dev/shm")
	}
	res, err := ResolvePath(filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.MemoryBacked || len(res.Devices) != 0 || len(res.Leaves) != 0 || res.Note == "" {
		t.Errorf("got %+v, want memory-backed with no devices and a note", res)
	}
	if os.Geteuid() == 0 && (res.Mount != dir || res.FSType != "tmpfs") {
		t.Errorf("mount = %q (%s), want %q (tmpfs)", res.Mount, res.FSType, dir)
	}
}

func TestResolvePathLoop(t *testing.T) {
	requireRoot(t)
	requireTools(t, "mkfs.ext4", "losetup", "mount", "umount")
	imgDir, imgRes := realDiskDir(t)
	if len(imgRes.Leaves) == 0 {
		t.Fatalf("no disk-backed directory for the image: %s resolved to %+v", imgDir, imgRes)
	}

	img, err := os.CreateTemp(imgDir, "tierbench-loop-*.img")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(img.Name()) })
	if err := img.Truncate(32 << 20); err != nil {
		t.Fatal(err)
	}
	img.Close()
	run(t, "mkfs.ext4", "-q", "-F", img.Name())
	loopDev := run(t, "losetup", "--find", "--show", img.Name())
	t.Cleanup(func() { exec.Command("losetup", "-d", loopDev).Run() })
	mnt := t.TempDir()
	run(t, "mount", loopDev, mnt)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", mnt, err, out)
		}
	})
	file := filepath.Join(mnt, "data")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	res, err := ResolvePath(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	loopName := filepath.Base(loopDev)
	wantDevices := append([]string{loopName}, imgRes.Devices...)
	if !slices.Equal(res.Devices, wantDevices) {
		t.Errorf("devices = %v, want %v", res.Devices, wantDevices)
	}
	if !slices.Equal(res.Leaves, imgRes.Leaves) || len(res.Leaves) == 0 {
		t.Errorf("leaves = %v, want the image's disk %v", res.Leaves, imgRes.Leaves)
	}
	if res.Mount != mnt || res.FSType != "ext4" || res.Source != loopDev {
		t.Errorf("mount = %q %q %q, want %q ext4 %q", res.Mount, res.FSType, res.Source, mnt, loopDev)
	}
}

func TestResolvePathErrors(t *testing.T) {
	useFixture(t, "resolve-partition")
	procRoot = filepath.Join(t.TempDir(), "absent")
	if _, err := ResolvePath(t.TempDir()); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unreadable mountinfo: err = %v, want not-exist", err)
	}
}

// A mountinfo line's options are the per-mount ones, then the superblock's
// not already said; escaped paths are unescaped.
func TestParseMountinfoOptions(t *testing.T) {
	m, ok := parseMountinfoLine(`36 35 98:0 /mnt1 /mnt\0402 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`)
	if !ok || m.point != "/mnt 2" || m.options != "rw,noatime,errors=continue" || m.fstype != "ext3" {
		t.Errorf("parseMountinfoLine = %+v, %v", m, ok)
	}
}
