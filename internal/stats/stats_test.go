package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestOf: a fixed sample against values worked out here: mean 11, sample
// variance 10/4, and t(0.975, 4) = 2.7764451051977987 from the tables.
func TestOf(t *testing.T) {
	s := Of([]float64{10, 12, 11, 13, 9})
	sd := math.Sqrt(2.5)
	half := 2.7764451051977987 * sd / math.Sqrt(5)
	if s.N != 5 || !near(s.Mean, 11, 1e-12) || !near(s.Stddev, sd, 1e-12) || !near(s.Low, 11-half, 1e-9) || !near(s.High, 11+half, 1e-9) {
		t.Errorf("Of = %+v; want mean 11, sd %v, [%v, %v]", s, sd, 11-half, 11+half)
	}
	// n = 2: t(0.975, 1) = 12.706204736174707.
	s = Of([]float64{100, 104})
	if half := 12.706204736174707 * math.Sqrt(8) / math.Sqrt(2); !near(s.Low, 102-half, 1e-6) || !near(s.High, 102+half, 1e-6) {
		t.Errorf("n=2: %+v; want 102 ± %v", s, half)
	}
	// One value: a mean, no interval. NaN values are left out.
	s = Of([]float64{math.NaN(), 7})
	if s.N != 1 || s.Mean != 7 || s.Stddev != 0 || s.HasCI() {
		t.Errorf("one value: %+v", s)
	}
	if s := Of(nil); s.N != 0 || !math.IsNaN(s.Mean) {
		t.Errorf("no values: %+v", s)
	}
}

func TestSummaryJSON(t *testing.T) {
	b, err := json.Marshal(Of([]float64{7}))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"mean":7,"stddev":0,"n":1,"ci95_low":null,"ci95_high":null}` {
		t.Errorf("n=1 JSON %s", b)
	}
	in := Of([]float64{1, 2, 4})
	b, _ = json.Marshal(in)
	var out Summary
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Errorf("round trip %s: %+v, want %+v (%v)", b, out, in, err)
	}
}

// fieller solves the interval's quadratic directly: the θ with
// (a − θb)² ≤ t²(va + θ²vb), i.e. (b² − t²vb)θ² − 2abθ + (a² − t²va) ≤ 0.
func fieller(a, b, va, vb, t float64) (lo, hi float64) {
	qa, qb, qc := b*b-t*t*vb, -2*a*b, a*a-t*t*va
	d := math.Sqrt(qb*qb - 4*qa*qc)
	return (-qb - d) / (2 * qa), (-qb + d) / (2 * qa)
}

// TestCompare: synthetic repetitions where the truth is known. A pair
// clearly apart (A a quarter lower) is "lower", with Fieller's interval as
// the quadratic gives it; a pair drawn alike is "not distinguishable".
func TestCompare(t *testing.T) {
	a := []float64{80, 81, 79, 80, 80}
	b := []float64{100, 102, 98, 101, 99}
	c := Compare(a, b)
	if c.Verdict != Lower || !c.Significant() || c.NA != 5 || c.NB != 5 || !near(c.Ratio, 0.8, 1e-12) {
		t.Errorf("clearly lower: %+v", c)
	}
	sa, sb := Of(a), Of(b)
	va, vb := sa.Stddev*sa.Stddev/5, sb.Stddev*sb.Stddev/5
	r := sa.Mean / sb.Mean
	df := (va + r*r*vb) * (va + r*r*vb) / (va*va/4 + r*r*r*r*vb*vb/4)
	lo, hi := fieller(sa.Mean, sb.Mean, va, vb, tQuantile(df))
	if !near(c.Low, lo, 1e-9) || !near(c.High, hi, 1e-9) || !(c.Low < 0.8 && 0.8 < c.High && c.High < 1) {
		t.Errorf("interval [%v, %v], want [%v, %v] around 0.8 and below 1", c.Low, c.High, lo, hi)
	}
	if c.Text() != "0.80x (0.78–0.82, lower)" {
		t.Errorf("text %q", c.Text())
	}
	if c := Compare(b, a); c.Verdict != Higher || c.Low <= 1 {
		t.Errorf("the other way round: %+v", c)
	}

	same := Compare([]float64{100, 90, 110}, []float64{95, 105, 100})
	if same.Verdict != "not distinguishable at n=3" || same.Significant() || !(same.Low < 1 && 1 < same.High) {
		t.Errorf("alike: %+v", same)
	}
	// Two repetitions far apart: Fieller's lower bound falls below 0,
	// which the text shows as 0 (no figure compared is negative).
	wide := Compare([]float64{0.2, 1.8}, []float64{0.95, 1.05})
	if !wide.HasCI() || wide.Low >= 0 {
		t.Fatalf("wide: %+v, want a bounded interval below 0", wide)
	}
	if want := fmt.Sprintf("1.00x (0.00–%.2f, not distinguishable at n=2)", wide.High); wide.Text() != want {
		t.Errorf("wide text %q, want %q", wide.Text(), want)
	}
	// One repetition on a side: no interval, never a verdict of order.
	one := Compare([]float64{50}, []float64{100, 101})
	if one.Verdict != "no interval at n=1 and 2" || one.HasCI() || one.Ratio < 0.49 || one.Ratio > 0.5 {
		t.Errorf("n=1: %+v", one)
	}
	// B's mean not told from 0: unbounded, not distinguishable.
	if u := Compare([]float64{10, 11, 12}, []float64{-5, 1, 8}); u.HasCI() || u.Significant() {
		t.Errorf("denominator near 0: %+v", u)
	}
	if n := Compare([]float64{1, 2}, nil); n.Significant() || !math.IsNaN(n.Ratio) {
		t.Errorf("no B: %+v", n)
	}
	jb, _ := json.Marshal(one)
	if string(jb) != `{"ratio":0.4975124378109453,"ci95_low":null,"ci95_high":null,"n_a":1,"n_b":2,"verdict":"no interval at n=1 and 2"}` {
		t.Errorf("JSON %s", jb)
	}
}

// OfEach summarises each figure over the repetitions that have it; Means
// reads the means back under a prefix.
func TestOfEach(t *testing.T) {
	st := OfEach([]map[string]float64{{"nopm": 10, "host.cpu": 1}, {"nopm": 12}, {"nopm": 14, "host.cpu": 3}})
	if st["nopm"].N != 3 || st["nopm"].Mean != 12 || st["host.cpu"].N != 2 || st["host.cpu"].Mean != 2 {
		t.Errorf("OfEach = %+v", st)
	}
	if m := Means(st, "host."); len(m) != 1 || m["cpu"] != 2 {
		t.Errorf("Means(host.) = %v", m)
	}
	if m := Means(st, "db."); m != nil {
		t.Errorf("Means(db.) = %v; want nil", m)
	}
}
