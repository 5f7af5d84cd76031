package options

import (
	"testing"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// --noisy-cpu 0 --noisy-steal 0 turn the checks off: the experiment is
// given limits of 0, which mean never there too (that no repetition is then
// judged noisy is tested in internal/experiment, TestDiskAndBackupNoisy);
// the defaults pass through; --discard-noisy is kept.
func TestNoisyFlagsOff(t *testing.T) {
	for _, tc := range []struct {
		opts        Noisy
		steal, cpu  float64
		wantDiscard bool
	}{
		{Noisy{Steal: 0, Foreign: 0}, 0, 0, false},
		{Noisy{Steal: 5, Foreign: 0, Discard: true}, 5, 0, true},
		{Noisy{Steal: telemetry.DefaultNoisy.StealPct, Foreign: telemetry.DefaultNoisy.ForeignPct},
			telemetry.DefaultNoisy.StealPct, telemetry.DefaultNoisy.ForeignPct, false},
	} {
		n := tc.opts.Judge()
		if err := experiment.CheckNoisy(n); err != nil || n.Limits.StealPct != tc.steal || n.Limits.ForeignPct != tc.cpu || n.Discard != tc.wantDiscard {
			t.Errorf("%+v: %+v, %v; want steal %v, cpu %v, discard %v", tc.opts, n, err, tc.steal, tc.cpu, tc.wantDiscard)
		}
	}
}
