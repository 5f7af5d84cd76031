package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/server"
)

// stopGrace is how long a tool has to exit after SIGTERM before it is killed.
const stopGrace = 15 * time.Second

// findTool locates a PostgreSQL client program: in pgBin when given; else
// beside the server's binaries (server.FindBinaries: a matching version),
// else on PATH.
func findTool(pgBin, name string) (string, error) {
	if pgBin != "" {
		p := filepath.Join(pgBin, name)
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s is not in --pg-bin %s; install it with `apt-get install postgresql-client` (or the PostgreSQL server package)", name, pgBin)
	}
	var looked []string
	if b, err := server.FindBinaries(""); err == nil {
		p := filepath.Join(b.Dir, name)
		if isExecutable(p) {
			return p, nil
		}
		looked = append(looked, b.Dir)
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	looked = append(looked, "PATH")
	return "", fmt.Errorf("%s not found (looked in %s); install it with `apt-get install postgresql-client` (or the PostgreSQL server package), or pass --pg-bin DIR",
		name, strings.Join(looked, " and "))
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// runTool runs a PostgreSQL client program to its end, inside the cgroups of
// procs from its first I/O when there are any (cgroup.Command). The password
// reaches it as PGPASSWORD, never on the command line; our own PG* variables
// are left out so they cannot steer it. A failure carries the last lines the
// tool printed.
func runTool(ctx context.Context, procs []string, path string, args []string, password string) error {
	cmd := cgroup.Command(ctx, procs, path, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PGAPPNAME=tierbench-backup", "PGCONNECT_TIMEOUT=30")
	if password != "" {
		cmd.Env = append(cmd.Env, "PGPASSWORD="+password)
	}
	out, err := runGroup(ctx, cmd)
	if err == nil {
		return nil
	}
	name := filepath.Base(path)
	msg := strings.TrimSpace(out)
	if password != "" {
		msg = strings.ReplaceAll(msg, password, "xxxxx")
	}
	msg = lastLines(msg, 4)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return fmt.Errorf("%s: %w", name, err)
	}
	hint := ""
	if strings.Contains(msg, "pg_hba.conf") && strings.Contains(msg, "replication") {
		hint = "; pg_basebackup needs a replication entry in pg_hba.conf: a managed server started by an older tierbench gets one when restarted (tierbench server stop, then start)"
	}
	return fmt.Errorf("%s failed (%v): %s%s", name, err, msg, hint)
}

// runGroup runs cmd to its end in "/" and returns the last of what it
// printed. It runs in a process group of its own (pg_basebackup forks a WAL
// streamer, pg_dump -j its workers, find its cp and sync): when ctx ends,
// the group gets SIGTERM, then SIGKILL after stopGrace.
func runGroup(ctx context.Context, cmd *exec.Cmd) (string, error) {
	cmd.Dir = "/"
	var out tailBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	err := cmd.Run()
	if ctx.Err() != nil && cmd.Process != nil {
		// Whatever of the group outlived the grace period (ESRCH when none did).
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return out.String(), err
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// tailBuffer keeps the last 8 KiB written to it: enough for a tool's last
// words, bounded whatever it prints.
type tailBuffer struct{ b []byte }

const tailMax = 8 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > tailMax {
		t.b = append(t.b[:0], t.b[len(t.b)-tailMax:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(bytes.ToValidUTF8(t.b, []byte("?"))) }
