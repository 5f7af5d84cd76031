package backup

import (
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
// telemetry source that came and went) is over those that have it. With
// discard, the noisy phases are left out (Counted), and discarded says how
// many.
func Summarize(phases []*PhaseResult, discard bool) (st Stats, discarded int) {
	counted := Counted(phases, discard)
	byKind := map[string][]*PhaseResult{}
	for _, p := range counted {
		byKind[p.Phase.Phase] = append(byKind[p.Phase.Phase], p)
	}
	out := make(Stats, len(byKind))
	for kind, ps := range byKind {
		rows := make([]map[string]float64, len(ps))
		for i, p := range ps {
			rows[i] = figures(p)
		}
		out[kind] = stats.OfEach(rows)
		// A size that never changed says nothing as a spread of 0.
		if b, ok := out[kind]["bytes"]; ok && b.Stddev == 0 {
			delete(out[kind], "bytes")
		}
	}
	return out, len(phases) - len(counted)
}

// Counted are the phases a run's figures are over: all of them, or with
// discard those not noisy, except that a phase kind (backup, restore)
// whose every phase was noisy keeps them all, since nothing else measured
// it. The order is kept.
func Counted(phases []*PhaseResult, discard bool) []*PhaseResult {
	if !discard {
		return phases
	}
	quiet := map[string]bool{}
	for _, p := range phases {
		if p.Noisy == "" {
			quiet[p.Phase.Phase] = true
		}
	}
	var out []*PhaseResult
	for _, p := range phases {
		if p.Noisy == "" || !quiet[p.Phase.Phase] {
			out = append(out, p)
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
