package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tierbench/tierbench/internal/stored"
)

const mib = int64(1) << 20

// hybridFiles is this kind of machine: cgroup v1 memory and blkio, an empty
// v2 beside them, and this process (4242) in memory:/process_api/abc.
func hybridFiles() map[string]string {
	return merge(
		v1Files("sys/fs/cgroup/memory", "memory", "1\n"),
		v1Files("sys/fs/cgroup/memory/process_api/abc", "memory", "4242\n"),
		v1Files("sys/fs/cgroup/blkio", "blkio", "1\n4242\n"),
		map[string]string{
			"sys/fs/cgroup/cpu/cgroup.procs":               "1\n4242\n",
			"sys/fs/cgroup/unified/cgroup.controllers":     "hugetlb\n",
			"sys/fs/cgroup/unified/cgroup.subtree_control": "",
			"sys/fs/cgroup/unified/cgroup.procs":           "1\n4242\n",
		})
}

// v2Files is a systemd machine on cgroup v2, this process (4242) in a
// session scope.
func v2Files(rootControllers string) map[string]string {
	scope := "sys/fs/cgroup/user.slice/user-0.slice/session-1.scope/"
	return map[string]string{
		"sys/fs/cgroup/cgroup.controllers":                             rootControllers + "\n",
		"sys/fs/cgroup/cgroup.subtree_control":                         "cpu pids\n",
		"sys/fs/cgroup/cgroup.procs":                                   "1\n",
		"sys/fs/cgroup/user.slice/cgroup.controllers":                  "cpu pids\n",
		"sys/fs/cgroup/user.slice/cgroup.subtree_control":              "cpu pids\n",
		"sys/fs/cgroup/user.slice/cgroup.procs":                        "",
		"sys/fs/cgroup/user.slice/user-0.slice/cgroup.controllers":     "cpu pids\n",
		"sys/fs/cgroup/user.slice/user-0.slice/cgroup.subtree_control": "cpu pids\n",
		"sys/fs/cgroup/user.slice/user-0.slice/cgroup.procs":           "",
		scope + "cgroup.controllers":                                   "cpu pids\n",
		scope + "cgroup.subtree_control":                               "",
		scope + "cgroup.procs":                                         "4242\n",
	}
}

func TestHierarchies(t *testing.T) {
	h, _ := fixture(t, "hybrid", hybridFiles())
	hs, err := h.Hierarchies()
	if err != nil {
		t.Fatal(err)
	}
	cg := filepath.Join(h.root, "sys/fs/cgroup")
	want := []Hierarchy{
		{Version: 1, Mount: cg + "/cpu", Controllers: []string{"cpu"}, Own: cg + "/cpu"},
		{Version: 1, Mount: cg + "/memory", Controllers: []string{"memory"}, Own: cg + "/memory/process_api/abc"},
		{Version: 1, Mount: cg + "/blkio", Controllers: []string{"blkio"}, Own: cg + "/blkio"},
		{Version: 2, Mount: cg + "/unified", Controllers: []string{"hugetlb"}, Own: cg + "/unified"},
	}
	if !reflect.DeepEqual(hs, want) {
		t.Errorf("Hierarchies =\n%+v\nwant\n%+v", hs, want)
	}
}

func TestOwnDir(t *testing.T) {
	mount := t.TempDir()
	if err := os.MkdirAll(filepath.Join(mount, "x", "y"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ root, path, want string }{
		{"/", "/x/y", mount + "/x/y"},
		{"/", "/", mount},
		{"/docker/c1", "/docker/c1/x", mount + "/x"}, // a bind mount of a subtree
		{"/docker/c1", "/docker/c1", mount},
		{"/docker/c1", "/docker/c10", ""}, // not below the mount's root
		{"/docker/c1", "/other", ""},
		{"/", "/missing", ""},
		{"/", "", ""},
	}
	for _, c := range cases {
		if got := ownDir(mount, c.root, c.path); got != c.want {
			t.Errorf("ownDir(root %q, %q) = %q; want %q", c.root, c.path, got, c.want)
		}
	}
}

func TestCreateV1(t *testing.T) {
	h, _ := fixture(t, "hybrid", hybridFiles())
	cg := filepath.Join(h.root, "sys/fs/cgroup")
	g, ap, err := h.Create("server-1", Limits{MemoryBytes: 256*mib + 100,
		IO: []stored.IOLimit{{Major: 254, Minor: 0, ReadIOPS: 100, WriteBPS: 50e6}}})
	if err != nil {
		t.Fatal(err)
	}
	memDir := cg + "/memory/process_api/abc/tierbench/server-1" // under our own cgroup
	blkDir := cg + "/blkio/tierbench/server-1"
	want := stored.Applied{Version: 1, Path: memDir, MemoryMax: 256 * mib, // rounded down to pages
		IO:     []stored.IOLimit{{Major: 254, Minor: 0, ReadIOPS: 100, WriteBPS: 50e6}},
		IOPath: blkDir, IONote: V1WritebackNote}
	if !reflect.DeepEqual(ap, want) {
		t.Errorf("Create = %+v\nwant %+v", ap, want)
	}
	if got := g.Dirs(); !reflect.DeepEqual(got, []string{memDir, blkDir}) {
		t.Errorf("Dirs = %v", got)
	}
	if got := readString(t, blkDir+"/"+v1ReadIOPS); got != "254:0 100\n" {
		t.Errorf("%s = %q", v1ReadIOPS, got)
	}
	if got := readString(t, blkDir+"/"+v1WriteBPS); got != "254:0 50000000\n" {
		t.Errorf("%s = %q", v1WriteBPS, got)
	}

	if err := g.Add(4242); err != nil {
		t.Fatal(err)
	}
	for _, dir := range g.Dirs() {
		if got := readString(t, dir+"/cgroup.procs"); got != "4242\n" {
			t.Errorf("%s/cgroup.procs = %q", dir, got)
		}
	}
	if got := readString(t, cg+"/memory/process_api/abc/cgroup.procs"); got != "" {
		t.Errorf("the process is still in its old group: %q", got)
	}

	// Reuse: the new limits replace the old ones entirely.
	g2, ap, err := h.Create("server-1", Limits{IO: []stored.IOLimit{{Major: 7, Minor: 0, WriteIOPS: 30}}})
	if err != nil {
		t.Fatal(err)
	}
	want = stored.Applied{Version: 1, Path: memDir, IO: []stored.IOLimit{{Major: 7, Minor: 0, WriteIOPS: 30}}, IOPath: blkDir, IONote: V1WritebackNote}
	if !reflect.DeepEqual(ap, want) {
		t.Errorf("Create again = %+v\nwant %+v", ap, want)
	}

	// Open from "another process" finds the same directories.
	o, err := h.Open("server-1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.Dirs(), g2.Dirs()) || o.Version() != 1 {
		t.Errorf("Open = %v (v%d); want %v", o.Dirs(), o.Version(), g2.Dirs())
	}
	if err := o.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{memDir, filepath.Dir(memDir), blkDir, filepath.Dir(blkDir)} {
		if exists(dir) {
			t.Errorf("%s still exists after Remove", dir)
		}
	}
	if got := readString(t, cg+"/memory/process_api/abc/cgroup.procs"); got != "4242\n" {
		t.Errorf("Remove did not move the process back to the parent: %q", got)
	}
	if _, err := h.Open("server-1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open after Remove: %v; want ErrNotFound", err)
	}
}

func TestCreateV1RootWhenOwnRefuses(t *testing.T) {
	files := hybridFiles()
	h, _ := fixture(t, "hybrid", files)
	own := filepath.Join(h.root, "sys/fs/cgroup/memory/process_api/abc")
	// Our own group does not let us create children (a read-only delegation).
	h.ops.mkdir = func(p string) error {
		if strings.HasPrefix(p, own) {
			return &os.PathError{Op: "mkdir", Path: p, Err: syscall.EACCES}
		}
		f := &fakeFS{t: t}
		return f.mkdir(p)
	}
	_, ap, err := h.Create("x", Limits{MemoryBytes: 128 * mib})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(h.root, "sys/fs/cgroup/memory/tierbench/x"); ap.Path != want || ap.MemoryMax != 128*mib || ap.MemoryNote != "" {
		t.Errorf("Create = %+v; want the group at the root, %s", ap, want)
	}
}

func TestCreateV1Partition(t *testing.T) {
	h, _ := fixture(t, "hybrid", hybridFiles())
	_, ap, err := h.Create("p", Limits{MemoryBytes: 128 * mib, IO: []stored.IOLimit{{Major: 254, Minor: 1, ReadIOPS: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	if ap.MemoryMax != 128*mib || ap.MemoryNote != "" || len(ap.IO) != 0 ||
		!strings.Contains(ap.IONote, "read IOPS limit on 254:1 not applied") || !strings.Contains(ap.IONote, "no such device") {
		t.Errorf("Create = %+v; want memory capped and a note on the I/O limit", ap)
	}
	t.Logf("io note: %s", ap.IONote)
}

func TestCreateNoPermission(t *testing.T) {
	h, f := fixture(t, "hybrid", hybridFiles())
	f.mkdirErr = syscall.EACCES
	g, ap, err := h.Create("n", Limits{MemoryBytes: 128 * mib, IO: []stored.IOLimit{{Major: 254, ReadIOPS: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if ap.Version != 0 || g.Version() != 0 || !strings.Contains(ap.MemoryNote, "permission denied") || !strings.Contains(ap.IONote, "permission denied") {
		t.Errorf("Create = %+v; want version 0 and notes", ap)
	}
	if err := g.Add(1); err != nil { // a group of nothing: Add and Remove do nothing
		t.Error(err)
	}
	if err := g.Remove(); err != nil {
		t.Error(err)
	}
	t.Logf("notes: %q, %q", ap.MemoryNote, ap.IONote)
}

func TestCreateNoCgroups(t *testing.T) {
	h, _ := fixture(t, "none", nil)
	_, ap, err := h.Create("n", Limits{MemoryBytes: 128 * mib, IO: []stored.IOLimit{{Major: 254, ReadIOPS: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if ap.Version != 0 || !strings.HasPrefix(ap.MemoryNote, "no memory cgroup controller") || !strings.HasPrefix(ap.IONote, "no blkio/io cgroup controller") {
		t.Errorf("Create = %+v", ap)
	}
}

func TestCreateV2(t *testing.T) {
	h, _ := fixture(t, "v2", v2Files("cpuset cpu io memory pids"))
	cg := filepath.Join(h.root, "sys/fs/cgroup")
	g, ap, err := h.Create("server-2", Limits{MemoryBytes: 512 * mib,
		IO: []stored.IOLimit{{Major: 254, Minor: 0, ReadIOPS: 5000, WriteIOPS: 3000, ReadBPS: 200e6}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := cg + "/tierbench/server-2" // our scope holds processes: the root it is
	want := stored.Applied{Version: 2, Path: dir, MemoryMax: 512 * mib,
		IO: []stored.IOLimit{{Major: 254, Minor: 0, ReadIOPS: 5000, WriteIOPS: 3000, ReadBPS: 200e6}}}
	if !reflect.DeepEqual(ap, want) {
		t.Errorf("Create = %+v\nwant %+v", ap, want)
	}
	if got := readString(t, dir+"/io.max"); got != "254:0 rbps=200000000 wbps=max riops=5000 wiops=3000\n" {
		t.Errorf("io.max = %q", got)
	}
	if got := readString(t, dir+"/memory.max"); got != "536870912\n" {
		t.Errorf("memory.max = %q", got)
	}
	for _, d := range []string{cg, cg + "/tierbench"} {
		if got := strings.Fields(readString(t, d+"/cgroup.subtree_control")); !contains(got, "memory") || !contains(got, "io") {
			t.Errorf("%s/cgroup.subtree_control = %v; want memory and io enabled", d, got)
		}
	}
	if err := g.Add(4242); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, dir+"/cgroup.procs"); got != "4242\n" {
		t.Errorf("cgroup.procs = %q", got)
	}

	// Reuse without limits lifts them.
	_, ap, err = h.Create("server-2", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if ap.MemoryMax != 0 || len(ap.IO) != 0 || readString(t, dir+"/io.max") != "\n" {
		t.Errorf("Create without limits = %+v, io.max %q", ap, readString(t, dir+"/io.max"))
	}

	o, err := h.Open("server-2")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Remove(); err != nil {
		t.Fatal(err)
	}
	if exists(dir) || exists(cg+"/tierbench") {
		t.Error("the group survived Remove")
	}
	// The parent (the root) holds the process again.
	if got := readString(t, cg+"/cgroup.procs"); !strings.Contains(got, "4242") {
		t.Errorf("root cgroup.procs = %q; want 4242 back", got)
	}
}

func TestCreateV2NoIOController(t *testing.T) {
	h, _ := fixture(t, "v2", v2Files("cpu memory pids"))
	_, ap, err := h.Create("m", Limits{MemoryBytes: 256 * mib, IO: []stored.IOLimit{{Major: 254, ReadIOPS: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	if ap.Version != 2 || ap.MemoryMax != 256*mib || ap.MemoryNote != "" || !strings.HasPrefix(ap.IONote, "no io controller in cgroup v2") {
		t.Errorf("Create = %+v", ap)
	}
}

// A container with its own cgroup namespace: we are in its root, which holds
// processes and is not the machine's root, so it cannot enable controllers.
func TestCreateV2Namespace(t *testing.T) {
	files := map[string]string{
		"sys/fs/cgroup/cgroup.controllers":     "cpu io memory pids\n",
		"sys/fs/cgroup/cgroup.subtree_control": "",
		"sys/fs/cgroup/cgroup.procs":           "1\n4242\n",
	}
	h, f := fixture(t, "v2ns", files)
	f.nsRoot[filepath.Join(h.root, "sys/fs/cgroup")] = true
	g, ap, err := h.Create("c", Limits{MemoryBytes: 256 * mib})
	if err != nil {
		t.Fatal(err)
	}
	if ap.Version != 0 || g.Version() != 0 || !strings.Contains(ap.MemoryNote, "device or resource busy (the cgroup holds processes") {
		t.Errorf("Create = %+v", ap)
	}
	if exists(filepath.Join(h.root, "sys/fs/cgroup/tierbench")) {
		t.Error("a useless group was left behind")
	}
	t.Logf("memory note: %s", ap.MemoryNote)
}

func TestCreateRefusesBadInput(t *testing.T) {
	h, _ := fixture(t, "hybrid", hybridFiles())
	for _, c := range []struct {
		name string
		lim  Limits
	}{
		{"../x", Limits{}},
		{"", Limits{}},
		{".hidden", Limits{}},
		{"ok", Limits{MemoryBytes: -1}},
		{"ok", Limits{IO: []stored.IOLimit{{ReadIOPS: -1}}}},
		{"ok", Limits{IO: []stored.IOLimit{{Major: 8}, {Major: 8}}}},
	} {
		if _, _, err := h.Create(c.name, c.lim); err == nil {
			t.Errorf("Create(%q, %+v) succeeded", c.name, c.lim)
		}
	}
}

func TestParseIOMax(t *testing.T) {
	got, err := parseIOMax("8:16 rbps=2097152 wbps=max riops=max wiops=120\n254:0 rbps=max wbps=max riops=max wiops=max\n7:0 riops=5\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []stored.IOLimit{{Major: 7, ReadIOPS: 5}, {Major: 8, Minor: 16, ReadBPS: 2097152, WriteIOPS: 120}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseIOMax = %+v; want %+v", got, want)
	}
	if _, err := parseIOMax("8:16 rbps"); err == nil {
		t.Error("parseIOMax accepted a malformed line")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// tierIO is the shared budget of the tests below: one emulated tier's device.
var tierIO = []stored.IOLimit{{Major: 254, Minor: 0, ReadIOPS: 3000, WriteIOPS: 3000, WriteBPS: 200e6}}

// Two servers on one tier, v1: each in its own memory group with its own
// cap, both in the tier's one blkio group holding the throttle.
func TestCreateV1SharedIO(t *testing.T) {
	h, _ := fixture(t, "hybrid", hybridFiles())
	cg := filepath.Join(h.root, "sys/fs/cgroup")
	memTop := cg + "/memory/process_api/abc/tierbench"
	tierDir := cg + "/blkio/tierbench/tier-slow"

	a, apA, err := h.Create("server-a", Limits{MemoryBytes: 256 * mib, IO: tierIO, IOGroup: "tier-slow"})
	must(t, err)
	b, apB, err := h.Create("server-b", Limits{MemoryBytes: 512 * mib, IO: tierIO, IOGroup: "tier-slow"})
	must(t, err)
	for _, c := range []struct {
		ap    stored.Applied
		dir   string
		limit int64
	}{{apA, memTop + "/server-a", 256 * mib}, {apB, memTop + "/server-b", 512 * mib}} {
		want := stored.Applied{Version: 1, Path: c.dir, MemoryMax: c.limit, IO: tierIO, IOPath: tierDir, IOShared: true, IONote: V1WritebackNote}
		if !reflect.DeepEqual(c.ap, want) {
			t.Errorf("Create = %+v\nwant %+v", c.ap, want)
		}
		if got := readString(t, c.dir+"/"+v1MemoryLimit); got != strconv.FormatInt(c.limit, 10)+"\n" {
			t.Errorf("%s/%s = %q", c.dir, v1MemoryLimit, got)
		}
	}
	for file, want := range map[string]string{v1ReadIOPS: "254:0 3000\n", v1WriteIOPS: "254:0 3000\n", v1WriteBPS: "254:0 200000000\n", v1ReadBPS: "\n"} {
		if got := readString(t, tierDir+"/"+file); got != want {
			t.Errorf("%s/%s = %q; want %q", tierDir, file, got, want)
		}
	}
	if exists(cg+"/blkio/tierbench/server-a") || exists(cg+"/blkio/tierbench/server-b") {
		t.Error("a server got a blkio group of its own beside the tier's")
	}
	if got := a.Dirs(); !reflect.DeepEqual(got, []string{memTop + "/server-a", tierDir}) {
		t.Errorf("Dirs = %v", got)
	}

	must(t, a.Add(4242))
	must(t, b.Add(4343))
	for dir, want := range map[string]string{memTop + "/server-a": "4242\n", memTop + "/server-b": "4343\n", tierDir: "4242\n4343\n"} {
		if got := readString(t, dir+"/cgroup.procs"); got != want {
			t.Errorf("%s/cgroup.procs = %q; want %q", dir, got, want)
		}
	}

	// One server goes: its processes leave the tier, the other's stay.
	must(t, a.Remove())
	if exists(memTop + "/server-a") {
		t.Error("server-a's memory group survived Remove")
	}
	if got := readString(t, tierDir+"/cgroup.procs"); got != "4343\n" {
		t.Errorf("the tier's cgroup.procs after server-a left = %q; want 4343 alone", got)
	}
	if got := readString(t, cg+"/blkio/cgroup.procs"); !strings.Contains(got, "4242") {
		t.Errorf("server-a's process is not back in the blkio root: %q", got)
	}
	if ap, err := b.Read(); err != nil || !reflect.DeepEqual(ap.IO, tierIO) || !ap.IOShared {
		t.Errorf("server-b after server-a left: %+v, %v; want the tier's limits", ap, err)
	}

	// Open (server stop, another process) finds server-b's own group; the
	// tier is the scenario's to remove.
	o, err := h.Open("server-b")
	must(t, err)
	must(t, o.Remove())
	if !exists(tierDir) {
		t.Fatal("removing the servers removed the tier's group")
	}
	tier, err := h.Open("tier-slow")
	must(t, err)
	must(t, tier.Remove())
	for _, dir := range []string{tierDir, cg + "/blkio/tierbench", memTop} {
		if exists(dir) {
			t.Errorf("%s still exists after every group was removed", dir)
		}
	}
	if got := readString(t, cg+"/blkio/cgroup.procs"); !strings.Contains(got, "4343") {
		t.Errorf("server-b's process is not back in the blkio root: %q", got)
	}
}

// Two servers on one tier, v2: tierbench/tier-slow holds io.max and passes
// memory on; each server is a child of it with its own memory.max.
func TestCreateV2SharedIO(t *testing.T) {
	h, _ := fixture(t, "v2", v2Files("cpuset cpu io memory pids"))
	cg := filepath.Join(h.root, "sys/fs/cgroup")
	tierDir := cg + "/tierbench/tier-slow"

	a, apA, err := h.Create("server-a", Limits{MemoryBytes: 256 * mib, IO: tierIO, IOGroup: "tier-slow"})
	must(t, err)
	b, apB, err := h.Create("server-b", Limits{MemoryBytes: 512 * mib, IO: tierIO, IOGroup: "tier-slow"})
	must(t, err)
	for _, c := range []struct {
		ap    stored.Applied
		name  string
		limit int64
	}{{apA, "server-a", 256 * mib}, {apB, "server-b", 512 * mib}} {
		dir := tierDir + "/" + c.name
		want := stored.Applied{Version: 2, Path: dir, MemoryMax: c.limit, IO: tierIO, IOPath: tierDir, IOShared: true}
		if !reflect.DeepEqual(c.ap, want) {
			t.Errorf("Create = %+v\nwant %+v", c.ap, want)
		}
		if got := readString(t, dir+"/memory.max"); got != strconv.FormatInt(c.limit, 10)+"\n" {
			t.Errorf("%s/memory.max = %q", dir, got)
		}
		if exists(dir + "/io.max") {
			t.Errorf("%s has an io.max of its own; the budget is the tier's", dir)
		}
	}
	if got := readString(t, tierDir+"/io.max"); got != "254:0 rbps=max wbps=200000000 riops=3000 wiops=3000\n" {
		t.Errorf("the tier's io.max = %q", got)
	}
	if got := strings.Fields(readString(t, tierDir+"/cgroup.subtree_control")); !reflect.DeepEqual(got, []string{"memory"}) {
		t.Errorf("the tier's cgroup.subtree_control = %v; want memory alone", got)
	}
	if got := a.Dirs(); !reflect.DeepEqual(got, []string{tierDir + "/server-a"}) {
		t.Errorf("Dirs = %v; want the leaf alone (the tier may hold no process)", got)
	}
	must(t, a.Add(4242))
	must(t, b.Add(4343))
	for dir, want := range map[string]string{tierDir + "/server-a": "4242\n", tierDir + "/server-b": "4343\n", tierDir: ""} {
		if got := readString(t, dir+"/cgroup.procs"); got != want {
			t.Errorf("%s/cgroup.procs = %q; want %q", dir, got, want)
		}
	}

	// Open finds the nested group and reads the tier's limits through it.
	o, err := h.Open("server-a")
	must(t, err)
	if ap, err := o.Read(); err != nil || !reflect.DeepEqual(ap, apA) {
		t.Errorf("Open(server-a).Read = %+v, %v; want %+v", ap, err, apA)
	}
	must(t, o.Remove())
	if exists(tierDir+"/server-a") || !exists(tierDir+"/server-b") {
		t.Error("Remove of server-a removed the wrong groups")
	}
	if got := readString(t, cg+"/cgroup.procs"); !strings.Contains(got, "4242") {
		t.Errorf("server-a's process is not back in the root: %q", got)
	}
	must(t, b.Remove())
	if !exists(tierDir) {
		t.Fatal("removing the servers removed the tier's group")
	}
	tier, err := h.Open("tier-slow")
	must(t, err)
	must(t, tier.Remove())
	if exists(cg + "/tierbench") {
		t.Error("tierbench/ survived the removal of every group")
	}
}

// A group made without an I/O group and then with one (or the reverse) moves
// to where it now belongs.
func TestCreateV2MovesIntoIOGroup(t *testing.T) {
	h, _ := fixture(t, "v2", v2Files("cpuset cpu io memory pids"))
	cg := filepath.Join(h.root, "sys/fs/cgroup")
	g, _, err := h.Create("server-a", Limits{MemoryBytes: 256 * mib})
	must(t, err)
	must(t, g.Add(4242))
	g, ap, err := h.Create("server-a", Limits{MemoryBytes: 256 * mib, IO: tierIO, IOGroup: "tier-slow"})
	must(t, err)
	must(t, g.Add(4242))
	if ap.Path != cg+"/tierbench/tier-slow/server-a" || exists(cg+"/tierbench/server-a") || ap.MemoryMax != 256*mib || !ap.IOShared {
		t.Errorf("Create into the I/O group = %+v", ap)
	}
	g, ap, err = h.Create("server-a", Limits{MemoryBytes: 128 * mib})
	must(t, err)
	if ap.Path != cg+"/tierbench/server-a" || exists(cg+"/tierbench/tier-slow/server-a") || ap.IOShared || len(ap.IO) != 0 {
		t.Errorf("Create out of the I/O group = %+v", ap)
	}
	must(t, g.Remove())
}

func TestCreateIOGroupRefusesBadInput(t *testing.T) {
	h, _ := fixture(t, "hybrid", hybridFiles())
	for _, lim := range []Limits{
		{MemoryBytes: mib, IOGroup: "tier-x"}, // nothing to share
		{IO: tierIO, IOGroup: "../x"},         // a bad name
		{IO: tierIO, IOGroup: "server-1"},     // itself
	} {
		if _, _, err := h.Create("server-1", lim); err == nil {
			t.Errorf("Create(server-1, %+v) succeeded", lim)
		} else {
			t.Logf("%+v: %v", lim, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
