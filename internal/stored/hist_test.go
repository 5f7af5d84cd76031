package stored

import (
	"encoding/json"
	"testing"
)

// histOf builds a Hist from ns -> count pairs.
func histOf(bins map[int64]uint64) *Hist {
	h := &Hist{}
	for ns, c := range bins {
		h.Add(ns, c)
	}
	return h
}

// ramp returns n bins 1..n ns with one IO each, so the k-th IO is k ns.
func ramp(n int64) *Hist {
	h := &Hist{}
	for ns := int64(1); ns <= n; ns++ {
		h.Add(ns, 1)
	}
	return h
}

func TestHistPercentile(t *testing.T) {
	tests := []struct {
		name string
		h    *Hist
		p    float64
		want int64
	}{
		{"empty", &Hist{}, 50, 0},
		{"nil", nil, 99, 0},
		{"one bin", histOf(map[int64]uint64{700: 5}), 99.9, 700},
		{"ten p10", ramp(10), 10, 1},
		{"ten p50", ramp(10), 50, 5},
		{"ten p90", ramp(10), 90, 9},
		{"ten p95", ramp(10), 95, 10}, // 9.5 needs the 10th IO
		{"ten p100", ramp(10), 100, 10},
		{"tiny p", ramp(10), 0.001, 1},
		// fio's limit is p * (nr * 0.01L) in long double (see fioLimit):
		// 99.95% of 2000 is 1999.00000000000005684, so the 1999th IO is not enough ...
		{"2000 p99.95 long double", ramp(2000), 99.95, 2000},
		// ... and 60% of 25 is exactly 15 (the source's p / 100.0 * nr would be above 15).
		{"25 p60 long double", ramp(25), 60, 15},
		{"hundred p95", ramp(100), 95, 95},
		{"hundred p30", ramp(100), 30, 30},
		{"thousand p99.9", ramp(1000), 99.9, 1000},
		{"skewed p50", histOf(map[int64]uint64{100: 50, 200: 49, 9000: 1}), 50, 100},
		{"skewed p99", histOf(map[int64]uint64{100: 50, 200: 49, 9000: 1}), 99, 200},
		{"skewed p99.9", histOf(map[int64]uint64{100: 50, 200: 49, 9000: 1}), 99.9, 9000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.h.Percentile(tt.p); got != tt.want {
				t.Errorf("Percentile(%v) = %d, want %d", tt.p, got, tt.want)
			}
		})
	}
}

func TestHistCountMax(t *testing.T) {
	h := histOf(map[int64]uint64{300: 2, 100: 1, 200: 0})
	if h.Count() != 3 || h.Max() != 300 {
		t.Errorf("Count, Max = %d, %d; want 3, 300", h.Count(), h.Max())
	}
	var nilHist *Hist
	if nilHist.Count() != 0 || nilHist.Max() != 0 || (&Hist{}).Max() != 0 {
		t.Error("empty histograms must count 0 with max 0")
	}
}

// Job A did 99 IOs at 100µs, job B one at 10ms: the merged distribution is
// not the average of the two jobs' percentiles.
func TestHistMerge(t *testing.T) {
	const fast, slow = 100_000, 10_000_000
	tests := []struct {
		name string
		a, b map[int64]uint64
		p    float64
		want int64
	}{
		{"99 fast + 1 slow p50", map[int64]uint64{fast: 99}, map[int64]uint64{slow: 1}, 50, fast},
		{"99 fast + 1 slow p99", map[int64]uint64{fast: 99}, map[int64]uint64{slow: 1}, 99, fast},
		{"99 fast + 1 slow p99.9", map[int64]uint64{fast: 99}, map[int64]uint64{slow: 1}, 99.9, slow},
		{"50 fast + 50 slow p50", map[int64]uint64{fast: 50}, map[int64]uint64{slow: 50}, 50, fast},
		{"50 fast + 50 slow p95", map[int64]uint64{fast: 50}, map[int64]uint64{slow: 50}, 95, slow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := histOf(tt.a), histOf(tt.b)
			avg := (a.Percentile(tt.p) + b.Percentile(tt.p)) / 2
			m := &Hist{}
			m.Merge(a)
			m.Merge(b)
			got := m.Percentile(tt.p)
			if got != tt.want {
				t.Errorf("merged p%v = %d, want %d", tt.p, got, tt.want)
			}
			if got == avg {
				t.Errorf("merged p%v = %d equals the average of the jobs' percentiles", tt.p, got)
			}
			if m.Count() != a.Count()+b.Count() {
				t.Errorf("merged count %d, want %d", m.Count(), a.Count()+b.Count())
			}
		})
	}
}

func TestHistMergeNil(t *testing.T) {
	h := histOf(map[int64]uint64{5: 1})
	h.Merge(nil)
	h.Merge(&Hist{})
	if h.Count() != 1 {
		t.Errorf("Count = %d after merging nothing, want 1", h.Count())
	}
	var empty Hist
	empty.Merge(h)
	if empty.Count() != 1 || empty.Max() != 5 {
		t.Errorf("zero Hist after Merge: count %d max %d, want 1 and 5", empty.Count(), empty.Max())
	}
}

func TestHistJSON(t *testing.T) {
	h := histOf(map[int64]uint64{5000: 1, 100: 2, 20352: 7})
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"bins":[[100,2],[5000,1],[20352,7]]}`; string(data) != want {
		t.Errorf("Marshal = %s, want %s", data, want)
	}
	back := histOf(map[int64]uint64{1: 1}) // replaced, not added to
	if err := json.Unmarshal(data, back); err != nil {
		t.Fatal(err)
	}
	for _, p := range []float64{1, 50, 90, 99, 100} {
		if back.Percentile(p) != h.Percentile(p) {
			t.Errorf("p%v after round trip = %d, want %d", p, back.Percentile(p), h.Percentile(p))
		}
	}
	if back.Count() != 10 || back.Max() != 20352 {
		t.Errorf("round trip: count %d max %d, want 10 and 20352", back.Count(), back.Max())
	}
	if data, _ := json.Marshal(&Hist{}); string(data) != `{"bins":[]}` {
		t.Errorf("empty Marshal = %s", data)
	}
	if err := json.Unmarshal([]byte(`{"bins":[[-1,2]]}`), back); err == nil {
		t.Error("want an error for a malformed bin")
	}
}
