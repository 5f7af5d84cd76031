package backup

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a tool has to exit after SIGTERM before it is killed.
const stopGrace = 15 * time.Second

// isExecutable says whether p is a regular file someone may execute.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// runGroup runs cmd to its end in "/" and returns the last of what it
// printed. It runs in a process group of its own (pg_basebackup forks a WAL
// streamer, pg_dump -j its workers, find its cp and sync): when ctx ends,
// the group gets SIGTERM, then SIGKILL after stopGrace. Credentials cmd
// carries (a tool run as the server's user) are kept.
func runGroup(ctx context.Context, cmd *exec.Cmd) (string, error) {
	cmd.Dir = "/"
	var out tailBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
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
