package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// Signal sends sig to the server whose data directory is dataDir — a
// PostgreSQL postmaster (any on this host whose postmaster.pid tierbench can
// read, managed or not) or a managed MariaDB's mariadbd — and waits until it
// and the processes it had started are gone. It is how the durability test
// causes its faults. SIGKILL is a crash (no shutdown at all) for both
// engines; for PostgreSQL SIGQUIT is an immediate shutdown (no checkpoint:
// the next start recovers from the WAL) and SIGINT a fast, clean one; for
// MariaDB SIGTERM is the clean shutdown.
//
// A killed postmaster's backends notice its death and exit by themselves;
// any still there after a grace period get SIGKILL too, or the next start
// would find their shared memory in use. Signal returns the postmaster's PID.
func Signal(ctx context.Context, dataDir string, sig syscall.Signal) (int, error) {
	dir, err := absDir(dataDir)
	if err != nil {
		return 0, err
	}
	name := engineDisplay(dirEngine(dir))
	pid, _, ok := running(dir)
	if !ok {
		return 0, fmt.Errorf("no %s server runs in %s (no live pid file)", name, dir)
	}
	return pid, SignalProcess(ctx, pid, sig, name+" in "+dir)
}

// SignalProcess is Signal for a server known by its main process's PID
// (name says which server, in messages), for a server tierbench does not
// manage; it waits the same way for its processes to be gone.
func SignalProcess(ctx context.Context, pid int, sig syscall.Signal, name string) error {
	tree, err := telemetry.ProcTree("/proc", pid)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("signalling %s's server process (pid %d): %w", name, pid, err)
	}
	grace := 10 * time.Second
	if sig == syscall.SIGINT || sig == syscall.SIGTERM {
		grace = 10 * time.Minute // a fast shutdown writes a checkpoint first
	}
	if !waitFor(ctx, tree, liveProcess, grace) {
		if sig != syscall.SIGKILL {
			return fmt.Errorf("%s did not stop within %s of %s", name, grace, sig)
		}
		for _, p := range tree {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
	// Dead processes stay zombies until their parent (init, for a
	// daemonized postmaster) reaps them, and PostgreSQL refuses to start
	// while the PID in postmaster.pid exists at all.
	if !waitFor(ctx, tree, processExists, time.Minute) {
		return fmt.Errorf("processes of the stopped %s are still there (or not reaped) after a minute", name)
	}
	return nil
}

// waitFor waits until alive is false for every pid, limit passes or ctx
// ends, and reports whether they all went.
func waitFor(ctx context.Context, pids []int, alive func(int) bool, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		if !slices.ContainsFunc(pids, alive) {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processExists says whether pid exists, zombie or not.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// liveProcess says whether pid exists and is not a zombie.
func liveProcess(pid int) bool {
	pfs, err := procfs.NewDefaultFS()
	if err != nil {
		return processExists(pid) // no /proc: a zombie reads as alive
	}
	return processRuns(pfs, pid, 0)
}

// Restart starts the stopped (or crashed) managed server in dataDir again as
// it last ran: same port, memory, settings and listen address, and inside
// its cgroup when a start with limits made one (ApplyLimits), so that the
// new postmaster, its crash recovery and its backends keep the memory cap
// and the I/O throttle. The start includes crash recovery, so timeout
// should allow for replaying the WAL. The restarted server is meant to
// keep running: the process that crashed it (the durability test) hands it
// back, and `server status` must not call it orphaned once that process
// ends. KeepConfig keeps the port as if asked for, so a start would fail
// rather than move it: the caller goes on with the DSN it had.
func Restart(ctx context.Context, dataDir string, timeout time.Duration) (Info, error) {
	dir, st, err := managed(dataDir) // only a managed directory: Start would make a new one
	if err != nil {
		return Info{}, err
	}
	opts := Options{DataDir: dir, KeepConfig: true, StartTimeout: timeout, KeepRunning: true, Listen: st.Listen}
	if name, err := GroupName(dir); err == nil {
		if g, err := cgroup.Open(name); err == nil && g.Version() > 0 {
			opts.CgroupProcs = g.ProcsFiles()
		}
	}
	return Start(ctx, opts)
}
