package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/telemetry"
)

// rootDisk is the whole disk under / (vda, nvme0n1, dm-0, …) and its number.
func rootDisk(t *testing.T) (string, uint32, uint32) {
	t.Helper()
	res, err := telemetry.ResolvePath("/")
	if err != nil || len(res.Leaves) == 0 {
		t.Skipf("skipping: no block device under / (%v %s)", err, res.Note)
	}
	for _, d := range res.Devices { // the topmost whole disk: the one the file system submits to
		b, err := os.ReadFile(filepath.Join("/sys/block", d, "dev"))
		if err != nil {
			continue
		}
		maj, min, ok := parseDevice(strings.TrimSpace(string(b)))
		if ok {
			return d, maj, min
		}
	}
	t.Skipf("skipping: no whole disk among %v", res.Devices)
	return "", 0, 0
}

// TestRealGroup caps and throttles a real group on this machine, moves a
// process in and removes the group. It runs whenever the machine has a memory
// controller and we are root; then it must work, in CI or not.
func TestRealGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: creating cgroups needs root")
	}
	h := NewHost("/")
	hs, err := h.Hierarchies()
	if err != nil {
		t.Fatal(err)
	}
	v2, mem1, blk1 := pick(hs)
	if mem1 == nil && (v2 == nil || !v2.has("memory")) {
		t.Skipf("skipping: this machine has no memory cgroup controller (hierarchies: %+v)", hs)
	}
	haveIO := blk1 != nil || (v2 != nil && v2.has("io"))
	disk, maj, min := rootDisk(t)

	name := fmt.Sprintf("test-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	lim := Limits{MemoryBytes: 256 << 20, IO: []IOLimit{{Major: maj, Minor: min, ReadIOPS: 100}}}
	start := time.Now()
	g, ap, err := Create(name, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	t.Logf("Create in %v: %+v (disk %s %d:%d)", time.Since(start), ap, disk, maj, min)
	if ap.Version == 0 || ap.MemoryMax != 256<<20 || ap.MemoryNote != "" {
		t.Fatalf("the memory cap did not apply: %+v", ap)
	}
	if haveIO && !reflect.DeepEqual(ap.IO, lim.IO) {
		t.Fatalf("the read IOPS limit did not apply: %+v", ap)
	}

	// The files themselves.
	for _, dir := range g.Dirs() {
		var files map[string]string
		if ap.Version == 2 {
			files = map[string]string{"memory.max": "268435456", "io.max": fmt.Sprintf("%d:%d rbps=max wbps=max riops=100 wiops=max", maj, min)}
		} else if strings.Contains(dir, "/memory/") {
			files = map[string]string{v1MemoryLimit: "268435456"}
		} else {
			files = map[string]string{v1ReadIOPS: fmt.Sprintf("%d:%d 100", maj, min), v1WriteIOPS: ""}
		}
		for f, want := range files {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(b)); got != want {
				t.Errorf("%s = %q; want %q", filepath.Join(dir, f), got, want)
			} else {
				t.Logf("%s: %s", filepath.Join(dir, f), got)
			}
		}
	}

	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	if err := g.Add(sleep.Process.Pid); err != nil {
		t.Fatal(err)
	}
	inGroup := func() []string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", sleep.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if strings.HasSuffix(line, "/tierbench/"+name) {
				lines = append(lines, line)
			}
		}
		return lines
	}
	if got := inGroup(); len(got) != len(g.Dirs()) {
		t.Errorf("/proc/%d/cgroup names the group in %v; want %d hierarchies", sleep.Process.Pid, got, len(g.Dirs()))
	} else {
		t.Logf("/proc/%d/cgroup: %v", sleep.Process.Pid, got)
	}

	o, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.Dirs(), g.Dirs()) {
		t.Errorf("Open found %v; Create made %v", o.Dirs(), g.Dirs())
	}
	// Remove with the process still inside: it goes back to the parent.
	if err := o.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range g.Dirs() {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s still exists after Remove", dir)
		}
	}
	if got := inGroup(); len(got) != 0 {
		t.Errorf("the process is still in the group after Remove: %v", got)
	}
}
