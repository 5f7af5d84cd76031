package telemetry

import (
	"bytes"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/stored"
)

func readNodePage(t testing.TB, name string) NodeCounters {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ParseNodePage(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return c
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Two pages of a real node_exporter 1.5 (node-t0.prom as captured with
// collect[]=cpu,diskstats,time; node-t1.prom the same with its counters
// advanced by hand over 2 s of its clock) give iostat -x's figures and the
// CPU shares exactly.
func TestNodeRatesFromPages(t *testing.T) {
	p, c := readNodePage(t, "node-t0.prom"), readNodePage(t, "node-t1.prom")
	if !p.HasCPU || !p.HasDisks || p.Time.IsZero() {
		t.Fatalf("page 0: cpu %v disks %v time %v", p.HasCPU, p.HasDisks, p.Time)
	}
	if d := c.Time.Sub(p.Time); d != 2*time.Second {
		t.Fatalf("the pages' clocks are %v apart, want 2s", d)
	}
	h := NodeRates(p, c)
	if !h.Up {
		t.Fatal("not up")
	}
	// cpu0 +1.0 idle, +0.2 iowait, +0.4 user, +0.1 nice, +0.1 system,
	// +0.1 softirq, +0.1 steal; cpu1 +1.2 idle, +0.5 user, +0.2 system,
	// +0.1 softirq: 4 CPU-seconds.
	want := CPU{IdlePct: 55, IOWaitPct: 5, UserPct: 25, SystemPct: 12.5, StealPct: 2.5}
	if !near(h.CPU.IdlePct, want.IdlePct) || !near(h.CPU.IOWaitPct, want.IOWaitPct) || !near(h.CPU.UserPct, want.UserPct) ||
		!near(h.CPU.SystemPct, want.SystemPct) || !near(h.CPU.StealPct, want.StealPct) {
		t.Errorf("CPU %+v, want %+v", h.CPU, want)
	}
	if len(h.Devices) != 2 || h.Devices[0].Name != "vda" || h.Devices[1].Name != "zram0" {
		t.Fatalf("devices %+v, want vda and zram0", h.Devices)
	}
	// vda: +200 reads of 4 KiB in 0.5 s, +400 writes of 8 KiB in 2 s,
	// 1.5 s busy, 3 s weighted.
	got, wantD := h.Devices[0], stored.DeviceRates{Name: "vda", RIOPS: 100, WIOPS: 200, RMBps: 0.4096, WMBps: 1.6384,
		RAwaitMs: 2.5, WAwaitMs: 5, AquSz: 1.5, UtilPct: 75}
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"r/s", got.RIOPS, wantD.RIOPS}, {"w/s", got.WIOPS, wantD.WIOPS}, {"rMB/s", got.RMBps, wantD.RMBps},
		{"wMB/s", got.WMBps, wantD.WMBps}, {"r_await", got.RAwaitMs, wantD.RAwaitMs}, {"w_await", got.WAwaitMs, wantD.WAwaitMs},
		{"aqu-sz", got.AquSz, wantD.AquSz}, {"%util", got.UtilPct, wantD.UtilPct},
	} {
		if !near(f.got, f.want) {
			t.Errorf("vda %s = %v, want %v", f.name, f.got, f.want)
		}
	}
	if z := h.Devices[1]; z != (stored.DeviceRates{Name: "zram0"}) {
		t.Errorf("zram0 %+v, want idle", z)
	}
	// The session leaves the idle zram device out, until it does I/O.
	active := map[string]bool{}
	if devs := keepDevices(append([]stored.DeviceRates(nil), h.Devices...), active); len(devs) != 1 || devs[0].Name != "vda" {
		t.Errorf("kept %+v, want vda alone", devs)
	}
	devs := keepDevices([]stored.DeviceRates{{Name: "loop3", WIOPS: 1}, {Name: "sda"}, {Name: "ram0"}}, active)
	if len(devs) != 2 || devs[0].Name != "loop3" || devs[1].Name != "sda" {
		t.Errorf("kept %+v, want loop3 (busy) and sda (idle, but not virtual)", devs)
	}
	if devs := keepDevices([]stored.DeviceRates{{Name: "loop3"}}, active); len(devs) != 1 {
		t.Errorf("loop3 idle again was dropped: %+v", devs)
	}
	// Clock offset: the host's clock minus the middle of the request.
	c.Sent = c.Time.Add(-1500 * time.Millisecond)
	c.Received = c.Sent.Add(40 * time.Millisecond)
	if off, ok := c.ClockOffset(); !ok || off != 1480*time.Millisecond {
		t.Errorf("clock offset %v %v, want 1.48s", off, ok)
	}
	// The same page twice: no time elapsed, no figures.
	if h := NodeRates(c, c); h.Up {
		t.Errorf("a repeated page is up: %+v", h)
	}
}

// The whole page of the same exporter (every default collector) reads the
// same families.
func TestParseNodeFullPage(t *testing.T) {
	c := readNodePage(t, "node-full.prom")
	if !c.HasCPU || c.CPU.Idle <= 0 || c.Time.IsZero() || len(c.Disks.Devices) != 2 || c.Disks.Devices["vda"].WriteIOs == 0 {
		t.Errorf("full page: %+v", c)
	}
	if _, err := ParseNodePage(strings.NewReader("# HELP up x\nup 1\n")); err == nil || !strings.Contains(err.Error(), "node_cpu_seconds_total") {
		t.Errorf("a page without CPU: %v", err)
	}
	if _, err := ParseNodePage(strings.NewReader("node_cpu_seconds_total{cpu=\"0\" 1\n")); err == nil {
		t.Error("a malformed page parsed")
	}
	// A device with a counter missing is left out rather than read as 0.
	page := "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 5\nnode_disk_reads_completed_total{device=\"sda\"} 3\n"
	if c, err := ParseNodePage(strings.NewReader(page)); err != nil || c.HasDisks || c.CPU.Idle != 5 {
		t.Errorf("partial page: %+v %v", c, err)
	}
}

func TestParseNode(t *testing.T) {
	for spec, want := range map[string]Node{
		"db1=http://10.0.0.5:9100/metrics":    {"db1", "http://10.0.0.5:9100/metrics"},
		"db1=http://10.0.0.5:9100":            {"db1", "http://10.0.0.5:9100/metrics"},
		" db-2_x = https://h.example/m?x=1 ":  {"db-2_x", "https://h.example/m?x=1"},
		"a=http://[::1]:9100/#frag":           {"a", "http://[::1]:9100/metrics"},
		"B=http://u:p@h:1/node/metrics?a=b&c": {"B", "http://u:p@h:1/node/metrics?a=b&c"},
	} {
		got, err := ParseNode(spec)
		if err != nil || got != want {
			t.Errorf("ParseNode(%q) = %+v, %v; want %+v", spec, got, err, want)
		}
	}
	for _, spec := range []string{"x", "", "=", "=http://a", "db1=", "db1", "db1=ftp://a/metrics", "db1=http://",
		"db1=10.0.0.5:9100", "db1=localhost:9100", "db1=http:foo", "db.1=http://a:9100", "db 1=http://a",
		"-db=http://a", "db1=http://:9100/metrics", strings.Repeat("a", 65) + "=http://a", "db1=://a", "db1=http://a b"} {
		if n, err := ParseNode(spec); err == nil {
			t.Errorf("ParseNode(%q) = %+v, want an error", spec, n)
		} else if !strings.Contains(err.Error(), "e.g. db1=http://10.0.0.5:9100/metrics") {
			t.Errorf("ParseNode(%q): %v (no example)", spec, err)
		}
	}
	if err := CheckNodes([]Node{{"a", "http://h:1/metrics"}, {"b", "http://h:2/metrics"}, {"a", "http://h:3/metrics"}}); err == nil ||
		!strings.Contains(err.Error(), "a is given twice") {
		t.Errorf("duplicate names: %v", err)
	}
	if err := CheckNodes([]Node{{"a", "http://h:1"}}); err == nil {
		t.Error("an unnormalised URL passed")
	}
	if n := (Node{"a", "http://u:secret@h:1/metrics"}); strings.Contains(n.Redacted(), "secret") {
		t.Errorf("Redacted %s", n.Redacted())
	}
	for _, spec := range []string{"a=http://u:secret@h:1/metrics", "a=ftp://u:secret@h", "a=http://u:secret@h:x y/%zz", "a=u:secret@h"} {
		if r := RedactNodeSpec(spec); strings.Contains(r, "secret") || !strings.HasPrefix(r, "a=") {
			t.Errorf("RedactNodeSpec(%q) = %q", spec, r)
		}
	}
}

// Hosts average over the samples they answered in; missing ones count.
func TestSummarizeHosts(t *testing.T) {
	up := func(idle float64, off time.Duration, devs ...stored.DeviceRates) HostSample {
		return HostSample{Host: "a", Up: true, CPU: CPU{IdlePct: idle, UserPct: 100 - idle}, Devices: devs, ClockOffset: off, Clocked: true}
	}
	samples := []Sample{
		{ServerCPUPct: -1, Hosts: []HostSample{up(80, 3*time.Millisecond, stored.DeviceRates{Name: "sda", WIOPS: 100, WAwaitMs: 1}), {Host: "b"}}},
		{ServerCPUPct: -1, Hosts: []HostSample{{Host: "a"}, {Host: "b"}}},
		{ServerCPUPct: -1, Hosts: []HostSample{up(40, 5*time.Millisecond, stored.DeviceRates{Name: "sda", WIOPS: 300, WAwaitMs: 3},
			stored.DeviceRates{Name: "loop1", RIOPS: 10, RAwaitMs: 2}), {Host: "b"}}},
		{ServerCPUPct: -1, Hosts: []HostSample{up(60, 4*time.Millisecond, stored.DeviceRates{Name: "sda"}), {Host: "b"}}},
	}
	a := Summarize(samples)
	if len(a.Hosts) != 2 || a.Hosts[0].Host != "a" || a.Hosts[1].Host != "b" {
		t.Fatalf("hosts %+v", a.Hosts)
	}
	h := a.Hosts[0]
	if h.Samples != 3 || h.Missing != 1 || !near(h.CPUIdlePct, 60) || !near(h.CPUUserPct, 40) || h.ClockOffsetMs != 4 {
		t.Errorf("host a %+v", h)
	}
	if len(h.Devices) != 2 || h.Devices[0].Name != "loop1" || h.Devices[1].Name != "sda" {
		t.Fatalf("devices %+v", h.Devices)
	}
	// loop1 did I/O in one of the three samples; sda's await is weighted.
	if l := h.Devices[0]; !near(l.RIOPS, 10.0/3) || l.RAwaitMs != 2 {
		t.Errorf("loop1 %+v", l)
	}
	if s := h.Devices[1]; !near(s.WIOPS, 400.0/3) || !near(s.WAwaitMs, 2.5) {
		t.Errorf("sda %+v", s)
	}
	if b := a.Hosts[1]; b.Samples != 0 || b.Missing != 4 || b.Devices != nil {
		t.Errorf("host b %+v", b)
	}
	v := samples[2].Values()
	if v["node.a.cpu_idle_pct"] != 40 || v["node.a.dev.sda.w_iops"] != 300 || v["node.a.dev.loop1.r_await_ms"] != 2 ||
		v["node.a.up"] != 1 || v["node.a.clock_offset_ms"] != 5 || v["node.b.up"] != 0 {
		t.Errorf("values %v", v)
	}
	if _, ok := v["node.b.cpu_idle_pct"]; ok {
		t.Error("a host that did not answer has figures")
	}
}

// FuzzParseNode: a spec reads as a node only with a valid name and an
// http(s) URL with a host; written back as NAME=URL it reads the same, and
// CheckNodes accepts it.
func FuzzParseNode(f *testing.F) {
	for _, s := range []string{"db1=http://10.0.0.5:9100/metrics", "x", "=", "a=http://h", "a=https://u:p@h:1/m?x=1#f",
		"a=http://[::1]:9100", "a=http://%zz", "a=http:opaque", "a=http://h/%2e%2e", "a= http://h", "a=http://h:99999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		n, err := ParseNode(spec)
		if err != nil {
			return
		}
		if !nodeName.MatchString(n.Name) || !(strings.HasPrefix(n.URL, "http://") || strings.HasPrefix(n.URL, "https://")) {
			t.Fatalf("ParseNode(%q) = %+v", spec, n)
		}
		again, err := ParseNode(n.Name + "=" + n.URL)
		if err != nil || again != n {
			t.Fatalf("ParseNode(%q) = %+v, but its NAME=URL reads %+v, %v", spec, n, again, err)
		}
		if err := CheckNodes([]Node{n}); err != nil {
			t.Fatalf("CheckNodes(%+v): %v", n, err)
		}
	})
}

// BenchmarkNodeScrape is the controller's cost of one scrape: parsing a
// real node_exporter 1.5 page, the filtered one a session asks for and the
// whole one, and a whole scrape over loopback HTTP.
func BenchmarkNodeScrape(b *testing.B) {
	for _, name := range []string{"node-t0.prom", "node-full.prom"} {
		page, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("parse-"+strings.TrimSuffix(name, ".prom"), func(b *testing.B) {
			np := newNodeParser()
			b.ReportAllocs()
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				if _, err := np.parse(bytes.NewReader(page)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	page, err := os.ReadFile(filepath.Join("testdata", "node-t0.prom"))
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(page) }))
	defer srv.Close()
	b.Run("http-node-t0", func(b *testing.B) {
		r := NewNodeReader(Node{Name: "a", URL: srv.URL + "/metrics"}, 2*time.Second)
		defer r.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Read(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
