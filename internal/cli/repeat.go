package cli

import (
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/repeat"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// repeatOptions are --repeat and --back-to-back, which every measuring
// command shares.
type repeatOptions struct {
	Repeat     int
	BackToBack bool
}

// addFlags registers them; unit names a step ("VU count", "point") and
// order shows the interleaved order of three of them.
func (o *repeatOptions) addFlags(fs *pflag.FlagSet, unit, order string) {
	fs.IntVar(&o.Repeat, "repeat", 1, "run each "+unit+" this many times, each a whole measurement, for means, standard deviations and 95% "+
		"confidence intervals; the repetitions are interleaved ("+order+")")
	fs.BoolVar(&o.BackToBack, "back-to-back", false, "with --repeat, run each "+unit+"'s repetitions one after another instead of interleaved")
}

// repetitions returns them, or a usage error for a count out of range.
func (o *repeatOptions) repetitions() (int, bool, error) {
	if err := repeat.Check(o.Repeat); err != nil {
		return 0, false, usagef("--%v", err)
	}
	return o.Repeat, o.BackToBack, nil
}

// noisyOptions judge repetitions (TPC-C steps, disk points, backup
// phases) measured on a noisy host.
type noisyOptions struct {
	Steal, Foreign float64
	Discard        bool
}

// addFlags registers them; unit names what is judged ("step", "point",
// "phase").
func (o *noisyOptions) addFlags(fs *pflag.FlagSet, unit string) {
	fs.Float64Var(&o.Steal, "noisy-steal", telemetry.DefaultNoisy.StealPct,
		"flag a "+unit+" noisy when the hypervisor stole more than this percent of all cores during it (0: never)")
	fs.Float64Var(&o.Foreign, "noisy-cpu", telemetry.DefaultNoisy.ForeignPct,
		"flag a "+unit+" noisy when processes other than tierbench, the servers it measures and the kernel's threads used more than this percent of all cores (0: never)")
	fs.BoolVar(&o.Discard, "discard-noisy", false, "leave noisy repetitions out of the means and intervals (they stay stored and listed)")
}

// noisy returns how to judge; a limit of 0 means never, as it does in the
// experiment layer, whose Validate checks them.
func (o *noisyOptions) noisy() stored.Noisy {
	return stored.Noisy{Limits: stored.NoisyLimits{StealPct: o.Steal, ForeignPct: o.Foreign}, Discard: o.Discard}
}
