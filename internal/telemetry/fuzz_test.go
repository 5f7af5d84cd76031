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
		"0 0 0:0 0 \\013 0 - 0 0", "41 22 8:1 / /a\u00a0b rw - ext4 /dev/a rw",
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

// FuzzParsePage: whatever a page holds, parsePage stays inside it, and each
// event it returns took a record of its own: at least the 28 bytes up to
// nr_sector, and a 4-byte header.
func FuzzParsePage(f *testing.F) {
	l, err := parseRawLayout(headerPage618, issueFormat618, completeFormat618)
	if err != nil {
		f.Fatal(err)
	}
	b := &pageBuilder{ts: 7}
	b.record(5, 68, 2104, 8<<20, 100, 8, false)
	b.header(rbTypeTimeExtend, 1)
	b.word(3)
	b.record(2, 200, 2107, 8<<20, 100, 8, true)
	b.header(rbTypePadding, 11)
	b.word(8)
	b.word(0)
	f.Add(b.page(256, 0))
	f.Add(b.page(40, 0))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, page []byte) {
		evs := l.parsePage(page, nil)
		if room := (len(page) - l.pageData) / 32; len(evs) > max(room, 0) {
			t.Fatalf("%d events from a page of %d bytes", len(evs), len(page))
		}
		for _, ev := range evs {
			if ev.tsNs < 0 {
				t.Fatalf("negative time: %+v", ev)
			}
		}
	})
}
