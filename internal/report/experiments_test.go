package report

import (
	"testing"

	"github.com/tierbench/tierbench/internal/stats"
)

func TestVerdictCount(t *testing.T) {
	nd2, nd3 := "not distinguishable at n=2", "not distinguishable at n=3"
	for _, tt := range []struct {
		vs   []string
		want string
	}{
		{nil, "no verdict"},
		{[]string{stats.Lower}, "lower, at 95% confidence"},
		{[]string{stats.Higher, stats.Higher, stats.Higher}, "higher at all 3 counts, at 95% confidence"},
		{[]string{nd3}, nd3},
		{[]string{nd3, nd3}, nd3},
		{[]string{nd2, nd3}, "not distinguishable at any count"},
		{[]string{bothHeld}, bothHeld},
		{[]string{bothHeld, bothHeld}, "both held the rate at all 2 counts"},
		{[]string{nd3, stats.Lower, stats.Lower}, "lower at 2 of 3 counts at 95% confidence, not distinguishable at the other"},
		{[]string{stats.Lower, nd3, nd2, stats.Lower}, "lower at 2 of 4 counts at 95% confidence, not distinguishable at the others"},
		{[]string{bothHeld, nd3, bothHeld}, "both held the rate at 2 of 3 counts, not distinguishable at the other"},
		{[]string{stats.Lower, stats.Higher}, "lower at 1 of 2 counts at 95% confidence, higher at the other at 95% confidence"},
		{[]string{bothHeld, nd3, stats.Higher, bothHeld}, "higher at 1 of 4 counts at 95% confidence, both held the rate at 2, not distinguishable at 1"},
		{[]string{"no interval at n=1", "no interval at n=1 and 2"}, "no interval at any count"},
		{[]string{"no interval at n=1", nd2}, "no interval at 1 of 2 counts, not distinguishable at the other"},
	} {
		if got := verdictCount(tt.vs); got != tt.want {
			t.Errorf("verdictCount(%q) = %q, want %q", tt.vs, got, tt.want)
		}
	}
}

func TestUntold(t *testing.T) {
	if got := untold(stats.Compare([]float64{10}, []float64{1})); got != "that one measurement a side cannot test" {
		t.Errorf("one measurement a side, 10x: %q", got)
	}
	if got := untold(stats.Compare([]float64{1, 3}, []float64{2, 2.2})); got != "not distinguishable from noise" {
		t.Errorf("two a side, wide: %q", got)
	}
}
