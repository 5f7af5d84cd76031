package stats

import (
	"encoding/json"
	"fmt"
	"math"
)

// The verdicts of a comparison.
const (
	Higher = "higher"
	Lower  = "lower"
)

// Comparison is the ratio of two figures' means, A / B, with its 95%
// interval by Fieller's theorem and a verdict: Higher or Lower when the
// interval excludes 1, else "not distinguishable at n=…" ("no interval at
// n=…" when a side was measured once).
//
// Fieller's interval is the set of θ for which A − θB could be 0: with the
// means a and b, their squared standard errors va = sa²/na and vb = sb²/nb
// (independent samples), and t Student's t at 0.975,
//
//	(a − θb)² ≤ t² (va + θ² vb),
//
// which, with R = a/b and g = t² vb / b², is
//
//	θ = [R ± (t/b) √(va(1 − g) + R² vb)] / (1 − g).
//
// The degrees of freedom are Welch–Satterthwaite's for a − Rb. When g ≥ 1,
// B's mean is not distinguishable from 0 and the interval is unbounded.
// Unlike a bootstrap, it needs no resampling, so it is exact and
// repeatable even for n = 2 or 3, where a bootstrap's percentiles are
// coarse.
type Comparison struct {
	Ratio   float64 // mean(A) / mean(B)
	Low     float64 // NaN when there is no interval (n < 2 on a side) or it is unbounded
	High    float64
	NA, NB  int
	Verdict string
}

// Compare compares the repetitions of A with those of B.
func Compare(a, b []float64) Comparison {
	return CompareSummaries(Of(a), Of(b))
}

// CompareSummaries compares two figures from their summaries.
func CompareSummaries(a, b Summary) Comparison {
	c := Comparison{Ratio: a.Mean / b.Mean, Low: math.NaN(), High: math.NaN(), NA: a.N, NB: b.N}
	if a.N == 0 || b.N == 0 || b.Mean == 0 {
		c.Ratio = math.NaN()
		c.Verdict = "not comparable: no measurement on one side"
		return c
	}
	c.Verdict = indistinct(a.N, b.N)
	if a.N < 2 || b.N < 2 {
		return c
	}
	va := a.Stddev * a.Stddev / float64(a.N)
	vb := b.Stddev * b.Stddev / float64(b.N)
	r := c.Ratio
	df := float64(a.N + b.N - 2)
	if den := va*va/float64(a.N-1) + r*r*r*r*vb*vb/float64(b.N-1); den > 0 {
		df = (va + r*r*vb) * (va + r*r*vb) / den
	}
	t := tQuantile(df)
	g := t * t * vb / (b.Mean * b.Mean)
	if g >= 1 {
		return c // unbounded: B's mean is not told apart from 0
	}
	half := t / math.Abs(b.Mean) * math.Sqrt(va*(1-g)+r*r*vb)
	c.Low, c.High = (r-half)/(1-g), (r+half)/(1-g)
	switch {
	case c.Low > 1:
		c.Verdict = Higher
	case c.High < 1:
		c.Verdict = Lower
	}
	return c
}

// indistinct is the verdict of an interval that holds 1, or of none: a
// side measured once has no spread to judge a ratio by, whatever its size,
// and says so rather than "not distinguishable".
func indistinct(na, nb int) string {
	what := "not distinguishable"
	if min(na, nb) < 2 {
		what = "no interval"
	}
	if na == nb {
		return fmt.Sprintf("%s at n=%d", what, na)
	}
	return fmt.Sprintf("%s at n=%d and %d", what, na, nb)
}

// Significant reports whether the interval excludes 1.
func (c Comparison) Significant() bool { return c.Verdict == Higher || c.Verdict == Lower }

// HasCI reports whether the interval is known and bounded.
func (c Comparison) HasCI() bool { return !math.IsNaN(c.Low) && !math.IsNaN(c.High) }

// Text is "0.74x (0.61–0.88, lower)", or "1.02x (not distinguishable at
// n=3)" when there is no bounded interval to show. A lower bound below 0,
// which Fieller's interval over two or three wildly different repetitions
// can reach, shows as 0: the figures tierbench compares (rates, latencies,
// durations) are never negative, and nor is their ratio.
func (c Comparison) Text() string {
	if math.IsNaN(c.Ratio) {
		return "– (" + c.Verdict + ")"
	}
	if !c.HasCI() {
		return fmt.Sprintf("%.2fx (%s)", c.Ratio, c.Verdict)
	}
	return fmt.Sprintf("%.2fx (%.2f–%.2f, %s)", c.Ratio, max(c.Low, 0), c.High, c.Verdict)
}

type comparisonJSON struct {
	Ratio   *float64 `json:"ratio"`
	Low     *float64 `json:"ci95_low"`
	High    *float64 `json:"ci95_high"`
	NA      int      `json:"n_a"`
	NB      int      `json:"n_b"`
	Verdict string   `json:"verdict"`
}

// MarshalJSON writes null for an unknown ratio or bound.
func (c Comparison) MarshalJSON() ([]byte, error) {
	return json.Marshal(comparisonJSON{Ratio: num(c.Ratio), Low: num(c.Low), High: num(c.High), NA: c.NA, NB: c.NB, Verdict: c.Verdict})
}
