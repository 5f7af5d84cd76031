package cgroup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// With plain files for cgroup.procs: the process that becomes the program
// wrote its own PID (the one the program keeps) into each, whatever the
// file names hold; a file it cannot write stops it before the program runs.
func TestCommandWritesItsOwnPID(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	procs := []string{filepath.Join(dir, "blkio procs"), filepath.Join(dir, "it's $HOME `memory`")}
	cmd := Command(ctx, procs, "sh", "-c", "echo $$")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	if got := strings.TrimSpace(string(out)); got != pid {
		t.Errorf("the program's PID is %s; want the started process's, %s", got, pid)
	}
	for _, p := range procs {
		if b, err := os.ReadFile(p); err != nil || strings.TrimSpace(string(b)) != pid {
			t.Errorf("%s holds %q (%v); want %s", p, b, err, pid)
		}
	}

	out, err = Command(ctx, []string{filepath.Join(dir, "missing", "cgroup.procs")}, "echo", "ran").CombinedOutput()
	if err == nil || strings.Contains(string(out), "ran") {
		t.Errorf("an unwritable cgroup.procs: err %v, output %q; want a failure before the program runs", err, out)
	}

	if got := Command(ctx, nil, "echo", "x").Args; !reflect.DeepEqual(got, []string{"echo", "x"}) {
		t.Errorf("no procs: args %q; want the program alone", got)
	}
}

// TestCommandRealGroup starts a program through Command into a real group:
// /proc/self/cgroup, read by the program itself, names the group in each of
// its hierarchies.
func TestCommandRealGroup(t *testing.T) {
	realHierarchies(t)
	name := fmt.Sprintf("test-cmd-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	g, ap, err := Create(name, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	procs := g.ProcsFiles()
	if ap.Version == 0 || len(procs) == 0 {
		t.Fatalf("no group was made: %+v", ap)
	}
	out, err := Command(context.Background(), procs, "sh", "-c", "cat /proc/self/cgroup").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	in := 0
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasSuffix(l, "/tierbench/"+name) {
			in++
		}
	}
	t.Logf("cgroup v%d, %v:\n%s", g.Version(), procs, out)
	if in != len(procs) {
		t.Errorf("the program is in tierbench/%s in %d hierarchies; want %d (%v)", name, in, len(procs), procs)
	}
}
