package options

import (
	"path/filepath"
	"testing"
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
		parseFlags(t, &o, append([]string{"--target", dir, "--results", t.TempDir()}, c.args...)...)
		_, err := o.Config()
		wantField(t, c.args, err, c.field, c.want)
	}
}
