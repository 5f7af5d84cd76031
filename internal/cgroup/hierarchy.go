package cgroup

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prometheus/procfs"

	"github.com/tierbench/tierbench/internal/mountinfo"
)

// Hierarchy is one mounted cgroup hierarchy.
type Hierarchy struct {
	Version int `json:"version"`
	// Mount is where it is mounted (under the host's root).
	Mount string `json:"mount"`
	// Controllers: v1, those named in the mount options; v2, the root's
	// cgroup.controllers.
	Controllers []string `json:"controllers"`
	// Own is this process's cgroup directory in it, "" when that is not
	// visible under Mount (a bind mount of some other subtree).
	Own string `json:"own,omitempty"`
}

func (hy Hierarchy) has(controller string) bool { return slices.Contains(hy.Controllers, controller) }

// v1Controllers are the kernel's v1 controller names, to tell them from the
// other options of a cgroup mount (rw, nosuid, name=systemd, clone_children, …).
var v1Controllers = []string{"blkio", "cpu", "cpuacct", "cpuset", "devices", "freezer", "hugetlb", "memory",
	"misc", "net_cls", "net_prio", "perf_event", "pids", "rdma"}

// Hierarchies lists the cgroup hierarchies mounted in this process's mount
// namespace (/proc/self/mountinfo), each with this process's place in it
// (/proc/self/cgroup). A hierarchy mounted twice is listed once.
func (h Host) Hierarchies() ([]Hierarchy, error) {
	proc := filepath.Join(h.root, "proc")
	pfs, err := procfs.NewFS(proc)
	if err != nil {
		return nil, err
	}
	mounts, err := pfs.GetMounts()
	if err != nil {
		return nil, fmt.Errorf("reading the cgroup mounts: %w", err)
	}
	own, err := readOwn(filepath.Join(proc, "self", "cgroup"))
	if err != nil {
		return nil, fmt.Errorf("reading this process's cgroups: %w", err)
	}
	var out []Hierarchy
	seen := map[string]bool{}
	for _, m := range mounts {
		var hy Hierarchy
		var key, ownPath string
		switch m.FSType {
		case "cgroup2":
			hy.Version, key, ownPath = 2, "v2", own["0"]
		case "cgroup":
			hy.Version = 1
			for _, c := range v1Controllers {
				if _, ok := m.SuperOptions[c]; ok {
					hy.Controllers = append(hy.Controllers, c)
				}
			}
			if len(hy.Controllers) == 0 {
				continue // name=systemd and friends: no controller to use
			}
			key = strings.Join(hy.Controllers, ",")
			for c, p := range own {
				if slices.Contains(strings.Split(c, ","), hy.Controllers[0]) {
					ownPath = p
				}
			}
		default:
			continue
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		hy.Mount = filepath.Join(h.root, mountinfo.Unescape(m.MountPoint))
		if hy.Version == 2 {
			// Unreadable: no controller to offer, which Create explains.
			b, _ := os.ReadFile(filepath.Join(hy.Mount, "cgroup.controllers"))
			hy.Controllers = strings.Fields(string(b))
		}
		hy.Own = ownDir(hy.Mount, mountinfo.Unescape(m.Root), ownPath)
		out = append(out, hy)
	}
	return out, nil
}

// readOwn reads /proc/self/cgroup lines "ID:CONTROLLERS:PATH" into a map
// from CONTROLLERS ("memory", "cpu,cpuacct") to PATH; v2's line (0::PATH)
// is under "0".
func readOwn(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseOwn(f)
}

// parseOwn is readOwn's parser.
func parseOwn(r io.Reader) (map[string]string, error) {
	own := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		id, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		ctrls, p, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		if id == "0" && ctrls == "" {
			ctrls = "0"
		}
		own[ctrls] = p
	}
	return own, sc.Err()
}

// ownDir places a cgroup path (relative to the hierarchy's root) under a
// mount of the hierarchy whose own root is mountRoot.
func ownDir(mount, mountRoot, cgPath string) string {
	if cgPath == "" || !strings.HasPrefix(cgPath, "/") {
		return ""
	}
	cgPath = path.Clean(cgPath)
	rel := cgPath
	if mountRoot != "/" {
		var ok bool
		rel, ok = strings.CutPrefix(cgPath, mountRoot)
		if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
			return ""
		}
	}
	dir := filepath.Join(mount, rel)
	if !isDir(dir) {
		return ""
	}
	return dir
}
