package stored

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/stats"
)

// dirOf is a direction with the given IOPS whose I/Os took lat ms each,
// one I/O a latency: its histogram, mean, percentiles and maximum are
// those of lat, as mergeDir would make them.
func dirOf(iops float64, lat ...int64) *DirStats {
	d := &DirStats{IOPS: iops, MBps: iops * 4096 / 1e6, IOs: uint64(len(lat)), Hist: &Hist{}}
	var sum int64
	for _, ms := range lat {
		d.Hist.Add(ms*1e6, 1)
		sum += ms
		d.MaxMs = math.Max(d.MaxMs, float64(ms))
	}
	d.MeanMs = float64(sum) / float64(len(lat))
	d.P50Ms, d.P95Ms, d.P99Ms, d.P999Ms = d.Hist.PercentilesMs()
	return d
}

// pointOf is a repetition of a point named name.
func pointOf(name string, rep int, read, write *DirStats, usr float64) Point {
	return Point{Name: name, BS: "4k", BSBytes: 4096, RW: "randrw", RWMixRead: 70, IODepth: 8, Jobs: 2, Repetition: rep,
		Read: read, Write: write, UsrCPUPct: usr, SysCPUPct: usr / 2, Seconds: 10}
}

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestGroupPoints: three points, three repetitions interleaved (A,B,C,A,B,C,…),
// C never run and B's last cut short. Each point comes once, in the order
// given, with the means of its repetitions in its keys, each figure's
// Stats, percentiles pooled from the merged histograms, and its
// repetitions in the order they ran.
func TestGroupPoints(t *testing.T) {
	a1 := pointOf("A", 1, dirOf(1000, 1, 2, 3, 4), dirOf(10, 1), 10)
	a2 := pointOf("A", 2, dirOf(1100, 5, 6), dirOf(20, 2), 20)
	a3 := pointOf("A", 3, dirOf(1200, 20, 30, 40, 50), dirOf(30, 3), 30)
	a1.Host = map[string]float64{"cpu_iowait_pct": 4}
	a3.Host = map[string]float64{"cpu_iowait_pct": 8} // a2 has no telemetry
	for i, p := range []*Point{&a1, &a2, &a3} {
		p.SteadyState = &SteadyState{Criterion: "iops_slope:2%", Attained: true, JobsAttained: 2, Jobs: 2, AttainedAfterS: float64(6 + 2*i)}
	}
	b1 := pointOf("B", 1, dirOf(500, 1), nil, 5)
	b2 := pointOf("B", 2, dirOf(700, 3), nil, 5)
	b3 := pointOf("B", 3, dirOf(99999, 100), nil, 5)
	b3.Interrupted = true
	g := GroupPoints([]Ran{{0, a1}, {1, b1}, {0, a2}, {1, b2}, {0, a3}, {1, b3}})
	if len(g) != 2 || g[0].Name != "A" || g[1].Name != "B" {
		t.Fatalf("grouped into %d points: %+v", len(g), g)
	}
	a := g[0]
	if a.Repetition != 0 || len(a.Repetitions) != 3 || a.BS != "4k" || a.IODepth != 8 || a.Jobs != 2 || a.Interrupted {
		t.Errorf("A: repetition %d, %d repetitions, %+v", a.Repetition, len(a.Repetitions), a)
	}
	for i, r := range a.Repetitions {
		if r.Repetition != i+1 || r.Read.IOPS != []float64{1000, 1100, 1200}[i] {
			t.Errorf("A's repetition %d: %d, %v IOPS", i+1, r.Repetition, r.Read.IOPS)
		}
	}

	// The keys hold the means: of the rates, and of each repetition's own
	// percentiles (p50s 2, 5 and 30 ms).
	if a.Read.IOPS != 1100 || !closeTo(a.Read.MBps, 1100*4096/1e6) || !closeTo(a.Read.P50Ms, (2.0+5+30)/3) ||
		!closeTo(a.Read.P99Ms, (4.0+6+50)/3) || !closeTo(a.Read.MaxMs, (4.0+6+50)/3) || a.Read.IOs != 3 || a.Write.IOPS != 20 ||
		a.UsrCPUPct != 20 || a.SysCPUPct != 10 || a.Seconds != 10 {
		t.Errorf("A's means: read %+v, write %+v, CPU %v/%v", *a.Read, *a.Write, a.UsrCPUPct, a.SysCPUPct)
	}
	// Each figure's Stats are stats.Of the repetitions' values; telemetry
	// one repetition lacks is over those that have it.
	for name, vals := range map[string][]float64{
		"read.iops": {1000, 1100, 1200}, "read.p50_ms": {2, 5, 30}, "write.iops": {10, 20, 30}, "usr_cpu_pct": {10, 20, 30},
		"read.ios": {4, 2, 4}, "host.cpu_iowait_pct": {4, 8},
	} {
		if got, want := a.Stats[name], stats.Of(vals); got != want {
			t.Errorf("A's %s: %+v, want %+v", name, got, want)
		}
	}
	if s := a.Stats["read.iops"]; s.N != 3 || !closeTo(s.Stddev, 100) || !(s.Low < 1100 && 1100 < s.High) {
		t.Errorf("A's read.iops: %+v", s)
	}
	if a.Host["cpu_iowait_pct"] != 6 || a.Stats["host.cpu_iowait_pct"].N != 2 {
		t.Errorf("A's telemetry %v, %+v", a.Host, a.Stats["host.cpu_iowait_pct"])
	}
	if ss := a.SteadyState; ss == nil || !ss.Attained || ss.Jobs != 6 || ss.JobsAttained != 6 || ss.AttainedAfterS != 8 {
		t.Errorf("A's steady state %+v", ss)
	}

	// Pooled: the ten I/Os of the three repetitions in one histogram,
	// merged here by hand.
	merged := histOf(map[int64]uint64{1e6: 1, 2e6: 1, 3e6: 1, 4e6: 1, 5e6: 1, 6e6: 1, 20e6: 1, 30e6: 1, 40e6: 1, 50e6: 1})
	pct := merged.Percentiles(50, 95, 99, 99.9)
	p := a.Pooled.Read
	if p == nil || p.IOs != 10 || p.P50Ms != float64(pct[0])/1e6 || p.P95Ms != float64(pct[1])/1e6 || p.P99Ms != float64(pct[2])/1e6 ||
		p.P999Ms != float64(pct[3])/1e6 || p.MaxMs != 50 || !closeTo(p.MeanMs, (2.5*4+5.5*2+35*4)/10) {
		t.Fatalf("A's pooled read %+v; want the percentiles %v of the merged bins", p, pct)
	}
	if p.P50Ms != 5 || p.P99Ms != 50 { // the 5th and the 10th of the ten I/Os
		t.Errorf("A's pooled p50 %v and p99 %v; want 5 and 50 ms", p.P50Ms, p.P99Ms)
	}
	if a.Read.Hist.Count() != 10 || a.Pooled.Write == nil || a.Pooled.Write.IOs != 3 || a.Pooled.Write.P50Ms != 2 {
		t.Errorf("A's merged read histogram has %d I/Os; pooled write %+v", a.Read.Hist.Count(), a.Pooled.Write)
	}

	// B's cut repetition stays listed but counts nowhere else.
	b := g[1]
	if b.Read.IOPS != 600 || b.Stats["read.iops"].N != 2 || b.Pooled.Read.IOs != 2 || b.Pooled.Read.MaxMs != 3 ||
		len(b.Repetitions) != 3 || !b.Repetitions[2].Interrupted || b.Interrupted || b.Write != nil || b.Pooled.Write != nil {
		t.Errorf("B: %+v", b)
	}

	// Order: the points as given, not as they first ran; none ran: none.
	if g := GroupPoints([]Ran{{1, b1}, {0, a1}}); len(g) != 2 || g[0].Name != "A" || g[1].Name != "B" {
		t.Errorf("order: %v", g)
	}
	if g := GroupPoints(nil); g == nil || len(g) != 0 {
		t.Errorf("no points: %v", g)
	}
}

// A point run once, in a run that does not repeat, is itself with Stats of
// n = 1; a lone repetition (the others never ran) keeps the repeated
// shape.
func TestGroupPointsOnce(t *testing.T) {
	p := pointOf("A", 0, dirOf(1000, 1, 2), nil, 10)
	g := GroupPoints([]Ran{{0, p}})
	s := g[0].Stats["read.iops"]
	if len(g) != 1 || g[0].Read != p.Read || g[0].Pooled != nil || g[0].Repetitions != nil || s.N != 1 || s.Mean != 1000 || s.HasCI() {
		t.Errorf("once: %+v, read.iops %+v", g, s)
	}
	b, err := json.Marshal(g[0])
	if err != nil {
		t.Fatal(err)
	}
	if js := string(b); !strings.Contains(js, `"read.iops":{"mean":1000,"stddev":0,"n":1,"ci95_low":null,"ci95_high":null}`) ||
		strings.Contains(js, `"pooled"`) || strings.Contains(js, `"repetition`) {
		t.Errorf("once, JSON %s", js)
	}

	p.Repetition = 1
	g = GroupPoints([]Ran{{0, p}})
	if len(g[0].Repetitions) != 1 || g[0].Repetition != 0 || g[0].Pooled == nil || g[0].Pooled.Read.IOs != 2 || g[0].Stats["read.iops"].N != 1 {
		t.Errorf("a lone repetition: %+v", g[0])
	}

	// Documents without their histograms (as the store keeps them) pool
	// nothing, rather than percentiles of 0.
	q := p
	q.Read = &DirStats{IOPS: 1000, IOs: 2, MeanMs: 1.5}
	if g := GroupPoints([]Ran{{0, q}, {0, q}}); g[0].Pooled != nil || g[0].Read.IOPS != 1000 {
		t.Errorf("without histograms: pooled %+v", g[0].Pooled)
	}
}

// A point on several hosts: each host's figures are averaged as the
// aggregate's are, under "hosts.HOST." in Stats, its node_exporter's too.
func TestGroupPointsHosts(t *testing.T) {
	rep := func(r int, iops1, iops2, idle float64) Point {
		p := pointOf("A", r, dirOf(iops1+iops2, 1), nil, 1)
		p.Hosts = []HostPoint{
			{Host: "h1", Read: dirOf(iops1, 1), NodeStats: &NodeStats{CPUIdlePct: idle, Samples: 3,
				Devices: []DeviceRates{{Name: "sdb", RIOPS: iops1}}}},
			{Host: "db.example.com", Read: dirOf(iops2, 1)},
		}
		return p
	}
	g := GroupPoints([]Ran{{0, rep(1, 100, 200, 50)}, {0, rep(2, 300, 400, 70)}})[0]
	if len(g.Hosts) != 2 || g.Hosts[0].Host != "h1" || g.Hosts[1].Host != "db.example.com" {
		t.Fatalf("hosts %+v", g.Hosts)
	}
	h1, h2 := g.Hosts[0], g.Hosts[1]
	if h1.Read.IOPS != 200 || h2.Read.IOPS != 300 || h2.NodeStats != nil || g.Read.IOPS != 500 {
		t.Errorf("hosts' means: %+v, %+v", h1.Read, h2.Read)
	}
	if n := h1.NodeStats; n == nil || n.CPUIdlePct != 60 || n.Samples != 6 || len(n.Devices) != 1 || n.Devices[0].RIOPS != 200 {
		t.Errorf("h1's node_exporter %+v", n)
	}
	if g.Stats["hosts.h1.read.iops"].N != 2 || g.Stats["hosts.db.example.com.read.iops"].Mean != 300 ||
		g.Stats["hosts.h1.cpu_idle_pct"].Mean != 60 || g.Stats["hosts.h1.device.sdb.r_iops"].Mean != 200 {
		t.Errorf("hosts' stats: %v", slices.Sorted(maps.Keys(g.Stats)))
	}
	// Telemetry keys stay the aggregate's alone, whatever the hosts' names.
	if g.Host != nil || g.Device != nil {
		t.Errorf("host %v, device %v", g.Host, g.Device)
	}
}

// The repeated point's JSON: the existing keys, then stats, pooled and the
// repetitions, each with its number.
func TestGroupPointsJSON(t *testing.T) {
	g := GroupPoints([]Ran{{0, pointOf("A", 1, dirOf(1000, 1), nil, 1)}, {0, pointOf("A", 2, dirOf(1200, 3), nil, 1)}})
	b, err := json.Marshal(g[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Name   string                   `json:"name"`
		Rep    *int                     `json:"repetition"`
		Read   map[string]float64       `json:"read"`
		Stats  map[string]stats.Summary `json:"stats"`
		Pooled struct {
			Read map[string]float64 `json:"read"`
		} `json:"pooled"`
		Repetitions []struct {
			Repetition int                `json:"repetition"`
			Read       map[string]float64 `json:"read"`
		} `json:"repetitions"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Name != "A" || doc.Rep != nil || doc.Read["iops"] != 1100 || doc.Stats["read.iops"].N != 2 || !doc.Stats["read.iops"].HasCI() ||
		doc.Pooled.Read["p99_ms"] != 3 || doc.Pooled.Read["ios"] != 2 || len(doc.Repetitions) != 2 ||
		doc.Repetitions[1].Repetition != 2 || doc.Repetitions[1].Read["iops"] != 1200 {
		t.Errorf("JSON %s", b)
	}
}
