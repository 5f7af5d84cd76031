package report

import (
	"testing"

	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
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
		{[]string{bothHeld, bothHeld}, "both held the rate at both counts"},
		{[]string{stats.Lower, stats.Lower}, "lower at both counts, at 95% confidence"},
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

// An open loop's steps differ in the rate offered: its peak is told by the
// rate, and its fall at its highest rate.
func TestPeakSentenceOpenLoop(t *testing.T) {
	step := func(vus int, offered float64, nopm int64) tpccStep {
		s := &stored.TPCCStep{VUs: vus, NOPM: nopm}
		if offered > 0 {
			s.OpenLoop = &stored.OpenLoop{OfferedTPM: offered}
		}
		reps := []*stored.TPCCStep{s}
		return tpccStep{*stored.GroupTPCC(reps, stored.KeysOf(reps))[0]}
	}
	for _, tt := range []struct {
		steps []tpccStep
		want  string
	}{
		{[]tpccStep{step(8, 6000, 2500), step(8, 12000, 3563), step(8, 24000, 2979)},
			"slow: NOPM peaked at 3,563 at 12,000 TPM offered (a pool of 8 VUs); its highest rate, 24,000 TPM offered, fell to 2,979, 0.84x (no interval at n=1)."},
		{[]tpccStep{step(8, 6000, 2500), step(8, 12000, 5000)}, "slow: NOPM peaked at 5,000 at 12,000 TPM offered (a pool of 8 VUs)."},
		{[]tpccStep{step(1, 3000, 1300)}, "slow: 1,300 NOPM at 3,000 TPM offered (a pool of 1 VU), its only step."},
		{[]tpccStep{step(4, 0, 5000), step(8, 0, 4000)},
			"slow: NOPM peaked at 5,000 with 4 virtual users; its largest step, 8 virtual users, fell to 4,000, 0.80x (no interval at n=1)."},
	} {
		if got := peakSentence(&runData{Label: "slow", TPCC: tt.steps}); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}
