package telemetry

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/mountinfo"
)

// FuzzParseMountinfoLine: a line reads as a mount only with its device
// number, mount point, type and source; written back the way the kernel
// writes it, the mount reads the same; the options are the mount's and
// the superblock's, each once.
func FuzzParseMountinfoLine(f *testing.F) {
	for _, s := range []string{
		"36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue",
		"22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw",
		"30 22 0:27 /@home /home rw,relatime - btrfs /dev/mapper/vg-root rw,space_cache=v2,subvolid=257,subvol=/@home",
		`40 22 8:1 / /mnt/with\040space rw - vfat /dev/sda1 rw,fmask=0022`,
		"41 22 8:1 / /x rw - tmpfs tmpfs", "41 22 8:1 / /x rw -", "41 22 8:1 / /x rw - ext4", "1 2 3", "",
		"41 22 8 / /x rw - ext4 /dev/a rw", "41 22 4294967296:1 / /x rw - ext4 /dev/a rw", "41 22 8:1 / - rw - - - -",
		"41 22 8:1 / /x - - ext4 /dev/a rw", `41 22 8:1 / /x\ rw - ext4 /dev/a \777,,rw,rw`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		m, ok := parseMountinfoLine(line)
		if !ok {
			return
		}
		if m.point == "" || m.fstype == "" || m.source == "" {
			t.Fatalf("parseMountinfoLine(%q) = %+v", line, m)
		}
		seen := map[string]bool{}
		for _, o := range strings.Split(m.options, ",") {
			if m.options != "" && (o == "" || seen[o]) {
				t.Fatalf("parseMountinfoLine(%q): options %q repeat or hold an empty one", line, m.options)
			}
			seen[o] = true
		}
		for _, o := range strings.Split(m.superOpts, ",") {
			if o != "" && !strings.Contains(","+m.options+",", ","+o+",") {
				t.Fatalf("parseMountinfoLine(%q): options %q lack the superblock's %q", line, m.options, o)
			}
		}
		again := fmt.Sprintf("1 2 %d:%d / %s rw - %s %s", m.major, m.minor, mountinfo.Escape(m.point), m.fstype, mountinfo.Escape(m.source))
		if m.superOpts != "" {
			again += " " + mountinfo.Escape(m.superOpts)
		}
		m2, ok := parseMountinfoLine(again)
		if !ok || m2.major != m.major || m2.minor != m.minor || m2.point != m.point || m2.fstype != m.fstype ||
			m2.source != m.source || m2.superOpts != m.superOpts {
			t.Fatalf("parseMountinfoLine(%q) = %+v; written back as %q it reads %+v, %v", line, m, again, m2, ok)
		}
	})
}

// FuzzParseMajMin: a sysfs dev file reads only as two numbers that print
// back the same way.
func FuzzParseMajMin(f *testing.F) {
	for _, s := range []string{"8:16", "8:16\n", " 254:0 ", "8", "8:", ":1", "-1:0", "4294967296:0", "8:16:1", "0x8:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		maj, min, ok := parseMajMin(s)
		if !ok {
			return
		}
		if a, b, ok := parseMajMin(fmt.Sprintf("%d:%d", maj, min)); !ok || a != maj || b != min {
			t.Fatalf("parseMajMin(%q) = %d:%d, which reads back as %d:%d %v", s, maj, min, a, b, ok)
		}
	})
}

// FuzzParseBlockLine: a trace_pipe line reads as an event only with a time,
// a device, a sector and a sector count that, written back in the kernel's
// format, read the same again.
func FuzzParseBlockLine(f *testing.F) {
	for _, s := range []string{
		"fio-1234  [001] ..... 12345.678901: block_rq_issue: 254,0 W 4096 () 123456 + 8 none,0,0 [fio]",
		"<idle>-0  [000] ..s1. 12345.679001: block_rq_complete: 254,0 W () 123456 + 8 none,0,0 [0]",
		"kworker/0:1-5 [000] d..1. 8589934592.000000001: block_rq_complete: 8,0 FF () 0 + 0 [0]",
		"x [000] .... 1.5: block_rq_issue: 4096,0 W 1 () 1 + 1 [x]", "x [000] .... 1.: block_rq_issue: 8,0 W 1 () 1 + 1",
		"x [000] .... 1.0000000001: block_rq_issue: 8,0 W 1 () 1 + 1", "x 1.0: block_rq_issue: 8,1048576 W 1 () 1 + 1",
		"x 1.0: block_rq_issue: 8,1 W 1 () 18446744073709551615 + 4294967295", "x 1.0: block_rq_issue: 8,1 W 1 ( 1 + 1",
		"x 1.0: block_rq_issue: 8,1 W 1 () 1 +1", "x 1.0: block_rq_insert: 8,1 W 1 () 1 + 1", "CPU:1 [LOST 5 EVENTS]", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, ok := parseBlockLine(line)
		if !ok {
			return
		}
		if ev.tsNs < 0 {
			t.Fatalf("parseBlockLine(%q) = %+v: negative time", line, ev)
		}
		marker := "block_rq_issue: %d,%d W 4096 () %d + %d [x]"
		if ev.complete {
			marker = "block_rq_complete: %d,%d W () %d + %d [0]"
		}
		again := fmt.Sprintf("x-1 [000] ..... %d.%09d: "+marker, ev.tsNs/1e9, ev.tsNs%1e9, ev.dev>>20, ev.dev&(1<<20-1), ev.sector, ev.nrSector)
		ev2, ok := parseBlockLine([]byte(again))
		if !ok || ev2 != ev {
			t.Fatalf("parseBlockLine(%q) = %+v; written back as %q it reads %+v, %v", line, ev, again, ev2, ok)
		}
	})
}

// FuzzDiskRates: whatever the counters did between two readings (grew,
// wrapped at 2^32, were reset), the rates are finite, not negative, and
// util is at most 100%.
func FuzzDiskRates(f *testing.F) {
	f.Add(int64(time.Second), uint64(100), uint64(200), uint64(4096), uint64(10), uint64(5000), uint64(900), uint64(1<<32-10), uint64(5))
	f.Add(int64(1), uint64(0), uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(0), uint64(1), uint64(math.MaxUint32), uint64(0), uint64(math.MaxUint64))
	f.Add(int64(0), uint64(1), uint64(1), uint64(1), uint64(1), uint64(1), uint64(1), uint64(1), uint64(1))
	f.Add(int64(-5), uint64(1), uint64(1), uint64(1), uint64(1), uint64(1), uint64(1), uint64(1), uint64(1))
	f.Fuzz(func(t *testing.T, elapsed int64, a, b, c, d, e, g, h, k uint64) {
		t0 := time.Unix(1000, 0)
		prev := DiskCounters{At: t0, Devices: map[string]DiskStat{"vda": {ReadIOs: a, ReadSectors: b, ReadTicks: c,
			WriteIOs: d, WriteSectors: e, WriteTicks: g, IOTicks: h, WeightedIOTicks: k}}}
		cur := DiskCounters{At: t0.Add(time.Duration(elapsed)), Devices: map[string]DiskStat{"vda": {ReadIOs: k, ReadSectors: h,
			ReadTicks: g, WriteIOs: e, WriteSectors: d, WriteTicks: c, IOTicks: b, WeightedIOTicks: a}, "vdb": {}}}
		rates := DiskRates(prev, cur)
		if elapsed <= 0 && rates != nil {
			t.Fatalf("rates %+v over %d ns", rates, elapsed)
		}
		for _, r := range append(rates, TotalRates(rates)) {
			for _, v := range []float64{r.RIOPS, r.WIOPS, r.RMBps, r.WMBps, r.RAwaitMs, r.WAwaitMs, r.AquSz, r.UtilPct} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("rates %+v", r)
				}
			}
			if r.UtilPct > 100 || r.Name == "vdb" {
				t.Fatalf("rates %+v", r)
			}
		}
	})
}
