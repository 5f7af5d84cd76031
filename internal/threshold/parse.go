package threshold

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/stored"
)

// expr is NAME OP NUMBER[UNIT], spaces allowed around the operator and
// before the unit.
var expr = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.]*)\s*(<=|>=|==|!=|<|>)\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*(\S*)$`)

// examples are what a malformed expression's error suggests, per kind.
var examples = map[string]string{stored.KindTPCC: "nopm>=50000 or new_order.p99<=10ms", stored.KindDisk: "read.iops>=100k or write.p99.9<=2ms",
	stored.KindTPCH: "geomean<=2s or q18.seconds<=30s"}

// Parse parses every expression for a run of kind; its error lists every
// problem at once, one per line ("threshold \"x\": …"), like scenario
// validation. Empty input: nil, nil.
func Parse(kind string, exprs []string) ([]Threshold, error) {
	if _, ok := examples[kind]; !ok {
		return nil, fmt.Errorf("thresholds: unknown kind of run %q", kind)
	}
	var out []Threshold
	var errs []error
	for _, e := range exprs {
		t, err := parseOne(kind, e)
		if err != nil {
			errs = append(errs, fmt.Errorf("threshold %q: %v", strings.TrimSpace(e), err))
			continue
		}
		out = append(out, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func parseOne(kind, s string) (Threshold, error) {
	s = strings.TrimSpace(s)
	m := expr.FindStringSubmatch(s)
	if m == nil {
		return Threshold{}, fmt.Errorf("not NAME OP VALUE (OP one of < <= > >= == !=); write e.g. %s", examples[kind])
	}
	t := Threshold{Expr: s, Metric: m[1], Op: m[2], Unit: m[4]}
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil {
		return Threshold{}, fmt.Errorf("%q is not a number; write e.g. %s", m[3], examples[kind])
	}
	t.Value = v
	if t.key, t.keyUnit, err = resolve(kind, t.Metric); err != nil {
		return Threshold{}, err
	}
	if t.limit, err = convert(v, t.Unit, t.keyUnit); err != nil {
		return Threshold{}, fmt.Errorf("%s: %v", t.Metric, err)
	}
	return t, nil
}

// Key is the stored key the threshold reads, e.g. txn.new_order.p99_ms.
func (t Threshold) Key() string { return t.key }

// Limit is the threshold's value in its key's unit.
func (t Threshold) Limit() float64 { return t.limit }

var durations = map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9, "h": 3600e9} // in nanoseconds, so that conversions stay exact
var counts = map[string]float64{"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
var sizes = map[string]float64{"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}

// convert returns v given in unit as a number in the key's unit.
func convert(v float64, unit, keyUnit string) (float64, error) {
	switch keyUnit {
	case unitMs, unitUs, unitS:
		if unit == "" {
			return v, nil // in the key's own unit
		}
		f, ok := durations[unit]
		if !ok {
			return 0, fmt.Errorf("unit %q is not a duration; this is a time in %s: give ns, us, ms, s, min or h (e.g. 10ms)", unit, keyUnit)
		}
		return v * f / durations[keyUnit], nil
	case unitPct:
		if unit != "" && unit != "%" {
			return 0, fmt.Errorf("unit %q does not fit a percentage; give e.g. 20%%", unit)
		}
		return v, nil
	case unitBytes:
		f, ok := sizes[unit]
		if !ok {
			return 0, fmt.Errorf("unit %q is not a size; give bytes, or k, M, G, KiB, MiB, GiB", unit)
		}
		return v * f, nil
	case unitMBps:
		if unit == "MB/s" || unit == "" {
			return v, nil
		}
		return 0, fmt.Errorf("unit %q does not fit MB/s; give a number of MB/s (e.g. 200 or 200MB/s)", unit)
	}
	f, ok := counts[unit]
	if !ok {
		return 0, fmt.Errorf("unit %q does not fit a count or a rate; give a plain number, or k, M, G (e.g. 100k)", unit)
	}
	return v * f, nil
}
