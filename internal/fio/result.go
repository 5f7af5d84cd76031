package fio

import (
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
)

// PointResult is one measured point as `disk run --json` prints it and as
// the results store keeps it (StoredPoint adds the job file). The report
// decodes the same type: the schema lives here once.
type PointResult struct {
	Name      string `json:"name"`
	BS        string `json:"bs"`
	BSBytes   int64  `json:"bs_bytes"`
	RW        string `json:"rw"`
	RWMixRead int    `json:"rwmix_read,omitempty"`
	IODepth   int    `json:"iodepth"`
	Jobs      int    `json:"jobs"`
	// Repetition is which repetition of its point this is, from 1, when
	// the run repeats its points (0: it does not). A point of Group's has
	// none: its repetitions are in Repetitions.
	Repetition  int          `json:"repetition,omitempty"`
	Read        *DirStats    `json:"read,omitempty"`
	Write       *DirStats    `json:"write,omitempty"`
	UsrCPUPct   float64      `json:"usr_cpu_pct"`
	SysCPUPct   float64      `json:"sys_cpu_pct"`
	Seconds     float64      `json:"seconds"`
	SteadyState *SteadyState `json:"steady_state,omitempty"`
	Interrupted bool         `json:"interrupted,omitempty"`
	// Noisy, when set, says why the point was measured on a noisy host
	// (telemetry.Noisy): steal time or other processes' CPU above the
	// limits. Discarded counts the noisy repetitions Group left out of the
	// means (--discard-noisy); they stay in Repetitions.
	Noisy     string `json:"noisy,omitempty"`
	Discarded int    `json:"discarded_noisy,omitempty"`
	// Host and Device are the telemetry of the point's measured interval.
	Host   map[string]float64 `json:"host,omitempty"`
	Device map[string]float64 `json:"device,omitempty"`
	// Hosts are the hosts' own figures when the point ran on several
	// (RunHosts); the figures above are then their aggregate.
	Hosts []HostPoint `json:"hosts,omitempty"`

	// Set by Group: each figure over the point's repetitions (mean,
	// standard deviation, n, 95% interval; see figures for the names);
	// when the run repeats its points, the latency of all the repetitions'
	// I/Os from their merged histograms (Pooled) and the repetitions
	// themselves, as they ran.
	Stats       map[string]stats.Summary `json:"stats,omitempty"`
	Pooled      *Pooled                  `json:"pooled,omitempty"`
	Repetitions []PointResult            `json:"repetitions,omitempty"`
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
	*stored.NodeStats
}

// StoredPoint is a point's step document in the results store: its figures
// and the exact job file, so that the point can be re-run by hand.
type StoredPoint struct {
	PointResult
	JobFile string `json:"job_file"`
}

// NewPointResult returns the figures of a measured point (telemetry is the
// caller's to add).
func NewPointResult(p *Point) PointResult {
	r := p.Result
	return PointResult{
		Name: p.Spec.Name, BS: FormatBS(p.Spec.BS), BSBytes: p.Spec.BS, RW: p.Spec.RW, RWMixRead: p.Spec.RWMixRead,
		IODepth: p.Spec.IODepth, Jobs: p.Spec.Jobs, Read: r.Read, Write: r.Write,
		UsrCPUPct: r.UsrCPUPct, SysCPUPct: r.SysCPUPct, Seconds: r.RuntimeS, SteadyState: r.SteadyState,
		Interrupted: p.Interrupted, Hosts: hostPoints(p.Hosts),
	}
}

// hostPoints are the hosts' figures of a point; nil for a one-host point.
func hostPoints(hosts []HostRun) []HostPoint {
	if len(hosts) == 0 {
		return nil
	}
	out := make([]HostPoint, len(hosts))
	for i, h := range hosts {
		out[i].Host = h.Server.Name
		if h.Result != nil {
			out[i].Read, out[i].Write = h.Result.Read, h.Result.Write
		}
	}
	return out
}
