package backup

import (
	"math"
	"slices"

	"github.com/tierbench/tierbench/internal/stats"
)

// Stats is each phase kind's figures over a run's cycles: for "backup",
// "restore" and any other kind a phase names, each figure's mean, standard
// deviation, n and 95% interval (stats.Of). It lives beside PhaseResult,
// not in the experiment, so that the report, which decodes stored phases
// and never imports the experiment, can compute the same from a store.
type Stats map[string]map[string]stats.Summary

// Summarize is the Stats of phases, whichever cycles they came from: every
// cycle of a backup run is one repetition of the same measurement. The
// figures are "seconds" and "mbps"; "bytes" only when it varies (a
// database at rest backs up to the same size every cycle, and a spread of
// 0 says nothing); and the phase's telemetry, "host.KEY" and "device.KEY",
// as `tpcc run --repeat` names them. A figure some phases lack (a
// telemetry source that came and went) is over those that have it.
func Summarize(phases []*PhaseResult) Stats {
	byKind := map[string][]*PhaseResult{}
	for _, p := range phases {
		byKind[p.Phase.Phase] = append(byKind[p.Phase.Phase], p)
	}
	out := make(Stats, len(byKind))
	for kind, ps := range byKind {
		vals := map[string][]float64{} // one value per phase, NaN where it has none
		for i, p := range ps {
			for name, v := range figures(p) {
				if vals[name] == nil {
					vals[name] = slices.Repeat([]float64{math.NaN()}, len(ps))
				}
				vals[name][i] = v
			}
		}
		out[kind] = make(map[string]stats.Summary, len(vals))
		for name, v := range vals {
			if name == "bytes" && constant(v) {
				continue
			}
			out[kind][name] = stats.Of(v)
		}
	}
	return out
}

// figures are a phase's figures by name (see Summarize).
func figures(p *PhaseResult) map[string]float64 {
	f := map[string]float64{"seconds": p.Seconds, "mbps": p.MBps, "bytes": float64(p.Bytes)}
	for prefix, m := range map[string]map[string]float64{"host.": p.Host, "device.": p.Device} {
		for k, v := range m {
			f[prefix+k] = v
		}
	}
	return f
}

// constant reports whether the values that are known are all the same.
func constant(v []float64) bool {
	first := math.NaN()
	for _, x := range v {
		switch {
		case math.IsNaN(x):
		case math.IsNaN(first):
			first = x
		case x != first:
			return false
		}
	}
	return true
}
