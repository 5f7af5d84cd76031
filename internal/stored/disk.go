package stored

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/units"
)

// Point is one measured point as `disk run --json` prints it and as
// the results store keeps it (PointStep adds the job file). The report
// decodes the same type: the schema lives here once.
type Point struct {
	Name      string `json:"name"`
	BS        string `json:"bs"`
	BSBytes   int64  `json:"bs_bytes"`
	RW        string `json:"rw"`
	RWMixRead int    `json:"rwmix_read,omitempty"`
	IODepth   int    `json:"iodepth"`
	Jobs      int    `json:"jobs"`
	// RateIOPS is each job's fio rate_iops: the point offered RateIOPS x
	// Jobs I/Os a second on each of its hosts (0: as many as the device
	// took).
	RateIOPS int `json:"rate_iops,omitempty"`
	// Repetition is which repetition of its point this is, from 1, when
	// the run repeats its points (0: it does not). A point of GroupPoints' has
	// none: its repetitions are in Repetitions.
	Repetition  int          `json:"repetition,omitempty"`
	Read        *DirStats    `json:"read,omitempty"`
	Write       *DirStats    `json:"write,omitempty"`
	UsrCPUPct   float64      `json:"usr_cpu_pct"`
	SysCPUPct   float64      `json:"sys_cpu_pct"`
	Seconds     float64      `json:"seconds"`
	SteadyState *SteadyState `json:"steady_state,omitempty"`
	Interrupted bool         `json:"interrupted,omitempty"`
	// Noisy, when set, says why the point was measured on a noisy host (the
	// telemetry's judgement): steal time or other processes' CPU above the
	// limits. Discarded counts the noisy repetitions GroupPoints left out of
	// the means (--discard-noisy); they stay in Repetitions.
	Noisy     string `json:"noisy,omitempty"`
	Discarded int    `json:"discarded_noisy,omitempty"`
	// Host and Device are the telemetry of the point's measured interval.
	Host   map[string]float64 `json:"host,omitempty"`
	Device map[string]float64 `json:"device,omitempty"`
	// Hosts are the hosts' own figures when the point ran on several
	// (fio's RunHosts); the figures above are then their aggregate.
	Hosts []HostPoint `json:"hosts,omitempty"`

	// Set by GroupPoints: each figure over the point's repetitions (mean,
	// standard deviation, n, 95% interval; see pointFigures for the names);
	// when the run repeats its points, the latency of all the repetitions'
	// I/Os from their merged histograms (Pooled) and the repetitions
	// themselves, as they ran.
	Stats       map[string]stats.Summary `json:"stats,omitempty"`
	Pooled      *Pooled                  `json:"pooled,omitempty"`
	Repetitions []Point                  `json:"repetitions,omitempty"`
}

// HostPoint is one host's figures in a point run on several hosts. Its
// Read.Hist and Write.Hist are the host's merged clat bins (not in JSON:
// the store keeps histograms apart).
type HostPoint struct {
	Host  string    `json:"host"`
	Read  *DirStats `json:"read,omitempty"`
	Write *DirStats `json:"write,omitempty"`
	// The host's telemetry (node_exporter) over the point, filled by the
	// experiment layer; nil when there is none, and then none of its
	// fields are written.
	*NodeStats
}

// PointStep is a point's step document in the results store: its figures
// and the exact job file, so that the point can be re-run by hand.
type PointStep struct {
	Point
	JobFile string `json:"job_file"`
}

// DirStats is one direction (read or write) merged over all jobs.
type DirStats struct {
	IOPS   float64 `json:"iops"`    // sum over jobs of each job's iops
	MBps   float64 `json:"mbps"`    // sum of bw_bytes / 1e6 (MB = 10^6 bytes)
	MeanMs float64 `json:"mean_ms"` // clat mean over all IOs (weighted by each job's clat N)
	P50Ms  float64 `json:"p50_ms"`  // from the merged clat_ns bins, never averaged percentiles
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"` // max of the jobs' clat max
	IOs    uint64  `json:"ios"`    // total_ios summed
	Hist   *Hist   `json:"-"`      // merged clat bins
}

// SteadyState is fio's steady-state detection (steadystate=...) over all jobs.
type SteadyState struct {
	Criterion      string  `json:"criterion"` // fio's "ss" string, e.g. "iops_slope:2.000000%"
	Attained       bool    `json:"attained"`  // every job attained it
	JobsAttained   int     `json:"jobs_attained"`
	Jobs           int     `json:"jobs"`
	AttainedAfterS float64 `json:"attained_after_s,omitempty"` // when attained: the longest job_runtime (s), i.e. when the last job stopped
}

// Ran is one run of a point, as it ran: which point (from 0, in the order
// the run's points were given) and its figures, histograms included
// (DirStats.Hist).
type Ran struct {
	Point  int
	Result Point
}

// Pooled is a repeated point's latency over all its repetitions' I/Os: the
// percentiles of their merged clat histograms, so that each I/O weighs
// alike. The point's own percentiles are the means of each repetition's,
// which weigh each repetition alike; the two differ when the repetitions
// do.
type Pooled struct {
	Read  *PooledDir `json:"read,omitempty"`
	Write *PooledDir `json:"write,omitempty"`
}

// PooledDir is one direction's pooled latency.
type PooledDir struct {
	IOs    uint64  `json:"ios"`     // the I/Os in the merged histogram
	MeanMs float64 `json:"mean_ms"` // the repetitions' means, weighted by their I/Os
	P50Ms  float64 `json:"p50_ms"`
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"` // the largest of the repetitions' maxima
}

// GroupPoints gathers a run's points as they ran (repetitions interleaved or
// back to back) into one per point, in the order the points were given
// (points that never ran left out). A point run once, not as a repetition,
// is itself, given Stats of n = 1. A repeated point becomes one whose
// figures are the means over its repetitions (each percentile the mean of
// the repetitions' own), whose Stats give each figure's mean, standard
// deviation and 95% interval, whose Pooled percentiles come from the
// repetitions' merged histograms, and whose Repetitions are the
// repetitions as they ran.
//
// A repetition cut short (Interrupted) measured less than the others and
// its tail rests on fewer I/Os: it stays in Repetitions, but counts in the
// figures only when no repetition of its point ran whole.
func GroupPoints(ran []Ran) []Point {
	return GroupPointsDiscarding(ran, false)
}

// GroupPointsDiscarding is GroupPoints, leaving the noisy repetitions (Noisy set) out
// of a point's figures when discard is set: they stay in Repetitions, and
// Discarded counts them. A point whose every repetition was noisy keeps
// them all, since nothing else measured it.
func GroupPointsDiscarding(ran []Ran, discard bool) []Point {
	by := map[int][]Point{}
	for _, r := range ran {
		by[r.Point] = append(by[r.Point], r.Result)
	}
	out := []Point{}
	for _, i := range slices.Sorted(maps.Keys(by)) {
		out = append(out, aggregatePoints(by[i], discard))
	}
	return out
}

// OfferedIOPS is the I/Os a second the point offered, all its jobs on all
// its hosts together: RateIOPS x Jobs x FioHosts (0 without a rate), as
// its IOPS are all of theirs.
func (p *Point) OfferedIOPS() float64 { return float64(p.RateIOPS * p.Jobs * p.FioHosts()) }

// OfferedText says, in the words every front end gives it, what a point run
// at a fixed rate offered, all its jobs on all its hosts, and how much of
// it was done: "offered 2,000 IOPS (1,000 a second on each of 2 jobs):
// 99.1% done", the share the knee judges.
func (p *Point) OfferedText() string {
	on := units.Plural(p.Jobs, "job", "jobs")
	if p.Jobs > 1 {
		on = "each of " + on
	}
	if n := p.FioHosts(); n > 1 {
		on += " on each of " + units.Plural(n, "host", "hosts")
	}
	offered := p.OfferedIOPS()
	return fmt.Sprintf("offered %s IOPS (%s a second on %s): %.1f%% done", units.Thousands(int64(offered)),
		units.Thousands(int64(p.RateIOPS)), on, 100*p.IOPS()/offered)
}

// Notes are the sentences that go under a finished point's figures, in
// every front end: what a point at a fixed rate offered (OfferedText).
func (p *Point) Notes() []string {
	if p.RateIOPS > 0 {
		return []string{p.OfferedText()}
	}
	return nil
}

// FioHosts is how many hosts ran the point's jobs: those of its Hosts with
// fio's figures (the others are only node_exporter's), or 1, this one.
func (p *Point) FioHosts() int {
	n := 0
	for _, h := range p.Hosts {
		if h.Read != nil || h.Write != nil {
			n++
		}
	}
	return max(1, n)
}

// Counted are the repetitions a point of GroupPoints' means are over (those
// that ran whole, less the noisy ones it discarded), or the point itself
// when it ran once.
func (p *Point) Counted() []Point {
	if len(p.Repetitions) == 0 {
		return []Point{*p}
	}
	return countedPoints(p.Repetitions, p.Discarded > 0)
}

// countedPoints are the repetitions a point's means are over: those that ran
// whole (all of them when none did), and of those with discard the ones
// not noisy (all of them when every one was).
func countedPoints(reps []Point, discard bool) []Point {
	whole := keepUnless(reps, func(p Point) bool { return p.Interrupted })
	if !discard {
		return whole
	}
	return keepUnless(whole, func(p Point) bool { return p.Noisy != "" })
}

func aggregatePoints(reps []Point, discard bool) Point {
	whole := countedPoints(reps, discard)
	rows := make([]map[string]float64, len(whole))
	for i := range whole {
		rows[i] = pointFigures(&whole[i])
	}
	st := stats.OfEach(rows)
	if len(reps) == 1 && reps[0].Repetition == 0 { // the point itself, as the observers saw it
		p := reps[0]
		p.Stats = st
		return p
	}
	first := reps[0]
	mean := func(name string) float64 { return st[name].Mean }
	g := Point{Name: first.Name, BS: first.BS, BSBytes: first.BSBytes, RW: first.RW, RWMixRead: first.RWMixRead,
		IODepth: first.IODepth, Jobs: first.Jobs, RateIOPS: first.RateIOPS,
		UsrCPUPct: mean("usr_cpu_pct"), SysCPUPct: mean("sys_cpu_pct"), Seconds: mean("seconds"),
		SteadyState: steadyOver(whole), Interrupted: whole[0].Interrupted,
		Host: stats.Means(st, "host."), Device: stats.Means(st, "device."), Hosts: meanHosts(st, whole),
		Stats: st, Pooled: &Pooled{}, Repetitions: reps, Discarded: len(countedPoints(reps, false)) - len(whole)}
	g.Read, g.Pooled.Read = meanDir(st, "read.", whole, func(p *Point) *DirStats { return p.Read })
	g.Write, g.Pooled.Write = meanDir(st, "write.", whole, func(p *Point) *DirStats { return p.Write })
	if g.Pooled.Read == nil && g.Pooled.Write == nil {
		g.Pooled = nil
	}
	return g
}

// pointFigures are the figures of a point that Stats covers, by name, each as
// its key in the point's JSON: "read.iops", "read.mbps", "read.mean_ms",
// "read.p50_ms" (and p95_ms, p99_ms, p999_ms, max_ms), "read.ios", the
// same under "write.", "usr_cpu_pct", "sys_cpu_pct", "seconds", and
// "host.KEY" and "device.KEY" for the telemetry of the measured interval.
// A point run on several hosts adds each host's as "hosts.HOST.read.iops"
// …, with its node_exporter figures "hosts.HOST.cpu_idle_pct" … and
// "hosts.HOST.device.DEV.r_iops" …: under "hosts.", so that no host's name
// can make a key that "host." or "device." would take as telemetry.
func pointFigures(p *Point) map[string]float64 {
	f := map[string]float64{"usr_cpu_pct": p.UsrCPUPct, "sys_cpu_pct": p.SysCPUPct, "seconds": p.Seconds}
	dirFigures(f, "read.", p.Read)
	dirFigures(f, "write.", p.Write)
	for k, v := range p.Host {
		f["host."+k] = v
	}
	for k, v := range p.Device {
		f["device."+k] = v
	}
	for _, h := range p.Hosts {
		dirFigures(f, hostPrefix(h.Host)+"read.", h.Read)
		dirFigures(f, hostPrefix(h.Host)+"write.", h.Write)
		// A host whose exporter never answered has zeros, not figures.
		if n := h.NodeStats; n != nil && n.Samples > 0 {
			for k, v := range nodeFigures(n) {
				f[hostPrefix(h.Host)+k] = v
			}
		}
	}
	return f
}

// hostPrefix is what a host's figures are named under in Stats.
func hostPrefix(host string) string { return "hosts." + host + "." }

func dirFigures(f map[string]float64, prefix string, d *DirStats) {
	if d == nil {
		return
	}
	for k, v := range map[string]float64{"iops": d.IOPS, "mbps": d.MBps, "mean_ms": d.MeanMs, "p50_ms": d.P50Ms, "p95_ms": d.P95Ms,
		"p99_ms": d.P99Ms, "p999_ms": d.P999Ms, "max_ms": d.MaxMs, "ios": float64(d.IOs)} {
		f[prefix+k] = v
	}
}

func nodeFigures(n *NodeStats) map[string]float64 {
	f := map[string]float64{"cpu_idle_pct": n.CPUIdlePct, "cpu_iowait_pct": n.CPUIowaitPct, "cpu_user_pct": n.CPUUserPct,
		"cpu_system_pct": n.CPUSystemPct, "cpu_steal_pct": n.CPUStealPct, "clock_offset_ms": n.ClockOffsetMs}
	for _, d := range n.Devices {
		for k, v := range map[string]float64{"r_iops": d.RIOPS, "w_iops": d.WIOPS, "r_mbps": d.RMBps, "w_mbps": d.WMBps,
			"r_await_ms": d.RAwaitMs, "w_await_ms": d.WAwaitMs, "aqu_sz": d.AquSz, "util_pct": d.UtilPct} {
			f["device."+d.Name+"."+k] = v
		}
	}
	return f
}

// meanDir is one direction over the repetitions: the means of its figures
// under prefix, its repetitions' histograms merged, and the pooled latency
// of those; nil when no repetition has the direction. The pooled latency
// is nil too when there are no histograms (documents read back from the
// store, which keeps them apart): percentiles of nothing would read 0.
func meanDir(st map[string]stats.Summary, prefix string, reps []Point, dir func(*Point) *DirStats) (*DirStats, *PooledDir) {
	if st[prefix+"iops"].N == 0 {
		return nil, nil
	}
	m := func(k string) float64 { return st[prefix+k].Mean }
	d := &DirStats{IOPS: m("iops"), MBps: m("mbps"), MeanMs: m("mean_ms"), P50Ms: m("p50_ms"), P95Ms: m("p95_ms"), P99Ms: m("p99_ms"),
		P999Ms: m("p999_ms"), MaxMs: m("max_ms"), IOs: uint64(math.Round(m("ios"))), Hist: &Hist{}}
	p := &PooledDir{}
	var weighted float64
	var ios uint64
	for i := range reps {
		r := dir(&reps[i])
		if r == nil {
			continue
		}
		d.Hist.Merge(r.Hist)
		p.MaxMs = math.Max(p.MaxMs, r.MaxMs)
		// fio's total_ios is its clat N: the I/Os each mean is over.
		weighted += r.MeanMs * float64(r.IOs)
		ios += r.IOs
	}
	if ios > 0 {
		p.MeanMs = weighted / float64(ios)
	}
	if p.IOs = d.Hist.Count(); p.IOs == 0 {
		return d, nil
	}
	p.P50Ms, p.P95Ms, p.P99Ms, p.P999Ms = d.Hist.PercentilesMs()
	return d, p
}

// meanHosts is each host's figures over the repetitions, the hosts in the
// order they came (nil for a point run on this host alone).
func meanHosts(st map[string]stats.Summary, reps []Point) []HostPoint {
	var names []string
	for _, r := range reps {
		for _, h := range r.Hosts {
			if !slices.Contains(names, h.Host) {
				names = append(names, h.Host)
			}
		}
	}
	var out []HostPoint
	for _, name := range names {
		host := func(p *Point) *HostPoint {
			for i := range p.Hosts {
				if p.Hosts[i].Host == name {
					return &p.Hosts[i]
				}
			}
			return nil
		}
		hp := HostPoint{Host: name}
		hp.Read, _ = meanDir(st, hostPrefix(name)+"read.", reps, func(p *Point) *DirStats {
			if h := host(p); h != nil {
				return h.Read
			}
			return nil
		})
		hp.Write, _ = meanDir(st, hostPrefix(name)+"write.", reps, func(p *Point) *DirStats {
			if h := host(p); h != nil {
				return h.Write
			}
			return nil
		})
		var nodes []*NodeStats
		for i := range reps {
			if h := host(&reps[i]); h != nil && h.NodeStats != nil {
				nodes = append(nodes, h.NodeStats)
			}
		}
		hp.NodeStats = meanNode(st, hostPrefix(name), nodes)
		out = append(out, hp)
	}
	return out
}

// meanNode is a host's node_exporter figures over the repetitions that
// have them (nil when none has): the means of its figures under prefix,
// its samples and missing samples summed.
func meanNode(st map[string]stats.Summary, prefix string, nodes []*NodeStats) *NodeStats {
	if len(nodes) == 0 {
		return nil
	}
	m := func(k string) float64 { return st[prefix+k].Mean }
	n := &NodeStats{}
	var devices []string
	for _, x := range nodes {
		n.Samples += x.Samples
		n.Missing += x.Missing
		for _, d := range x.Devices {
			if !slices.Contains(devices, d.Name) {
				devices = append(devices, d.Name)
			}
		}
	}
	if st[prefix+"cpu_idle_pct"].N == 0 {
		return n // no repetition had a sample
	}
	n.CPUIdlePct, n.CPUIowaitPct, n.CPUUserPct = m("cpu_idle_pct"), m("cpu_iowait_pct"), m("cpu_user_pct")
	n.CPUSystemPct, n.CPUStealPct, n.ClockOffsetMs = m("cpu_system_pct"), m("cpu_steal_pct"), m("clock_offset_ms")
	for _, name := range devices {
		dev := func(k string) float64 { return m("device." + name + "." + k) }
		if st[prefix+"device."+name+".r_iops"].N == 0 {
			continue
		}
		n.Devices = append(n.Devices, DeviceRates{Name: name, RIOPS: dev("r_iops"), WIOPS: dev("w_iops"),
			RMBps: dev("r_mbps"), WMBps: dev("w_mbps"), RAwaitMs: dev("r_await_ms"), WAwaitMs: dev("w_await_ms"),
			AquSz: dev("aqu_sz"), UtilPct: dev("util_pct")})
	}
	return n
}

// steadyOver is fio's steady-state detection over the repetitions:
// attained when every repetition attained it, its jobs counted over all
// of them, after their mean time; nil when the point sought none.
func steadyOver(reps []Point) *SteadyState {
	var out *SteadyState
	var after float64
	var n int
	for _, r := range reps {
		s := r.SteadyState
		if s == nil {
			continue
		}
		if out == nil {
			out = &SteadyState{Criterion: s.Criterion, Attained: true}
		}
		out.Jobs += s.Jobs
		out.JobsAttained += s.JobsAttained
		out.Attained = out.Attained && s.Attained
		after += s.AttainedAfterS
		n++
	}
	if out != nil && out.Attained {
		out.AttainedAfterS = after / float64(n)
	}
	return out
}
