package chart

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// niceStep returns a 1-2-5 step that cuts span into about n intervals.
func niceStep(span float64, n int) float64 {
	if !(span > 0) || n < 1 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f <= 1:
		return mag
	case f <= 2:
		return 2 * mag
	case f <= 5:
		return 5 * mag
	default:
		return 10 * mag
	}
}

// linearTicks returns the multiples of step inside [lo, hi].
func linearTicks(lo, hi, step float64) []float64 {
	const eps = 1e-9
	var vs []float64
	for k := math.Ceil(lo/step - eps); k*step <= hi+step*eps; k++ {
		v := k * step
		if math.Abs(v) < step*eps {
			v = 0 // avoid "-0"
		}
		vs = append(vs, v)
	}
	return vs
}

// niceRange widens [lo, hi] to the enclosing multiples of a 1-2-5 step, so the axis ends on a labelled tick.
func niceRange(lo, hi float64, n int) (float64, float64, float64) {
	step := niceStep(hi-lo, n)
	return math.Floor(lo/step+1e-9) * step, math.Ceil(hi/step-1e-9) * step, step
}

// logTicks returns tick values for a log axis over [lo, hi]. When the data sit on a handful of round values
// (block sizes and queue depths are powers of two) those values are the ticks, so every measured size is
// named; otherwise decades, with 2 and 5 in between when the range is short.
func logTicks(lo, hi float64, data []float64) []float64 {
	distinct := uniqueSorted(data)
	if len(distinct) >= 2 && len(distinct) <= 12 {
		round := true
		for _, v := range distinct {
			if !isRound(v) {
				round = false
				break
			}
		}
		if round {
			return distinct
		}
	}
	mults := []float64{1}
	if hi/lo < 1e3 {
		mults = []float64{1, 2, 5}
	}
	var vs []float64
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for _, m := range mults {
			if v := m * math.Pow(10, e); v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				vs = append(vs, v)
			}
		}
	}
	if len(vs) < 2 {
		return []float64{lo, hi}
	}
	return vs
}

// isRound reports whether v is a power of two (4, 4096, 0.5) or 1, 2 or 5 times a power of ten.
func isRound(v float64) bool {
	if v <= 0 {
		return false
	}
	if f, _ := math.Frexp(v); f == 0.5 {
		return true
	}
	m := v / math.Pow(10, math.Floor(math.Log10(v)))
	for _, r := range []float64{1, 2, 5} {
		if math.Abs(m-r) < 1e-9 {
			return true
		}
	}
	return false
}

func uniqueSorted(vs []float64) []float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// suffixes for tick and value labels of large numbers: throughputs read as "60k", "1.2M".
var suffixes = []struct {
	scale float64
	s     string
}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}

// formatTicks labels the ticks of one axis. Values below 1000 share one number of decimals, so an axis reads
// 0.5, 1.0, 1.5; larger ones take a k/M/G suffix when that is exact to two decimals ("60k", "2.5M"), and
// otherwise thousands separators ("4,096", "262,144") so no label is rounded away from its tick.
func formatTicks(vs []float64) []string {
	small, large := 0, 0
	suffixOK := true
	for _, v := range vs {
		a := math.Abs(v)
		if a < 1000 {
			small = max(small, decimals(v, 6))
			continue
		}
		scale, _ := suffixFor(a)
		if decimals(v/scale, 3) > 2 {
			suffixOK = false
		}
		large = max(large, decimals(v, 6))
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		a := math.Abs(v)
		switch {
		case a < 1000:
			out[i] = strconv.FormatFloat(v, 'f', small, 64)
		case a >= 1e15:
			out[i] = strconv.FormatFloat(v, 'g', 4, 64)
		case suffixOK:
			scale, s := suffixFor(a)
			out[i] = trimZeros(strconv.FormatFloat(v/scale, 'f', 2, 64)) + s
		default:
			out[i] = thousands(v, large)
		}
	}
	return out
}

// formatValue labels one measured value (bar tops) with three significant digits: 61.2k, 950, 12.3, 0.512.
func formatValue(v float64) string {
	a := math.Abs(v)
	if a == 0 {
		return "0"
	}
	if a >= 1000 {
		scale, s := suffixFor(a)
		x := v / scale
		d := max(0, 2-int(math.Floor(math.Log10(math.Abs(x)))))
		return trimZeros(strconv.FormatFloat(x, 'f', d, 64)) + s
	}
	d := max(0, 2-int(math.Floor(math.Log10(a))))
	return trimZeros(strconv.FormatFloat(v, 'f', min(d, 9), 64))
}

func suffixFor(a float64) (float64, string) {
	for _, s := range suffixes {
		if a >= s.scale {
			return s.scale, s.s
		}
	}
	return 1, ""
}

// decimals returns the fewest decimals (at most limit+1) that print v exactly.
func decimals(v float64, limit int) int {
	for d := 0; d <= limit; d++ {
		x := v * math.Pow(10, float64(d))
		if math.Abs(x-math.Round(x)) < 1e-6*math.Max(1, math.Abs(x)) {
			return d
		}
	}
	return limit + 1
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// thousands formats v with d decimals and comma separators in the integer part.
func thousands(v float64, d int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', d, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}
