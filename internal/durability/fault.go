package durability

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/internal/server"
)

// The faults a durability test can cause.
const (
	FaultKill    = "kill"    // SIGKILL of the server's main process: a crash
	FaultStop    = "stop"    // immediate shutdown: no checkpoint, recovery from the WAL (MariaDB: a kill)
	FaultRestart = "restart" // fast, clean shutdown and start
	FaultCommand = "command" // the user's command, e.g. a remote power cut
)

// Faults lists the fault kinds.
var Faults = []string{FaultKill, FaultStop, FaultRestart, FaultCommand}

// PostgresSignals are the signals of the faults on a PostgreSQL server
// tierbench does not manage, in PostgreSQL's own meanings: SIGQUIT is an
// immediate shutdown, SIGINT a fast one. Each engine's are in the table of
// engines (internal/engine/all).
var PostgresSignals = map[string]syscall.Signal{FaultKill: syscall.SIGKILL, FaultStop: syscall.SIGQUIT, FaultRestart: syscall.SIGINT}

// MariaDBSignals are MariaDB's: it has no immediate shutdown, so a stop is
// a kill; SIGTERM is its clean shutdown.
var MariaDBSignals = map[string]syscall.Signal{FaultKill: syscall.SIGKILL, FaultStop: syscall.SIGKILL, FaultRestart: syscall.SIGTERM}

// ManagedFault causes a fault on a managed server and recovers by starting
// it again as it last ran (or by RecoverCommand first, when given).
type ManagedFault struct {
	DataDir        string
	Kind           string
	Command        string // for FaultCommand
	RecoverCommand string
	StartTimeout   time.Duration // for the start, crash recovery included
	Output         io.Writer     // the commands' output
	// ColdCache drops the data directory's pages from the page cache once
	// the fault has happened, before recovery starts: the restarted server
	// then reads its WAL and data from the storage, as after a crash of the
	// whole host, rather than from the memory of a host whose server alone
	// died.
	ColdCache bool
}

// Cause implements Fault.
func (f *ManagedFault) Cause(ctx context.Context) error {
	if err := f.cause(ctx); err != nil || !f.ColdCache {
		return err
	}
	if !server.DropCache(f.DataDir) {
		return fmt.Errorf("dropping %s from the page cache failed for some of its files", f.DataDir)
	}
	return nil
}

func (f *ManagedFault) cause(ctx context.Context) error {
	switch f.Kind {
	case FaultKill:
		_, err := server.Signal(ctx, f.DataDir, syscall.SIGKILL)
		return err
	case FaultStop:
		_, err := server.Stop(ctx, f.DataDir, "immediate")
		return err
	case FaultRestart:
		_, err := server.Stop(ctx, f.DataDir, "fast")
		return err
	case FaultCommand:
		return runCommand(ctx, "--fault-command", f.Command, f.Output)
	}
	return fmt.Errorf("unknown fault %q", f.Kind)
}

// Recover implements Fault.
func (f *ManagedFault) Recover(ctx context.Context) error {
	if f.RecoverCommand != "" {
		if err := runCommand(ctx, "--recover-command", f.RecoverCommand, f.Output); err != nil {
			return err
		}
	}
	_, err := server.Restart(ctx, f.DataDir, f.StartTimeout) // a running server is left as it is
	return err
}

// ServerFault causes a fault on a server tierbench does not manage: a
// signal to its main process when it runs on this host (PID, from the
// server), or the user's command. It recovers with RecoverCommand, or by
// waiting for whatever supervises the server to bring it back.
type ServerFault struct {
	// Locate finds the server's main process on this host now (0 when it
	// cannot): a supervisor that restarted the server after the last fault
	// gave it a new PID.
	Locate         func(ctx context.Context) int
	Name           string                    // the engine, in messages
	Signals        map[string]syscall.Signal // the engine's signal for each fault kind
	Kind           string
	Command        string
	RecoverCommand string
	Output         io.Writer
}

// Cause implements Fault.
func (f *ServerFault) Cause(ctx context.Context) error {
	if f.Kind == FaultCommand {
		return runCommand(ctx, "--fault-command", f.Command, f.Output)
	}
	sig, ok := f.Signals[f.Kind]
	if !ok {
		return fmt.Errorf("unknown fault %q", f.Kind)
	}
	pid := 0
	if f.Locate != nil {
		pid = f.Locate(ctx)
	}
	if pid <= 0 {
		return fmt.Errorf("fault %s needs the server's process on this host, and %s's could not be found", f.Kind, f.Name)
	}
	return server.SignalProcess(ctx, pid, sig, f.Name)
}

// Recover implements Fault.
func (f *ServerFault) Recover(ctx context.Context) error {
	if f.RecoverCommand == "" {
		return nil
	}
	return runCommand(ctx, "--recover-command", f.RecoverCommand, f.Output)
}

// runCommand runs a user's shell command; its output goes to out. The
// command line itself is never echoed: it may hold a secret.
func runCommand(ctx context.Context, flag, command string, out io.Writer) error {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the %s failed: %v", flag, err)
	}
	return nil
}
