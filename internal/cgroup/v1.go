package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/stored"
)

// v1 files. The memory controller caps with memory.limit_in_bytes (page
// cache included; memory.memsw.* would add swap, which a benchmark server
// should not be using anyway). blkio throttles with one file per direction
// and unit, each holding "MAJ:MIN N" lines; writing N = 0 removes a rule.
const (
	v1MemoryLimit = "memory.limit_in_bytes"
	v1ReadIOPS    = "blkio.throttle.read_iops_device"
	v1WriteIOPS   = "blkio.throttle.write_iops_device"
	v1ReadBPS     = "blkio.throttle.read_bps_device"
	v1WriteBPS    = "blkio.throttle.write_bps_device"
)

// v1Unlimited: memory.limit_in_bytes reads PAGE_COUNTER_MAX pages, a number
// near 2^63 (9223372036854771712 with 4 KiB pages); anything this large is
// "no cap".
const v1Unlimited = int64(1) << 62

// v1Throttles maps each blkio file to the IOLimit field it holds.
var v1Throttles = []struct {
	file  string
	field func(*stored.IOLimit) *int64
	what  string
}{
	{v1ReadIOPS, func(l *stored.IOLimit) *int64 { return &l.ReadIOPS }, "read IOPS"},
	{v1WriteIOPS, func(l *stored.IOLimit) *int64 { return &l.WriteIOPS }, "write IOPS"},
	{v1ReadBPS, func(l *stored.IOLimit) *int64 { return &l.ReadBPS }, "read bandwidth"},
	{v1WriteBPS, func(l *stored.IOLimit) *int64 { return &l.WriteBPS }, "write bandwidth"},
}

// createV1 makes the group in the memory and blkio hierarchies that exist
// (both always, so a reused group loses the limits it no longer has) and
// writes the limits. With lim.IOGroup, the blkio group is the shared
// tierbench/IOGROUP.
func (h Host) createV1(g *Group, mem, blk *Hierarchy, lim Limits, n *notes) {
	wantMem, wantIO := lim.MemoryBytes > 0, len(lim.IO) > 0
	if mem == nil && wantMem {
		n.memf("no memory cgroup controller (no v1 memory hierarchy and no memory controller in cgroup v2)")
	}
	if blk == nil && wantIO {
		n.iof("no blkio cgroup controller (no v1 blkio hierarchy and no io controller in cgroup v2)")
	}
	if mem != nil {
		dir, err := h.place(*mem, g.name)
		if err != nil {
			if wantMem {
				n.memf("cannot create the memory cgroup: %v%s", err, rootHint(err))
			}
		} else {
			g.members = append(g.members, member{dir: dir, base: baseOf(dir), mount: mem.Mount, mem: true})
			v := "-1" // no cap
			if wantMem {
				v = strconv.FormatInt(lim.MemoryBytes, 10)
			}
			if err := h.ops.write(filepath.Join(dir, v1MemoryLimit), v); err != nil && wantMem {
				n.memf("%s refused the cap: %v", v1MemoryLimit, errText(err))
			}
		}
	}
	if blk != nil {
		// A shared I/O budget is one blkio group that every member's
		// processes join; the memory groups stay apart.
		name, shared := g.name, lim.IOGroup != ""
		if shared {
			name = lim.IOGroup
		}
		dir, err := h.place(*blk, name)
		if err != nil {
			if wantIO {
				n.iof("cannot create the blkio cgroup: %v%s", err, rootHint(err))
			}
			return
		}
		g.members = append(g.members, member{dir: dir, base: baseOf(dir), mount: blk.Mount, io: true, shared: shared})
		h.throttleV1(dir, lim.IO, n)
	}
}

// place returns the group's directory in a v1 hierarchy: an existing one,
// else a new one under the first candidate parent that allows it.
func (h Host) place(hy Hierarchy, name string) (string, error) {
	if dir := existing(hy, name); dir != "" {
		return dir, nil
	}
	var errs []error
	for _, parent := range hy.candidates() {
		dir, err := h.mkdirs(parent, name)
		if err == nil {
			return dir, nil
		}
		errs = append(errs, err)
	}
	return "", errs[len(errs)-1] // the root's reason: the last resort
}

func rootHint(err error) string {
	if errors.Is(err, os.ErrPermission) && os.Geteuid() != 0 {
		return " (cgroups need root)"
	}
	return ""
}

// throttleV1 writes every device's four rules, and lifts the rules of
// devices no longer limited.
func (h Host) throttleV1(dir string, limits []stored.IOLimit, n *notes) {
	old, _ := readIO(dir, 1)
	for _, o := range old {
		if !hasDevice(limits, o.Major, o.Minor) {
			limits = append(limits, stored.IOLimit{Major: o.Major, Minor: o.Minor})
		}
	}
	for _, l := range limits {
		for _, t := range v1Throttles {
			v := *t.field(&l)
			err := h.ops.write(filepath.Join(dir, t.file), fmt.Sprintf("%s %d", l.Device(), v))
			if err != nil && v > 0 {
				n.iof("%s limit on %s not applied: %s refused it: %v%s", t.what, l.Device(), t.file, errText(err), deviceHint(err))
			}
		}
	}
}

// errText is an error without the path a PathError adds: notes name the file themselves.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func hasDevice(limits []stored.IOLimit, major, minor uint32) bool {
	for _, l := range limits {
		if l.Major == major && l.Minor == minor {
			return true
		}
	}
	return false
}

// readMemory reads the cap: v1 memory.limit_in_bytes, v2 memory.max; 0 is none.
func readMemory(dir string, version int) (int64, error) {
	file := v1MemoryLimit
	if version == 2 {
		file = "memory.max"
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", filepath.Join(dir, file), s)
	}
	if v >= v1Unlimited || v < 0 {
		return 0, nil
	}
	return v, nil
}

// readIO reads the device throttles, sorted by device.
func readIO(dir string, version int) ([]stored.IOLimit, error) {
	if version == 2 {
		b, err := os.ReadFile(filepath.Join(dir, "io.max"))
		if err != nil {
			return nil, err
		}
		return parseIOMax(string(b))
	}
	var out []stored.IOLimit
	for _, t := range v1Throttles {
		b, err := os.ReadFile(filepath.Join(dir, t.file))
		if err != nil {
			return out, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			maj, min, ok := parseDevice(f[0])
			v, err := strconv.ParseInt(f[1], 10, 64)
			if !ok || err != nil {
				return out, fmt.Errorf("%s: malformed line %q", filepath.Join(dir, t.file), line)
			}
			if v == 0 || v == math.MaxInt64 || uint64(v) == math.MaxUint64 {
				continue
			}
			out = upsert(out, maj, min, func(l *stored.IOLimit) { *t.field(l) = v })
		}
	}
	return out, nil
}

// upsert applies set to the device's entry, adding it (in device order) when absent.
func upsert(list []stored.IOLimit, major, minor uint32, set func(*stored.IOLimit)) []stored.IOLimit {
	for i := range list {
		if list[i].Major == major && list[i].Minor == minor {
			set(&list[i])
			return list
		}
	}
	l := stored.IOLimit{Major: major, Minor: minor}
	set(&l)
	i := 0
	for i < len(list) && (list[i].Major < major || list[i].Major == major && list[i].Minor < minor) {
		i++
	}
	return append(list[:i], append([]stored.IOLimit{l}, list[i:]...)...)
}

func parseDevice(s string) (uint32, uint32, bool) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, false
	}
	maj, err1 := strconv.ParseUint(a, 10, 32)
	min, err2 := strconv.ParseUint(b, 10, 32)
	return uint32(maj), uint32(min), err1 == nil && err2 == nil
}
