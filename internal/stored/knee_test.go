package stored

import (
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/metrics"
)

// openStep is a step at rate that completed done of arrivals transactions
// in a minute, its New-Order p99 p99 ms.
func openStep(rate float64, arrivals, done int64, p99 float64) *TPCCStep {
	return &TPCCStep{Seconds: 60, Txn: map[string]metrics.Summary{"new_order": {Count: done, P99Ms: p99}},
		OpenLoop: &OpenLoop{OfferedTPM: rate, Arrivals: arrivals}}
}

func TestFindKnee(t *testing.T) {
	// Given out of order: the knee walks the rates upwards.
	steps := []*TPCCStep{openStep(3000, 3000, 2990, 40), openStep(1000, 1000, 1000, 2), openStep(2000, 2010, 2000, 15), openStep(4000, 4000, 3000, 900)}
	k := FindKnee(steps, 0)
	if k.OfferedTPM != 2000 || k.NextTPM != 3000 || k.P99BoundMs != 20 || !strings.Contains(k.Why, "40.00 ms, over the 20.00 ms bound") {
		t.Errorf("default bound: %+v; want the knee at 2000, 3000 over 10 x 2 ms", k)
	}
	k = FindKnee(steps, 50*time.Millisecond)
	if k.OfferedTPM != 3000 || k.NextTPM != 4000 || !strings.Contains(k.Why, "75.0% of the 4000 transactions that arrived") {
		t.Errorf("a 50 ms bound: %+v; want the knee at 3000, 4000 served short", k)
	}
	k = FindKnee(steps[:3], time.Second)
	if k.OfferedTPM != 3000 || k.NextTPM != 0 || !strings.Contains(k.Why, "every rate held") {
		t.Errorf("every rate held: %+v", k)
	}
	if k := FindKnee([]*TPCCStep{openStep(1000, 1000, 900, 1)}, 0); k.OfferedTPM != 0 || k.NextTPM != 1000 {
		t.Errorf("the lowest rate not held: %+v; want no knee, 1000 next", k)
	}
	if FindKnee([]*TPCCStep{{VUs: 4}}, 0) != nil {
		t.Error("a closed loop has a knee")
	}
	// Repetitions are judged together.
	g := openStep(5000, 0, 0, 3)
	g.Repetitions = []*TPCCStep{openStep(5000, 5000, 5000, 3), openStep(5000, 5000, 4700, 3)}
	if k := FindKnee([]*TPCCStep{openStep(1000, 1000, 1000, 1), g}, 0); k.OfferedTPM != 1000 || !strings.Contains(k.Why, "97.0% of the 10000") {
		t.Errorf("repetitions at 5000: %+v; want 97%% of 10000 served, not held", k)
	}
}
