package telemetry

import (
	"math"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/stored"
)

// diskRead reads the diskstats fixture of one sample tree, stamped at.
func diskRead(t *testing.T, tree string, devices []string, at time.Time) DiskCounters {
	t.Helper()
	r, err := NewDiskReader("testdata/"+tree+"/proc", t.TempDir(), devices)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	c.At = at
	return c
}

// diskSamples returns the two fixture readings, 2 s apart.
func diskSamples(t *testing.T, devices []string) (prev, cur DiskCounters) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return diskRead(t, "disk-t0", devices, t0), diskRead(t, "disk-t1", devices, t0.Add(2*time.Second))
}

func TestDiskRates(t *testing.T) {
	got := DiskRates(diskSamples(t, nil))
	// loop3 vanished, dm-0 appeared, sdb's 64-bit read count went down
	// (reset): all three are left out.
	want := []stored.DeviceRates{
		// nvme0n1: writes wrapped at 2^32 (4294967000 -> 704: +1000), no
		// reads, 16000 sectors written, 1500 ms write ticks, 2100 ms io
		// ticks (105% capped), 2000 weighted ms.
		{Name: "nvme0n1", WIOPS: 500, WMBps: 4.096, WAwaitMs: 1.5, AquSz: 1, UtilPct: 100},
		// vda: +400 reads, 20000 sectors, 800 ms; +1000 writes, 8000
		// sectors, 5000 ms; 1500 ms io ticks, 5800 weighted ms.
		{Name: "vda", RIOPS: 200, WIOPS: 500, RMBps: 5.12, WMBps: 2.048, RAwaitMs: 2, WAwaitMs: 5, AquSz: 2.9, UtilPct: 75},
		// vda1: +100 reads, 10000 sectors, 200 ms; +50 writes, 4000
		// sectors, 300 ms; 1000 ms io ticks, 1200 weighted ms.
		{Name: "vda1", RIOPS: 50, WIOPS: 25, RMBps: 2.56, WMBps: 1.024, RAwaitMs: 2, WAwaitMs: 6, AquSz: 0.6, UtilPct: 50},
	}
	diskAssertRates(t, got, want)

	tot := TotalRates(got[:2]) // nvme0n1 and vda
	diskAssertRates(t, []stored.DeviceRates{tot}, []stored.DeviceRates{{
		Name: "total", RIOPS: 200, WIOPS: 1000, RMBps: 5.12, WMBps: 6.144,
		RAwaitMs: 2, WAwaitMs: (1.5*500 + 5*500) / 1000, AquSz: 3.9, UtilPct: 100,
	}})
}

func TestDiskFilter(t *testing.T) {
	prev, cur := diskSamples(t, []string{"nvme0n1", "sdb"})
	if len(prev.Devices) != 2 || len(cur.Devices) != 2 {
		t.Fatalf("filtered readings hold %d and %d devices, want 2", len(prev.Devices), len(cur.Devices))
	}
	got := DiskRates(prev, cur)
	if len(got) != 1 || got[0].Name != "nvme0n1" {
		t.Errorf("DiskRates = %+v, want nvme0n1 only", got)
	}
	if _, err := NewDiskReader("testdata/disk-t0/proc", t.TempDir(), []string{"vda", "sdz"}); err == nil {
		t.Error("NewDiskReader with an unknown device: no error")
	}
}

func TestDiskCounterDelta(t *testing.T) {
	for _, tc := range []struct {
		prev, cur, want uint64
		ok              bool
	}{
		{10, 25, 15, true},
		{math.MaxUint32 - 4, 5, 10, true}, // wrapped at 2^32
		{1 << 32, 5, 0, false},            // 64-bit value went down: reset
	} {
		got, ok := counterDelta(tc.prev, tc.cur)
		if got != tc.want || ok != tc.ok {
			t.Errorf("counterDelta(%d, %d) = %d, %v; want %d, %v", tc.prev, tc.cur, got, ok, tc.want, tc.ok)
		}
	}
	if r := DiskRates(DiskCounters{}, DiskCounters{}); r != nil {
		t.Errorf("DiskRates over no time = %+v, want nil", r)
	}
}

func diskAssertRates(t *testing.T, got, want []stored.DeviceRates) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d devices %+v, want %d", len(got), got, len(want))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for i, g := range got {
		w := want[i]
		if g.Name != w.Name || !near(g.RIOPS, w.RIOPS) || !near(g.WIOPS, w.WIOPS) ||
			!near(g.RMBps, w.RMBps) || !near(g.WMBps, w.WMBps) ||
			!near(g.RAwaitMs, w.RAwaitMs) || !near(g.WAwaitMs, w.WAwaitMs) ||
			!near(g.AquSz, w.AquSz) || !near(g.UtilPct, w.UtilPct) {
			t.Errorf("device %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}
