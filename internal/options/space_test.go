package options

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
)

// A space scan's bad input names its option, also where the rule is
// space.Check's.
func TestSpaceConfig(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args        []string
		field, want string
	}{
		{[]string{"--block", "3k"}, "block", "block size 3072 bytes is not a power of two"},
		{[]string{"--block", "x"}, "block", "--block: "},
		{[]string{"--keep-below", "2"}, "keep_below", "keep-below 2 is out of range"},
		{[]string{"--keep-below", "0"}, "keep_below", "--keep-below 0 is not above 0"},
		{[]string{"--workers", "-1"}, "workers", "workers -1 is out of range"},
		{[]string{"--zstd-sample", "3"}, "zstd_sample", ""},
		{[]string{"--target", filepath.Join(dir, "missing")}, "target", ""},
		{[]string{"--target", ""}, "target", "no --target given"},
	} {
		var o Space
		fs := pflag.NewFlagSet("space", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(append([]string{"--target", dir, "--results", t.TempDir()}, c.args...)); err != nil {
			t.Fatal(err)
		}
		_, err := o.Config()
		es := List(err)
		if !errors.Is(err, experiment.ErrInvalid) || len(es) != 1 || es[0].Field != c.field || !strings.Contains(es[0].Msg, c.want) {
			t.Errorf("%q: %v (%+v); want field %s with %q", c.args, err, es, c.field, c.want)
		}
	}
}
