package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/testenv"
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

// realHierarchies are this machine's hierarchies, when we are root and it has
// a memory controller; haveIO says whether it has blkio or io too.
func realHierarchies(t *testing.T) (hs []Hierarchy, haveIO bool) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "creating cgroups needs root")
	}
	hs, err := NewHost("/").Hierarchies()
	if err != nil {
		t.Fatal(err)
	}
	v2, mem1, blk1 := pick(hs)
	if mem1 == nil && (v2 == nil || !v2.has("memory")) {
		testenv.SkipOrFail(t, "this machine has no memory cgroup controller (hierarchies: %+v)", hs)
	}
	return hs, blk1 != nil || (v2 != nil && v2.has("io"))
}

// TestRealGroup caps and throttles a real group on this machine, moves a
// process in and removes the group. It runs whenever the machine has a memory
// controller and we are root; then it must work, in CI or not.
func TestRealGroup(t *testing.T) {
	_, haveIO := realHierarchies(t)
	disk, maj, min := rootDisk(t)

	name := fmt.Sprintf("test-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	lim := Limits{MemoryBytes: 256 << 20, IO: []stored.IOLimit{{Major: maj, Minor: min, ReadIOPS: 100}}}
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

// sleeper is a process to put in groups, killed when the test ends.
func sleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// procCgroups maps each hierarchy of /proc/PID/cgroup ("memory", "blkio",
// "" for v2) to the process's path in it.
func procCgroups(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.SplitN(line, ":", 3); len(f) == 3 {
			out[f[1]] = f[2]
		}
	}
	return out
}

func readTrim(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestRealSharedIO puts two "servers" (sleeping processes) on one emulated
// tier: both must end up in the tier's one blkio/io group, whose files hold
// the throttle, and each in a memory group of its own with its own cap.
func TestRealSharedIO(t *testing.T) {
	_, haveIO := realHierarchies(t)
	if !haveIO {
		testenv.SkipOrFail(t, "this machine has no blkio or io cgroup controller")
	}
	_, maj, min := rootDisk(t)
	id := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	tierName, names := "test-tier-"+id, []string{"test-a-" + id, "test-b-" + id}
	caps := []int64{256 << 20, 128 << 20}
	io := []stored.IOLimit{{Major: maj, Minor: min, ReadIOPS: 300, WriteBPS: 20e6}}

	var groups []*Group
	var pids []int
	var tierPath string
	for i, name := range names {
		g, ap, err := Create(name, Limits{MemoryBytes: caps[i], IO: io, IOGroup: tierName})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Remove() }) // a failed test's leftovers
		t.Logf("Create(%s): %+v", name, ap)
		if ap.Version == 0 || ap.MemoryMax != caps[i] || ap.MemoryNote != "" || !reflect.DeepEqual(ap.IO, io) || !ap.IOShared ||
			filepath.Base(ap.IOPath) != tierName || filepath.Base(ap.Path) != name {
			t.Fatalf("Create(%s) = %+v; want its own memory cap and the tier's shared I/O limit", name, ap)
		}
		if tierPath == "" {
			tierPath = ap.IOPath
		} else if ap.IOPath != tierPath {
			t.Fatalf("the second server's I/O group is %s; the first's %s", ap.IOPath, tierPath)
		}
		pid := sleeper(t)
		if err := g.Add(pid); err != nil {
			t.Fatal(err)
		}
		groups, pids = append(groups, g), append(pids, pid)

		// Its own memory cap, read back from the file.
		file := v1MemoryLimit
		if ap.Version == 2 {
			file = "memory.max"
		}
		if got := readTrim(t, filepath.Join(ap.Path, file)); got != strconv.FormatInt(caps[i], 10) {
			t.Errorf("%s = %s; want %d", filepath.Join(ap.Path, file), got, caps[i])
		}
	}
	t.Cleanup(func() {
		if tier, err := Open(tierName); err == nil {
			tier.Remove()
		}
	})

	// The one throttle, read back from the tier's files.
	v := groups[0].Version()
	if v == 2 {
		want := fmt.Sprintf("%d:%d rbps=max wbps=20000000 riops=300 wiops=max", maj, min)
		if got := readTrim(t, filepath.Join(tierPath, "io.max")); got != want {
			t.Errorf("%s/io.max = %q; want %q", tierPath, got, want)
		}
	} else {
		for file, want := range map[string]string{v1ReadIOPS: fmt.Sprintf("%d:%d 300", maj, min), v1WriteBPS: fmt.Sprintf("%d:%d 20000000", maj, min),
			v1WriteIOPS: "", v1ReadBPS: ""} {
			if got := readTrim(t, filepath.Join(tierPath, file)); got != want {
				t.Errorf("%s/%s = %q; want %q", tierPath, file, got, want)
			}
		}
	}

	// Where the kernel says each process is.
	for i, pid := range pids {
		cg := procCgroups(t, pid)
		if v == 2 {
			if want := "/tierbench/" + tierName + "/" + names[i]; !strings.HasSuffix(cg[""], want) {
				t.Errorf("process %d is in %q; want …%s", pid, cg[""], want)
			}
			continue
		}
		if want := "/tierbench/" + tierName; !strings.HasSuffix(cg["blkio"], want) {
			t.Errorf("process %d is in blkio:%s; want …%s, the tier's", pid, cg["blkio"], want)
		}
		if want := "/tierbench/" + names[i]; !strings.HasSuffix(cg["memory"], want) {
			t.Errorf("process %d is in memory:%s; want …%s, its own", pid, cg["memory"], want)
		}
		t.Logf("process %d: blkio:%s memory:%s", pid, cg["blkio"], cg["memory"])
	}
	procs := readTrim(t, filepath.Join(tierPath, "cgroup.procs"))
	if v == 1 && procs != fmt.Sprintf("%d\n%d", pids[0], pids[1]) && procs != fmt.Sprintf("%d\n%d", pids[1], pids[0]) {
		t.Errorf("the tier's cgroup.procs = %q; want both processes", procs)
	}

	// The first server goes (with its process still running): the second
	// stays throttled by the tier.
	if err := groups[0].Remove(); err != nil {
		t.Fatal(err)
	}
	if cg := procCgroups(t, pids[0]); strings.Contains(cg["blkio"]+cg["memory"]+cg[""], "/tierbench/") {
		t.Errorf("the first process is still in a tierbench group after its Remove: %v", cg)
	}
	if cg := procCgroups(t, pids[1]); !strings.Contains(cg["blkio"]+cg[""], "/tierbench/"+tierName) {
		t.Errorf("the second process left the tier when the first group was removed: %v", cg)
	}
	if err := groups[1].Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tierPath); err != nil {
		t.Fatalf("the tier's group went with its servers: %v", err)
	}
	tier, err := Open(tierName)
	if err != nil {
		t.Fatal(err)
	}
	if err := tier.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tierPath, filepath.Join(filepath.Dir(tierPath), names[0]), filepath.Join(filepath.Dir(tierPath), names[1])} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still exists after every Remove", p)
		}
	}
	if cg := procCgroups(t, pids[1]); strings.Contains(cg["blkio"]+cg["memory"]+cg[""], "/tierbench/") {
		t.Errorf("the second process is still in a tierbench group: %v", cg)
	}
}
