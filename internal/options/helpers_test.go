package options

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
)

// parseFlags registers o's options on a flag set of their own and parses
// args there.
func parseFlags(t *testing.T, o Set, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("options", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

// wantField checks that err is bad input whose every problem is in field,
// the first's message holding want; what names the input.
func wantField(t *testing.T, what any, err error, field, want string) {
	t.Helper()
	es := List(err)
	ok := errors.Is(err, experiment.ErrInvalid) && len(es) > 0 && strings.Contains(es[0].Msg, want)
	for _, e := range es {
		ok = ok && e.Field == field
	}
	if !ok {
		t.Errorf("%v: %v (%+v); want field %s with %q", what, err, es, field, want)
	}
}
