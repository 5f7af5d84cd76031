package stored

import (
	"time"

	"github.com/tierbench/tierbench/internal/stats"
)

// Phases of a backup cycle.
const (
	PhaseBackup  = "backup"
	PhaseRestore = "restore"
)

// Phase is one timed backup or restore.
type Phase struct {
	Cycle int    `json:"cycle"`
	Phase string `json:"phase"` // "backup" | "restore"
	// Method is "pg_basebackup" | "pg_dump" | "pg_restore" |
	// "mariadb-backup" | "tierbench-dump" | "tierbench-load".
	Method  string  `json:"method"`
	Seconds float64 `json:"seconds"`
	Bytes   int64   `json:"bytes"`
	MBps    float64 `json:"mbps"` // bytes / 1e6 / seconds
	// Started and Ended bound what Seconds measures.
	Started time.Time `json:"-"`
	Ended   time.Time `json:"-"`
	// Verified says Verify passed on the restored database (restore only).
	Verified bool `json:"verified,omitempty"`
	// ColdCache says what the phase reads was dropped from the page cache
	// before it started (see Options.KeepCache).
	ColdCache bool `json:"cold_cache"`
	// DropCacheMs is how long that took, just before Started: the phase's
	// untimed lead-in (the cycle started that long before the phase).
	DropCacheMs float64 `json:"drop_cache_ms,omitempty"`
}

// PhaseResult is a timed phase as `backup run --json` prints it and as the
// results store keeps it, with the telemetry of its timed interval. The
// report decodes the same type: the schema lives here once.
type PhaseResult struct {
	Phase
	Host   map[string]float64 `json:"host,omitempty"`
	Device map[string]float64 `json:"device,omitempty"`
	// Hosts are the node_exporter hosts' telemetry of the timed interval
	// (--node-exporter).
	Hosts []HostStats `json:"hosts,omitempty"`
	// Noisy, when set, says why the phase was timed on a noisy host (the
	// telemetry's judgement): steal time or other processes' CPU above the
	// limits.
	Noisy string `json:"noisy,omitempty"`
}

// PhaseStats is each phase kind's figures over a run's cycles: for "backup",
// "restore" and any other kind a phase names, each figure's mean, standard
// deviation, n and 95% interval (stats.Of). It lives beside PhaseResult, so
// that the report, which decodes stored phases and imports neither the
// experiment nor backup, computes the same from a store.
type PhaseStats map[string]map[string]stats.Summary

// SummarizePhases is the PhaseStats of phases, whichever cycles they came from: every
// cycle of a backup run is one repetition of the same measurement. The
// figures are "seconds" and "mbps"; "bytes" only when it varies (a
// database at rest backs up to the same size every cycle, and a spread of
// 0 says nothing); and the phase's telemetry, "host.KEY" and "device.KEY",
// as `tpcc run --repeat` names them. A figure some phases lack (a
// telemetry source that came and went) is over those that have it. With
// discard, the noisy phases are left out (CountedPhases), and discarded says how
// many.
func SummarizePhases(phases []*PhaseResult, discard bool) (st PhaseStats, discarded int) {
	counted := CountedPhases(phases, discard)
	byKind := map[string][]*PhaseResult{}
	for _, p := range counted {
		byKind[p.Phase.Phase] = append(byKind[p.Phase.Phase], p)
	}
	out := make(PhaseStats, len(byKind))
	for kind, ps := range byKind {
		rows := make([]map[string]float64, len(ps))
		for i, p := range ps {
			rows[i] = phaseFigures(p)
		}
		out[kind] = stats.OfEach(rows)
		// A size that never changed says nothing as a spread of 0.
		if b, ok := out[kind]["bytes"]; ok && b.Stddev == 0 {
			delete(out[kind], "bytes")
		}
	}
	return out, len(phases) - len(counted)
}

// CountedPhases are the phases a run's figures are over: all of them, or with
// discard those not noisy, except that a phase kind (backup, restore)
// whose every phase was noisy keeps them all, since nothing else measured
// it. The order is kept.
func CountedPhases(phases []*PhaseResult, discard bool) []*PhaseResult {
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

// phaseFigures are a phase's figures by name (see SummarizePhases).
func phaseFigures(p *PhaseResult) map[string]float64 {
	f := map[string]float64{"seconds": p.Seconds, "mbps": p.MBps, "bytes": float64(p.Bytes)}
	for prefix, m := range map[string]map[string]float64{"host.": p.Host, "device.": p.Device} {
		for k, v := range m {
			f[prefix+k] = v
		}
	}
	return f
}
