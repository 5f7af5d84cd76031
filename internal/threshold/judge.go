package threshold

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/units"
)

// Judge judges ts on one step or point: index is its 0-based index, name how
// the run names it ("4 VUs", a point's name), doc its stored document (any
// value that marshals to the JSON users see, e.g. *stored.TPCCStep). A
// threshold whose figure the document lacks (a read-only point has no write
// figures; telemetry not sampled) gives no verdict for it.
func Judge(ts []Threshold, index int, name string, doc any) []Verdict {
	if len(ts) == 0 {
		return nil
	}
	figures := flatten(doc)
	var out []Verdict
	for _, t := range ts {
		v, ok := figures[t.key]
		if !ok {
			continue
		}
		out = append(out, Verdict{Threshold: t.Expr, Step: index, Name: name, Key: t.key, Value: v, Limit: t.limit,
			Pass: holds(v, t.Op, t.limit), unit: t.keyUnit})
	}
	return out
}

func holds(v float64, op string, limit float64) bool {
	switch op {
	case "<":
		return v < limit
	case "<=":
		return v <= limit
	case ">":
		return v > limit
	case ">=":
		return v >= limit
	case "==":
		return v == limit
	case "!=":
		return v != limit
	}
	return false
}

// flatten returns a document's numbers by dotted key (txn.new_order.p99_ms).
func flatten(doc any) map[string]float64 {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	out := map[string]float64{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case float64:
			out[prefix] = x
		case map[string]any:
			for k, c := range x {
				if prefix != "" {
					k = prefix + "." + k
				}
				walk(k, c)
			}
		}
	}
	walk("", m)
	return out
}

// Unmatched returns, for each threshold that judged no step at all, a failed
// Verdict with Step -1 and a Note saying no step or point had the figure: a
// misspelt or unsampled figure never passes silently.
func Unmatched(ts []Threshold, vs []Verdict) []Verdict {
	judged := map[string]bool{}
	for _, v := range vs {
		judged[v.Threshold] = true
	}
	var out []Verdict
	for _, t := range ts {
		if judged[t.Expr] {
			continue
		}
		out = append(out, Verdict{Threshold: t.Expr, Step: -1, Key: t.key, Limit: t.limit, unit: t.keyUnit,
			Note: fmt.Sprintf("no step or point had %s (%s): not measured, or not sampled", t.Metric, t.key)})
	}
	return out
}

// Breaches returns the failed verdicts.
func Breaches(vs []Verdict) []Verdict {
	var out []Verdict
	for _, v := range vs {
		if !v.Pass {
			out = append(out, v)
		}
	}
	return out
}

// String is one line for the terminal, e.g.
// "pass  new_order.p99<=10ms  step 2 (4 VUs): 3.21 ms" or
// "FAIL  nopm>=50000  step 1 (1 VU): 12,345".
func (v Verdict) String() string {
	mark := "pass"
	if !v.Pass {
		mark = "FAIL"
	}
	return mark + "  " + v.Threshold + "  " + v.where()
}

// Brief is a breach as an error names it: "nopm>=50000 at step 1 (1 VU): 12,345".
// A threshold that judged no step reads "cpu_iowait<=20%: no step or point had …".
func (v Verdict) Brief() string {
	if v.Step < 0 {
		return v.Threshold + ": " + v.Note
	}
	return v.Threshold + " at " + v.where()
}

func (v Verdict) where() string {
	if v.Step < 0 {
		return v.Note
	}
	place := fmt.Sprintf("step %d", v.Step+1)
	if v.Name != "" {
		place += " (" + v.Name + ")"
	}
	return place + ": " + FormatValue(v.Value, v.unitOf())
}

// unitOf is the verdict's unit: known from its threshold, or, for a verdict
// read back from a store, from its key.
func (v Verdict) unitOf() string {
	if v.unit != "" || v.Key == "" {
		return v.unit
	}
	for _, kind := range []string{stored.KindTPCC, stored.KindDisk, stored.KindTPCH} {
		for _, n := range Names(kind) {
			if n.Key == v.Key {
				return n.Unit
			}
		}
	}
	return unitOfKey(v.Key)
}

// FormatValue writes a figure with its unit: 3.21 ms, 20.5%, 12,345.
func FormatValue(x float64, unit string) string {
	switch unit {
	case unitMs, unitUs, unitS:
		return trimFloat(x) + " " + unit
	case unitPct:
		return trimFloat(x) + "%"
	case unitMBps:
		return trimFloat(x) + " MB/s"
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return units.Thousands(int64(x))
	}
	return trimFloat(x)
}

// trimFloat writes x with at most 3 significant decimals, no trailing zeros.
func trimFloat(x float64) string {
	s := strconv.FormatFloat(x, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}
