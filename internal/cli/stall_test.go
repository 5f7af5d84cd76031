package cli

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/stored"
)

// A step whose oldest transaction at the end had run a second or more is
// called out under its table, with how long; one under a second is not.
func TestPrintStepHeld(t *testing.T) {
	for _, c := range []struct {
		ms   float64
		want string
	}{
		{14230, "a transaction was still running when the interval ended, 14.2 s after it was sent"},
		{1000, "1.0 s after it was sent"},
		{999, ""},
		{0, ""},
	} {
		var b strings.Builder
		printStep(&b, &stored.TPCCStep{VUs: 1, OldestInFlightMs: c.ms}, "postgres")
		held := strings.Contains(b.String(), "still running when the interval ended")
		if c.want == "" && held || c.want != "" && !strings.Contains(b.String(), c.want) {
			t.Errorf("oldest in flight %g ms: printed\n%s\nwant %q", c.ms, b.String(), c.want)
		}
	}
}
