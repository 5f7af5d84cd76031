package options

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/units"
)

// TPCHRun are the options of a TPC-H run (`tpch run`), but its database:
// each front end says where the DSN comes from.
type TPCHRun struct {
	Seed      int64
	Validate  bool
	NoRefresh bool
	Streams   int
	Repeat    int
	Timeout   string
	Target    string
	Results   string
	Telemetry
	Thresholds

	fs *pflag.FlagSet // the flags given, for the rules of a value written (GivenStreams)
}

// AddFlags registers the options.
func (o *TPCHRun) AddFlags(fs *pflag.FlagSet) {
	o.fs = fs
	d := experiment.NewTPCHRunConfig()
	fs.Int64Var(&o.Seed, "seed", 0, "seed of the queries' substitution parameters, drawn as qgen -r draws them (0: a new one each run, recorded)")
	fs.BoolVar(&o.Validate, "validate", false, "run the queries with the specification's validation parameters and no refresh functions, "+
		"and check every answer against the reference answers (at scale factors 0.01, 0.1 and 1); a wrong answer fails the run")
	fs.BoolVar(&o.NoRefresh, "no-refresh", false, "leave out the refresh functions RF1 and RF2")
	fs.IntVar(&o.Streams, "streams", d.Streams, "query streams of the throughput test, run at once beside a refresh stream, 1 or more (left out: the power test alone)")
	fs.IntVar(&o.Repeat, "repeat", d.Repeat, "power tests, for the geometric mean's 95% confidence interval")
	fs.StringVar(&o.Timeout, "timeout", "0s", "cancel a query on the server after this long and record it as timed out (0s: never)")
	fs.StringVar(&o.Target, "target", "", "the path whose devices telemetry samples (default: the server's data directory, when it runs on this host)")
	fs.StringVar(&o.Results, "results", d.Results, "results store directory")
	o.Telemetry.AddFlags(fs)
	o.Thresholds.AddFlags(fs, "geomean<=2s or q18.seconds<=30s")
}

// Config turns the options into a run's config, its DSN left for the front
// end; the run's rules are its Validate's.
func (o *TPCHRun) Config() (experiment.TPCHRunConfig, error) {
	cfg := experiment.NewTPCHRunConfig()
	var err error
	if cfg.Timeout, err = units.ParseDuration(o.Timeout); err != nil {
		return cfg, Badf("timeout", "--timeout: %v", err)
	}
	if cfg.Telemetry, err = o.Sampling(); err != nil {
		return cfg, err
	}
	cfg.Seed, cfg.Validation, cfg.NoRefresh, cfg.Streams, cfg.Repeat = o.Seed, o.Validate, o.NoRefresh, o.Streams, o.Repeat
	cfg.Target, cfg.Results = o.Target, o.Results
	verr := experiment.Except(cfg.Validate(), "dsn")
	if o.fs != nil && o.fs.Changed("streams") {
		verr = errors.Join(verr, experiment.GivenStreams(o.Streams))
	}
	if err := Flagged(verr, TelemetryFlags); err != nil {
		return cfg, err
	}
	cfg.Thresholds, err = o.Thresholds.Parse(stored.KindTPCH)
	return cfg, err
}
