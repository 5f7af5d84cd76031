package tpcc

import (
	"fmt"
	"time"
)

// ResponseTimeLimit is each type's 90th-percentile response-time limit:
// the table of clause 5.2.5.7 for New-Order, Payment, Order-Status and
// Stock-Level. Delivery's 5 s there is for queueing the request; its
// deferred execution has 80 s (clause 2.7.2). tierbench runs Delivery whole
// from the terminal, so its response time is held to the 80 s.
var ResponseTimeLimit = [NumKinds]time.Duration{
	NewOrder:    5 * time.Second,
	Payment:     5 * time.Second,
	OrderStatus: 5 * time.Second,
	Delivery:    80 * time.Second,
	StockLevel:  20 * time.Second,
}

// ResponseTimeCheck is one type's 90th-percentile response time against
// its limit.
type ResponseTimeCheck struct {
	Type    string  `json:"type"`
	P90Ms   float64 `json:"p90_ms"`
	LimitMs float64 `json:"limit_ms"`
	Count   int64   `json:"count"`
	// Verdict is "pass", "fail", or "not-judged" when no transaction of
	// the type completed.
	Verdict string `json:"verdict"`
}

// JudgeResponseTimes checks each type's 90th percentile (p90) over count
// transactions against ResponseTimeLimit.
func JudgeResponseTimes(p90 [NumKinds]time.Duration, count [NumKinds]int64) []ResponseTimeCheck {
	out := make([]ResponseTimeCheck, NumKinds)
	for k := range NumKinds {
		c := ResponseTimeCheck{Type: k.String(), P90Ms: ms(p90[k]), LimitMs: ms(ResponseTimeLimit[k]), Count: count[k]}
		switch {
		case count[k] == 0:
			c.Verdict = "not-judged"
		case p90[k] <= ResponseTimeLimit[k]:
			c.Verdict = "pass"
		default:
			c.Verdict = "fail"
		}
		out[k] = c
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// MaxTpmCPerWarehouse is the most New-Orders a minute ten terminals keying
// and thinking at the pace of clause 5.2.5.7 can complete on one
// warehouse: 0.45 of the mix, over a mean cycle of 20.99 s of keying and
// think time (60 / 20.99 × 0.45 × 10 = 12.86).
const MaxTpmCPerWarehouse = 12.86

// TerminalsPerWarehouse is the specification's count of terminals, and so
// of paced VUs, per warehouse (clause 4.2.2).
const TerminalsPerWarehouse = 10

// MinEfficiencyPct is the share of MaxTpmCPerWarehouse below which a paced
// run is flagged: the server, or the client, did not keep up.
const MinEfficiencyPct = 85.0

// EfficiencyPct is tpmC as a percentage of what warehouses can give at the
// specification's pace.
func EfficiencyPct(tpmC float64, warehouses int) float64 {
	if warehouses <= 0 {
		return 0
	}
	return tpmC / (MaxTpmCPerWarehouse * float64(warehouses)) * 100
}

// EfficiencyVerdict is "pass" at MinEfficiencyPct or more, and otherwise
// "fail".
func EfficiencyVerdict(pct float64) string {
	if pct >= MinEfficiencyPct {
		return "pass"
	}
	return "fail"
}

// PacedWarehouses says how many warehouses vus paced VUs keep busy on a
// schema of warehouses (VU i is homed on warehouse i mod warehouses + 1),
// and, when the count of VUs is not the specification's ten per warehouse,
// what that does to the efficiency.
func PacedWarehouses(vus, warehouses int) (active int, note string) {
	active = min(vus, warehouses)
	if want := TerminalsPerWarehouse * active; vus != want {
		note = fmt.Sprintf("%d VUs on %d warehouses: the specification's pace is %d VUs per warehouse (%d here), so the efficiency can reach at most %.0f%%",
			vus, active, TerminalsPerWarehouse, want, 100*float64(vus)/float64(want))
	}
	return active, note
}
