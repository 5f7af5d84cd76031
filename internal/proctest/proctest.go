// Package proctest starts processes that tests need beside the code under
// test.
package proctest

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Spinner starts a process that spins on one core until the test ends,
// and returns its pid: another tenant's CPU. It is orphaned at once (the
// shell that starts it exits), as another tenant's process is no child of
// tierbench's: a child of the test's process would be in the process tree
// of tierbench's own, which telemetry counts as the workload when tests run
// tierbench in-process.
func Spinner(t testing.TB) int {
	t.Helper()
	out, err := exec.Command("sh", "-c", "sh -c 'while :; do :; done' >/dev/null 2>&1 </dev/null & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("spinner pid %q: %v", out, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}
