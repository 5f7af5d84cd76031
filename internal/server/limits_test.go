package server_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/procfs"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/testenv"
)

func TestDeviceFor(t *testing.T) {
	name, maj, min, err := server.DeviceFor("/")
	if err != nil {
		t.Skipf("skipping: / has no block device here: %v", err)
	}
	b, err := os.ReadFile(filepath.Join("/sys/block", name, "dev"))
	if err != nil {
		t.Fatalf("DeviceFor(/) = %s, which is not a whole disk: %v", name, err)
	}
	if got := strings.TrimSpace(string(b)); got != fmt.Sprintf("%d:%d", maj, min) {
		t.Errorf("DeviceFor(/) = %s %d:%d; /sys/block/%s/dev says %s", name, maj, min, name, got)
	}
	t.Logf("DeviceFor(/) = %s %d:%d", name, maj, min)

	if _, _, _, err := server.DeviceFor("/dev/shm"); err == nil || !strings.Contains(err.Error(), "memory-backed") {
		t.Errorf("DeviceFor(/dev/shm) = %v; want an error saying tmpfs is memory-backed", err)
	}
}

// requireCgroups skips (fails, when CI=true) unless we are root on a
// machine with a memory controller; there, the limits must apply.
func requireCgroups(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t, "placing a server in a cgroup")
	hs, err := cgroup.NewHost("/").Hierarchies()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		for _, c := range h.Controllers {
			if c == "memory" {
				return
			}
		}
	}
	testenv.SkipOrFail(t, "this machine has no memory cgroup controller (%+v)", hs)
}

// inGroup says whether /proc/PID/cgroup places pid in the group.
func inGroup(t *testing.T, pid int, name string) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	return strings.Contains(string(b), "/tierbench/"+name+"\n")
}

func TestApplyLimits(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	requireCgroups(t)
	ctx := testContext(t)
	dataDir := filepath.Join(pgtest.TempDir(t), "data")
	t.Cleanup(func() { server.RemoveLimits(dataDir) }) // after the stop below
	stopAtEnd(t, dataDir)

	info, err := server.Start(ctx, server.Options{DataDir: dataDir, Memory: 512 << 20})
	if err != nil {
		t.Fatal(err)
	}
	dev, maj, min, err := server.DeviceFor(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	lim := cgroup.Limits{MemoryBytes: 512 << 20, IO: []stored.IOLimit{{Major: maj, Minor: min, ReadIOPS: 200}}}
	start := time.Now()
	ap, err := server.ApplyLimits(ctx, dataDir, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ApplyLimits in %v (device %s): %+v", time.Since(start), dev, ap)
	if ap.Version == 0 || ap.MemoryMax != 512<<20 || ap.MemoryNote != "" {
		t.Fatalf("the memory cap did not apply: %+v", ap)
	}
	if ap.IONote != "" && ap.IONote != cgroup.V1WritebackNote || !reflect.DeepEqual(ap.IO, lim.IO) {
		t.Errorf("the read IOPS limit did not apply: %+v", ap)
	}
	file := "memory.max"
	if ap.Version == 1 {
		file = "memory.limit_in_bytes"
	}
	if b, err := os.ReadFile(filepath.Join(ap.Path, file)); err != nil || strings.TrimSpace(string(b)) != "536870912" {
		t.Errorf("%s = %q, %v; want 536870912", filepath.Join(ap.Path, file), b, err)
	}

	name, _ := server.GroupName(dataDir)
	if !inGroup(t, info.PID, name) {
		t.Errorf("the postmaster (pid %d) is not in the group", info.PID)
	}
	procs, err := procfs.AllProcs()
	if err != nil {
		t.Fatal(err)
	}
	children := 0
	for _, p := range procs {
		if st, err := p.Stat(); err == nil && st.PPID == info.PID {
			children++
			if !inGroup(t, p.PID, name) {
				t.Errorf("the postmaster's child %d (%s) is not in the group", p.PID, st.Comm)
			}
		}
	}
	if children == 0 {
		t.Error("the postmaster has no children to check")
	}

	// A backend forked after ApplyLimits is born in the group.
	conn, err := pgx.Connect(ctx, info.DSN)
	if err != nil {
		t.Fatal(err)
	}
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		t.Fatal(err)
	}
	if !inGroup(t, backend, name) {
		t.Errorf("the new backend %d is not in the group", backend)
	}
	conn.Close(ctx)
	t.Logf("postmaster %d, %d children and new backend %d in %s", info.PID, children, backend, ap.Path)

	// Applying again (a restart with other limits) reuses the group.
	if ap2, err := server.ApplyLimits(ctx, dataDir, cgroup.Limits{MemoryBytes: 384 << 20}); err != nil || ap2.MemoryMax != 384<<20 || len(ap2.IO) != 0 || ap2.Path != ap.Path {
		t.Errorf("ApplyLimits again = %+v, %v; want 384MiB, no I/O limit, the same group", ap2, err)
	}

	// A crash and the durability test's restart: the new postmaster, and
	// the backends it forks, are born in the group again.
	if _, err := server.Signal(ctx, dataDir, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	again, err := server.Restart(ctx, dataDir, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if again.PID == info.PID || !inGroup(t, again.PID, name) {
		t.Errorf("the restarted postmaster (pid %d, was %d) is not in the group", again.PID, info.PID)
	}
	conn, err = pgx.Connect(ctx, again.DSN) // kept open while its backend is looked at
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		t.Fatal(err)
	}
	if !inGroup(t, backend, name) {
		t.Errorf("a backend of the restarted server (pid %d) is not in the group", backend)
	}
	conn.Close(ctx)

	if _, err := server.Stop(ctx, dataDir, "fast"); err != nil {
		t.Fatal(err)
	}
	if err := server.RemoveLimits(dataDir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ap.Path); !os.IsNotExist(err) {
		t.Errorf("%s still exists after RemoveLimits: %v", ap.Path, err)
	}
	if err := server.RemoveLimits(dataDir); !errors.Is(err, cgroup.ErrNotFound) {
		t.Errorf("RemoveLimits again = %v; want ErrNotFound", err)
	}
}

func TestApplyLimitsNotRunning(t *testing.T) {
	if _, err := server.ApplyLimits(testContext(t), t.TempDir(), cgroup.Limits{MemoryBytes: 1 << 30}); err == nil ||
		!strings.Contains(err.Error(), "no managed server is running") {
		t.Errorf("ApplyLimits without a server = %v", err)
	}
}

// cgroupOf is pid's path in one hierarchy of /proc/PID/cgroup ("memory",
// "blkio"; "" for v2).
func cgroupOf(t *testing.T, pid int, hierarchy string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.SplitN(line, ":", 3); len(f) == 3 && f[1] == hierarchy {
			return f[2]
		}
	}
	return ""
}

// Two managed servers on one emulated tier share its I/O budget: both
// postmasters are in the tier's blkio/io group, whose files hold the
// throttle, each in a memory group of its own with its own cap.
func TestApplyLimitsSharedTier(t *testing.T) {
	pgtest.RequireBinaries(t)
	requireCgroups(t)
	ctx := testContext(t)
	tierName := fmt.Sprintf("tier-test-%d", os.Getpid())
	t.Cleanup(func() {
		if g, err := cgroup.Open(tierName); err == nil {
			g.Remove()
		}
	})
	caps := []int64{256 << 20, 384 << 20}
	var dirs []string
	var aps []stored.Applied
	var pids []int
	for i := range 2 {
		dataDir := filepath.Join(pgtest.TempDir(t), "data")
		t.Cleanup(func() { server.RemoveLimits(dataDir) }) // after the stop below
		stopAtEnd(t, dataDir)
		info, err := server.Start(ctx, server.Options{DataDir: dataDir, Memory: caps[i]})
		if err != nil {
			t.Fatal(err)
		}
		_, maj, min, err := server.DeviceFor(dataDir)
		if err != nil {
			t.Fatal(err)
		}
		lim := cgroup.Limits{MemoryBytes: caps[i], IO: []stored.IOLimit{{Major: maj, Minor: min, ReadIOPS: 500, WriteIOPS: 500}}, IOGroup: tierName}
		ap, err := server.ApplyLimits(ctx, dataDir, lim)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("server %d: %+v", i+1, ap)
		if ap.Version == 0 || ap.MemoryMax != caps[i] || !ap.IOShared || filepath.Base(ap.IOPath) != tierName || !reflect.DeepEqual(ap.IO, lim.IO) {
			t.Fatalf("ApplyLimits = %+v; want the server's own memory cap and the tier's shared I/O limit", ap)
		}
		dirs, aps, pids = append(dirs, dataDir), append(aps, ap), append(pids, info.PID)
	}
	if aps[0].IOPath != aps[1].IOPath || aps[0].Path == aps[1].Path {
		t.Fatalf("I/O groups %s and %s, memory groups %s and %s; want one I/O group, two memory groups",
			aps[0].IOPath, aps[1].IOPath, aps[0].Path, aps[1].Path)
	}
	tierDir := aps[0].IOPath
	throttle, limit := "blkio.throttle.read_iops_device", fmt.Sprintf("%d:%d 500", aps[0].IO[0].Major, aps[0].IO[0].Minor)
	memFile := "memory.limit_in_bytes"
	if aps[0].Version == 2 {
		throttle, limit = "io.max", fmt.Sprintf("%d:%d rbps=max wbps=max riops=500 wiops=500", aps[0].IO[0].Major, aps[0].IO[0].Minor)
		memFile = "memory.max"
	}
	if b, err := os.ReadFile(filepath.Join(tierDir, throttle)); err != nil || strings.TrimSpace(string(b)) != limit {
		t.Errorf("%s = %q, %v; want %q", filepath.Join(tierDir, throttle), b, err, limit)
	}
	for i, pid := range pids {
		if b, err := os.ReadFile(filepath.Join(aps[i].Path, memFile)); err != nil || strings.TrimSpace(string(b)) != fmt.Sprint(caps[i]) {
			t.Errorf("server %d: %s = %q, %v; want %d", i+1, filepath.Join(aps[i].Path, memFile), b, err, caps[i])
		}
		own, _ := server.GroupName(dirs[i])
		if aps[i].Version == 2 {
			if got, want := cgroupOf(t, pid, ""), "/tierbench/"+tierName+"/"+own; !strings.HasSuffix(got, want) {
				t.Errorf("postmaster %d is in %s; want …%s", pid, got, want)
			}
			continue
		}
		if got := cgroupOf(t, pid, "blkio"); !strings.HasSuffix(got, "/tierbench/"+tierName) {
			t.Errorf("postmaster %d is in blkio:%s; want the tier's group", pid, got)
		}
		if got := cgroupOf(t, pid, "memory"); !strings.HasSuffix(got, "/tierbench/"+own) {
			t.Errorf("postmaster %d is in memory:%s; want its own group %s", pid, got, own)
		}
	}

	// The first server stops: its group goes, the tier stays for the second.
	if _, err := server.Stop(ctx, dirs[0], "fast"); err != nil {
		t.Fatal(err)
	}
	if err := server.RemoveLimits(dirs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(aps[0].Path); !os.IsNotExist(err) {
		t.Errorf("%s still exists after RemoveLimits: %v", aps[0].Path, err)
	}
	if _, err := os.Stat(tierDir); err != nil {
		t.Fatalf("the tier's group went with the first server: %v", err)
	}
	if got := cgroupOf(t, pids[1], map[int]string{1: "blkio", 2: ""}[aps[1].Version]); !strings.Contains(got, "/tierbench/"+tierName) {
		t.Errorf("the second postmaster left the tier: %s", got)
	}
}
