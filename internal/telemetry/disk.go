package telemetry

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/procfs/blockdevice"
	"github.com/tierbench/tierbench/internal/stored"
)

// DiskReader reads /proc/diskstats for the named devices (kernel names such
// as "vda", "nvme0n1", "loop3", "dm-0"; empty: all).
type DiskReader struct {
	fs      blockdevice.FS
	devices map[string]bool // nil: all
}

// NewDiskReader returns a reader of the diskstats under procRoot. It fails if
// a named device is not in diskstats now, so a misspelt name shows up at
// start rather than as a silently empty series.
func NewDiskReader(procRoot, sysRoot string, devices []string) (*DiskReader, error) {
	bfs, err := blockdevice.NewFS(procRoot, sysRoot)
	if err != nil {
		return nil, fmt.Errorf("disk telemetry: %w", err)
	}
	r := &DiskReader{fs: bfs}
	if len(devices) == 0 {
		return r, nil
	}
	r.devices = make(map[string]bool, len(devices))
	for _, d := range devices {
		r.devices[d] = true
	}
	c, err := r.Read()
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, d := range devices {
		if _, ok := c.Devices[d]; !ok {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("disk telemetry: no such device in %s/diskstats: %s", procRoot, strings.Join(missing, ", "))
	}
	return r, nil
}

// DiskCounters is one reading: per device the cumulative counters of
// /proc/diskstats, and the time it was taken.
type DiskCounters struct {
	At      time.Time
	Devices map[string]DiskStat
}

// DiskStat is one device's cumulative /proc/diskstats counters (fields 1-4,
// 5-8 and 10-11 of Documentation/admin-guide/iostats.rst; merges, in-flight,
// discards and flushes are not used).
type DiskStat struct {
	ReadIOs, ReadSectors, ReadTicks    uint64 // ticks in ms
	WriteIOs, WriteSectors, WriteTicks uint64
	IOTicks, WeightedIOTicks           uint64 // ms with I/O in flight; ms x I/Os in flight
}

// Read takes one reading.
func (r *DiskReader) Read() (DiskCounters, error) {
	at := time.Now()
	stats, err := r.fs.ProcDiskstats()
	if err != nil {
		return DiskCounters{}, fmt.Errorf("disk telemetry: read diskstats: %w", err)
	}
	c := DiskCounters{At: at, Devices: make(map[string]DiskStat, len(stats))}
	for _, s := range stats {
		if r.devices != nil && !r.devices[s.DeviceName] {
			continue
		}
		c.Devices[s.DeviceName] = DiskStat{
			ReadIOs: s.ReadIOs, ReadSectors: s.ReadSectors, ReadTicks: s.ReadTicks,
			WriteIOs: s.WriteIOs, WriteSectors: s.WriteSectors, WriteTicks: s.WriteTicks,
			IOTicks: s.IOsTotalTicks, WeightedIOTicks: s.WeightedIOTicks,
		}
	}
	return c, nil
}

// DiskRates computes iostat -x's numbers over prev..cur for every device
// present in both readings, sorted by name. A device that appeared or
// vanished between them is left out, and so is one whose counters were
// reset. It returns nil if no time elapsed.
func DiskRates(prev, cur DiskCounters) []stored.DeviceRates {
	secs := cur.At.Sub(prev.At).Seconds()
	if secs <= 0 {
		return nil
	}
	ms := secs * 1000
	var out []stored.DeviceRates
	for _, name := range slices.Sorted(maps.Keys(cur.Devices)) {
		p, ok := prev.Devices[name]
		if !ok {
			continue
		}
		d, ok := diskDelta(p, cur.Devices[name])
		if !ok {
			continue
		}
		// 512-byte sectors whatever the device's block size (iostats.rst).
		out = append(out, stored.DeviceRates{
			Name:     name,
			RIOPS:    float64(d.ReadIOs) / secs,
			WIOPS:    float64(d.WriteIOs) / secs,
			RMBps:    float64(d.ReadSectors) * 512 / 1e6 / secs,
			WMBps:    float64(d.WriteSectors) * 512 / 1e6 / secs,
			RAwaitMs: perIO(d.ReadTicks, d.ReadIOs),
			WAwaitMs: perIO(d.WriteTicks, d.WriteIOs),
			AquSz:    float64(d.WeightedIOTicks) / ms,
			UtilPct:  min(float64(d.IOTicks)/ms*100, 100),
		})
	}
	return out
}

// TotalRates sums IOPS, MB/s and aqu-sz over devs, averages the awaits
// weighted by each device's I/O count (its IOPS, as all devs cover the same
// interval) and takes the highest util. Name "total". Summing a device-mapper
// device together with the disks under it counts their I/O twice; choose devs
// accordingly.
func TotalRates(devs []stored.DeviceRates) stored.DeviceRates {
	t := stored.DeviceRates{Name: "total"}
	var rWeighted, wWeighted float64
	for _, d := range devs {
		t.RIOPS += d.RIOPS
		t.WIOPS += d.WIOPS
		t.RMBps += d.RMBps
		t.WMBps += d.WMBps
		t.AquSz += d.AquSz
		t.UtilPct = max(t.UtilPct, d.UtilPct)
		rWeighted += d.RAwaitMs * d.RIOPS
		wWeighted += d.WAwaitMs * d.WIOPS
	}
	if t.RIOPS > 0 {
		t.RAwaitMs = rWeighted / t.RIOPS
	}
	if t.WIOPS > 0 {
		t.WAwaitMs = wWeighted / t.WIOPS
	}
	return t
}

// diskDelta returns cur - prev field by field, or false if a counter was
// reset.
func diskDelta(prev, cur DiskStat) (DiskStat, bool) {
	ok := true
	f := func(p, c uint64) uint64 {
		d, good := counterDelta(p, c)
		ok = ok && good
		return d
	}
	d := DiskStat{
		ReadIOs:         f(prev.ReadIOs, cur.ReadIOs),
		ReadSectors:     f(prev.ReadSectors, cur.ReadSectors),
		ReadTicks:       f(prev.ReadTicks, cur.ReadTicks),
		WriteIOs:        f(prev.WriteIOs, cur.WriteIOs),
		WriteSectors:    f(prev.WriteSectors, cur.WriteSectors),
		WriteTicks:      f(prev.WriteTicks, cur.WriteTicks),
		IOTicks:         f(prev.IOTicks, cur.IOTicks),
		WeightedIOTicks: f(prev.WeightedIOTicks, cur.WeightedIOTicks),
	}
	return d, ok
}

// counterDelta is cur - prev for a kernel unsigned long. One that went down
// wrapped at 2^32 if prev fit in 32 bits (a 32-bit kernel), and was otherwise
// reset, which has no usable delta.
func counterDelta(prev, cur uint64) (uint64, bool) {
	switch {
	case cur >= prev:
		return cur - prev, true
	case prev <= math.MaxUint32:
		return cur + 1<<32 - prev, true
	default:
		return 0, false
	}
}

// perIO is ticks per I/O, 0 without I/O.
func perIO(ticks, ios uint64) float64 {
	if ios == 0 {
		return 0
	}
	return float64(ticks) / float64(ios)
}
