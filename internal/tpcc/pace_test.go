package tpcc

import (
	"math"
	"strings"
	"testing"
	"time"
)

// Each type is held to its own limit, a type that never ran is not judged,
// and a percentile exactly at the limit passes ("less than or equal").
func TestJudgeResponseTimes(t *testing.T) {
	p90 := [NumKinds]time.Duration{
		NewOrder: 5 * time.Second, Payment: 5*time.Second + time.Millisecond, OrderStatus: time.Second,
		Delivery: 79 * time.Second, StockLevel: 21 * time.Second,
	}
	count := [NumKinds]int64{100, 100, 0, 10, 10}
	got := JudgeResponseTimes(p90, count)
	want := map[string]string{"new_order": "pass", "payment": "fail", "order_status": "not-judged", "delivery": "pass", "stock_level": "fail"}
	if len(got) != int(NumKinds) {
		t.Fatalf("%d checks; want %d", len(got), NumKinds)
	}
	for k, c := range got {
		if c.Type != Kind(k).String() || c.Verdict != want[c.Type] {
			t.Errorf("check %d: %+v; want type %s, verdict %s", k, c, Kind(k), want[Kind(k).String()])
		}
	}
	if got[Delivery].LimitMs != 80000 || got[StockLevel].LimitMs != 20000 || got[NewOrder].P90Ms != 5000 {
		t.Errorf("limits or percentiles in ms: %+v", got)
	}
}

// 12.86 tpmC on one warehouse is 100%; the verdict turns at 85%; the
// warehouses a paced run keeps busy are those its VUs are homed on.
func TestEfficiency(t *testing.T) {
	if got := EfficiencyPct(12.86, 1); math.Abs(got-100) > 1e-9 {
		t.Errorf("12.86 tpmC on 1 warehouse: %g%%; want 100", got)
	}
	if got := EfficiencyPct(12.86*3*0.9, 3); math.Abs(got-90) > 1e-9 {
		t.Errorf("90%% of 3 warehouses' pace: %g%%", got)
	}
	if EfficiencyPct(10, 0) != 0 {
		t.Error("no warehouse gives an efficiency")
	}
	if EfficiencyVerdict(85) != "pass" || EfficiencyVerdict(84.99) != "fail" {
		t.Error("the verdict does not turn at 85%")
	}
	if a, note := PacedWarehouses(20, 2); a != 2 || note != "" {
		t.Errorf("20 VUs on 2 warehouses: %d active, note %q; want 2 and none", a, note)
	}
	a, note := PacedWarehouses(4, 10)
	if a != 4 || !strings.Contains(note, "at most 10%") {
		t.Errorf("4 VUs on 10 warehouses: %d active, note %q; want 4 and a ceiling of 10%%", a, note)
	}
}
