package stored

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/bits"
	"slices"
)

// Hist is a latency histogram in fio's json+ form: each bin's
// representative latency in ns -> count. fio prints the same representative
// value for a bin in "bins" and in "percentile", so percentiles computed
// here from merged bins are values fio itself could have printed.
//
// The zero value is an empty histogram ready to use.
type Hist struct {
	bins map[int64]uint64
}

// Add adds count IOs to the bin whose representative latency is ns.
func (h *Hist) Add(ns int64, count uint64) {
	if count == 0 {
		return
	}
	if h.bins == nil {
		h.bins = make(map[int64]uint64)
	}
	h.bins[ns] += count
}

// Merge adds o's counts to h, bin by bin; o may be nil.
func (h *Hist) Merge(o *Hist) {
	if o == nil {
		return
	}
	for ns, c := range o.bins {
		h.Add(ns, c)
	}
}

// Count returns the number of IOs in h.
func (h *Hist) Count() uint64 {
	if h == nil {
		return 0
	}
	var n uint64
	for _, c := range h.bins {
		n += c
	}
	return n
}

// Percentile returns the p-th percentile (p in (0,100]) by fio's own rule
// (stat.c, calc_clat_percentiles): walking the bins in increasing order,
// the first bin whose cumulative count is >= p/100 * total. It returns 0
// when h is empty.
func (h *Hist) Percentile(p float64) int64 {
	return h.Percentiles(p)[0]
}

// Percentiles returns Percentile(p) for each of ps, sorting the bins once.
func (h *Hist) Percentiles(ps ...float64) []int64 {
	out := make([]int64, len(ps))
	total := h.Count()
	if total == 0 {
		return out
	}
	keys := h.sorted()
	counts := make([]uint64, len(keys))
	for i, ns := range keys {
		counts[i] = h.bins[ns]
	}
	for j, p := range ps {
		out[j] = keys[len(keys)-1] // p > 100
		need, ok := atLeast(fioLimit(p, total))
		if !ok {
			continue
		}
		var sum uint64
		for i, c := range counts {
			if sum += c; sum >= need {
				out[j] = keys[i]
				break
			}
		}
	}
	return out
}

// atLeast returns the smallest whole count that is >= limit: a count (an
// integer) is >= limit exactly when it is >= that. ok is false when no
// uint64 is.
func atLeast(limit *big.Float) (need uint64, ok bool) {
	i, acc := limit.Int(nil) // toward zero
	if acc == big.Below {    // limit is positive and not whole: round up
		i.Add(i, big.NewInt(1))
	}
	switch {
	case i.Sign() <= 0:
		return 0, true
	case !i.IsUint64():
		return 0, false
	}
	return i.Uint64(), true
}

// fioLimit returns the right-hand side of fio's test, as fio computes it.
// The source (stat.c) reads
//
//	sum >= ((long double) plist[j].u.f / 100.0 * nr)
//
// but fio is built with -ffast-math, and gcc on x86-64 turns that into
// p * (nr * 0.01L) in the x87's long double: a 64-bit mantissa, each
// product rounded to nearest even (seen in fio 3.33's disassembly, and
// checked against its printed percentiles). The rounding shows at the edges:
// for p=99.95 and nr=2000 the limit is 1999.00000000000005684, so 1999 IOs
// are not enough, where float64 arithmetic (1999 exactly) says they are; for
// p=60 and nr=25 it is exactly 15, where the source's order of operations
// would give 15.0000000000000000009. big.Float at precision 64 rounds like
// the x87.
func fioLimit(p float64, total uint64) *big.Float {
	hundredth := new(big.Float).SetPrec(64).Quo(big.NewFloat(1), big.NewFloat(100)) // 0.01L
	x := new(big.Float).SetPrec(64).SetUint64(total)
	x.Mul(x, hundredth)
	return x.Mul(x, big.NewFloat(p))
}

// Max returns the largest non-empty bin's value, 0 when h is empty.
func (h *Hist) Max() int64 {
	if h == nil || len(h.bins) == 0 {
		return 0
	}
	return slices.Max(slices.Collect(maps.Keys(h.bins)))
}

// sorted returns the bin values in increasing order.
func (h *Hist) sorted() []int64 {
	if h == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(h.bins))
}

// histJSON is Hist's JSON form: {"bins":[[ns,count],...]}, ascending by ns.
// Latencies are never negative, so both numbers travel as uint64.
type histJSON struct {
	Bins [][2]uint64 `json:"bins"`
}

// MarshalJSON writes {"bins":[[ns,count],...]} sorted by ns.
func (h *Hist) MarshalJSON() ([]byte, error) {
	out := histJSON{Bins: [][2]uint64{}}
	for _, ns := range h.sorted() {
		if ns < 0 {
			return nil, fmt.Errorf("hist: negative bin %d ns", ns)
		}
		out.Bins = append(out.Bins, [2]uint64{uint64(ns), h.bins[ns]})
	}
	return json.Marshal(out)
}

// UnmarshalJSON replaces h's bins with those in data.
func (h *Hist) UnmarshalJSON(data []byte) error {
	var in histJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("hist: %w", err)
	}
	h.bins = nil
	var total uint64
	for _, b := range in.Bins {
		if b[0] > math.MaxInt64 {
			return fmt.Errorf("hist: bin %d ns out of range", b[0])
		}
		var carry uint64
		if total, carry = bits.Add64(total, b[1], 0); carry != 0 {
			return fmt.Errorf("hist: the counts add up to more than a histogram holds")
		}
		h.Add(int64(b[0]), b[1])
	}
	return nil
}

// PercentilesMs are h's p50, p95, p99 and p99.9 in ms, by fio's own rule:
// a point's figures from its jobs' merged bins, and a repeated point's
// pooled ones from its repetitions' (GroupPoints).
func (h *Hist) PercentilesMs() (p50, p95, p99, p999 float64) {
	pct := h.Percentiles(50, 95, 99, 99.9)
	return float64(pct[0]) / 1e6, float64(pct[1]) / 1e6, float64(pct[2]) / 1e6, float64(pct[3]) / 1e6
}
