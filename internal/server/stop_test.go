package server

// Tests of Stop's fallback from a hung fast or smart shutdown to an
// immediate one, on real servers. They are internal tests so that they can
// give stop short waits; pgtest and mariatest import this package, so
// requireEngine and worldTempDir below are their RequireBinaries and TempDir.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tierbench/tierbench/internal/testenv"
)

// shortWaits make a hung shutdown fall back after three seconds without
// progress (the limits stay long: the stall must be what triggers it).
var shortWaits = stopWaits{stall: 3 * time.Second, limit: 10 * time.Minute, immediate: 10 * time.Minute}

// requireEngine skips the test without the engine's server binaries, or
// fails it when CI=true: CI must never pass by skipping.
func requireEngine(t *testing.T, engine string) {
	t.Helper()
	var err error
	if engine == EngineMariaDB {
		_, err = FindMariaDB()
	} else {
		_, err = FindBinaries("")
	}
	if err == nil {
		return
	}
	testenv.SkipOrFail(t, "%s: %v", engineDisplay(engine), err)
}

// startForStop starts a managed server of engine in a new directory that
// the unprivileged server user can enter, stopped (immediately) and removed
// when the test ends.
func startForStop(t *testing.T, ctx context.Context, engine string) (string, Info) {
	t.Helper()
	requireEngine(t, engine)
	top, err := os.MkdirTemp("", "tierbench-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(top, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(top, "data")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		Stop(ctx, dir, "immediate")
		os.RemoveAll(top)
	})
	info, err := Start(ctx, Options{Engine: engine, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return dir, info
}

// assertFellBack checks that stop reported a fallback to an immediate
// shutdown and that the server is gone, its main process with it.
func assertFellBack(t *testing.T, ctx context.Context, dir string, info Info, mode string, r StopResult, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("stop %s: %v", mode, err)
	}
	if !r.WasRunning || r.Mode != "immediate" || !strings.Contains(r.Fallback, "the "+mode+" shutdown of") {
		t.Errorf("stop %s = %+v; want a fallback to immediate reported", mode, r)
	}
	s, err := Status(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Running {
		t.Errorf("the server still runs after stop %s: %+v", mode, s)
	}
	if liveProcess(info.PID) {
		t.Errorf("the server's main process %d is still alive after stop %s", info.PID, mode)
	}
	log, err := os.ReadFile(filepath.Join(dir, LogFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "tierbench: "+r.Fallback) {
		t.Errorf("the server log does not note the fallback %q; it ends: %s", r.Fallback, lastLines(string(log), 5))
	}
}

// pgSession opens a session on the server and returns its backend's PID;
// the session stays open until the test ends.
func pgSession(t *testing.T, ctx context.Context, dsn string) int {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn.Close(ctx)
	})
	var pid int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestStopFastFallsBackToImmediate hangs a fast shutdown the way a stuck
// backend does: a backend stopped with SIGSTOP never acts on the SIGTERM a
// fast shutdown sends it, and the postmaster waits for it forever. The
// immediate shutdown Stop falls back to still works: the postmaster sends
// SIGQUIT and, when a child does not go, SIGKILL.
func TestStopFastFallsBackToImmediate(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, info := startForStop(t, ctx, EnginePostgres)
	backend := pgSession(t, ctx, info.DSN)
	if err := syscall.Kill(backend, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}

	r, err := stop(ctx, dir, "fast", shortWaits)
	assertFellBack(t, ctx, dir, info, "fast", r, err)
	if liveProcess(backend) {
		t.Errorf("the stopped backend %d survived the immediate shutdown", backend)
	}
	log, _ := os.ReadFile(filepath.Join(dir, LogFile))
	for _, want := range []string{"received fast shutdown request", "received immediate shutdown request"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the server log lacks %q; it ends: %s", want, lastLines(string(log), 8))
		}
	}

	// It starts again (recovering), and a fast stop that does not hang
	// stays a fast one.
	info, err = Start(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	r, err = stop(ctx, dir, "fast", shortWaits)
	if err != nil || !r.WasRunning || r.Mode != "fast" || r.Fallback != "" {
		t.Errorf("stop fast of a healthy server = %+v, %v; want a plain fast shutdown", r, err)
	}
	if liveProcess(info.PID) {
		t.Errorf("the postmaster %d is still alive", info.PID)
	}
}

// TestStopSmartFallsBackToImmediate: a smart shutdown waits for the
// sessions to end, so an open one hangs it.
func TestStopSmartFallsBackToImmediate(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, info := startForStop(t, ctx, EnginePostgres)
	backend := pgSession(t, ctx, info.DSN)

	r, err := stop(ctx, dir, "smart", shortWaits)
	assertFellBack(t, ctx, dir, info, "smart", r, err)
	if liveProcess(backend) {
		t.Errorf("the session's backend %d survived the immediate shutdown", backend)
	}
}

// TestMariaDBStopFastFallsBackToKill: a mariadbd that does not act on
// SIGTERM (stopped here with SIGSTOP) is killed once its shutdown stalls.
func TestMariaDBStopFastFallsBackToKill(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, info := startForStop(t, ctx, EngineMariaDB)
	if err := syscall.Kill(info.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}

	r, err := stop(ctx, dir, "fast", shortWaits)
	assertFellBack(t, ctx, dir, info, "fast", r, err)
	if processExists(info.PID) {
		t.Errorf("mariadbd %d is still there after the kill", info.PID)
	}
}
