// Package options holds each experiment's inputs as named options: their
// names, their syntax and their defaults, which come from the experiment
// layer's constructors. The command line registers them as flags (--vus);
// the HTTP API fills the same options from a JSON object's keys (vus, with
// _ for -). Both then build the same config and call its Validate, so the
// two front ends take the same names and refuse the same values with the
// same words. Neither prints, opens a database nor reads the environment
// here: where a DSN comes from (a flag, standard input, $TIERBENCH_DSN, a
// request) is each front end's own.
package options

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
)

// Error is bad input in one option: the field (an option's name with _ for
// -, or a config field such as telemetry_interval) and the message in the
// command line's words, naming options as flags (--vus). It wraps
// experiment.ErrInvalid, so a front end classifies it as bad input.
type Error struct {
	Field string
	Msg   string
}

func (e *Error) Error() string { return e.Msg }

// Is makes every Error bad input.
func (e *Error) Is(target error) bool { return target == experiment.ErrInvalid }

// Badf is bad input in the option named field (its flag's name, e.g.
// "vus" or "all-warehouses").
func Badf(field, format string, args ...any) error {
	return &Error{Field: strings.ReplaceAll(field, "-", "_"), Msg: fmt.Sprintf(format, args...)}
}

// Errors are several options' problems, found at once.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Msg
	}
	return strings.Join(parts, "; ")
}

// Is makes Errors bad input.
func (es Errors) Is(target error) bool { return target == experiment.ErrInvalid }

// Unwrap returns each problem.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// List returns the options' problems in err (an *Error, Errors, or a
// wrap of either), in order; nil when it holds none.
func List(err error) []*Error {
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	var e *Error
	if errors.As(err, &e) {
		return []*Error{e}
	}
	return nil
}

// Flagged turns the problems a config's Validate found into Errors that
// name each field by its flag: --FIELD with _ as -, unless names gives the
// field's own name there (e.g. "settings": "--set"). An error with no
// problems in it comes back as it is; nil stays nil.
func Flagged(err error, names map[string]string) error {
	ps := experiment.Problems(err)
	if len(ps) == 0 {
		return err
	}
	flag := func(field string) string {
		if n, ok := names[field]; ok {
			return n
		}
		return "--" + strings.ReplaceAll(field, "_", "-")
	}
	es := make(Errors, len(ps))
	for i, p := range ps {
		field := p.Field
		if n, ok := names[field]; ok && strings.HasPrefix(n, "--") {
			field = n[2:] // the option that holds the field
		}
		es[i] = &Error{Field: strings.ReplaceAll(field, "-", "_"), Msg: p.Render(flag)}
	}
	return es
}

// Set is a command's options, registered on a flag set.
type Set interface {
	AddFlags(fs *pflag.FlagSet)
}
