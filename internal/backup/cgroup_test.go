package backup_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/backup"
	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/internal/tier"
)

// ioBytes reads what the group's processes read and wrote on device maj:min:
// v1 blkio.throttle.io_service_bytes, v2 io.stat.
func ioBytes(t *testing.T, dir string, version int, maj, min uint32) (read, written int64) {
	t.Helper()
	dev := fmt.Sprintf("%d:%d", maj, min)
	file := "blkio.throttle.io_service_bytes"
	if version == 2 {
		file = "io.stat"
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s: %q is not a number", file, s)
		}
		return n
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != dev {
			continue
		}
		if version == 2 { // MAJ:MIN rbytes=N wbytes=N rios=N …
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "rbytes":
					read = num(v)
				case "wbytes":
					written = num(v)
				}
			}
			continue
		}
		switch f[1] { // MAJ:MIN Read N, MAJ:MIN Write N, …
		case "Read":
			read = num(f[2])
		case "Write":
			written = num(f[2])
		}
	}
	return read, written
}

// A physical backup cycle with CgroupProcs does its I/O inside the group:
// the group's own byte counters on the target's device account for
// pg_basebackup writing (and syncing) the backup, and for the restore
// reading it and writing (and syncing) its copy; the restored postmaster
// runs in the group. The group's limits are far above what the test moves:
// it measures who did the I/O, not how fast.
func TestBackupCycleInGroup(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "placing processes in a cgroup needs root")
	}
	ctx := testContext(t)
	dataDir, dsn := startSource(t, ctx)
	base := filepath.Dir(dataDir) // world-searchable: the restored copy's user walks through it

	// The target's device. Not a block device (tmpfs): an ext4 image on a
	// loop device, as an emulated tier has.
	target := filepath.Join(base, "backups")
	dev, maj, min, err := server.DeviceFor(base)
	if err != nil {
		t.Logf("%v: the backups go to a loop-backed image", err)
		im, err := tier.Create(ctx, base, "backup-test", 512<<20)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := im.Remove(context.Background()); err != nil {
				t.Errorf("removing the image: %v", err)
			}
		})
		target = filepath.Join(im.MountPoint, "backups")
		if dev, maj, min, err = server.DeviceFor(im.MountPoint); err != nil {
			t.Fatal(err)
		}
	}

	name := fmt.Sprintf("test-backup-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	const fast = 10e9 // bytes/s: a limit, so the device is the group's, that never holds anything back
	g, ap, err := cgroup.Create(name, cgroup.Limits{IO: []stored.IOLimit{{Major: maj, Minor: min, ReadBPS: fast, WriteBPS: fast}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Errorf("removing the group: %v", err)
		}
	})
	if len(ap.IO) == 0 {
		testenv.SkipOrFail(t, "no blkio/io cgroup controller to count the group's I/O: %s", ap.IONote)
	}
	statDir := ap.IOPath
	if statDir == "" {
		statDir = ap.Path
	}
	t.Logf("device %s (%d:%d), cgroup v%d, counters in %s", dev, maj, min, ap.Version, statDir)

	var restoredIn string // the restored postmaster's cgroups
	o := backup.Options{DSN: dsn, DataDir: dataDir, Target: target, CgroupProcs: g.ProcsFiles(),
		Verify: func(ctx context.Context, dsn string) error {
			pid, err := os.ReadFile(filepath.Join(target, "restore-1", "postmaster.pid"))
			if err != nil {
				return err
			}
			b, err := os.ReadFile("/proc/" + strings.TrimSpace(strings.SplitN(string(pid), "\n", 2)[0]) + "/cgroup")
			restoredIn = string(b)
			return err
		}}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backup.Cleanup(context.Background(), target, false) })
	r0, w0 := ioBytes(t, statDir, ap.Version, maj, min)
	b, dir, err := backup.Backup(ctx, o, 1)
	if err != nil {
		t.Fatal(err)
	}
	r1, w1 := ioBytes(t, statDir, ap.Version, maj, min)
	r, err := backup.Restore(ctx, o, 1, dir)
	if err != nil {
		t.Fatal(err)
	}
	r2, w2 := ioBytes(t, statDir, ap.Version, maj, min)
	mb := func(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
	t.Logf("backup of %s in %.2fs: the group read %s, wrote %s; restore in %.2fs: read %s, wrote %s",
		mb(b.Bytes), b.Seconds, mb(r1-r0), mb(w1-w0), r.Seconds, mb(r2-r1), mb(w2-w1))

	// pg_basebackup's reads are the source server's (outside the group), its
	// writes its own; the restore reads the backup (dropped from the page
	// cache first) and writes the copy. Half the backup's size is "most of
	// it" with room for what the kernel flushed on its own first (v1).
	half := b.Bytes / 2
	if b.Bytes < 10<<20 {
		t.Fatalf("a backup of %d bytes is too small to tell", b.Bytes)
	}
	if w1-w0 < half {
		t.Errorf("the backup wrote %s inside the group; want at least half the backup's %s", mb(w1-w0), mb(b.Bytes))
	}
	if r2-r1 < half {
		t.Errorf("the restore read %s inside the group; want at least half the backup's %s", mb(r2-r1), mb(b.Bytes))
	}
	if w2-w1 < half {
		t.Errorf("the restore wrote %s inside the group; want at least half the backup's %s", mb(w2-w1), mb(b.Bytes))
	}
	if want := "/tierbench/" + name + "\n"; !strings.Contains(restoredIn, want) {
		t.Errorf("the restored postmaster is not in the group; its /proc/PID/cgroup:\n%s", restoredIn)
	}
}
