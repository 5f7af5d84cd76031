package fio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// fioChild returns the PID of the first child of fio's process pid, or 0.
func fioChild(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	c, _ := strconv.Atoi(f[0])
	return c
}

// parents maps each process whose command line match accepts to its
// parent's PID.
func parents(t *testing.T, match func(cmd []string) bool) map[int]int {
	t.Helper()
	procs, err := procfs.AllProcs()
	if err != nil {
		t.Fatal(err)
	}
	parent := map[int]int{}
	for _, p := range procs {
		if cmd, _ := p.CmdLine(); match(cmd) {
			if st, err := p.Stat(); err == nil {
				parent[p.PID] = st.PPID
			}
		}
	}
	return parent
}

// fioMain returns the PID of the fio process running jobFile, or 0: the
// one of them whose parent is not.
func fioMain(t *testing.T, jobFile string) int {
	t.Helper()
	parent := parents(t, func(cmd []string) bool { return len(cmd) > 0 && cmd[len(cmd)-1] == jobFile })
	for pid, pp := range parent {
		if _, job := parent[pp]; !job {
			return pid
		}
	}
	return 0
}

// A job that dies as it starts leaves fio 3.33 waiting forever after it
// has written its output, and SIGINT does not stop it: the point fails at
// once, naming the signal, rather than holding the run until fio is killed.
func TestRunJobDiesAtStart(t *testing.T) {
	r := needFio(t)
	defer func(g time.Duration) { hangGrace = g }(hangGrace)
	hangGrace = 2 * time.Second
	spec := Spec{Name: "4k-randread-qd1x1", BS: 4096, RW: RandRead, IODepth: 1, Jobs: 1}
	// The kill must land in the job's first milliseconds; a later one
	// makes fio exit by itself, and the watch is not tested: try again.
	for attempt := 1; attempt <= 3; attempt++ {
		dir, work := realTempDir(t), t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		done := make(chan error, 1)
		go func() {
			_, err := r.Run(ctx, 0, spec, Settings{IOEngine: "psync", Duration: 20 * time.Second,
				File: filepath.Join(dir, "data"), Size: 16 << 20}, work)
			done <- err
		}()
		jobFile := filepath.Join(work, "point-01.fio")
		var main, job int
		for deadline := time.Now().Add(20 * time.Second); job == 0; time.Sleep(time.Millisecond) {
			if main == 0 {
				main = fioMain(t, jobFile)
			} else {
				job = fioChild(main)
			}
			if time.Now().After(deadline) {
				t.Fatalf("no fio job process for %s after 20 s", jobFile)
			}
		}
		if err := syscall.Kill(job, syscall.SIGABRT); err != nil {
			t.Fatal(err)
		}
		// Did fio hang? Its output is whole and it is still there.
		hung := false
		for deadline := time.Now().Add(hangGrace / 2); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			data, err := os.ReadFile(filepath.Join(work, "point-01.json"))
			if err == nil && wholeJSON(data) {
				time.Sleep(300 * time.Millisecond)
				hung = syscall.Kill(main, 0) == nil && fioMain(t, jobFile) == main
				break
			}
		}
		err := <-done
		cancel()
		// A kill before the job told fio it had started leaves fio
		// waiting 10 s for it; fio then gives up, saying so, and signals
		// its whole process group (its own: dieWithParent): the point
		// fails with fio's words. The hang is not reached: try again.
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && strings.Contains(err.Error(), "fio: job startup hung? exiting.") {
			t.Logf("attempt %d: the kill came before the job had started: %v", attempt, err)
			continue
		}
		if err == nil || errors.Is(err, context.DeadlineExceeded) ||
			!strings.Contains(err.Error(), "a job died (fio: pid="+strconv.Itoa(job)+", got signal=6)") {
			t.Fatalf("attempt %d, a point whose job was killed as it started: %v; want the job's death, before the context's deadline", attempt, err)
		}
		if hung {
			return
		}
		t.Logf("attempt %d: fio exited by itself", attempt)
	}
	t.Error("fio never hung in 3 attempts: the watch for a hung fio is untested")
}
