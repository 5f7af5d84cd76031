package clustertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSweepStale: what a test binary killed before its cleanup left (a
// namespace with a process in it, a bridge, a temporary directory, a lock
// file) is
// removed, and what a running binary owns is not.
func TestSweepStale(t *testing.T) {
	tl := requireTools(t, Options{})
	// 4194305 is above the kernel's largest pid (PID_MAX_LIMIT), so it
	// never runs; the cluster number is this binary's pid, so that test
	// binaries running at once make different names.
	dead := "tbc" + strconv.FormatInt(4194305, 36) + "-" + strconv.FormatInt(int64(os.Getpid()%(36*36*36*36)), 36)
	live := New(t, 1, Options{}) // owned by this process: left alone
	ns, br := dead+"h1", dead+"b"
	tmp, err := os.MkdirTemp("", "tierbench-clustertest-4194305-")
	if err != nil {
		t.Fatal(err)
	}
	staleLock := filepath.Join(lockDir, "10.250.250.0.lock") // outside the pools New picks from
	if err := os.WriteFile(staleLock, []byte("4194305\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"netns", "add", ns}, {"link", "add", br, "type", "bridge"}} {
		if out, err := exec.Command(tl.ip, args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() { // in case the sweep fails
		exec.Command(tl.ip, "netns", "del", ns).Run()
		exec.Command(tl.ip, "link", "del", br).Run()
		os.RemoveAll(tmp)
		os.Remove(staleLock)
	})
	// A process left in the namespace, as by a binary killed mid-test (no
	// Pdeathsig: it outlives this test unless the sweep kills it).
	stray := exec.Command(tl.ip, "netns", "exec", ns, "sleep", "300")
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { stray.Wait(); close(exited) }()
	t.Cleanup(func() { stray.Process.Kill() })
	// Only once it is inside: `ip netns exec` enters the namespace after it
	// starts, and a sweep that looked before then would find the namespace
	// empty, remove it, and leave the process to enter it unseen.
	pid := strconv.Itoa(stray.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		out, _ := exec.Command(tl.ip, "netns", "pids", ns).Output()
		if slices.Contains(strings.Fields(string(out)), pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the process %s is not in namespace %s after 10 s (its processes: %q)", pid, ns, out)
		}
	}

	sweepStale(tl.ip)

	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Errorf("the process in the stale namespace survived the sweep")
	}
	if out, _ := exec.Command(tl.ip, "netns", "list").Output(); strings.Contains(string(out), ns) {
		t.Errorf("stale namespace %s survived the sweep", ns)
	}
	if err := exec.Command(tl.ip, "link", "show", br).Run(); err == nil {
		t.Errorf("stale bridge %s survived the sweep", br)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("stale directory %s survived the sweep", tmp)
	}
	if _, err := os.Stat(staleLock); !os.IsNotExist(err) {
		t.Errorf("stale lock file %s survived the sweep", staleLock)
	}
	if _, err := os.Stat(live.lock.Name()); err != nil {
		t.Errorf("the sweep removed the running test's lock file: %v", err)
	}
	if out, _ := exec.Command(tl.ip, "netns", "list").Output(); !strings.Contains(string(out), live.Hosts[0].NS) {
		t.Errorf("the sweep removed the running test's namespace %s", live.Hosts[0].NS)
	}
	if err := exec.Command(tl.ip, "link", "show", live.Bridge).Run(); err != nil {
		t.Errorf("the sweep removed the running test's bridge %s", live.Bridge)
	}
	if _, err := os.Stat(filepath.Join(live.Dir)); err != nil {
		t.Errorf("the sweep removed the running test's directory: %v", err)
	}
}
