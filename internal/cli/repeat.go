package cli

import (
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/repeat"
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
