package driver

import (
	"testing"

	"github.com/tierbench/tierbench/internal/engine"
)

// A reset of the server's counters (down to near zero) is carried over:
// the count goes on from the last reading before it, and the transactions
// after it add to that. A dip of a few, a reading behind its own
// transactions, is not a reset: the count holds, never going back.
func TestCounterTrack(t *testing.T) {
	var tr counterTrack
	var got []int64
	for _, raw := range []int64{50_000, 51_000, 50_998, 52_000, 40, 38, 1_040, 2_040} {
		got = append(got, tr.see(engine.Counters{Transactions: raw}).Transactions)
	}
	want := []int64{50_000, 51_000, 51_000, 52_000, 52_000, 52_000, 53_000, 54_000}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("counted %v; want %v", got, want)
		}
	}
	if tr.resets != 1 {
		t.Errorf("%d resets; want 1", tr.resets)
	}
}
