package options

import (
	"math"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/space"
	"github.com/tierbench/tierbench/internal/units"
)

// Space are the options of a space scan (`space`).
type Space struct {
	Target    string
	Block     string
	KeepBelow float64
	Workers   int
	Sample    string // the --zstd-sample option
	Results   string
}

// AddFlags registers the options.
func (o *Space) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Target, "target", "", "what to scan, read-only: a directory (e.g. a server's data directory), a file, or a block device")
	fs.StringVar(&o.Block, "block", "4k", "the block size dedup and compression work on: a power of two from 512 to 1m")
	fs.Float64Var(&o.KeepBelow, "keep-below", space.DefaultKeepBelow, "a block is stored compressed only when it compresses to at most this share of the block "+
		"(0.5: vSAN keeps a 4 KiB block compressed only at 2 KiB or less), else whole; 1 keeps every block that shrinks at all")
	fs.IntVar(&o.Workers, "workers", 0, "goroutines hashing and compressing (default: one per core)")
	fs.StringVar(&o.Sample, "zstd-sample", "auto", "zstd compresses 1 in N unique blocks (chosen by their hash) and its ratio is estimated from them, "+
		"with a 95% interval: auto (every block up to 64 MiB, then up to 1 in 64), or N, a power of two; 1 is exact (and about 4x slower)")
	fs.StringVar(&o.Results, "results", experiment.DefaultResults, "results store directory")
}

// Config checks the options and turns them into a scan's config.
func (o *Space) Config() (experiment.SpaceConfig, error) {
	var cfg experiment.SpaceConfig
	if strings.TrimSpace(o.Target) == "" {
		return cfg, Badf("target", "no --target given; name a directory, a file or a block device to scan, e.g. --target /var/lib/postgresql/15/main")
	}
	block, err := units.ParseSize(o.Block)
	if err != nil {
		return cfg, Badf("block", "--block: %v", err)
	}
	if o.KeepBelow <= 0 { // space.Options reads 0 as "the default"; given here, it is a mistake
		return cfg, Badf("keep-below", "--keep-below %g is not above 0; give a share of the block such as 0.5, or leave it out", o.KeepBelow)
	}
	sample, err := space.ParseZstdSample(o.Sample)
	if err != nil {
		return cfg, Badf("zstd-sample", "--zstd-sample: %v", err)
	}
	if block <= 0 || block > math.MaxInt32 {
		return cfg, Badf("block", "--block %s: give a power of two from 512 to 1m, e.g. 4k, 8k or 64k", o.Block)
	}
	if err := Flagged(experiment.CheckResults(o.Results), nil); err != nil {
		return cfg, err
	}
	cfg.Results, cfg.Target = o.Results, o.Target
	cfg.Options = space.Options{BlockSize: int(block), KeepBelow: o.KeepBelow, Workers: o.Workers, ZstdSample: sample}
	// The ranges and the target are space.Check's (bad input, before the
	// run is recorded): one rule for this command and a scenario's step.
	// Each option is judged alone first, in Check's order, to name the one
	// it refuses.
	for _, f := range []struct {
		field string
		opts  space.Options
	}{
		{"block", space.Options{BlockSize: cfg.Options.BlockSize}},
		{"keep-below", space.Options{KeepBelow: o.KeepBelow}},
		{"workers", space.Options{Workers: o.Workers}},
		{"zstd-sample", space.Options{ZstdSample: sample}},
	} {
		if err := f.opts.Validate(); err != nil {
			return cfg, Badf(f.field, "%v", err)
		}
	}
	if err := space.Check(o.Target, &cfg.Options); err != nil {
		return cfg, Badf("target", "%v", err)
	}
	return cfg, nil
}
