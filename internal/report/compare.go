package report

import (
	"math"

	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
)

// Every ratio the report prints between two measured figures comes with
// its 95% interval (Fieller's, internal/stats) and a verdict: "higher" or
// "lower" when the interval excludes 1, else "not distinguishable at n=…"
// (or "no interval at n=…" when a side was measured once).
// A figure measured once has no interval: its ratio is shown, and its
// verdict is that it cannot be told from noise.

// compareStat is x's figure named stat against base's, from their Stats
// (stored.GroupTPCC gives every TPC-C step some, n = 1 for a single run).
func compareStat(x, base tpccStep, stat string) stats.Comparison {
	a, ok := x.Stats[stat]
	b, okb := base.Stats[stat]
	if !ok || !okb {
		return stats.CompareSummaries(stats.Of(nil), stats.Of(nil))
	}
	return stats.CompareSummaries(a, b)
}

// compareBy compares a figure derived from the steps (one Stats does not
// hold, e.g. the device's await over reads and writes) over the
// repetitions each side's means count.
func compareBy(x, base tpccStep, f func(*stored.TPCCStep) float64) stats.Comparison {
	return stats.Compare(stepValues(x, f), stepValues(base, f))
}

// stepValues is f of each repetition the step's means count (those not
// discarded as noisy), or of the step itself when it ran once.
func stepValues(x tpccStep, f func(*stored.TPCCStep) float64) []float64 {
	var xs []float64
	for _, r := range x.Counted() {
		xs = append(xs, f(r))
	}
	return xs
}

// ratioCI is a comparison's ratio with its interval: "0.74x (0.61–0.88)",
// "0.74x" without one, "–" when there is nothing to compare.
func ratioCI(c stats.Comparison) string {
	if math.IsNaN(c.Ratio) || math.IsInf(c.Ratio, 0) {
		return "–"
	}
	r := times(c.Ratio)
	if !c.HasCI() {
		return r
	}
	return r + " (" + interval(c.Low, c.High) + ")"
}

// atLeast0 is an interval's lower bound as the report shows it: every
// figure it compares (NOPM, latencies, durations, IOPS) and every ratio of
// them is at least 0, so a bound below 0, which a t or Fieller interval
// over two or three wildly different repetitions can reach, says no more
// than 0 does.
func atLeast0(low float64) float64 { return max(low, 0) }

// verdict is a comparison's verdict for a table cell: "higher", "lower",
// "not distinguishable at n=3", or "–" with nothing to compare.
func verdict(c stats.Comparison) string {
	if math.IsNaN(c.Ratio) {
		return "–"
	}
	return c.Verdict
}

// untold is what a finding says of an order its comparison c does not
// establish: not distinguishable from noise, or, with a side measured
// once, not tested at all.
func untold(c stats.Comparison) string {
	if min(c.NA, c.NB) < 2 {
		return "that one measurement a side cannot test"
	}
	return "not distinguishable from noise"
}

// ratioSentence is a ratio as a finding states it: "0.74x (95% CI
// 0.61–0.88: lower)", or "1.02x (no interval at n=1)".
func ratioSentence(c stats.Comparison) string {
	if math.IsNaN(c.Ratio) || math.IsInf(c.Ratio, 0) {
		return "–"
	}
	return times(c.Ratio) + " (" + ciVerdict(c) + ")"
}

// ciVerdict is a comparison's interval and verdict: "95% CI 0.61–0.88:
// lower", or the verdict alone without an interval.
func ciVerdict(c stats.Comparison) string {
	if !c.HasCI() {
		return c.Verdict
	}
	return "95% CI " + interval(c.Low, c.High) + ": " + c.Verdict
}
