package stored

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/units"
)

// NOPMCheck compares the New-Orders the database committed (growth of
// sum(d_next_o_id)) with those the driver saw committed inside the interval:
// they differ only by transactions in flight at its end, at most one per
// virtual user (see step).
type NOPMCheck struct {
	Database int64 `json:"database_new_orders"`
	Client   int64 `json:"client_committed_new_orders"`
	Bound    int64 `json:"bound"`
	OK       bool  `json:"ok"`
}

// TPCCStep is one TPC-C step's result: the `steps` entries of `tpcc run --json`.
type TPCCStep struct {
	Index int `json:"index"`
	VUs   int `json:"vus"`
	// Repetition is which repetition of its VU count this is, from 1, when
	// the run repeats its steps (0: it does not). A step of GroupTPCC's has
	// none, and its repetitions in Repetitions.
	Repetition   int                        `json:"repetition,omitempty"`
	TPM          int64                      `json:"tpm"`
	NOPM         int64                      `json:"nopm"`
	ClientTPM    int64                      `json:"client_tpm"`
	ClientNOPM   int64                      `json:"client_nopm"`
	Errors       int64                      `json:"errors"`
	ErrorsByKind map[string]int64           `json:"errors_by_kind"`
	Retries      int64                      `json:"retries"`
	Reconnects   int64                      `json:"reconnects"`
	Rollbacks    int64                      `json:"new_order_rollbacks"`
	Skipped      int64                      `json:"delivery_skipped_districts"`
	Txn          map[string]metrics.Summary `json:"txn"` // by transaction type, over the measured interval
	// OpenLoop holds an open-loop step's figures (tpcc run --rate), none
	// in a closed loop's.
	*OpenLoop
	NOPMCheck NOPMCheck        `json:"nopm_check"`
	Audit     []tpcc.AuditItem `json:"audit"`
	// ResponseTime is each type's 90th-percentile response time against
	// TPC-C's limit (tpcc.ResponseTimeLimit), from the latencies of Txn:
	// in an open loop, from each transaction's intended start.
	ResponseTime []tpcc.ResponseTimeCheck `json:"response_time,omitempty"`
	// EfficiencyPct, in a step paced by keying and think times, is its
	// tpmC against the specification's most for the warehouses its VUs keep
	// busy (tpcc.EfficiencyPct), and EfficiencyVerdict fails it below
	// tpcc.MinEfficiencyPct.
	EfficiencyPct     *float64  `json:"efficiency_pct,omitempty"`
	EfficiencyVerdict string    `json:"efficiency_verdict,omitempty"`
	StartedAt         time.Time `json:"started_at"`
	MeasureStart      time.Time `json:"measure_start"`
	MeasureEnd        time.Time `json:"measure_end"`
	Seconds           float64   `json:"measured_seconds"`
	// ClientCPUPerTxnUs is tierbench's own CPU time (user + system, all its
	// threads) over the measured interval, per completed transaction.
	ClientCPUPerTxnUs float64 `json:"client_cpu_us_per_txn"`
	// OldestInFlightMs is how long the oldest transaction still running at
	// the measured interval's end had been running, from when it was sent
	// (0: none was). No latency records a transaction cut off by the end,
	// so this is where a server that held a VU for the whole interval
	// shows, in a closed loop as in an open one. Over repetitions: the
	// largest.
	OldestInFlightMs float64 `json:"oldest_in_flight_ms"`
	// Host, Device and DB are the telemetry of the measured interval
	// (averages; device percentiles from merged histograms), when sampled.
	Host   map[string]float64 `json:"host,omitempty"`
	Device map[string]float64 `json:"device,omitempty"`
	DB     map[string]float64 `json:"db,omitempty"`
	// Hosts are the node_exporter hosts' telemetry of the measured
	// interval (--node-exporter).
	Hosts []HostStats `json:"hosts,omitempty"`

	// CountersReset counts the resets of the database's transaction
	// counters seen in the measured interval (a server's crash recovery or
	// restart, pg_stat_reset()): TPM then misses the transactions of the
	// second or so around each. Over repetitions: the sum.
	CountersReset int `json:"counters_reset,omitempty"`
	// Interrupted is set on a step whose measured interval Ctrl-C, or the
	// loss of its server (ServerLost), cut short: its figures are over the
	// Seconds it ran. Over repetitions it counts only when no repetition
	// ran whole (see countedSteps).
	Interrupted bool `json:"interrupted,omitempty"`
	// ServerLost is set, with Interrupted, on a step whose server stopped
	// answering before its end: the end's counters could not be read, so
	// its measured interval ends at the last reading of them that came
	// back (a second or less before the loss), and its counts are the
	// client's at that reading. Its latencies are of every transaction
	// that completed before the loss.
	ServerLost bool `json:"server_lost,omitempty"`
	// Noisy, when set, says why the step was measured on a noisy host (the
	// telemetry's judgement): steal time or other processes' CPU above the
	// limits.
	Noisy string `json:"noisy,omitempty"`
	// Discarded counts the noisy repetitions GroupTPCC left out of the means
	// (--discard-noisy); they stay in Repetitions.
	Discarded int `json:"discarded_noisy,omitempty"`

	// Set by GroupTPCC: each figure over the VU count's repetitions (mean,
	// standard deviation, n, 95% interval; see tpccFigures for the names); with
	// more than one repetition, the percentiles of their merged histograms
	// (TxnPooled) and the repetitions themselves, as they ran.
	Stats       map[string]stats.Summary   `json:"stats,omitempty"`
	TxnPooled   map[string]metrics.Summary `json:"txn_pooled,omitempty"`
	Repetitions []*TPCCStep                `json:"repetitions,omitempty"`

	// Histograms of the measured interval by transaction type, for the
	// results store.
	Histograms [tpcc.NumKinds]*hdr.Histogram `json:"-"`
}

// OpenLoop is what an open-loop step adds: the offered transactions a
// minute and how they arrived; the arrivals intended in the measured
// interval; of those begun in it, how many waited for a VU longer than
// --late-after; the arrivals due by its end that never began; the most
// that waited at once; those begun in it and still running at its end
// (served, though not among the step's completed transactions); of the
// unserved, those that had waited less than --late-after when it ended
// (queued behind a server keeping pace, as a short step's last arrivals
// are). The step's Txn latencies are then measured from each
// transaction's intended start, and TxnService holds the time from when it
// was sent. ScheduleJitter is how late a waiting VU woke for its arrival:
// the pacing's own error.
type OpenLoop struct {
	OfferedTPM     float64                    `json:"offered_tpm"`
	Arrival        string                     `json:"arrival"`
	Arrivals       int64                      `json:"arrivals"`
	Late           int64                      `json:"late"`
	Unserved       int64                      `json:"unserved"`
	MaxQueue       int64                      `json:"max_queue"`
	InFlight       int64                      `json:"in_flight"`
	WaitingAtEnd   int64                      `json:"waiting_at_end"`
	TxnService     map[string]metrics.Summary `json:"txn_service"`
	ScheduleJitter metrics.Summary            `json:"schedule_jitter"`
}

// StallAfter is how old the oldest transaction in flight at a step's end
// must be for the CLI and the report to call it out (Stalled).
const StallAfter = time.Second

// CutBy names what cut a step short (Interrupted): "Ctrl-C", or "the
// server's loss".
func (s *TPCCStep) CutBy() string {
	if s.ServerLost {
		return "the server's loss"
	}
	return "Ctrl-C"
}

// Stalled is how long the step's oldest transaction in flight at its end
// had been running, when that is StallAfter or more, and 0 otherwise.
func (s *TPCCStep) Stalled() time.Duration {
	if d := time.Duration(s.OldestInFlightMs * float64(time.Millisecond)); d >= StallAfter {
		return d
	}
	return 0
}

// GroupTPCC gathers a run's steps, as they ran (repetitions interleaved or back
// to back), into one step per VU count, in the order of vus (counts with
// no step left out). A count run once is its step as it ran, given Stats
// of n = 1. A count run several times becomes a step whose figures are the
// means over its repetitions (counts of errors, retries and the like are
// summed), whose Stats give each figure's mean, standard deviation and 95%
// interval, whose TxnPooled are the percentiles of the repetitions' merged
// histograms, and whose Repetitions are the steps as they ran.
func GroupTPCC(steps []*TPCCStep, keys []StepKey) []*TPCCStep {
	return GroupTPCCDiscarding(steps, keys, false)
}

// StepKey is what the repetitions of one step share: its VU count, and in
// an open loop the offered rate (transactions a minute) the VUs serve.
type StepKey struct {
	VUs        int
	OfferedTPM float64
}

// ResetsText says how often a step's transaction counters were reset
// (CountersReset), and what TPM then misses: "the database's transaction
// counters were reset once in the measured interval (…); TPM is …".
func ResetsText(n int) string {
	times := "once"
	if n > 1 {
		times = fmt.Sprintf("%d times", n)
	}
	return "the database's transaction counters were reset " + times +
		" in the measured interval (a server's restart or crash recovery, or pg_stat_reset()); TPM is counted on through each reset, " +
		"less the transactions between the last reading before it and the first after"
}

// LostText says what a step whose server was lost (ServerLost) is over.
const LostText = "its server stopped answering before the step's end, so the step ends at the last reading of the database's counters " +
	"that came back, a second or less before; TPM counts the transactions the server had published by then " +
	"(PostgreSQL publishes each connection's about once a second), so a short step's can be low by up to a second's"

// Text says what an open loop offered and how it kept up, as every front
// end words it: "offered 12,000 TPM (poisson arrivals, 2,004 in the
// interval): 0 late, 0 unserved, at most 3 waiting; schedule jitter p99
// 0.180 ms".
func (o *OpenLoop) Text() string {
	jitter := "no VU waited for an arrival"
	if o.ScheduleJitter.Count > 0 {
		jitter = fmt.Sprintf("schedule jitter p99 %.3f ms", o.ScheduleJitter.P99Ms)
	}
	return fmt.Sprintf("offered %s TPM (%s arrivals, %s in the interval): %s late, %s unserved, at most %s waiting; %s",
		units.Thousands(int64(o.OfferedTPM)), o.Arrival, units.Thousands(o.Arrivals), units.Thousands(o.Late),
		units.Thousands(o.Unserved), units.Thousands(o.MaxQueue), jitter)
}

// Notes are the sentences that go under a finished step's figures, in
// every front end: what an open loop offered (OpenLoop.Text), counters
// reset, a server lost, a transaction stalled at the end.
func (s *TPCCStep) Notes() []string {
	var out []string
	if s.OpenLoop != nil {
		out = append(out, s.OpenLoop.Text())
	}
	if s.CountersReset > 0 {
		out = append(out, ResetsText(s.CountersReset))
	}
	if s.ServerLost {
		out = append(out, LostText)
	}
	if d := s.Stalled(); d > 0 {
		out = append(out, fmt.Sprintf("a transaction was still running when the interval ended, %.1f s after it was sent: "+
			"the server held its VU, and no latency records it", d.Seconds()))
	}
	return out
}

// Key is s's step key.
func (s *TPCCStep) Key() StepKey {
	k := StepKey{VUs: s.VUs}
	if s.OpenLoop != nil {
		k.OfferedTPM = s.OfferedTPM
	}
	return k
}

// KeysOf are the keys of steps in their first appearance's order.
func KeysOf(steps []*TPCCStep) []StepKey {
	seen := map[StepKey]bool{}
	var out []StepKey
	for _, s := range steps {
		if k := s.Key(); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// GroupTPCCDiscarding is GroupTPCC, leaving the noisy repetitions (Noisy set) out
// of a VU count's figures when discard is set: they stay in Repetitions,
// and Discarded counts them. A count whose every repetition was noisy
// keeps them all, since nothing else measured it.
func GroupTPCCDiscarding(steps []*TPCCStep, keys []StepKey, discard bool) []*TPCCStep {
	by := map[StepKey][]*TPCCStep{}
	for _, s := range steps {
		by[s.Key()] = append(by[s.Key()], s)
	}
	var out []*TPCCStep
	for i, k := range keys {
		reps := by[k]
		if len(reps) == 0 {
			continue
		}
		delete(by, k) // a key listed twice (--vus 1,1) is one step measured twice: one group
		g := aggregateSteps(reps, discard)
		g.Index = i
		out = append(out, g)
	}
	return out
}

// tpccFigures are the figures of a step that Stats covers, by name: "tpm",
// "nopm", "client_tpm", "client_nopm", "client_cpu_us_per_txn",
// "TXN.p50_ms" (and mean_ms, p95_ms, p99_ms, p999_ms, max_ms) for each
// transaction type, and "host.KEY", "device.KEY", "db.KEY" for the
// telemetry of the measured interval.
func tpccFigures(s *TPCCStep) map[string]float64 {
	f := map[string]float64{
		"tpm": float64(s.TPM), "nopm": float64(s.NOPM), "client_tpm": float64(s.ClientTPM), "client_nopm": float64(s.ClientNOPM),
		"client_cpu_us_per_txn": s.ClientCPUPerTxnUs,
	}
	if s.EfficiencyPct != nil {
		f["efficiency_pct"] = *s.EfficiencyPct
	}
	for k, t := range s.Txn {
		for name, v := range map[string]float64{"mean_ms": t.MeanMs, "p50_ms": t.P50Ms, "p95_ms": t.P95Ms, "p99_ms": t.P99Ms,
			"p999_ms": t.P999Ms, "max_ms": t.MaxMs} {
			f[k+"."+name] = v
		}
	}
	if o := s.OpenLoop; o != nil {
		f["late"], f["unserved"], f["max_queue"], f["in_flight"] = float64(o.Late), float64(o.Unserved), float64(o.MaxQueue), float64(o.InFlight)
		f["waiting_at_end"] = float64(o.WaitingAtEnd)
		for k, t := range o.TxnService {
			for name, v := range map[string]float64{"mean_ms": t.MeanMs, "p50_ms": t.P50Ms, "p95_ms": t.P95Ms, "p99_ms": t.P99Ms,
				"p999_ms": t.P999Ms, "max_ms": t.MaxMs} {
				f["service."+k+"."+name] = v
			}
		}
	}
	for prefix, m := range map[string]map[string]float64{"host.": s.Host, "device.": s.Device, "db.": s.DB} {
		for k, v := range m {
			f[prefix+k] = v
		}
	}
	return f
}

// countedSteps are the repetitions a VU count's figures are over: those
// that ran whole (all of them when none did; a repetition cut short
// measured less than the others), and of those with discard the ones not
// noisy (all of them when every one was).
func countedSteps(all []*TPCCStep, discard bool) []*TPCCStep {
	whole := keepUnless(all, func(s *TPCCStep) bool { return s.Interrupted })
	if !discard {
		return whole
	}
	return keepUnless(whole, func(s *TPCCStep) bool { return s.Noisy != "" })
}

// keepUnless is all without the repetitions drop says, or all when that
// would leave none.
func keepUnless[T any](all []T, drop func(T) bool) []T {
	if kept := slices.DeleteFunc(slices.Clone(all), drop); len(kept) > 0 {
		return kept
	}
	return all
}

// Counted are the repetitions a step of GroupTPCC's figures are over (the
// noisy ones it discarded left out), or the step itself when it ran once.
func (s *TPCCStep) Counted() []*TPCCStep {
	if len(s.Repetitions) == 0 {
		return []*TPCCStep{s}
	}
	return countedSteps(s.Repetitions, s.Discarded > 0)
}

func aggregateSteps(all []*TPCCStep, discard bool) *TPCCStep {
	sort.SliceStable(all, func(i, j int) bool { return all[i].Index < all[j].Index })
	reps := countedSteps(all, discard)
	rows := make([]map[string]float64, len(reps))
	for i, r := range reps {
		rows[i] = tpccFigures(r)
	}
	st := stats.OfEach(rows)
	if len(all) == 1 { // the step itself, as the observers saw it, with its Stats
		all[0].Stats = st
		return all[0]
	}
	first, last := reps[0], reps[len(reps)-1]
	mean := func(name string) float64 { return st[name].Mean }
	g := &TPCCStep{VUs: first.VUs, Stats: st, Repetitions: all, Discarded: len(countedSteps(all, false)) - len(reps), Interrupted: first.Interrupted, ServerLost: first.ServerLost, ErrorsByKind: map[string]int64{}, Txn: map[string]metrics.Summary{},
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
		g.OldestInFlightMs = max(g.OldestInFlightMs, r.OldestInFlightMs)
		g.CountersReset += r.CountersReset
		secs += r.Seconds
	}
	g.Seconds = secs / float64(len(reps))
	for k := range first.Txn {
		g.Txn[k] = metrics.Summary{Count: round(meanOfSteps(reps, func(r *TPCCStep) float64 { return float64(r.Txn[k].Count) })),
			MeanMs: mean(k + ".mean_ms"), P50Ms: mean(k + ".p50_ms"), P95Ms: mean(k + ".p95_ms"), P99Ms: mean(k + ".p99_ms"),
			P999Ms: mean(k + ".p999_ms"), MaxMs: mean(k + ".max_ms")}
	}
	g.Host, g.Device, g.DB = stats.Means(st, "host."), stats.Means(st, "device."), stats.Means(st, "db.")
	if first.OpenLoop != nil {
		g.OpenLoop = aggregateOpen(reps, mean)
	}
	audits := make([][]tpcc.AuditItem, len(reps))
	for i, r := range reps {
		audits[i] = r.Audit
	}
	g.Audit = tpcc.CombineAudit(audits)
	if first.EfficiencyPct != nil {
		pct := mean("efficiency_pct")
		g.EfficiencyPct, g.EfficiencyVerdict = &pct, tpcc.EfficiencyVerdict(pct)
	}
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
	g.ResponseTime = combineResponseTimes(reps, g.Histograms)
	return g
}

// ResponseTimes judges each type's 90th percentile in h (microseconds)
// against TPC-C's limits.
func ResponseTimes(h [tpcc.NumKinds]*hdr.Histogram) []tpcc.ResponseTimeCheck {
	var p90 [tpcc.NumKinds]time.Duration
	var n [tpcc.NumKinds]int64
	for k, x := range h {
		if x != nil {
			p90[k], n[k] = time.Duration(x.ValueAtQuantile(90))*time.Microsecond, x.TotalCount()
		}
	}
	return tpcc.JudgeResponseTimes(p90, n)
}

// combineResponseTimes judges repetitions' response times: from their
// merged histograms when every repetition kept its own (as a run does
// while it runs), and otherwise by the slowest repetition's 90th
// percentile of each type (a stored run read back).
func combineResponseTimes(reps []*TPCCStep, merged [tpcc.NumKinds]*hdr.Histogram) []tpcc.ResponseTimeCheck {
	whole := true
	for _, r := range reps {
		whole = whole && r.Histograms[tpcc.NewOrder] != nil
	}
	if whole {
		return ResponseTimes(merged)
	}
	var p90 [tpcc.NumKinds]time.Duration
	var n [tpcc.NumKinds]int64
	for _, r := range reps {
		for k, c := range r.ResponseTime[:min(len(r.ResponseTime), int(tpcc.NumKinds))] { // in the order of the kinds
			p90[k] = max(p90[k], time.Duration(c.P90Ms*float64(time.Millisecond)))
			n[k] += c.Count
		}
	}
	if n == ([tpcc.NumKinds]int64{}) {
		return nil
	}
	return tpcc.JudgeResponseTimes(p90, n)
}

// aggregateOpen gives repetitions' open-loop figures: their arrivals, late
// and unserved counts summed, their largest queue, their service times'
// means (each figure's mean is in Stats) and their jitters' largest.
func aggregateOpen(reps []*TPCCStep, mean func(string) float64) *OpenLoop {
	first := reps[0].OpenLoop
	g := &OpenLoop{OfferedTPM: first.OfferedTPM, Arrival: first.Arrival, TxnService: map[string]metrics.Summary{}}
	for _, r := range reps {
		o := r.OpenLoop
		if o == nil {
			continue
		}
		g.Arrivals += o.Arrivals
		g.Late += o.Late
		g.Unserved += o.Unserved
		g.InFlight += o.InFlight
		g.WaitingAtEnd += o.WaitingAtEnd
		g.MaxQueue = max(g.MaxQueue, o.MaxQueue)
		j := &g.ScheduleJitter
		j.Count += o.ScheduleJitter.Count
		j.P50Ms, j.P95Ms, j.P99Ms = max(j.P50Ms, o.ScheduleJitter.P50Ms), max(j.P95Ms, o.ScheduleJitter.P95Ms), max(j.P99Ms, o.ScheduleJitter.P99Ms)
		j.P999Ms, j.MaxMs, j.MeanMs = max(j.P999Ms, o.ScheduleJitter.P999Ms), max(j.MaxMs, o.ScheduleJitter.MaxMs), max(j.MeanMs, o.ScheduleJitter.MeanMs)
	}
	for k := range first.TxnService {
		p := "service." + k + "."
		g.TxnService[k] = metrics.Summary{Count: round(meanOfSteps(reps, func(r *TPCCStep) float64 { return float64(r.TxnService[k].Count) })),
			MeanMs: mean(p + "mean_ms"), P50Ms: mean(p + "p50_ms"), P95Ms: mean(p + "p95_ms"), P99Ms: mean(p + "p99_ms"),
			P999Ms: mean(p + "p999_ms"), MaxMs: mean(p + "max_ms")}
	}
	return g
}

func meanOfSteps(reps []*TPCCStep, f func(*TPCCStep) float64) float64 {
	var s float64
	for _, r := range reps {
		s += f(r)
	}
	return s / float64(len(reps))
}

func round(x float64) int64 { return int64(math.Round(x)) }
