package server_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/procfs"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
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

// requireCgroups skips unless we are root on a machine with a memory
// controller; there, the limits must apply.
func requireCgroups(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: placing a server in a cgroup needs root")
	}
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
	t.Skipf("skipping: this machine has no memory cgroup controller (%+v)", hs)
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
	lim := cgroup.Limits{MemoryBytes: 512 << 20, IO: []cgroup.IOLimit{{Major: maj, Minor: min, ReadIOPS: 200}}}
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
