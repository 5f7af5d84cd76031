package experiment

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/units"
)

// ApplyServerLimits caps and throttles a started managed server; the device
// throttled is the one holding its data directory. With ioGroup (an
// emulated tier's cgroup), the throttle is that group's budget, shared with
// every other server and workload in it; the memory cap stays the server's
// own. A device that cannot be found is a note (Applied.IONote), as is
// anything the machine's cgroups cannot do. It returns the device throttled
// ("" when none).
func ApplyServerLimits(ctx context.Context, dataDir string, memory int64, io stored.IOLimit, wantIO bool, ioGroup string) (stored.Applied, string, error) {
	lim := cgroup.Limits{MemoryBytes: memory}
	var device, ioNote string
	if wantIO {
		name, maj, min, err := server.DeviceFor(dataDir)
		if err != nil {
			ioNote = err.Error()
		} else {
			io.Major, io.Minor, device = maj, min, name
			lim.IO, lim.IOGroup = []stored.IOLimit{io}, ioGroup
		}
	}
	var ap stored.Applied
	if lim.MemoryBytes > 0 || len(lim.IO) > 0 {
		var err error
		if ap, err = server.ApplyLimits(ctx, dataDir, lim); err != nil {
			return ap, device, err
		}
	}
	if ioNote != "" {
		ap.IONote = ioNote
	}
	return ap, device, nil
}

// LimitsText says in one line what applied and what did not, and why;
// target names the scenario target whose servers share the I/O limits.
func LimitsText(ap stored.Applied, wantMem, wantIO bool, device, target string) string {
	var parts []string
	if wantMem {
		if ap.MemoryMax > 0 {
			parts = append(parts, fmt.Sprintf("memory capped at %s through cgroup v%d (page cache included)", units.FormatSize(ap.MemoryMax), ap.Version))
		} else {
			parts = append(parts, "memory not capped: "+OrUnknown(ap.MemoryNote)+" (buffers sized only)")
		}
	}
	if wantIO {
		var got []string
		for _, l := range ap.IO {
			if l.ReadIOPS > 0 {
				got = append(got, fmt.Sprintf("read IOPS limited to %d", l.ReadIOPS))
			}
			if l.WriteIOPS > 0 {
				got = append(got, fmt.Sprintf("write IOPS limited to %d", l.WriteIOPS))
			}
			if l.ReadBPS > 0 {
				got = append(got, fmt.Sprintf("reads limited to %s MB/s", strconv.FormatFloat(float64(l.ReadBPS)/1e6, 'f', -1, 64)))
			}
			if l.WriteBPS > 0 {
				got = append(got, fmt.Sprintf("writes limited to %s MB/s", strconv.FormatFloat(float64(l.WriteBPS)/1e6, 'f', -1, 64)))
			}
		}
		note := ap.IONote
		if len(got) > 0 {
			s := strings.Join(got, ", ") + " on " + device
			switch {
			case ap.IOShared && target != "":
				s += ", shared by every server on target " + target
			case ap.IOShared:
				s += ", shared by every server in " + ap.IOPath
			}
			if note == cgroup.V1WritebackNote {
				s += " (" + note + ")"
				note = ""
			}
			parts = append(parts, s)
		}
		if note != "" || len(got) == 0 {
			parts = append(parts, "I/O not fully throttled: "+OrUnknown(note))
		}
	}
	return strings.Join(parts, "; ")
}

// OrUnknown is a note, or "reason unknown" when there is none.
func OrUnknown(note string) string {
	if note == "" {
		return "reason unknown"
	}
	return note
}
