package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/report/chart"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
)

// clusterSection shows the hosts of a cluster: the per-second telemetry
// that every run sampled from the hosts' node_exporters (node.HOST.*
// series), summed over the hosts as vSAN's performance monitor does and
// host by host; where TPC-C instances ran on the scenario's hosts, their
// throughput per instance and per host; and the hosts' own figures of
// storage profiles run on several hosts at once. It is empty (and left
// out) when no run has node series or per-host storage points.
func clusterSection(runs []*runData) *Section {
	s := &Section{ID: "cluster", Title: "Cluster"}
	hosts, group := nodeTimelines(runs)
	var disk []*runData
	for _, rd := range runs {
		if hostPoints(rd) {
			disk = append(disk, rd)
		}
	}
	if len(hosts) == 0 && len(disk) == 0 {
		return s
	}
	if len(hosts) > 0 {
		clusterTimelines(s, hosts, group)
	}
	s.Blocks = append(s.Blocks, hostThroughput(runs)...)
	s.Blocks = append(s.Blocks, hostBackups(runs)...)
	s.Blocks = append(s.Blocks, hostStorage(disk)...)
	return s
}

// nodeHost is one host's node_exporter telemetry over the whole report,
// merged over the runs that sampled it (nodeTimelines) and averaged per
// whole second.
type nodeHost struct {
	name string
	// series are the host's per-second values by the name that follows
	// node.HOST. (cpu_idle_pct, dev.sda.r_iops, clock_offset_ms); none in
	// a second when the exporter did not answer.
	series map[string][]results.Point
	// down are the seconds (Unix) in which the exporter did not answer.
	down map[int64]bool
	// answered counts the seconds in which it did.
	answered int
}

// nodeSeries splits a series name node.HOST.METRIC into the host and the
// metric (METRIC may hold dots: dev.sda.r_iops).
func nodeSeries(name string) (host, metric string, ok bool) {
	rest, ok := strings.CutPrefix(name, "node.")
	if !ok {
		return "", "", false
	}
	host, metric, ok = strings.Cut(rest, ".")
	return host, metric, ok && host != "" && metric != ""
}

// nodeTimelines merges the runs' node.HOST.* series into one timeline per
// host. Runs that ran at the same time (a neighbours step's TPC-C runs)
// each sampled the same exporters, so their series are near-duplicates:
// the runs are taken in the order they started, and a run's samples of a
// host are taken only when later than the last sample of that host already
// taken, so that every second of a host comes from one run and is counted
// once. The cut is per host, not per series, so that a host's CPU, devices
// and up come from the same run (a series a run wrote fewer points of
// would otherwise take another run's). Samples when the exporter did not
// answer (up = 0) have no figures: those seconds are gaps. It returns the
// hosts in natural order (h2 before h10) and the runs with node series in
// the order they started.
func nodeTimelines(runs []*runData) ([]*nodeHost, []*runData) {
	var group []*runData
	for _, rd := range runs {
		if rd.has("node.") {
			group = append(group, rd)
		}
	}
	sort.SliceStable(group, func(i, j int) bool { return group[i].StartedAt.Before(group[j].StartedAt) })
	raw := map[string]map[string][]results.Point{} // host -> metric -> merged samples
	last := map[string]time.Time{}                 // host -> its last sample taken
	for _, rd := range group {
		byHost := map[string][]string{}
		for _, name := range rd.seriesNames {
			if host, _, ok := nodeSeries(name); ok {
				byHost[host] = append(byHost[host], name)
			}
		}
		for host, names := range byHost {
			cut, end := last[host], last[host]
			if raw[host] == nil {
				raw[host] = map[string][]results.Point{}
			}
			for _, name := range names {
				_, metric, _ := nodeSeries(name)
				for _, p := range rd.series[name] {
					if p.T.After(cut) {
						raw[host][metric] = append(raw[host][metric], p)
						if p.T.After(end) {
							end = p.T
						}
					}
				}
			}
			last[host] = end
		}
	}
	var hosts []*nodeHost
	for name, metrics := range raw {
		hosts = append(hosts, newNodeHost(name, metrics))
	}
	sort.Slice(hosts, func(i, j int) bool { return naturalLess(hosts[i].name, hosts[j].name) })
	return hosts, group
}

// newNodeHost averages a host's merged samples per whole second. Two
// samples of one second happen where the timeline passes from one run to
// the next; a second counts as down when every up sample in it is 0.
func newNodeHost(name string, metrics map[string][]results.Point) *nodeHost {
	h := &nodeHost{name: name, series: map[string][]results.Point{}, down: map[int64]bool{}}
	up := map[int64]bool{}
	for _, p := range metrics["up"] {
		sec := p.T.Unix()
		if p.Value > 0 {
			up[sec] = true
		} else if !up[sec] {
			h.down[sec] = true
		}
	}
	for sec := range up {
		delete(h.down, sec)
	}
	h.answered = len(up)
	for metric, pts := range metrics {
		if metric == "up" {
			continue
		}
		var kept []results.Point
		for _, p := range pts {
			if !h.down[p.T.Unix()] && !math.IsNaN(p.Value) {
				kept = append(kept, p)
			}
		}
		if ps := perSecond(kept); len(ps) > 0 {
			h.series[metric] = ps
			if len(metrics["up"]) == 0 { // a store without up: count the seconds with figures
				h.answered = max(h.answered, len(ps))
			}
		}
	}
	return h
}

// perSecond averages points per whole second, in time order; each result
// is at the start of its second.
func perSecond(pts []results.Point) []results.Point {
	sorted := append([]results.Point(nil), pts...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].T.Before(sorted[j].T) })
	var out []results.Point
	n := 0
	for _, p := range sorted {
		t := time.Unix(p.T.Unix(), 0).UTC()
		if len(out) > 0 && out[len(out)-1].T.Equal(t) {
			last := &out[len(out)-1]
			n++
			last.Value += (p.Value - last.Value) / float64(n)
			continue
		}
		out = append(out, results.Point{Name: p.Name, Step: p.Step, T: t, Value: p.Value})
		n = 1
	}
	return out
}

// devices are the block devices the host's series name.
func (h *nodeHost) devices() []string {
	seen := map[string]bool{}
	var devs []string
	for metric := range h.series {
		rest, ok := strings.CutPrefix(metric, "dev.")
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(rest, '.'); i > 0 && !seen[rest[:i]] {
			seen[rest[:i]] = true
			devs = append(devs, rest[:i])
		}
	}
	sort.Slice(devs, func(i, j int) bool { return naturalLess(devs[i], devs[j]) })
	return devs
}

// physicalDevices leaves out of devs those whose I/O the others already
// count: device-mapper (dm-*) and software RAID (md*) devices, which sit on
// top of the disks and pass their I/O down to them, and partitions listed
// beside their disk (sda1 beside sda, nvme0n1p2 beside nvme0n1), which
// node_exporter leaves out unless told otherwise.
func physicalDevices(devs []string) []string {
	listed := map[string]bool{}
	for _, d := range devs {
		listed[d] = true
	}
	var out []string
	for _, d := range devs {
		if strings.HasPrefix(d, "dm-") || strings.HasPrefix(d, "md") || partitionOf(d, listed) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// partitionOf says whether dev is a partition of a listed disk: the disk's
// name and a number (sda1), or, when the disk's name ends in a digit, its
// name, p and a number (nvme0n1p1, mmcblk0p2).
func partitionOf(dev string, listed map[string]bool) bool {
	i := len(dev)
	for i > 0 && dev[i-1] >= '0' && dev[i-1] <= '9' {
		i--
	}
	if i == len(dev) || i == 0 {
		return false
	}
	base := dev[:i]
	if last := base[len(base)-1]; last < '0' || last > '9' {
		if listed[base] {
			return true
		}
	}
	if disk, ok := strings.CutSuffix(base, "p"); ok && disk != "" {
		if last := disk[len(disk)-1]; last >= '0' && last <= '9' && listed[disk] {
			return true
		}
	}
	return false
}

// ioSecond is one second of devices' I/O added up: rates summed, the
// busiest device's utilisation, and for the I/O-weighted latency the IOPS
// that have an await and their IOPS x await.
type ioSecond struct {
	rIOPS, wIOPS, rMBps, wMBps float64
	rWeight, rWeighted         float64
	wWeight, wWeighted         float64
	util                       float64 // NaN: none known
}

func (a *ioSecond) add(b *ioSecond) {
	a.rIOPS += b.rIOPS
	a.wIOPS += b.wIOPS
	a.rMBps += b.rMBps
	a.wMBps += b.wMBps
	a.rWeight += b.rWeight
	a.rWeighted += b.rWeighted
	a.wWeight += b.wWeight
	a.wWeighted += b.wWeighted
	if math.IsNaN(a.util) || b.util > a.util {
		a.util = b.util
	}
}

// weighted is sum/weight, NaN when there is no weight (no I/O: no latency).
func weighted(sum, weight float64) float64 {
	if weight <= 0 {
		return math.NaN()
	}
	return sum / weight
}

func (a *ioSecond) rAwait() float64 { return weighted(a.rWeighted, a.rWeight) }
func (a *ioSecond) wAwait() float64 { return weighted(a.wWeighted, a.wWeight) }
func (a *ioSecond) await() float64 {
	return weighted(a.rWeighted+a.wWeighted, a.rWeight+a.wWeight)
}

// io adds up the host's physical devices per second (Unix).
func (h *nodeHost) io() map[int64]*ioSecond {
	out := map[int64]*ioSecond{}
	at := func(sec int64) *ioSecond {
		a := out[sec]
		if a == nil {
			a = &ioSecond{util: math.NaN()}
			out[sec] = a
		}
		return a
	}
	for _, dev := range physicalDevices(h.devices()) {
		values := func(metric string) map[int64]float64 {
			m := map[int64]float64{}
			for _, p := range h.series["dev."+dev+"."+metric] {
				m[p.T.Unix()] = p.Value
			}
			return m
		}
		rAwait, wAwait := values("r_await_ms"), values("w_await_ms")
		for _, d := range []struct {
			metric string
			add    func(a *ioSecond, sec int64, v float64)
		}{
			{"r_iops", func(a *ioSecond, sec int64, v float64) {
				a.rIOPS += v
				if lat, ok := rAwait[sec]; ok {
					a.rWeight += v
					a.rWeighted += v * lat
				}
			}},
			{"w_iops", func(a *ioSecond, sec int64, v float64) {
				a.wIOPS += v
				if lat, ok := wAwait[sec]; ok {
					a.wWeight += v
					a.wWeighted += v * lat
				}
			}},
			{"r_mbps", func(a *ioSecond, _ int64, v float64) { a.rMBps += v }},
			{"w_mbps", func(a *ioSecond, _ int64, v float64) { a.wMBps += v }},
			{"util_pct", func(a *ioSecond, _ int64, v float64) {
				if math.IsNaN(a.util) || v > a.util {
					a.util = v
				}
			}},
		} {
			for _, p := range h.series["dev."+dev+"."+d.metric] {
				d.add(at(p.T.Unix()), p.T.Unix(), p.Value)
			}
		}
	}
	return out
}

// ioLines are the lines of a host's or the cluster's I/O over time.
type ioLines struct {
	rIOPS, wIOPS, rMBps, wMBps, rAwait, wAwait, await []results.Point
}

// ioTimeline draws io per second, NaN in every line in a second that is
// down (a gap).
func ioTimeline(io map[int64]*ioSecond, down map[int64]bool) ioLines {
	var secs []int64
	for sec := range io {
		if !down[sec] {
			secs = append(secs, sec)
		}
	}
	for sec := range down {
		secs = append(secs, sec)
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i] < secs[j] })
	var l ioLines
	for _, sec := range secs {
		t := time.Unix(sec, 0).UTC()
		pt := func(v float64) results.Point { return results.Point{T: t, Value: v} }
		if down[sec] {
			gap := pt(math.NaN())
			for _, dst := range []*[]results.Point{&l.rIOPS, &l.wIOPS, &l.rMBps, &l.wMBps, &l.rAwait, &l.wAwait, &l.await} {
				*dst = append(*dst, gap)
			}
			continue
		}
		a := io[sec]
		l.rIOPS = append(l.rIOPS, pt(a.rIOPS))
		l.wIOPS = append(l.wIOPS, pt(a.wIOPS))
		l.rMBps = append(l.rMBps, pt(a.rMBps))
		l.wMBps = append(l.wMBps, pt(a.wMBps))
		l.rAwait = append(l.rAwait, pt(a.rAwait()))
		l.wAwait = append(l.wAwait, pt(a.wAwait()))
		l.await = append(l.await, pt(a.await()))
	}
	return l
}

// withGaps adds a NaN point at each down second that pts has no point in,
// so that the line breaks there.
func withGaps(pts []results.Point, down map[int64]bool) []results.Point {
	if len(pts) == 0 || len(down) == 0 {
		return pts
	}
	out := append([]results.Point(nil), pts...)
	for sec := range down {
		out = append(out, results.Point{T: time.Unix(sec, 0).UTC(), Value: math.NaN()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].T.Before(out[j].T) })
	return out
}

// clusterCPU are the CPU shares each host's chart draws.
var clusterCPU = []struct{ metric, legend string }{
	{"cpu_user_pct", "user"}, {"cpu_system_pct", "system"}, {"cpu_iowait_pct", "iowait"}, {"cpu_idle_pct", "idle"}, {"cpu_steal_pct", "steal"},
}

// clusterTimelines adds the cluster-wide timelines, each host's folded,
// and the table of the hosts.
func clusterTimelines(s *Section, hosts []*nodeHost, group []*runData) {
	t0 := group[0].origin()
	for _, rd := range group[1:] {
		if o := rd.origin(); o.Before(t0) {
			t0 = o
		}
	}
	// A mark where each run or phase starts: a neighbours phase's runs
	// start together and get one.
	var marks []chart.Mark
	prev := ""
	for _, rd := range group {
		label := rd.Place.Phase
		if label == "" {
			label = rd.Label
		}
		if label != prev {
			marks = append(marks, chart.Mark{X: rd.origin().Sub(t0).Seconds(), Label: label})
			prev = label
		}
	}
	const xlabel = "time since the first run started (s)"

	total := map[int64]*ioSecond{}
	down := map[int64]bool{}
	perHost := make([]map[int64]*ioSecond, len(hosts))
	for i, h := range hosts {
		perHost[i] = h.io()
		for sec, a := range perHost[i] {
			if total[sec] == nil {
				total[sec] = &ioSecond{util: math.NaN()}
			}
			total[sec].add(a)
		}
		for sec := range h.down {
			down[sec] = true
		}
	}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.name
	}
	s.text(fmt.Sprintf("The hosts' CPU and block devices, sampled every second from their Prometheus node_exporters (%s) while the runs below ran. "+
		"Runs that ran at the same time each sampled the same exporters; each host's timeline takes the runs in the order they started, "+
		"and a run's samples of a host only when later than the last sample of that host already taken, so no second is counted twice.",
		strings.Join(names, ", ")))
	c := ioTimeline(total, down)
	s.figure(pointsTimeline("cluster-iops", "Cluster IOPS, all hosts", xlabel, "I/O per second", t0,
		[]line{{"reads", false, c.rIOPS}, {"writes", true, c.wIOPS}}, marks))
	s.figure(pointsTimeline("cluster-mbps", "Cluster throughput, all hosts", xlabel, "MB/s", t0,
		[]line{{"read MB/s", false, c.rMBps}, {"write MB/s", true, c.wMBps}}, marks))
	s.figure(pointsTimeline("cluster-latency", "Cluster device latency, all hosts (I/O-weighted)", xlabel, "latency (ms)", t0,
		[]line{{"read await", false, c.rAwait}, {"write await", true, c.wAwait}, {"all I/O", false, c.await}}, marks))
	s.text("The cluster's IOPS and MB/s are, per second, the sums over the hosts of their physical devices' rates. Device-mapper (dm-*) " +
		"and software RAID (md*) devices are left out, as are partitions listed beside their disk: they sit on top of the physical disks, " +
		"whose figures already count their I/O, which would otherwise be counted twice. Latency is the devices' await (iostat's, queueing " +
		"included) weighted by their I/O: sum(IOPS x await) / sum(IOPS) over hosts and devices, reads and writes each by their own IOPS, " +
		"and all I/O together. A second in which any host's exporter did not answer is a gap, since a sum without that host would read as " +
		"less I/O.")

	// Each host's own timelines, folded: twelve hosts' would fill pages.
	for i, h := range hosts {
		var cpu []line
		for _, m := range clusterCPU {
			cpu = append(cpu, line{m.legend, false, withGaps(h.series[m.metric], h.down)})
		}
		l := ioTimeline(perHost[i], h.down)
		var blocks []Block
		for _, f := range []*Figure{
			pointsTimeline(slug("cluster", h.name, "cpu"), "CPU of "+h.name, xlabel, "% of all cores", t0, cpu, marks),
			pointsTimeline(slug("cluster", h.name, "iops"), "Device IOPS of "+h.name, xlabel, "I/O per second", t0,
				[]line{{"reads", false, l.rIOPS}, {"writes", true, l.wIOPS}}, marks),
			pointsTimeline(slug("cluster", h.name, "latency"), "Device latency of "+h.name+" (I/O-weighted)", xlabel, "latency (ms)", t0,
				[]line{{"read await", false, l.rAwait}, {"write await", true, l.wAwait}}, marks),
		} {
			if !f.Chart.Empty() {
				blocks = append(blocks, figureBlock(f))
			}
		}
		if len(blocks) > 0 {
			devs := physicalDevices(h.devices())
			s.Blocks = append(s.Blocks, detailsBlock(&Details{
				Summary: fmt.Sprintf("%s: CPU and devices (%s) per second", h.name, orNone(strings.Join(devs, ", "))), Blocks: blocks}))
		}
	}
	s.table(hostTable(hosts, perHost))
}

func orNone(s string) string {
	if s == "" {
		return "no devices"
	}
	return s
}

// hostTable is a row per host: its seconds, CPU, I/O, latency, busiest
// device, gaps and clock.
func hostTable(hosts []*nodeHost, perHost []map[int64]*ioSecond) *Table {
	t := &Table{ID: "cluster-hosts", Caption: "Per host, over the seconds its exporter answered: means of the per-second values " +
		"(await: I/O-weighted over all its physical devices' I/O; peak util: the busiest physical device's busiest second; " +
		"gaps: seconds the exporter did not answer; clock offset: the host's clock minus the controller's)",
		Header:  []string{"host", "samples", "CPU idle %", "iowait %", "IOPS", "await ms", "peak util %", "gaps", "clock offset ms"},
		Numeric: []bool{false, true, true, true, true, true, true, true, true}}
	meanOf := func(pts []results.Point) float64 {
		xs := make([]float64, len(pts))
		for i, p := range pts {
			xs[i] = p.Value
		}
		return mean(xs)
	}
	for i, h := range hosts {
		var iops []float64
		all := ioSecond{util: math.NaN()}
		for _, a := range perHost[i] {
			iops = append(iops, a.rIOPS+a.wIOPS)
			all.add(a)
		}
		t.Rows = append(t.Rows, []string{h.name, strconv.Itoa(h.answered), pct(meanOf(h.series["cpu_idle_pct"])),
			pct(meanOf(h.series["cpu_iowait_pct"])), num(mean(iops)), num(all.await()), pct(all.util), strconv.Itoa(len(h.down)),
			num(meanOf(h.series["clock_offset_ms"]))})
	}
	return t
}

// hostThroughput shows TPC-C instances spread over the scenario's hosts
// (runs whose parameters name a scenario_host), per phase: each instance's
// NOPM and TPM, each host's sums, and which host delivered the most and
// the least.
func hostThroughput(runs []*runData) []Block {
	var group []*runData
	var phases []string
	seen := map[string]bool{}
	for _, rd := range runs {
		if rd.Kind != stored.KindTPCC || rd.Place.Host == "" || len(rd.TPCC) == 0 {
			continue
		}
		group = append(group, rd)
		if p := rd.Place.Phase; !seen[p] {
			seen[p] = true
			phases = append(phases, p)
		}
	}
	if len(group) == 0 {
		return nil
	}
	blocks := []Block{text("TPC-C per instance and per host: NOPM and TPM are each run's means over its steps; a host's are the sums over its instances.")}
	type hostSum struct {
		host      string
		instances int
		nopm, tpm float64
		per       []float64 // each instance's NOPM (the mean of its steps)
	}
	for _, phase := range phases {
		in, id := "", "cluster-instances"
		if phase != "" {
			in, id = ", "+phase, slug("cluster", "instances", phase)
		}
		inst := &Table{ID: id, Caption: "TPC-C instances and their hosts" + in,
			Header: []string{"instance", "host", "role", "NOPM", "TPM"}, Numeric: []bool{false, false, false, true, true}}
		var sums []*hostSum
		for _, rd := range group {
			if rd.Place.Phase != phase {
				continue
			}
			var nopm, tpm []float64
			for _, x := range rd.TPCC {
				nopm = append(nopm, x.nopm())
				tpm = append(tpm, x.tpm())
			}
			host := rd.Place.Host
			name := rd.Place.Instance
			if name == "" {
				name = rd.Label
			}
			inst.Rows = append(inst.Rows, []string{name, host, orUnknown(rd.Place.Role), num(mean(nopm)), num(mean(tpm))})
			var hs *hostSum
			for _, x := range sums {
				if x.host == host {
					hs = x
				}
			}
			if hs == nil {
				hs = &hostSum{host: host}
				sums = append(sums, hs)
			}
			hs.instances++
			hs.per = append(hs.per, mean(nopm))
			hs.nopm += mean(nopm)
			hs.tpm += mean(tpm)
		}
		sort.SliceStable(sums, func(i, j int) bool { return naturalLess(sums[i].host, sums[j].host) })
		perHost := &Table{ID: id + "-hosts", Caption: "TPC-C per host" + in + ": the sums over its instances",
			Header: []string{"host", "instances", "NOPM", "TPM"}, Numeric: []bool{false, true, true, true}}
		for _, x := range sums {
			perHost.Rows = append(perHost.Rows, []string{x.host, strconv.Itoa(x.instances), num(x.nopm), num(x.tpm)})
		}
		if len(sums) > 1 {
			most, least := sums[0], sums[0]
			for _, x := range sums[1:] {
				if x.nopm > most.nopm {
					most = x
				}
				if x.nopm < least.nopm {
					least = x
				}
			}
			if most != least {
				where := "TPC-C"
				if phase != "" {
					where = "In phase " + phase + ", TPC-C"
				}
				// Per instance, the least's against the most's: an order
				// only its interval makes real.
				than := "."
				if least.nopm > 0 {
					c := stats.Compare(most.per, least.per)
					than = ": " + ratio(least.nopm, most.nopm) + " as much; per instance, " + ratioSentence(c)
					if !c.Significant() {
						than += "; the order is " + untold(c)
					}
					than += "."
				}
				blocks = append(blocks, finding(fmt.Sprintf("%s on %s delivered the most NOPM (%s from %s) and on %s the least (%s from %s)%s",
					where, most.host, num(most.nopm), plural(most.instances, "instance", "instances"),
					least.host, num(least.nopm), plural(least.instances, "instance", "instances"), than)))
			}
		}
		if spread, n, ok := stepStartSpread(group, phase); ok {
			in := ""
			if phase != "" {
				in = " in phase " + phase
			}
			blocks = append(blocks, text(fmt.Sprintf("The %d instances' steps%s started within %s ms of each other (the widest of %s).",
				n, in, num(float64(spread)/float64(time.Millisecond)), plural(len(group[0].Steps), "step", "steps"))))
		}
		blocks = append(blocks, tableBlock(inst), tableBlock(perHost))
	}
	return blocks
}

// stepStartSpread is how far apart the runs of a phase started the same
// step, the widest over their steps (the TPC-C driver times every run on
// the controller's clock), and how many runs it compares; ok is false for
// fewer than two.
func stepStartSpread(group []*runData, phase string) (spread time.Duration, n int, ok bool) {
	first, last := map[int]time.Time{}, map[int]time.Time{}
	for _, rd := range group {
		if rd.Place.Phase != phase {
			continue
		}
		n++
		for _, st := range rd.Steps {
			if f, seen := first[st.Index]; !seen || st.StartedAt.Before(f) {
				first[st.Index] = st.StartedAt
			}
			if l, seen := last[st.Index]; !seen || st.StartedAt.After(l) {
				last[st.Index] = st.StartedAt
			}
		}
	}
	for i, f := range first {
		spread = max(spread, last[i].Sub(f))
	}
	return spread, n, n > 1
}

// hostBackups lists the backup runs of instances on the scenario's hosts:
// where each ran, and its mean backup and restore times.
func hostBackups(runs []*runData) []Block {
	t := &Table{ID: "cluster-backups", Caption: "Backups of instances on the hosts: means over each run's cycles",
		Header:  []string{"phase", "instance", "host", "run", "cycles", "backup s", "restore s"},
		Numeric: []bool{false, false, false, false, true, true, true}}
	for _, rd := range runs {
		host := rd.Place.Host
		if len(rd.Backup) == 0 || host == "" {
			continue
		}
		cycles := map[int]bool{}
		for _, b := range rd.Backup {
			cycles[b.Cycle] = true
		}
		t.Rows = append(t.Rows, []string{orUnknown(rd.Place.Phase), orUnknown(rd.Place.Instance), host, rd.Label,
			strconv.Itoa(len(cycles)), num(mean(phaseSeconds(rd, stored.PhaseBackup))), num(mean(phaseSeconds(rd, stored.PhaseRestore)))})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return []Block{tableBlock(t)}
}

// hostPoints says whether a disk run has points run on several hosts.
func hostPoints(rd *runData) bool {
	for _, d := range rd.Disk {
		if len(d.Hosts) > 0 {
			return true
		}
	}
	return false
}

// hostStorage is, per storage profile point run on several hosts at once,
// each host's figures and their aggregate.
func hostStorage(runs []*runData) []Block {
	if len(runs) == 0 {
		return nil
	}
	blocks := []Block{text("Storage profiles run on several hosts at once: each host's own figures, and their aggregate (all hosts), " +
		"which the storage profiles section shows. The aggregate IOPS and MB/s are the hosts' sums; its percentiles are merged from every " +
		"job's latency bins on every host, not averaged over the hosts. Latency is fio's completion latency.")}
	dir := func(d *stored.DirStats, v func(stored.DirStats) float64) string {
		if d == nil {
			return "–"
		}
		return num(v(*d))
	}
	iops := func(d stored.DirStats) float64 { return d.IOPS }
	p99 := func(d stored.DirStats) float64 { return d.P99Ms }
	row := func(name string, r, w *stored.DirStats) []string {
		return []string{name, dir(r, iops), dir(w, iops), num(dirStats(r).MBps + dirStats(w).MBps), dir(r, p99), dir(w, p99)}
	}
	for _, rd := range runs {
		for _, d := range rd.Disk {
			if len(d.Hosts) == 0 {
				continue
			}
			caption := "Point " + d.Name + " per host"
			if len(runs) > 1 {
				caption = rd.Label + ", point " + d.Name + " per host"
			}
			t := &Table{ID: slug("cluster", "storage", d.Name), Caption: caption,
				Header:  []string{"host", "read IOPS", "write IOPS", "MB/s", "read p99 ms", "write p99 ms"},
				Numeric: []bool{false, true, true, true, true, true}}
			for _, h := range d.Hosts {
				if h.Read != nil || h.Write != nil { // not a host only node_exporter watched
					t.Rows = append(t.Rows, row(h.Host, h.Read, h.Write))
				}
			}
			t.Rows = append(t.Rows, row("all hosts", d.Read, d.Write))
			blocks = append(blocks, tableBlock(t))
		}
	}
	return blocks
}

// naturalLess orders names with numbers by their numbers' values: h2
// before h10, sdb before sdc.
func naturalLess(a, b string) bool {
	digits := func(s string) string {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return s[:i]
	}
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da != "" && db != "" {
			na, nb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}
