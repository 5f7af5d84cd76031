package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/threshold"
)

// thresholdOptions is the repeatable --threshold of the commands whose steps
// or points can be judged.
type thresholdOptions struct {
	Thresholds []string
}

func (o *thresholdOptions) addFlags(fs *pflag.FlagSet, example string) {
	fs.StringArrayVar(&o.Thresholds, "threshold", nil, "pass/fail threshold judged on every step or point, e.g. "+example+
		" (repeatable; any breach exits 3; names in docs/thresholds.md)")
}

// parse checks every threshold at once; each problem is its own line, as
// scenario validation prints them, and the whole is bad input.
func (o *thresholdOptions) parse(g *Globals, kind string) ([]threshold.Threshold, error) {
	ts, err := threshold.Parse(kind, o.Thresholds)
	if err == nil {
		return ts, nil
	}
	for _, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
		fmt.Fprintf(g.Stderr, "tierbench: --threshold: %s\n", strings.TrimSpace(line))
	}
	return nil, &ExitError{Code: ExitUsage}
}
