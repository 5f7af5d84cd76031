package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/tierbench/tierbench/internal/stored"
)

// createV2 makes the group in the unified hierarchy. A v2 group gets a
// controller's files only when every ancestor below the root has the
// controller in cgroup.subtree_control, and a cgroup holding processes may
// not enable any (the "no internal processes" rule; the root is exempt). So
// the parent is this process's cgroup only when it can delegate the
// controllers (already does, or holds no process), else the root.
//
// With lim.IOGroup the group is tierbench/IOGROUP/NAME: the shared
// tierbench/IOGROUP holds io.max, which limits its children together, and
// passes the memory controller down to them; it holds no process itself.
func (h Host) createV2(g *Group, hy Hierarchy, lim Limits, n *notes) {
	wantMem, wantIO := lim.MemoryBytes > 0, len(lim.IO) > 0
	var want []string
	if wantMem {
		if hy.has("memory") {
			want = append(want, "memory")
		} else {
			n.memf("no memory controller in cgroup v2 (not in %s)", filepath.Join(hy.Mount, "cgroup.controllers"))
		}
	}
	if wantIO {
		if hy.has("io") {
			want = append(want, "io")
		} else {
			n.iof("no io controller in cgroup v2 (not in %s)", filepath.Join(hy.Mount, "cgroup.controllers"))
		}
	}

	shared := lim.IOGroup != ""
	home := "tierbench" // the directory the group belongs in
	if shared {
		home = lim.IOGroup
	}
	dir := existing(hy, g.name)
	if dir != "" && filepath.Base(filepath.Dir(dir)) != home {
		// Made before in another I/O group, or in none: start afresh here
		// (the caller's Add puts the processes back).
		if err := h.remove(member{dir: dir, base: baseOf(dir), mount: hy.Mount}); err != nil {
			n.memf("cannot move cgroup %s to %s: %v", dir, home, err)
			n.iof("cannot move cgroup %s to %s: %v", dir, home, err)
			return
		}
		dir = ""
	}
	var parent string
	switch {
	case dir != "":
		parent = baseOf(dir)
	case shared && existing(hy, lim.IOGroup) != "":
		parent = baseOf(existing(hy, lim.IOGroup))
	default:
		parent = hy.Mount
		for _, c := range hy.candidates() {
			if c == hy.Mount || canDelegate(c, want) {
				parent = c
				break
			}
		}
	}

	// Enable the controllers on the way down: parent, then tierbench/.
	enabled := map[string]bool{}
	for _, c := range want {
		if err := h.enable(parent, c); err != nil {
			failed(n, c, "%s controller not enabled in %s and enabling it failed: %v%s",
				c, filepath.Join(parent, "cgroup.subtree_control"), errText(err), busyHint(err))
			continue
		}
		enabled[c] = true
	}
	if len(want) > 0 && len(enabled) == 0 {
		return // nothing asked can be applied: no group
	}
	top := filepath.Join(parent, "tierbench")
	if err := h.ops.mkdir(top); err != nil && !errors.Is(err, os.ErrExist) {
		n.memf("cannot create cgroup %s: %v%s", top, err, rootHint(err))
		n.iof("cannot create cgroup %s: %v%s", top, err, rootHint(err))
		return
	}
	for _, c := range want {
		if !enabled[c] {
			continue
		}
		if err := h.enable(top, c); err != nil {
			failed(n, c, "enabling the %s controller in %s failed: %v", c, filepath.Join(top, "cgroup.subtree_control"), errText(err))
			delete(enabled, c)
		}
	}
	above := top // the group's parent directory
	if shared {
		above = filepath.Join(top, lim.IOGroup)
		if err := h.ops.mkdir(above); err != nil && !errors.Is(err, os.ErrExist) {
			n.memf("cannot create cgroup %s: %v%s", above, err, rootHint(err))
			n.iof("cannot create cgroup %s: %v%s", above, err, rootHint(err))
			h.ops.rmdir(top) // only if empty
			return
		}
		// Only memory goes further down: io.max is the shared group's.
		if enabled["memory"] {
			if err := h.enable(above, "memory"); err != nil {
				n.memf("enabling the memory controller in %s failed: %v", filepath.Join(above, "cgroup.subtree_control"), errText(err))
				delete(enabled, "memory")
			}
		}
	}
	if dir == "" {
		dir = filepath.Join(above, g.name)
		if err := h.ops.mkdir(dir); err != nil && !errors.Is(err, os.ErrExist) {
			n.memf("cannot create cgroup %s: %v%s", dir, err, rootHint(err))
			n.iof("cannot create cgroup %s: %v%s", dir, err, rootHint(err))
			h.ops.rmdir(above) // only if empty
			h.ops.rmdir(top)
			return
		}
	}
	ioDir := dir
	g.members = append(g.members, member{dir: dir, base: parent, mount: hy.Mount,
		mem: exists(filepath.Join(dir, "memory.max")), io: !shared && exists(filepath.Join(dir, "io.max"))})
	if shared {
		ioDir = above
		g.members = append(g.members, member{dir: above, base: parent, mount: hy.Mount,
			io: exists(filepath.Join(above, "io.max")), shared: true})
	}

	// memory.max: the cap, or "max" to lift an earlier one.
	if exists(filepath.Join(dir, "memory.max")) {
		v := "max"
		if wantMem {
			v = strconv.FormatInt(lim.MemoryBytes, 10)
		}
		if err := h.ops.write(filepath.Join(dir, "memory.max"), v); err != nil && wantMem {
			n.memf("memory.max refused the cap: %v", errText(err))
		}
	} else if wantMem && enabled["memory"] {
		n.memf("%s has no memory.max although the memory controller is enabled above it", dir)
	}

	if exists(filepath.Join(ioDir, "io.max")) {
		h.writeIOMax(ioDir, lim.IO, n)
	} else if wantIO && enabled["io"] {
		n.iof("%s has no io.max although the io controller is enabled above it", ioDir)
	}
}

// writeIOMax writes every device's io.max line, and lifts the limits of
// devices no longer limited.
func (h Host) writeIOMax(dir string, limits []stored.IOLimit, n *notes) {
	old, _ := readIO(dir, 2)
	for _, o := range old {
		if !hasDevice(limits, o.Major, o.Minor) {
			limits = append(limits, stored.IOLimit{Major: o.Major, Minor: o.Minor})
		}
	}
	for _, l := range limits {
		if err := h.ops.write(filepath.Join(dir, "io.max"), ioMaxLine(l)); err != nil && !unlimited(l) {
			n.iof("I/O limit on %s not applied: io.max refused it: %v%s", l.Device(), errText(err), deviceHint(err))
		}
	}
}

func failed(n *notes, controller, format string, a ...any) {
	if controller == "memory" {
		n.memf(format, a...)
	} else {
		n.iof(format, a...)
	}
}

func busyHint(err error) string {
	if errors.Is(err, syscall.EBUSY) {
		return " (the cgroup holds processes, and a v2 cgroup with processes cannot pass controllers to its children)"
	}
	return rootHint(err)
}

func deviceHint(err error) string {
	if errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.EINVAL) {
		return " (give a whole disk, a dm or a loop device, not a partition)"
	}
	return ""
}

// canDelegate says whether cgroup dir can pass the controllers to a child
// group: each is available to it, and it enables them already or holds no
// processes (so enabling them is allowed).
func canDelegate(dir string, controllers []string) bool {
	avail, err1 := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	sub, err2 := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err1 != nil || err2 != nil {
		return false
	}
	pids, err := readProcs(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return false
	}
	for _, c := range controllers {
		if !slices.Contains(strings.Fields(string(avail)), c) {
			return false
		}
		if !slices.Contains(strings.Fields(string(sub)), c) && len(pids) > 0 {
			return false
		}
	}
	return true
}

// enable adds a controller to dir's cgroup.subtree_control unless it is there.
func (h Host) enable(dir, controller string) error {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return err
	}
	if slices.Contains(strings.Fields(string(b)), controller) {
		return nil
	}
	return h.ops.write(filepath.Join(dir, "cgroup.subtree_control"), "+"+controller)
}

// ioMaxLine is one io.max line; "max" lifts a limit.
func ioMaxLine(l stored.IOLimit) string {
	v := func(n int64) string {
		if n <= 0 {
			return "max"
		}
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprintf("%s rbps=%s wbps=%s riops=%s wiops=%s", l.Device(), v(l.ReadBPS), v(l.WriteBPS), v(l.ReadIOPS), v(l.WriteIOPS))
}

// parseIOMax reads io.max: "MAJ:MIN rbps=N wbps=max riops=N wiops=max" per
// limited device.
func parseIOMax(s string) ([]stored.IOLimit, error) {
	var out []stored.IOLimit
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		maj, min, ok := parseDevice(f[0])
		if !ok {
			return out, fmt.Errorf("io.max: malformed line %q", line)
		}
		l := stored.IOLimit{Major: maj, Minor: min}
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return out, fmt.Errorf("io.max: malformed line %q", line)
			}
			n := int64(0)
			if v != "max" {
				var err error
				if n, err = strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
					return out, fmt.Errorf("io.max: malformed line %q", line)
				}
			}
			switch k {
			case "rbps":
				l.ReadBPS = n
			case "wbps":
				l.WriteBPS = n
			case "riops":
				l.ReadIOPS = n
			case "wiops":
				l.WriteIOPS = n
			}
		}
		if !unlimited(l) {
			out = upsert(out, maj, min, func(x *stored.IOLimit) { *x = l })
		}
	}
	return out, nil
}

// readProcs reads a cgroup.procs file.
func readProcs(file string) ([]int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
