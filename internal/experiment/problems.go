package experiment

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tierbench/tierbench/internal/units"
)

// Problem is one thing wrong with a config, found by its Validate: the field
// it is in, the value as given and what would be right. Field is a path a
// front end maps to its own names: the command line to a flag ("vus" is
// --vus), a scenario to a key and its line ("vus" of a tpcc-run step), an
// HTTP API to a JSON key. Msg may name other fields as {field}, which the
// front end names its own way too. A Problem is bad input:
// errors.Is(p, ErrInvalid).
type Problem struct {
	Field string // e.g. "vus", "duration", "memory", "settings"
	Value string // the value as a user writes it ("" when none was given); at most MaxQuoted characters
	Msg   string // what is wrong and what would be right, e.g. "is out of range; give 1 to 10000 virtual users per step"
}

// Error reads "FIELD VALUE MSG", e.g. "vus 20000 is out of range; give 1
// to 10000 virtual users per step".
func (p *Problem) Error() string { return p.Render(func(f string) string { return f }) }

// Render is the problem with every field named as a front end names it,
// e.g. by name("vus") = "--vus".
func (p *Problem) Render(name func(field string) string) string {
	msg := fieldRefRE.ReplaceAllStringFunc(p.Msg, func(ref string) string { return name(ref[1 : len(ref)-1]) })
	if p.Value == "" {
		return name(p.Field) + " " + msg
	}
	return name(p.Field) + " " + p.Value + " " + msg
}

// fieldRefRE finds the {field} references in a message.
var fieldRefRE = regexp.MustCompile(`\{[a-z_][a-z0-9_]*\}`)

// Is makes every Problem bad input.
func (p *Problem) Is(target error) bool { return target == ErrInvalid }

// MaxQuoted is how many characters of a bad value a message quotes.
const MaxQuoted = 60

// Quote cuts a value a user gave to at most MaxQuoted characters, marking
// the cut with "…", so that a message stays one readable line.
func Quote(s string) string {
	if utf8.RuneCountInString(s) <= MaxQuoted {
		return s
	}
	r := []rune(s)
	return string(r[:MaxQuoted-1]) + "…"
}

// Problems lists the problems in an error from a Validate (a join of them,
// possibly wrapped); nil when err holds none.
func Problems(err error) []*Problem {
	var out []*Problem
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if p, ok := e.(*Problem); ok {
			out = append(out, p)
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// Except drops the problems of the given fields: what a front end supplies
// itself only when the run starts (a scenario's DSN and results directory).
// It returns nil when nothing is left.
func Except(err error, fields ...string) error {
	var keep []error
	for _, p := range Problems(err) {
		if !slices.Contains(fields, p.Field) {
			keep = append(keep, p)
		}
	}
	return errors.Join(keep...)
}

// problems collects a Validate's findings, every one of them, in order.
type problems struct{ list []error }

// add records a problem with field's value v (formatted as a user writes
// it: sizes in binary units, durations in Go's form).
func (ps *problems) add(field string, v any, format string, args ...any) {
	ps.list = append(ps.list, &Problem{Field: field, Value: Quote(valueText(v)), Msg: fmt.Sprintf(format, args...)})
}

// missing records a field that must be given.
func (ps *problems) missing(field, format string, args ...any) {
	ps.list = append(ps.list, &Problem{Field: field, Msg: fmt.Sprintf(format, args...)})
}

// intRange checks lo <= v <= hi; what names the unit, e.g. "virtual users".
func (ps *problems) intRange(field string, v, lo, hi int, what string) {
	if v < lo || v > hi {
		ps.add(field, v, "is out of range; give %d to %d %s", lo, hi, what)
	}
}

// err joins what was found (nil when nothing).
func (ps *problems) err() error { return errors.Join(ps.list...) }

// valueText is v as a user writes it.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return fmt.Sprintf("%q", x)
	case Verbatim:
		return string(x)
	case time.Duration:
		return x.String()
	case Bytes:
		return units.FormatSize(int64(x))
	case float64: // 20000000, not 2e+07; but 1e+300 and 1e-07 as they are
		if a := math.Abs(x); a >= 1 && a < 1e15 {
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
	case []int:
		s := make([]string, len(x))
		for i, n := range x {
			s[i] = fmt.Sprint(n)
		}
		return strings.Join(s, ",")
	}
	return fmt.Sprint(v)
}

// Verbatim marks a value valueText shows as it is, unquoted: a path, a
// time.
type Verbatim string

// Bytes marks a size for valueText, which shows it in binary units (100MiB).
type Bytes int64
