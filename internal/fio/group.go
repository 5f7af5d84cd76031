package fio

import (
	"maps"
	"math"
	"slices"

	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
)

// Ran is one run of a point, as it ran: which point (from 0, in the order
// the run's points were given) and its figures, histograms included
// (DirStats.Hist).
type Ran struct {
	Point  int
	Result PointResult
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

// Group gathers a run's points as they ran (repetitions interleaved or
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
func Group(ran []Ran) []PointResult {
	return GroupDiscarding(ran, false)
}

// GroupDiscarding is Group, leaving the noisy repetitions (Noisy set) out
// of a point's figures when discard is set: they stay in Repetitions, and
// Discarded counts them. A point whose every repetition was noisy keeps
// them all, since nothing else measured it.
func GroupDiscarding(ran []Ran, discard bool) []PointResult {
	by := map[int][]PointResult{}
	for _, r := range ran {
		by[r.Point] = append(by[r.Point], r.Result)
	}
	out := []PointResult{}
	for _, i := range slices.Sorted(maps.Keys(by)) {
		out = append(out, aggregate(by[i], discard))
	}
	return out
}

// Counted are the repetitions a point of Group's means are over (those
// that ran whole, less the noisy ones it discarded), or the point itself
// when it ran once.
func (p *PointResult) Counted() []PointResult {
	if len(p.Repetitions) == 0 {
		return []PointResult{*p}
	}
	return counted(p.Repetitions, p.Discarded > 0)
}

// counted are the repetitions a point's means are over: those that ran
// whole (all of them when none did), and of those with discard the ones
// not noisy (all of them when every one was).
func counted(reps []PointResult, discard bool) []PointResult {
	keep := func(all []PointResult, drop func(p PointResult) bool) []PointResult {
		if kept := slices.DeleteFunc(slices.Clone(all), drop); len(kept) > 0 {
			return kept
		}
		return all
	}
	whole := keep(reps, func(p PointResult) bool { return p.Interrupted })
	if !discard {
		return whole
	}
	return keep(whole, func(p PointResult) bool { return p.Noisy != "" })
}

func aggregate(reps []PointResult, discard bool) PointResult {
	whole := counted(reps, discard)
	rows := make([]map[string]float64, len(whole))
	for i := range whole {
		rows[i] = figures(&whole[i])
	}
	st := stats.OfEach(rows)
	if len(reps) == 1 && reps[0].Repetition == 0 { // the point itself, as the observers saw it
		p := reps[0]
		p.Stats = st
		return p
	}
	first := reps[0]
	mean := func(name string) float64 { return st[name].Mean }
	g := PointResult{Name: first.Name, BS: first.BS, BSBytes: first.BSBytes, RW: first.RW, RWMixRead: first.RWMixRead,
		IODepth: first.IODepth, Jobs: first.Jobs,
		UsrCPUPct: mean("usr_cpu_pct"), SysCPUPct: mean("sys_cpu_pct"), Seconds: mean("seconds"),
		SteadyState: steadyOver(whole), Interrupted: whole[0].Interrupted,
		Host: stats.Means(st, "host."), Device: stats.Means(st, "device."), Hosts: meanHosts(st, whole),
		Stats: st, Pooled: &Pooled{}, Repetitions: reps, Discarded: len(counted(reps, false)) - len(whole)}
	g.Read, g.Pooled.Read = meanDir(st, "read.", whole, func(p *PointResult) *DirStats { return p.Read })
	g.Write, g.Pooled.Write = meanDir(st, "write.", whole, func(p *PointResult) *DirStats { return p.Write })
	if g.Pooled.Read == nil && g.Pooled.Write == nil {
		g.Pooled = nil
	}
	return g
}

// figures are the figures of a point that Stats covers, by name, each as
// its key in the point's JSON: "read.iops", "read.mbps", "read.mean_ms",
// "read.p50_ms" (and p95_ms, p99_ms, p999_ms, max_ms), "read.ios", the
// same under "write.", "usr_cpu_pct", "sys_cpu_pct", "seconds", and
// "host.KEY" and "device.KEY" for the telemetry of the measured interval.
// A point run on several hosts adds each host's as "hosts.HOST.read.iops"
// …, with its node_exporter figures "hosts.HOST.cpu_idle_pct" … and
// "hosts.HOST.device.DEV.r_iops" …: under "hosts.", so that no host's name
// can make a key that "host." or "device." would take as telemetry.
func figures(p *PointResult) map[string]float64 {
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

func nodeFigures(n *stored.NodeStats) map[string]float64 {
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
func meanDir(st map[string]stats.Summary, prefix string, reps []PointResult, dir func(*PointResult) *DirStats) (*DirStats, *PooledDir) {
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
	p.P50Ms, p.P95Ms, p.P99Ms, p.P999Ms = percentilesMs(d.Hist)
	return d, p
}

// meanHosts is each host's figures over the repetitions, the hosts in the
// order they came (nil for a point run on this host alone).
func meanHosts(st map[string]stats.Summary, reps []PointResult) []HostPoint {
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
		host := func(p *PointResult) *HostPoint {
			for i := range p.Hosts {
				if p.Hosts[i].Host == name {
					return &p.Hosts[i]
				}
			}
			return nil
		}
		hp := HostPoint{Host: name}
		hp.Read, _ = meanDir(st, hostPrefix(name)+"read.", reps, func(p *PointResult) *DirStats {
			if h := host(p); h != nil {
				return h.Read
			}
			return nil
		})
		hp.Write, _ = meanDir(st, hostPrefix(name)+"write.", reps, func(p *PointResult) *DirStats {
			if h := host(p); h != nil {
				return h.Write
			}
			return nil
		})
		var nodes []*stored.NodeStats
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
func meanNode(st map[string]stats.Summary, prefix string, nodes []*stored.NodeStats) *stored.NodeStats {
	if len(nodes) == 0 {
		return nil
	}
	m := func(k string) float64 { return st[prefix+k].Mean }
	n := &stored.NodeStats{}
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
		n.Devices = append(n.Devices, stored.DeviceRates{Name: name, RIOPS: dev("r_iops"), WIOPS: dev("w_iops"),
			RMBps: dev("r_mbps"), WMBps: dev("w_mbps"), RAwaitMs: dev("r_await_ms"), WAwaitMs: dev("w_await_ms"),
			AquSz: dev("aqu_sz"), UtilPct: dev("util_pct")})
	}
	return n
}

// steadyOver is fio's steady-state detection over the repetitions:
// attained when every repetition attained it, its jobs counted over all
// of them, after their mean time; nil when the point sought none.
func steadyOver(reps []PointResult) *SteadyState {
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
