package driver

import (
	"math"
	"sort"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// Group gathers a run's steps, as they ran (repetitions interleaved or back
// to back), into one step per VU count, in the order of vus (counts with
// no step left out). A count run once is its step as it ran, given Stats
// of n = 1. A count run several times becomes a step whose figures are the
// means over its repetitions (counts of errors, retries and the like are
// summed), whose Stats give each figure's mean, standard deviation and 95%
// interval, whose TxnPooled are the percentiles of the repetitions' merged
// histograms, and whose Repetitions are the steps as they ran.
func Group(steps []*StepResult, vus []int) []*StepResult {
	return GroupDiscarding(steps, vus, false)
}

// GroupDiscarding is Group, leaving the noisy repetitions (Noisy set) out
// of a VU count's figures when discard is set: they stay in Repetitions,
// and Discarded counts them. A count whose every repetition was noisy
// keeps them all, since nothing else measured it.
func GroupDiscarding(steps []*StepResult, vus []int, discard bool) []*StepResult {
	by := map[int][]*StepResult{}
	for _, s := range steps {
		by[s.VUs] = append(by[s.VUs], s)
	}
	var out []*StepResult
	for i, n := range vus {
		reps := by[n]
		if len(reps) == 0 {
			continue
		}
		g := aggregate(reps, discard)
		g.Index = i
		out = append(out, g)
	}
	return out
}

// figures are the figures of a step that Stats covers, by name: "tpm",
// "nopm", "client_tpm", "client_nopm", "client_cpu_us_per_txn",
// "TXN.p50_ms" (and mean_ms, p95_ms, p99_ms, p999_ms, max_ms) for each
// transaction type, and "host.KEY", "device.KEY", "db.KEY" for the
// telemetry of the measured interval.
func figures(s *StepResult) map[string]float64 {
	f := map[string]float64{
		"tpm": float64(s.TPM), "nopm": float64(s.NOPM), "client_tpm": float64(s.ClientTPM), "client_nopm": float64(s.ClientNOPM),
		"client_cpu_us_per_txn": s.ClientCPUPerTxnUs,
	}
	for k, t := range s.Txn {
		for name, v := range map[string]float64{"mean_ms": t.MeanMs, "p50_ms": t.P50Ms, "p95_ms": t.P95Ms, "p99_ms": t.P99Ms,
			"p999_ms": t.P999Ms, "max_ms": t.MaxMs} {
			f[k+"."+name] = v
		}
	}
	for prefix, m := range map[string]map[string]float64{"host.": s.Host, "device.": s.Device, "db.": s.DB} {
		for k, v := range m {
			f[prefix+k] = v
		}
	}
	return f
}

// counted are the repetitions a VU count's figures are over: all of them,
// or with discard those not noisy, unless every one was.
func counted(all []*StepResult, discard bool) []*StepResult {
	if !discard {
		return all
	}
	var quiet []*StepResult
	for _, r := range all {
		if r.Noisy == "" {
			quiet = append(quiet, r)
		}
	}
	if len(quiet) == 0 {
		return all
	}
	return quiet
}

// Counted are the repetitions a step of Group's figures are over (the
// noisy ones it discarded left out), or the step itself when it ran once.
func (s *StepResult) Counted() []*StepResult {
	if len(s.Repetitions) == 0 {
		return []*StepResult{s}
	}
	return counted(s.Repetitions, s.Discarded > 0)
}

func aggregate(all []*StepResult, discard bool) *StepResult {
	sort.SliceStable(all, func(i, j int) bool { return all[i].Index < all[j].Index })
	reps := counted(all, discard)
	rows := make([]map[string]float64, len(reps))
	for i, r := range reps {
		rows[i] = figures(r)
	}
	st := stats.OfEach(rows)
	if len(all) == 1 { // the step itself, as the observers saw it, with its Stats
		all[0].Stats = st
		return all[0]
	}
	first, last := reps[0], reps[len(reps)-1]
	mean := func(name string) float64 { return st[name].Mean }
	g := &StepResult{VUs: first.VUs, Stats: st, Repetitions: all, Discarded: len(all) - len(reps), ErrorsByKind: map[string]int64{}, Txn: map[string]metrics.Summary{},
		TPM: round(mean("tpm")), NOPM: round(mean("nopm")), ClientTPM: round(mean("client_tpm")), ClientNOPM: round(mean("client_nopm")),
		ClientCPUPerTxnUs: mean("client_cpu_us_per_txn"),
		StartedAt:         first.StartedAt, MeasureStart: first.MeasureStart, MeasureEnd: last.MeasureEnd,
		NOPMCheck: NOPMCheck{OK: true}}
	var secs float64
	for _, r := range reps {
		g.Errors += r.Errors
		g.Retries += r.Retries
		g.Reconnects += r.Reconnects
		g.Rollbacks += r.Rollbacks
		g.Skipped += r.Skipped
		for k, v := range r.ErrorsByKind {
			g.ErrorsByKind[k] += v
		}
		g.NOPMCheck.Database += r.NOPMCheck.Database
		g.NOPMCheck.Client += r.NOPMCheck.Client
		g.NOPMCheck.Bound += r.NOPMCheck.Bound
		g.NOPMCheck.OK = g.NOPMCheck.OK && r.NOPMCheck.OK
		secs += r.Seconds
	}
	g.Seconds = secs / float64(len(reps))
	for k := range first.Txn {
		g.Txn[k] = metrics.Summary{Count: round(meanOf(reps, func(r *StepResult) float64 { return float64(r.Txn[k].Count) })),
			MeanMs: mean(k + ".mean_ms"), P50Ms: mean(k + ".p50_ms"), P95Ms: mean(k + ".p95_ms"), P99Ms: mean(k + ".p99_ms"),
			P999Ms: mean(k + ".p999_ms"), MaxMs: mean(k + ".max_ms")}
	}
	g.Host, g.Device, g.DB = stats.Means(st, "host."), stats.Means(st, "device."), stats.Means(st, "db.")
	audits := make([][]tpcc.AuditItem, len(reps))
	for i, r := range reps {
		audits[i] = r.Audit
	}
	g.Audit = tpcc.CombineAudit(audits)
	// The pooled percentiles: every repetition's histogram merged.
	g.TxnPooled = map[string]metrics.Summary{}
	for k := range tpcc.NumKinds {
		var merged *hdr.Histogram
		for _, r := range reps {
			if h := r.Histograms[k]; h != nil {
				if merged == nil {
					merged = metrics.NewHistogram()
				}
				merged.Merge(h)
			}
		}
		if merged != nil {
			g.Histograms[k] = merged
			g.TxnPooled[tpcc.Kind(k).String()] = metrics.Summarize(merged)
		}
	}
	return g
}

func meanOf(reps []*StepResult, f func(*StepResult) float64) float64 {
	var s float64
	for _, r := range reps {
		s += f(r)
	}
	return s / float64(len(reps))
}

func round(x float64) int64 { return int64(math.Round(x)) }
