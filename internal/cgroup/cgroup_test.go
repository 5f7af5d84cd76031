package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
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
		IO: []IOLimit{{Major: 254, Minor: 0, ReadIOPS: 100, WriteBPS: 50e6}}})
	if err != nil {
		t.Fatal(err)
	}
	memDir := cg + "/memory/process_api/abc/tierbench/server-1" // under our own cgroup
	blkDir := cg + "/blkio/tierbench/server-1"
	want := Applied{Version: 1, Path: memDir, MemoryMax: 256 * mib, // rounded down to pages
		IO:     []IOLimit{{Major: 254, Minor: 0, ReadIOPS: 100, WriteBPS: 50e6}},
		IONote: V1WritebackNote}
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
	g2, ap, err := h.Create("server-1", Limits{IO: []IOLimit{{Major: 7, Minor: 0, WriteIOPS: 30}}})
	if err != nil {
		t.Fatal(err)
	}
	want = Applied{Version: 1, Path: memDir, IO: []IOLimit{{Major: 7, Minor: 0, WriteIOPS: 30}}, IONote: V1WritebackNote}
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
	_, ap, err := h.Create("p", Limits{MemoryBytes: 128 * mib, IO: []IOLimit{{Major: 254, Minor: 1, ReadIOPS: 100}}})
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
	g, ap, err := h.Create("n", Limits{MemoryBytes: 128 * mib, IO: []IOLimit{{Major: 254, ReadIOPS: 1}}})
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
	_, ap, err := h.Create("n", Limits{MemoryBytes: 128 * mib, IO: []IOLimit{{Major: 254, ReadIOPS: 1}}})
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
		IO: []IOLimit{{Major: 254, Minor: 0, ReadIOPS: 5000, WriteIOPS: 3000, ReadBPS: 200e6}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := cg + "/tierbench/server-2" // our scope holds processes: the root it is
	want := Applied{Version: 2, Path: dir, MemoryMax: 512 * mib,
		IO: []IOLimit{{Major: 254, Minor: 0, ReadIOPS: 5000, WriteIOPS: 3000, ReadBPS: 200e6}}}
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
	_, ap, err := h.Create("m", Limits{MemoryBytes: 256 * mib, IO: []IOLimit{{Major: 254, ReadIOPS: 10}}})
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
		{"ok", Limits{IO: []IOLimit{{ReadIOPS: -1}}}},
		{"ok", Limits{IO: []IOLimit{{Major: 8}, {Major: 8}}}},
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
	want := []IOLimit{{Major: 7, ReadIOPS: 5}, {Major: 8, Minor: 16, ReadBPS: 2097152, WriteIOPS: 120}}
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
