// Package stats is the arithmetic of repeated measurements: a figure's mean,
// standard deviation and 95% confidence interval over its repetitions, and
// a ratio of two figures with its interval and a verdict. gonum does the
// numerics (stat for the moments, distuv for Student's t); this package
// only decides which formula applies. docs/statistics.md states every one.
package stats

import (
	"encoding/json"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Level is the confidence level of every interval: 95%.
const Level = 0.95

// Summary is a figure over its repetitions: the JSON object
// {"mean","stddev","n","ci95_low","ci95_high"}. The interval is Student's
// t's, mean ± t(0.975, n−1) × stddev / √n; with fewer than two repetitions
// there is no spread to judge by, so it is unknown: NaN here, null in JSON.
type Summary struct {
	Mean   float64
	Stddev float64 // the sample standard deviation (n − 1 in the denominator); 0 for n = 1
	N      int
	Low    float64 // NaN when N < 2
	High   float64 // NaN when N < 2
}

// Of summarises xs. NaN values (a figure a repetition did not have) are
// left out; no values at all give N = 0 and NaN everywhere.
func Of(xs []float64) Summary {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	s := Summary{N: len(v), Mean: math.NaN(), Low: math.NaN(), High: math.NaN()}
	switch len(v) {
	case 0:
		return s
	case 1:
		s.Mean = v[0]
		return s
	}
	s.Mean, s.Stddev = stat.MeanStdDev(v, nil)
	half := tQuantile(float64(len(v)-1)) * s.Stddev / math.Sqrt(float64(len(v)))
	s.Low, s.High = s.Mean-half, s.Mean+half
	return s
}

// HasCI reports whether the interval is known (N ≥ 2).
func (s Summary) HasCI() bool { return s.N >= 2 && !math.IsNaN(s.Low) }

type summaryJSON struct {
	Mean   *float64 `json:"mean"`
	Stddev *float64 `json:"stddev"`
	N      int      `json:"n"`
	Low    *float64 `json:"ci95_low"`
	High   *float64 `json:"ci95_high"`
}

// num is x for JSON: nil (null) for NaN and infinities, which JSON lacks.
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// MarshalJSON writes the object with null for what is unknown.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(summaryJSON{Mean: num(s.Mean), Stddev: num(s.Stddev), N: s.N, Low: num(s.Low), High: num(s.High)})
}

// UnmarshalJSON reads it back, null as NaN.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var j summaryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Summary{Mean: val(j.Mean), Stddev: val(j.Stddev), N: j.N, Low: val(j.Low), High: val(j.High)}
	if j.Stddev == nil {
		s.Stddev = 0
	}
	return nil
}

// tQuantile is Student's t at 0.975 with df degrees of freedom: the
// half-width of a two-sided 95% interval in standard errors.
func tQuantile(df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-Level)/2)
}

// OfEach summarises named figures over repetitions: rows[i] holds
// repetition i's figures by name. A figure some repetitions lack (a
// telemetry source that came and went) is summarised over those that have
// it.
func OfEach(rows []map[string]float64) map[string]Summary {
	vals := map[string][]float64{}
	for i, row := range rows {
		for k, v := range row {
			if vals[k] == nil {
				vals[k] = slices.Repeat([]float64{math.NaN()}, len(rows))
			}
			vals[k][i] = v
		}
	}
	out := make(map[string]Summary, len(vals))
	for k, v := range vals {
		out[k] = Of(v)
	}
	return out
}

// Means is the means of the summaries named under prefix, keyed without
// it; nil when there are none.
func Means(st map[string]Summary, prefix string) map[string]float64 {
	var m map[string]float64
	for k, s := range st {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			if m == nil {
				m = map[string]float64{}
			}
			m[rest] = s.Mean
		}
	}
	return m
}
