// Package threshold parses pass/fail thresholds such as "nopm>=50000" or
// "new_order.p99<=10ms" and judges them against the figures a run stores
// for each TPC-C step or disk point, as k6's thresholds judge a load test.
// The metric names are the keys of the step and point documents users
// already see in --json output, with a few short forms (see Names).
package threshold

// A threshold is judged on the runs of two kinds, each with its own names:
// stored.KindTPCC, per TPC-C step (stored.TPCCStep), and stored.KindDisk,
// per disk point (stored.Point).

// Threshold is one parsed expression.
type Threshold struct {
	Expr   string  // as given, trimmed, e.g. "new_order.p99<=10ms"
	Metric string  // the name as given, e.g. "new_order.p99"
	Op     string  // one of < <= > >= == !=
	Value  float64 // the number as given, before its unit
	Unit   string  // the unit as given: "", "ms", "us", "µs", "s", "%", "k", "M", "MB/s" …

	key     string  // the stored key it reads
	keyUnit string  // that key's unit
	limit   float64 // Value in keyUnit
}

// Verdict is one threshold judged on one step or point: what a run prints,
// stores (as the run's "thresholds" document, a []Verdict) and reports.
type Verdict struct {
	Threshold string  `json:"threshold"`      // the expression as given
	Step      int     `json:"step"`           // the 0-based step or point index; -1: the threshold matched no step
	Name      string  `json:"name,omitempty"` // the step's or point's name, e.g. "4 VUs" or "randread-4k-qd32"
	Key       string  `json:"key,omitempty"`  // the stored key read, e.g. "txn.new_order.p99_ms"
	Value     float64 `json:"value"`          // the stored figure, in the key's unit
	Limit     float64 `json:"limit"`          // the threshold's value converted to the key's unit
	Pass      bool    `json:"pass"`           //
	Note      string  `json:"note,omitempty"` // why a verdict with Step -1 failed, e.g. "no step has write.p99.9"

	unit string // the key's unit, for String
}
