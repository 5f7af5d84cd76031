package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// GroupName is the cgroup of the managed server in dataDir: "server-" and the
// first 12 hex digits of the SHA-256 of the directory's absolute path, so a
// later `server stop` (another process) finds it from the directory alone.
func GroupName(dataDir string) (string, error) {
	dir, err := absDir(dataDir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(dir))
	return "server-" + hex.EncodeToString(sum[:6]), nil
}

// ApplyLimits places the running managed server of dataDir — the postmaster
// and every process of its tree — into the cgroup GroupName(dataDir) with the
// given limits, so the backends it forks later inherit them. What the machine
// cannot apply is not an error: the returned Applied says why in its notes
// (Version 0: no group at all). Memory the server touched before the move
// stays charged where it was; everything after counts against the cap.
//
// With lim.IOGroup (an emulated tier's group), the I/O limits are that
// group's, one budget shared by every server placed in it, while the memory
// cap stays the server's own (cgroup.Limits.IOGroup); Applied.IOShared says
// so.
func ApplyLimits(ctx context.Context, dataDir string, lim cgroup.Limits) (stored.Applied, error) {
	dir, err := absDir(dataDir)
	if err != nil {
		return stored.Applied{}, err
	}
	pid, _, ok := running(dir)
	if !ok {
		return stored.Applied{}, fmt.Errorf("no managed server is running in %s", dir)
	}
	name, err := GroupName(dir)
	if err != nil {
		return stored.Applied{}, err
	}
	g, applied, err := cgroup.Create(name, lim)
	if err != nil || g.Version() == 0 {
		return applied, err
	}
	// The postmaster first: whatever it forks from then on is born inside.
	// Then its tree, again until a pass finds no process it had not moved
	// (a child forked by a child between the scan and the move).
	if err := g.Add(pid); err != nil {
		return applied, fmt.Errorf("placing PostgreSQL (pid %d) in cgroup %s: %w", pid, applied.Path, err)
	}
	moved := map[int]bool{pid: true}
	for range 5 {
		if err := ctx.Err(); err != nil {
			return applied, err
		}
		tree, err := telemetry.ProcTree("/proc", pid)
		if err != nil {
			return applied, err
		}
		fresh := 0
		for _, p := range tree {
			if moved[p] {
				continue
			}
			moved[p] = true
			fresh++
			if err := g.Add(p); err != nil && !errors.Is(err, syscall.ESRCH) { // ESRCH: it exited meanwhile
				return applied, fmt.Errorf("placing PostgreSQL's process %d in cgroup %s: %w", p, applied.Path, err)
			}
		}
		if fresh == 0 {
			break
		}
	}
	return applied, nil
}

// RemoveLimits removes the managed server's cgroup; call it after Stop (a
// process still inside goes back to the group's parent). No group: an error
// wrapping cgroup.ErrNotFound. A shared I/O group the server drew from stays
// for the other servers in it: whoever named it removes it.
func RemoveLimits(dataDir string) error {
	name, err := GroupName(dataDir)
	if err != nil {
		return err
	}
	g, err := cgroup.Open(name)
	if err != nil {
		return err
	}
	return g.Remove()
}

// DeviceFor returns the block device to throttle for path: the first device
// of telemetry.ResolvePath(path).Devices that is a whole disk (it has
// /sys/block/NAME, so not a partition) — loop0 for a file system on a loop
// image, vda for vda1, dm-0 for LVM. Throttles act on the device the file
// system submits to, which is the topmost whole one.
func DeviceFor(path string) (name string, major, minor uint32, err error) {
	res, err := telemetry.ResolvePath(path)
	if err != nil {
		return "", 0, 0, err
	}
	return deviceFor("/sys", res)
}

func deviceFor(sysRoot string, res telemetry.Resolution) (string, uint32, uint32, error) {
	for _, d := range res.Devices {
		b, err := os.ReadFile(filepath.Join(sysRoot, "block", d, "dev"))
		if err != nil {
			continue
		}
		var maj, min uint32
		if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "%d:%d", &maj, &min); err != nil {
			return "", 0, 0, fmt.Errorf("%s: malformed device number %q", filepath.Join(sysRoot, "block", d, "dev"), b)
		}
		return d, maj, min, nil
	}
	why := res.Note
	if why == "" {
		why = fmt.Sprintf("none of %v is a whole disk", res.Devices)
	}
	return "", 0, 0, fmt.Errorf("no block device to throttle for %s: %s", res.Path, why)
}
