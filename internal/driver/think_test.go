package driver

import (
	"math"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/tpcc"
)

// Think times are drawn as clause 5.2.5.4 draws them: negative exponential
// of the given mean, cut at 10 times it. Over 100,000 draws of a 1 ms mean
// the sample mean is within 1% of it (the draws' standard deviation is the
// mean, so 1% is 3.2 standard errors; the cut takes 0.005% off), 63.2% of
// them fall below it (1 - 1/e, within 4 standard deviations of a binomial
// count), and none exceeds 10 ms.
func TestThinkDraw(t *testing.T) {
	const n, mean = 100_000, time.Millisecond
	r := tpcc.NewRand(7)
	var sum time.Duration
	below, most := 0, time.Duration(0)
	for range n {
		d := thinkDraw(r, mean)
		if d < 0 {
			t.Fatalf("a negative think time %s", d)
		}
		sum += d
		most = max(most, d)
		if d < mean {
			below++
		}
	}
	if got := float64(sum) / n / float64(mean); math.Abs(got-1) > 0.01 {
		t.Errorf("mean draw %.4f x the mean; want within 1%%", got)
	}
	p := 1 - math.Exp(-1)
	if got, sd := float64(below)/n, math.Sqrt(p*(1-p)/n); math.Abs(got-p) > 4*sd {
		t.Errorf("%.4f of the draws below the mean; an exponential puts %.4f there (±%.4f)", got, p, 4*sd)
	}
	if most > 10*mean {
		t.Errorf("longest draw %s; the spec cuts think times at 10 x the mean", most)
	}
	if thinkDraw(r, 0) != 0 {
		t.Error("a mean of 0 drew a think time")
	}
}
