package cgroup

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fakeFS behaves like cgroupfs on a fixture tree of plain files: mkdir makes
// the control files a new group gets, writes follow the kernel's rules
// (subtree_control, the no-internal-processes rule, one process in one group
// per hierarchy, throttle lines merged by device, "0"/"max" lifting a limit),
// and rmdir refuses a group with processes or children.
type fakeFS struct {
	t        *testing.T
	devices  map[string]bool // MAJ:MIN of devices that may be throttled (whole disks)
	nsRoot   map[string]bool // v2 mount roots that are a namespace's root, not the machine's: not exempt
	mkdirErr error           // every mkdir fails with this
}

func (f *fakeFS) ops() ops { return ops{mkdir: f.mkdir, write: f.write, rmdir: f.rmdir} }

// writeTree writes files (path relative to root -> content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func isV2(dir string) bool { return exists(filepath.Join(dir, "cgroup.controllers")) }

// isRoot: the top of a hierarchy in the fixture (its parent is no cgroup).
func isRoot(dir string) bool { return !exists(filepath.Join(filepath.Dir(dir), "cgroup.procs")) }

func (f *fakeFS) mkdir(p string) error {
	if f.mkdirErr != nil {
		return &fs.PathError{Op: "mkdir", Path: p, Err: f.mkdirErr}
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		return err
	}
	parent := filepath.Dir(p)
	files := map[string]string{"cgroup.procs": ""}
	if isV2(parent) {
		ctrls := strings.Fields(readString(f.t, filepath.Join(parent, "cgroup.subtree_control")))
		files["cgroup.controllers"] = strings.Join(ctrls, " ") + "\n"
		files["cgroup.subtree_control"] = ""
		if slices.Contains(ctrls, "memory") {
			files["memory.max"] = "max\n"
		}
		if slices.Contains(ctrls, "io") {
			files["io.max"] = ""
		}
	} else {
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			switch {
			case e.IsDir() || e.Name() == "cgroup.sane_behavior" || e.Name() == "release_agent":
			case e.Name() == v1MemoryLimit:
				files[e.Name()] = "9223372036854771712\n"
			default:
				files[e.Name()] = ""
			}
		}
	}
	writeTree(f.t, p, files)
	return nil
}

func (f *fakeFS) write(p, data string) error {
	if !exists(p) {
		return &fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT}
	}
	dir, base := filepath.Dir(p), filepath.Base(p)
	fail := func(errno syscall.Errno) error { return &fs.PathError{Op: "write", Path: p, Err: errno} }
	set := func(s string) error { return os.WriteFile(p, []byte(s), 0o644) }
	data = strings.TrimSpace(data)
	switch {
	case base == "cgroup.procs":
		pid, err := strconv.Atoi(data)
		if err != nil {
			return fail(syscall.EINVAL)
		}
		if isV2(dir) && !f.exempt(dir) && strings.TrimSpace(readString(f.t, filepath.Join(dir, "cgroup.subtree_control"))) != "" {
			return fail(syscall.EBUSY)
		}
		f.takeOut(dir, pid)
		return set(readString(f.t, p) + data + "\n")
	case base == "cgroup.subtree_control":
		on := strings.Fields(readString(f.t, p))
		avail := strings.Fields(readString(f.t, filepath.Join(dir, "cgroup.controllers")))
		for _, tok := range strings.Fields(data) {
			c := tok[1:]
			if !slices.Contains(avail, c) {
				return fail(syscall.ENOENT)
			}
			switch tok[0] {
			case '+':
				if !f.exempt(dir) && strings.TrimSpace(readString(f.t, filepath.Join(dir, "cgroup.procs"))) != "" {
					return fail(syscall.EBUSY)
				}
				if !slices.Contains(on, c) {
					on = append(on, c)
				}
			case '-':
				on = slices.DeleteFunc(on, func(s string) bool { return s == c })
			default:
				return fail(syscall.EINVAL)
			}
		}
		return set(strings.Join(on, " ") + "\n")
	case base == "memory.max" || base == v1MemoryLimit:
		if data == "max" || data == "-1" {
			if base == "memory.max" {
				return set("max\n")
			}
			return set("9223372036854771712\n")
		}
		n, err := strconv.ParseInt(data, 10, 64)
		if err != nil {
			return fail(syscall.EINVAL)
		}
		return set(strconv.FormatInt(n/4096*4096, 10) + "\n") // the kernel counts pages
	case base == "io.max":
		l, err := parseIOMax(data)
		if err != nil || len(strings.Fields(data)) == 0 {
			return fail(syscall.EINVAL)
		}
		dev := strings.Fields(data)[0]
		if !f.devices[dev] {
			return fail(syscall.ENODEV)
		}
		lines := f.otherLines(p, dev)
		if len(l) == 1 {
			lines = append(lines, ioMaxLine(l[0]))
		}
		return set(strings.Join(lines, "\n") + "\n")
	case strings.HasPrefix(base, "blkio.throttle."):
		fields := strings.Fields(data)
		if len(fields) != 2 {
			return fail(syscall.EINVAL)
		}
		if !f.devices[fields[0]] {
			return fail(syscall.ENODEV)
		}
		lines := f.otherLines(p, fields[0])
		if fields[1] != "0" {
			lines = append(lines, data)
		}
		return set(strings.Join(lines, "\n") + "\n")
	}
	return set(data + "\n")
}

// exempt: the machine's v2 root may hold processes and enable controllers.
func (f *fakeFS) exempt(dir string) bool { return isRoot(dir) && !f.nsRoot[dir] }

// otherLines are the lines of a per-device file for every other device.
func (f *fakeFS) otherLines(p, dev string) []string {
	var out []string
	for _, line := range strings.Split(readString(f.t, p), "\n") {
		if fl := strings.Fields(line); len(fl) > 0 && fl[0] != dev {
			out = append(out, line)
		}
	}
	return out
}

// takeOut removes pid from every group of the hierarchy holding dir.
func (f *fakeFS) takeOut(dir string, pid int) {
	top := dir
	for !isRoot(top) {
		top = filepath.Dir(top)
	}
	filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "cgroup.procs" {
			return nil
		}
		var keep []string
		for _, s := range strings.Fields(readString(f.t, p)) {
			if s != strconv.Itoa(pid) {
				keep = append(keep, s+"\n")
			}
		}
		return os.WriteFile(p, []byte(strings.Join(keep, "")), 0o644)
	})
}

func (f *fakeFS) rmdir(p string) error {
	entries, err := os.ReadDir(p)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			return &fs.PathError{Op: "rmdir", Path: p, Err: syscall.EBUSY}
		}
	}
	if strings.TrimSpace(readString(f.t, filepath.Join(p, "cgroup.procs"))) != "" {
		return &fs.PathError{Op: "rmdir", Path: p, Err: syscall.EBUSY}
	}
	return os.RemoveAll(p)
}

// fixture builds a host from testdata/KIND/{mountinfo,cgroup} plus the
// cgroup files given, with a fake cgroupfs whose throttlable devices are
// 254:0 and 7:0.
func fixture(t *testing.T, kind string, files map[string]string) (Host, *fakeFS) {
	t.Helper()
	root := t.TempDir()
	all := map[string]string{}
	for _, name := range []string{"mountinfo", "cgroup"} {
		b, err := os.ReadFile(filepath.Join("testdata", kind, name))
		if err != nil {
			t.Fatal(err)
		}
		all[filepath.Join("proc", "self", name)] = string(b)
	}
	for p, c := range files {
		all[p] = c
	}
	writeTree(t, root, all)
	f := &fakeFS{t: t, devices: map[string]bool{"254:0": true, "7:0": true}, nsRoot: map[string]bool{}}
	h := NewHost(root)
	h.ops = f.ops()
	return h, f
}

// v1Files is a v1 hierarchy's root (and the files every group has) for a controller.
func v1Files(mount string, controller string, procs string) map[string]string {
	files := map[string]string{
		mount + "/cgroup.procs":          procs,
		mount + "/cgroup.sane_behavior":  "0\n",
		mount + "/release_agent":         "\n",
		mount + "/notify_on_release":     "0\n",
		mount + "/cgroup.clone_children": "0\n",
	}
	switch controller {
	case "memory":
		files[mount+"/"+v1MemoryLimit] = "9223372036854771712\n"
		files[mount+"/memory.usage_in_bytes"] = "1234\n"
	case "blkio":
		for _, t := range v1Throttles {
			files[mount+"/"+t.file] = ""
		}
	}
	return files
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
