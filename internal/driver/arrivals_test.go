package driver

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Poisson arrivals: the gaps of a 10-second schedule at 60,000 a minute
// (10,000 arrivals) pass a two-sample Kolmogorov–Smirnov test against
// exponential draws of the same mean (gonum's statistic; the critical value
// at the 1% level is 1.628 x sqrt(2/n)), and their count is the rate's
// within 4 standard deviations. Constant arrivals are exactly 1/rate apart.
func TestScheduleArrivals(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	const rate = 60000.0 // a minute: 1,000 a second
	end := t0.Add(10 * time.Second)
	gaps := func(poisson bool) []float64 {
		s := newSchedule(t0, rate, poisson, 42, 1)
		var out []float64
		prev := t0
		for {
			at, _ := s.claim(0, t0) // every arrival still to come
			s.started(0)
			if at.After(end) {
				return out
			}
			out = append(out, float64(at.Sub(prev))/1e6) // ms
			prev = at
		}
	}
	got := gaps(true)
	n := float64(len(got))
	if math.Abs(n-10000) > 4*math.Sqrt(10000) {
		t.Errorf("%g Poisson arrivals in 10 s at 1,000 a second", n)
	}
	exp := distuv.Exponential{Rate: 1, Src: rand.NewPCG(7, 11)} // mean 1 ms
	want := make([]float64, len(got))
	for i := range want {
		want[i] = exp.Rand()
	}
	sort.Float64s(got)
	sort.Float64s(want)
	d := stat.KolmogorovSmirnov(got, nil, want, nil)
	if crit := 1.628 * math.Sqrt(2/n); d > crit {
		t.Errorf("Kolmogorov–Smirnov D = %.4f against exponential gaps; the 1%% critical value is %.4f", d, crit)
	}
	t.Logf("%d Poisson arrivals, KS D = %.4f", len(got), d)

	constant := gaps(false)
	if len(constant) != 10001 { // 0 s to 10 s inclusive
		t.Errorf("%d constant arrivals in 10 s at 1,000 a second; want 10,001", len(constant))
	}
	for i, g := range constant[1:] {
		if math.Abs(g-1) > 1e-6 {
			t.Fatalf("constant gap %d is %g ms; want 1", i+1, g)
		}
	}
}

// The queue a claim reports and the arrivals due by a time: a VU that
// claims 2.5 s into a 60-a-minute constant schedule finds three arrivals
// due (0, 1 and 2 s); arrivals claimed for a later time by waiting VUs
// are not due yet.
func TestScheduleQueue(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	s := newSchedule(t0, 60, false, 1, 3)
	at, queued := s.claim(0, t0.Add(2500*time.Millisecond))
	if !at.Equal(t0) || queued != 3 {
		t.Errorf("first claim at 2.5 s: arrival at %v, %d queued; want t0 and 3", at.Sub(t0), queued)
	}
	if n := s.by(t0.Add(2500 * time.Millisecond)); n != 3 {
		t.Errorf("%d arrivals due by 2.5 s; want 3", n)
	}
	s.started(0)
	for vu := range 3 { // claim 1 s, 2 s and 3 s: the last is to come
		if at, q := s.claim(vu, t0.Add(2500*time.Millisecond)); !at.Equal(t0.Add(time.Duration(vu+1)*time.Second)) || q != max(2-vu, 0) {
			t.Errorf("claim %d: arrival at %v, %d queued", vu+2, at.Sub(t0), q)
		}
	}
	if n := s.by(t0.Add(2500 * time.Millisecond)); n != 3 {
		t.Errorf("%d arrivals due by 2.5 s with one claimed for 3 s; want 3", n)
	}
	if n := s.by(t0.Add(3 * time.Second)); n != 4 {
		t.Errorf("%d arrivals due by 3 s; want 4", n)
	}
	if n := s.by(t0.Add(-time.Second)); n != 0 {
		t.Errorf("%d arrivals due before the start; want 0", n)
	}
	// Not begun: the arrivals claimed for 1, 2 and 3 s, and those not
	// claimed, at 4 s on; counted in (from, to].
	for _, c := range []struct {
		from, to time.Duration
		want     int64
	}{
		{500 * time.Millisecond, 2500 * time.Millisecond, 2}, {time.Second, 2 * time.Second, 1}, {1500 * time.Millisecond, 5 * time.Second, 4},
		{-time.Second, 0, 0}} {
		if n := s.unstarted(t0.Add(c.from), t0.Add(c.to)); n != c.want {
			t.Errorf("%d arrivals in (%v, %v] not begun; want %d", n, c.from, c.to, c.want)
		}
	}
	s.started(1) // the one at 2 s
	if n := s.unstarted(t0.Add(1500*time.Millisecond), t0.Add(5*time.Second)); n != 3 {
		t.Errorf("%d arrivals in (1.5 s, 5 s] not begun, the one at 2 s begun; want 3", n)
	}
}

// A pause moves every arrival not yet begun: one claimed and waiting for
// its VU, and those not claimed; one begun stays counted where it was.
// The driver pauses the schedule while it holds its VUs at the interval's
// start.
func TestSchedulePause(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	s := newSchedule(t0, 60, false, 1, 2) // one arrival a second, from t0
	s.claim(0, t0)
	s.started(0) // the one at 0 s, begun
	if at, _ := s.claim(1, t0.Add(500*time.Millisecond)); !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("claim at 0.5 s: arrival at %v; want 1 s", at.Sub(t0))
	}
	s.pause(3 * time.Second)
	if at, q := s.reclaim(1, t0.Add(3500*time.Millisecond)); !at.Equal(t0.Add(4*time.Second)) || q != 0 {
		t.Errorf("the claimed arrival after a 3 s pause, at 3.5 s, is at %v, %d queued; want 4 s, none", at.Sub(t0), q)
	}
	// At 5.5 s it is due, and so is the unclaimed one at 5 s: two queued.
	if at, q := s.reclaim(1, t0.Add(5500*time.Millisecond)); !at.Equal(t0.Add(4*time.Second)) || q != 2 {
		t.Errorf("reclaimed at 5.5 s: at %v, %d queued; want 4 s, 2", at.Sub(t0), q)
	}
	// By 4.5 s: the one begun and the claimed one at 4 s, none other (the
	// next unclaimed one is at 5 s).
	if n := s.by(t0.Add(4500 * time.Millisecond)); n != 2 {
		t.Errorf("%d arrivals due by 4.5 s after the pause; want 2", n)
	}
	if at, q := s.claim(0, t0.Add(4500*time.Millisecond)); !at.Equal(t0.Add(5*time.Second)) || q != 0 {
		t.Errorf("claim at 4.5 s: arrival at %v, %d queued; want 5 s and none", at.Sub(t0), q)
	}
	if n := s.unstarted(t0.Add(3500*time.Millisecond), t0.Add(6*time.Second)); n != 3 {
		t.Errorf("%d arrivals in (3.5 s, 6 s] not begun; want 3 (4, 5 and 6 s)", n)
	}
}
