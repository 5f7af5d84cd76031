package cli

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stored"
)

// The text view says under each repetition measured on a noisy host why it
// was noisy, and nothing under one that was not; with --json it prints
// nothing. (Which repetitions are noisy is judged in internal/experiment:
// TestDiskAndBackupNoisy, TestRunTPCCNoisy.)
func TestViewNoisy(t *testing.T) {
	const why = "other processes used 48% of the CPU (limit 10%)"
	for _, asJSON := range []bool{false, true} {
		var out, errOut strings.Builder
		v := newView(&Globals{JSON: asJSON, Stdout: &out, Stderr: &errOut})
		for rep, noisy := range []string{why, why, ""} {
			v.Result(experiment.Result{Point: &stored.Point{Name: "4k-randread-qd1x1", BS: "4k", RW: "randread", IODepth: 1, Jobs: 1,
				Repetition: rep + 1, Noisy: noisy}})
		}
		v.done()
		want := 2
		if asJSON {
			want = 0
		}
		if n := strings.Count(out.String(), "\n  noisy host: "+why+"\n"); n != want || strings.Count(out.String(), "other processes") != want {
			t.Errorf("--json %v: %d noisy lines; want %d, one under each noisy repetition:\n%s", asJSON, n, want, out.String())
		}
	}
}
