package report

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/report/reporttest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// clusterSecond is what the exporters of h1 and h2 answer in second sec of
// the cluster test: h1 has two disks and a dm-0 on top of them, h2 an NVMe
// disk and an md0 mirror on it; from second 60 on every disk does twice
// the I/O (and h1's sdb is busier). h2's exporter does not answer in
// second 40.
func clusterSecond(sec int) []telemetry.HostSample {
	k := 1.0
	sdbUtil := 70.0
	if sec >= 60 {
		k, sdbUtil = 2, 80
	}
	dev := func(name string, r, w, ra, wa, util float64) stored.DeviceRates {
		return stored.DeviceRates{Name: name, RIOPS: k * r, WIOPS: k * w, RMBps: k * r * 0.004, WMBps: k * w * 0.004,
			RAwaitMs: ra, WAwaitMs: wa, AquSz: 1, UtilPct: util}
	}
	h1 := telemetry.HostSample{Host: "h1", Up: true, CPU: telemetry.CPU{UserPct: 25, SystemPct: 8, IOWaitPct: 5, IdlePct: 60, StealPct: 2},
		Devices: []stored.DeviceRates{dev("sda", 100, 50, 2, 4, 40), dev("sdb", 300, 150, 1, 3, sdbUtil), dev("dm-0", 400, 200, 10, 10, 95)},
		Clocked: true, ClockOffset: 2500 * time.Microsecond}
	h2 := telemetry.HostSample{Host: "h2", Up: true, CPU: telemetry.CPU{UserPct: 30, SystemPct: 10, IOWaitPct: 20, IdlePct: 40},
		Devices: []stored.DeviceRates{dev("nvme0n1", 1000, 500, 0.5, 1, 90), dev("md0", 1000, 500, 0.5, 1, 99)},
		Clocked: true, ClockOffset: -time.Millisecond}
	if sec == 40 {
		h2 = telemetry.HostSample{Host: "h2"}
	}
	return []telemetry.HostSample{h1, h2}
}

// clusterStore stores what a scenario on two hosts leaves: four TPC-C
// instances, two on each host, the first two of which sampled the hosts'
// exporters at the same time (run A seconds 0-59, run B, started after it,
// the same samples 0.3 s later and then on to second 89); a backup of an
// instance on h2; a storage profile run on both hosts.
func clusterStore(t *testing.T) (*results.Store, []string) {
	t.Helper()
	ctx := context.Background()
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	const group = "cluster-20261121-030000"
	var ids []string
	for _, inst := range []struct {
		name, host string
		nopm       [2]int64 // per step
		samples    int      // seconds of node series, 0: none
		offset     time.Duration
	}{
		{"db-1", "h1", [2]int64{1000, 1200}, 60, 0},
		{"db-2", "h1", [2]int64{800, 1000}, 90, 300 * time.Millisecond},
		{"db-3", "h2", [2]int64{1500, 1700}, 0, 0},
		{"db-4", "h2", [2]int64{1400, 1600}, 0, 0},
	} {
		r, err := store.CreateRun(ctx, "tpcc", group, stored.TPCCParams{DSN: "postgres://tierbench@10.0.0.1/tpcc", Engine: "postgres",
			Warehouses: 10, VUs: []int{4, 8}, RampUp: "5s", Duration: "40s", Mode: engine.ModeRoutines,
			Placement: stored.Placement{Label: inst.name, Instance: inst.name, Host: inst.host, Role: "tpcc", Phase: "baseline"}})
		must(t, err)
		for s, vus := range []int{4, 8} {
			start := t0.Add(time.Duration(s) * 45 * time.Second)
			step := stored.TPCCStep{Index: s, VUs: vus, TPM: 22 * inst.nopm[s] / 10, NOPM: inst.nopm[s], StartedAt: start,
				MeasureStart: start.Add(5 * time.Second), MeasureEnd: start.Add(45 * time.Second), Seconds: 40}
			doc, err := json.Marshal(step)
			must(t, err)
			must(t, store.AddStep(ctx, results.Step{RunID: r.ID, Index: s, Name: fmt.Sprintf("vus=%d", vus), StartedAt: start,
				MeasureStart: step.MeasureStart, MeasureEnd: step.MeasureEnd, Metrics: doc}))
		}
		var pts []results.Point
		for sec := range inst.samples {
			ts := t0.Add(time.Duration(sec)*time.Second + inst.offset)
			for name, v := range (telemetry.Sample{Hosts: clusterSecond(sec)}).Values() {
				if strings.HasPrefix(name, "node.") {
					pts = append(pts, results.Point{Name: name, Step: min(sec/45, 1), T: ts, Value: v})
				}
			}
		}
		must(t, store.AddPoints(ctx, r.ID, pts))
		must(t, store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
		ids = append(ids, r.ID)
	}
	var phases []any
	for cycle := 1; cycle <= 2; cycle++ {
		for _, phase := range []string{"backup", "restore"} {
			secs := map[string]float64{"backup": 10 * float64(cycle), "restore": 20}[phase]
			phases = append(phases, stored.PhaseResult{Phase: stored.Phase{Cycle: cycle, Phase: phase, Method: "pg_basebackup", Seconds: secs,
				Bytes: 1e9, MBps: 1e3 / secs}})
		}
	}
	ids = append(ids, writerStore(t, store, "backup", map[string]any{"label": "db-4 backups", "instance": "db-4", "scenario_host": "h2",
		"role": "backup", "phase": "beside backups"}, phases...))
	point := stored.PointStep{Point: stored.Point{Name: "4k-randrw70-qd8x1", BS: "4k", BSBytes: 4096, RW: "randrw", RWMixRead: 70,
		IODepth: 8, Jobs: 1,
		Read:  &stored.DirStats{IOPS: 50000, MBps: 204.8, MeanMs: 0.3, P99Ms: 1.3},
		Write: &stored.DirStats{IOPS: 21000, MBps: 86, MeanMs: 0.5, P99Ms: 1.9},
		Hosts: []stored.HostPoint{
			{Host: "h1", Read: &stored.DirStats{IOPS: 30000, MBps: 122.9, P99Ms: 0.8}, Write: &stored.DirStats{IOPS: 13000, MBps: 53.2, P99Ms: 1.1}},
			{Host: "h2", Read: &stored.DirStats{IOPS: 20000, MBps: 81.9, P99Ms: 1.5}, Write: &stored.DirStats{IOPS: 8000, MBps: 32.8, P99Ms: 2}},
		}}}
	ids = append(ids, writerStore(t, store, "disk", map[string]any{"label": "spread", "profile": "quick", "target": "/data"}, point))
	return store, ids
}

// The cluster section sums the hosts' physical devices once per second:
// the two runs' identical samples are not counted twice, dm-0 and md0 are
// not counted at all, and h2's missing second is a gap. Its tables hold
// each host's figures, each instance's and host's throughput, the backups'
// hosts and the storage profile per host.
func TestClusterSection(t *testing.T) {
	store, ids := clusterStore(t)
	doc, runs, err := Build(context.Background(), store, Options{Runs: ids})
	must(t, err)
	sec := section(doc, "cluster")
	if sec == nil {
		t.Fatalf("no cluster section; sections %v", sectionIDs(doc))
	}
	// The charts count seconds from the first run's start, which (its
	// first sample coming before the store's own clock) is t0.
	origin := runs[0].origin()
	if !origin.Equal(t0) {
		t.Fatalf("the first run starts at %s; want %s", origin, t0)
	}
	figures := map[string]*Figure{}
	var folded []string
	walk(sec.Blocks, func(b Block) {
		if b.Figure != nil {
			figures[b.Figure.ID] = b.Figure
		}
	})
	for _, b := range sec.Blocks {
		if b.Details != nil {
			folded = append(folded, b.Details.Summary)
			for _, in := range b.Details.Blocks {
				if in.Figure != nil && strings.HasPrefix(in.Figure.ID, "cluster-iops") {
					t.Errorf("the cluster-wide chart %s is folded", in.Figure.ID)
				}
			}
		}
	}
	for _, id := range []string{"cluster-iops", "cluster-mbps", "cluster-latency", "cluster-h1-cpu", "cluster-h1-iops", "cluster-h1-latency",
		"cluster-h2-cpu", "cluster-h2-iops", "cluster-h2-latency"} {
		if figures[id] == nil {
			t.Errorf("no figure %s", id)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	at := func(fig, series string, sec float64) float64 {
		t.Helper()
		for _, s := range figures[fig].Chart.Series {
			if s.Name != series {
				continue
			}
			for _, p := range s.Points {
				if p.X == sec {
					return p.Y
				}
			}
			t.Fatalf("%s %s has no point at %gs", fig, series, sec)
		}
		t.Fatalf("%s has no series %s: %v", fig, series, seriesNames(figures[fig].Chart.Series))
		return 0
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
			t.Errorf("%s = %v; want %v", what, got, want)
		}
	}
	// Second 30: both runs sampled it; sda+sdb+nvme0n1, without dm-0 or
	// md0. Second 59: run A at 59.0, run B at 59.3, averaged, not added.
	// Second 75: run B alone, twice the I/O.
	for _, c := range []struct {
		sec        float64
		reads, mbs float64
	}{{30, 1400, 1400 * 0.004}, {59, 1400, 1400 * 0.004}, {75, 2800, 2800 * 0.004}} {
		near(fmt.Sprintf("cluster reads at %gs", c.sec), at("cluster-iops", "reads", c.sec), c.reads)
		near(fmt.Sprintf("cluster writes at %gs", c.sec), at("cluster-iops", "writes", c.sec), c.reads/2)
		near(fmt.Sprintf("cluster read MB/s at %gs", c.sec), at("cluster-mbps", "read MB/s", c.sec), c.mbs)
		// (100x2 + 300x1 + 1000x0.5) / 1400; (50x4 + 150x3 + 500x1) / 700;
		// all: 2150 / 2100. Doubling the I/O keeps the weights' ratios.
		near(fmt.Sprintf("read await at %gs", c.sec), at("cluster-latency", "read await", c.sec), 1000.0/1400)
		near(fmt.Sprintf("write await at %gs", c.sec), at("cluster-latency", "write await", c.sec), 1150.0/700)
		near(fmt.Sprintf("await at %gs", c.sec), at("cluster-latency", "all I/O", c.sec), 2150.0/2100)
	}
	// Second 40: h2 did not answer, so the cluster has no sum then, and h2
	// a gap; h1 its own figures.
	if v := at("cluster-iops", "reads", 40); !math.IsNaN(v) {
		t.Errorf("cluster reads at 40s (h2 down) = %v; want a gap (NaN)", v)
	}
	if v := at("cluster-h2-cpu", "idle", 40); !math.IsNaN(v) {
		t.Errorf("h2 CPU idle at 40s = %v; want a gap (NaN)", v)
	}
	near("h1 reads at 40s", at("cluster-h1-iops", "reads", 40), 400)
	near("h1 read await at 40s", at("cluster-h1-latency", "read await", 40), 500.0/400)
	near("h2 CPU iowait at 30s", at("cluster-h2-cpu", "iowait", 30), 20)
	if want := []string{"h1: CPU and devices (sda, sdb) per second", "h2: CPU and devices (nvme0n1) per second"}; !reflect.DeepEqual(folded, want) {
		t.Errorf("folded parts %q; want %q", folded, want)
	}
	// One point per second: 90 seconds (0-89), none doubled where the
	// runs overlap.
	if n := len(figures["cluster-iops"].Chart.Series[0].Points); n != 90 {
		t.Errorf("the cluster IOPS line has %d points; want 90, one per second", n)
	}

	texts, tables := contents(sec)
	hosts := tables["cluster-hosts"]
	if hosts == nil {
		t.Fatal("no per-host table")
	}
	// h1: 60 s of 600 IOPS and 30 s of 1,200 -> 800; its await, per I/O:
	// (60x1150 + 30x2300) / (60x600 + 30x1200) = 1.92; the busiest disk sdb
	// at 80 % (dm-0's 95 % is not a disk's). h2: 59 s of 1,500 and 30 s of
	// 3,000 -> 2,006; (1000/1500) ms.
	want := [][]string{
		{"h1", "90", "60.0 %", "5.0 %", "800", "1.92", "80.0 %", "0", "2.50"},
		{"h2", "89", "40.0 %", "20.0 %", "2,006", "0.67", "90.0 %", "1", "-1.00"},
	}
	if !reflect.DeepEqual(hosts.Rows, want) {
		t.Errorf("per-host rows\n%v\nwant\n%v", hosts.Rows, want)
	}

	// Throughput per instance (means over the two steps) and per host.
	inst := tables["cluster-instances-baseline"]
	if inst == nil {
		t.Fatalf("no per-instance table; tables %v", keys(tables))
	}
	wantInst := [][]string{
		{"db-1", "h1", "tpcc", "1,100", "2,420"},
		{"db-2", "h1", "tpcc", "900", "1,980"},
		{"db-3", "h2", "tpcc", "1,600", "3,520"},
		{"db-4", "h2", "tpcc", "1,500", "3,300"},
	}
	if !reflect.DeepEqual(inst.Rows, wantInst) {
		t.Errorf("per-instance rows\n%v\nwant\n%v", inst.Rows, wantInst)
	}
	perHost := tables["cluster-instances-baseline-hosts"]
	if perHost == nil || !reflect.DeepEqual(perHost.Rows, [][]string{{"h1", "2", "2,000", "4,400"}, {"h2", "2", "3,100", "6,820"}}) {
		t.Errorf("per-host throughput %+v; want h1 2 instances 2,000 NOPM 4,400 TPM, h2 2 3,100 6,820", perHost)
	}
	// Two instances a host that differ: the order is stated, and said not to be significant.
	const said = "In phase baseline, TPC-C on h2 delivered the most NOPM (3,100 from 2 instances) and on h1 the least (2,000 from 2 instances): 1.55x as much; " +
		"per instance, 1.55x (95% CI 0.77–10.91: not distinguishable at n=2); the order is not distinguishable from noise."
	wantSaid(t, texts, said)
	if !contains(sec.findings(), said) {
		t.Errorf("the host sentence is not a finding: %v", sec.findings())
	}
	var summarised bool
	if sum := section(doc, "summary"); sum != nil {
		walk(sum.Blocks, func(b Block) {
			summarised = summarised || b.List != nil && b.List.Anchor == "cluster" && contains(b.List.Items, said)
		})
	}
	if !summarised {
		t.Error("the summary does not repeat the host sentence under the cluster section")
	}

	if b := tables["cluster-backups"]; b == nil || !reflect.DeepEqual(b.Rows, [][]string{{"beside backups", "db-4", "h2", "db-4 backups", "2", "15.0", "20.0"}}) {
		t.Errorf("backups table %+v", b)
	}
	storage := tables["cluster-storage-4k_randrw70_qd8x1"]
	if storage == nil {
		t.Fatalf("no per-host storage table; tables %v", keys(tables))
	}
	wantStorage := [][]string{
		{"h1", "30,000", "13,000", "176", "0.80", "1.10"},
		{"h2", "20,000", "8,000", "115", "1.50", "2.00"},
		{"all hosts", "50,000", "21,000", "291", "1.30", "1.90"},
	}
	if !reflect.DeepEqual(storage.Rows, wantStorage) {
		t.Errorf("per-host storage rows\n%v\nwant\n%v", storage.Rows, wantStorage)
	}
	var merged, dm bool
	for _, s := range texts {
		merged = merged || strings.Contains(s, "percentiles are merged from every job's latency bins on every host, not averaged")
		dm = dm || strings.Contains(s, "Device-mapper (dm-*) and software RAID (md*) devices are left out")
	}
	if !merged || !dm {
		t.Errorf("the section does not say how the aggregate percentiles are made (%v) or that dm and md devices are left out (%v)", merged, dm)
	}
}

// Without node series or per-host points there is no cluster section,
// even with instances on hosts.
func TestNoClusterSection(t *testing.T) {
	f := newFixture(t)
	doc, _, err := Build(context.Background(), f.store, Options{Runs: []string{f.fast, f.slow, f.disk, f.backup}})
	must(t, err)
	if s := section(doc, "cluster"); s != nil {
		t.Errorf("a report without hosts has a cluster section: %+v", s.Blocks)
	}
	f.neighbourRun(t, "g", "fast", "db-1", "baseline", 1000, 10)
	doc, _, err = Build(context.Background(), f.store, Options{Group: "g"})
	must(t, err)
	if s := section(doc, "cluster"); s != nil {
		t.Errorf("a report without node series has a cluster section: %+v", s.Blocks)
	}
}

// Overlapping runs: a later run's samples of a host count only after the
// last one taken, and not where the host's samples of the earlier run end
// before its other series' do.
func TestNodeTimelinesMerge(t *testing.T) {
	pt := func(sec float64, v float64) results.Point {
		return results.Point{T: t0.Add(time.Duration(sec * float64(time.Second))), Value: v}
	}
	run := func(id string, start time.Duration, series map[string][]results.Point) *runData {
		rd := &runData{Run: results.Run{ID: id, StartedAt: t0.Add(start)}, series: series}
		for name := range series {
			rd.seriesNames = append(rd.seriesNames, name)
		}
		slices.Sort(rd.seriesNames)
		return rd
	}
	// B is listed first but started later; C started last and ended first.
	b := run("b", time.Second, map[string][]results.Point{
		"node.h1.up":           {pt(1.5, 1), pt(2.5, 1), pt(3.5, 1), pt(4.5, 1)},
		"node.h1.cpu_idle_pct": {pt(1.5, 99), pt(2.5, 50), pt(3.5, 51), pt(4.5, 52)},
	})
	a := run("a", 0, map[string][]results.Point{
		"node.h1.up":           {pt(0, 1), pt(1, 1), pt(2, 0)},
		"node.h1.cpu_idle_pct": {pt(0, 10), pt(1, 11)},
	})
	c := run("c", 2*time.Second, map[string][]results.Point{
		"node.h1.up":           {pt(2.2, 1)},
		"node.h1.cpu_idle_pct": {pt(2.2, 77)},
	})
	hosts, group := nodeTimelines([]*runData{b, a, c})
	if len(group) != 3 || group[0] != a || group[1] != b || group[2] != c {
		t.Fatalf("runs in the order %v; want a, b, c", group)
	}
	if len(hosts) != 1 || hosts[0].name != "h1" {
		t.Fatalf("hosts %+v; want h1", hosts)
	}
	h := hosts[0]
	var got []string
	for _, p := range h.series["cpu_idle_pct"] {
		got = append(got, fmt.Sprintf("%d=%g", p.T.Sub(t0)/time.Second, p.Value))
	}
	// a's 0 and 1; its second 2 is down, which b's 2.5 (after a's last
	// sample, the down one) fills; c's 2.2 is before b's last and left out.
	if want := []string{"0=10", "1=11", "2=50", "3=51", "4=52"}; !reflect.DeepEqual(got, want) {
		t.Errorf("merged CPU idle %v; want %v", got, want)
	}
	if h.answered != 5 || len(h.down) != 0 {
		t.Errorf("%d seconds answered, %d down; want 5 and 0 (b answered in second 2)", h.answered, len(h.down))
	}
}

// Partitions beside their disk, device-mapper and md devices are not
// physical devices; disks whose names end in digits are.
func TestPhysicalDevices(t *testing.T) {
	got := physicalDevices([]string{"sda", "sda1", "sdb2", "nvme0n1", "nvme0n1p1", "nvme0n10", "mmcblk0", "mmcblk0p2", "dm-0", "md0", "md127", "vdb", "xvda"})
	want := []string{"sda", "sdb2", "nvme0n1", "nvme0n10", "mmcblk0", "vdb", "xvda"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("physical %v; want %v", got, want)
	}
	names := []string{"h10", "h2", "h1", "db-12", "db-3"}
	sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	if want := []string{"db-3", "db-12", "h1", "h2", "h10"}; !reflect.DeepEqual(names, want) {
		t.Errorf("natural order %v; want %v", names, want)
	}
}

// The cluster report opens in a real browser, every chart drawn, the
// hosts' folded ones too.
func TestClusterInBrowser(t *testing.T) {
	t.Parallel()
	store, ids := clusterStore(t)
	w, err := Write(context.Background(), store, Options{Runs: ids, Out: filepath.Join(t.TempDir(), "report.html"), Version: "test", Now: t0})
	must(t, err)
	if !contains(w.Sections, "cluster") {
		t.Fatalf("sections %v; want cluster", w.Sections)
	}
	html, err := os.ReadFile(w.HTML)
	must(t, err)
	for _, id := range []string{`id="cluster-iops"`, `id="cluster-h2-cpu"`, `id="cluster-hosts"`} {
		if !strings.Contains(string(html), id) {
			t.Errorf("the report has no %s", id)
		}
	}
	md, err := os.ReadFile(w.Markdown)
	must(t, err)
	if !strings.Contains(string(md), "\n## Cluster\n") || !strings.Contains(string(md), "| h2 | 89 | 40.0 % |") {
		t.Error("the Markdown has no cluster section with the per-host table")
	}
	if _, err := os.Stat(filepath.Join(w.DataDir, "table-cluster-hosts.csv")); err != nil {
		t.Errorf("the per-host table's CSV: %v", err)
	}
	charts := strings.Count(string(html), `<figure class="chart"`)
	reporttest.CheckInBrowser(t, w.HTML, charts, "")
}

func sectionIDs(doc *Document) []string {
	var ids []string
	for _, s := range doc.Sections {
		ids = append(ids, s.ID)
	}
	return ids
}

// The widest gap between the runs' starts of the same step, per phase.
func TestStepStartSpread(t *testing.T) {
	at := func(ms ...int) []results.Step {
		var steps []results.Step
		for i, m := range ms {
			steps = append(steps, results.Step{Index: i, StartedAt: t0.Add(time.Duration(m) * time.Millisecond)})
		}
		return steps
	}
	run := func(phase string, steps []results.Step) *runData {
		return &runData{Place: stored.Placement{Phase: phase}, Steps: steps}
	}
	group := []*runData{
		run("baseline", at(0, 60_000)), run("baseline", at(30, 60_012)), run("baseline", at(12, 60_090)),
		run("beside backups", at(5_000)),
	}
	if spread, n, ok := stepStartSpread(group, "baseline"); !ok || n != 3 || spread != 90*time.Millisecond {
		t.Errorf("baseline: %v over %d runs (%v); want 90ms over 3 (step 2: 60,000 to 60,090 ms)", spread, n, ok)
	}
	if _, n, ok := stepStartSpread(group, "beside backups"); ok || n != 1 {
		t.Errorf("one run: %d runs, ok %v; want no spread", n, ok)
	}
}
