package options

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/units"
)

// TPCCRun are the options of a TPC-C run (`tpcc run`), but its database:
// each front end says where the DSN comes from.
type TPCCRun struct {
	VUs string
	OpenLoop
	RampUp         string
	Duration       string
	Results        string
	Mode           string
	AllWarehouses  bool
	KeyingThinking bool
	ThinkTime      string
	Mix            string
	MixUnchecked   bool
	Retry          int
	Seed           uint64
	Target         string
	Repetitions
	Noisy
	Telemetry
	Thresholds
}

// AddFlags registers the options.
func (o *TPCCRun) AddFlags(fs *pflag.FlagSet) {
	d := experiment.NewTPCCConfig()
	fs.StringVar(&o.VUs, "vus", units.FormatCountList(d.VUs), "virtual users per step, e.g. 1,2,3,5,8,13 (ranges like 1-4 too)")
	o.OpenLoop.AddFlags(fs)
	fs.StringVar(&o.RampUp, "rampup", units.FormatDuration(d.RampUp), "ramp-up before each step's measured interval (not measured)")
	fs.StringVar(&o.Duration, "duration", units.FormatDuration(d.Duration), "measured interval of each step")
	fs.StringVar(&o.Results, "results", d.Results, "results store directory")
	fs.StringVar(&o.Mode, "mode", d.Mode, "routines (one stored-routine call per transaction) or statements (client-side prepared statements)")
	fs.BoolVar(&o.AllWarehouses, "all-warehouses", false, "each transaction draws any warehouse, instead of the VU's home warehouse")
	fs.BoolVar(&o.KeyingThinking, "keying-thinking", false, "keying and think times of clause 5.2.5 (off: maximum throughput, as HammerDB's default)")
	fs.StringVar(&o.ThinkTime, "think-time", "0s", "in a closed loop, each VU thinks this long on average after each transaction (negative exponential, as clause 5.2.5.4 draws think times): N VUs emulate N users of that think time (0s: none, each VU at full speed)")
	fs.StringVar(&o.Mix, "mix", "", "transaction mix in percent, e.g. no=45,p=43,os=4,d=4,sl=4 (default: the spec's 23-card deck)")
	fs.BoolVar(&o.MixUnchecked, "mix-unchecked", false, "allow a --mix below the spec's minimums")
	fs.IntVar(&o.Retry, "retry", 0, "retries of a transaction that hit a serialization failure, deadlock or lock-wait timeout (each attempt is counted)")
	fs.Uint64Var(&o.Seed, "seed", 0, "random seed (0: a new one each run)")
	fs.StringVar(&o.Target, "target", "", "the path whose devices telemetry samples (default: the server's data directory, when it runs on this host)")
	o.Repetitions.AddFlags(fs, "VU count", "1,2,4,1,2,4")
	o.Noisy.AddFlags(fs, "step")
	o.Telemetry.AddFlags(fs)
	o.Thresholds.AddFlags(fs, "nopm>=50000 or new_order.p99<=10ms")
}

// OpenLoop are the options of TPC-C at fixed rates, tpcc run's and the main
// job's (run): the rates, how arrivals are spaced, when one is late, the
// closed-loop probe that fractions are of, and the knee's bound.
type OpenLoop struct {
	Rate      string
	Arrival   string
	LateAfter string
	Probe     string
	KneeP99   string
}

// AddFlags registers the options.
func (o *OpenLoop) AddFlags(fs *pflag.FlagSet) {
	d := experiment.NewTPCCConfig()
	fs.StringVar(&o.Rate, "rate", "", "offer transactions at a fixed rate, in transactions a minute (all types, in the mix's proportions), one step per rate, e.g. 20000,40000, or as fractions of the most the VUs serve, e.g. 20%,60%,100%; --vus is then the one pool of VUs that serves the arrivals, and latency is measured from each transaction's intended start")
	fs.StringVar(&o.Probe, "probe", units.FormatDuration(d.Probe), "with --rate fractions: the measured interval of the closed-loop step that finds the maximum they are fractions of")
	fs.StringVar(&o.KneeP99, "knee-p99", "0s", "with several rates: the New-Order p99 (from the intended start) a rate below the knee may reach (0s: ten times the lowest rate's)")
	fs.StringVar(&o.Arrival, "arrival", d.Arrival, "with --rate: how arrivals are spaced, poisson (random, exponential gaps) or constant")
	fs.StringVar(&o.LateAfter, "late-after", units.FormatDuration(d.LateAfter), "with --rate: an arrival that waits longer than this for a free VU counts as late")
}

// Config turns the options into a run's config, its DSN left for the front
// end; the run's rules are its Validate's. Options that do not parse are
// all reported at once, before Validate.
func (o *TPCCRun) Config() (experiment.TPCCConfig, error) {
	var cfg experiment.TPCCConfig
	var bad Errors
	add := func(err error) {
		bad = append(bad, List(err)...)
	}
	steps, err := units.ParseCountList(o.VUs)
	if err != nil {
		add(Badf("vus", "--vus: %v", err))
	}
	if cfg.Rates, cfg.RateFractions, err = rateList(o.Rate, "rate"); err != nil {
		add(err)
	}
	// A front end without the open loop's flags leaves them empty.
	d := experiment.NewTPCCConfig()
	cfg.LateAfter, cfg.Probe = d.LateAfter, d.Probe
	for _, f := range []struct {
		field, flag, val string
		to               *time.Duration
		optional         bool // empty keeps the default
	}{{"late_after", "--late-after", o.LateAfter, &cfg.LateAfter, true}, {"probe", "--probe", o.Probe, &cfg.Probe, true},
		{"knee_p99", "--knee-p99", o.KneeP99, &cfg.KneeP99, true}, {"think_time", "--think-time", o.ThinkTime, &cfg.ThinkTime, true},
		{"rampup", "--rampup", o.RampUp, &cfg.RampUp, false}, {"duration", "--duration", o.Duration, &cfg.Duration, false}} {
		if f.val == "" && f.optional {
			continue
		}
		if *f.to, err = units.ParseDuration(f.val); err != nil {
			add(Badf(f.field, "%s: %v", f.flag, err))
		}
	}
	cfg.Arrival = o.Arrival
	cfg.Mix = tpcc.DefaultMix
	if o.Mix != "" {
		if cfg.Mix, err = tpcc.ParseMix(o.Mix, o.MixUnchecked); err != nil {
			add(Badf("mix", "--mix: %v", err))
		}
	}
	if cfg.Telemetry, err = o.Sampling(); err != nil {
		if len(List(err)) == 0 {
			return cfg, err
		}
		add(err)
	}
	if len(bad) > 0 {
		return cfg, bad
	}
	cfg.Repeat, cfg.BackToBack = o.Repeat, o.BackToBack
	cfg.Noisy = o.Judge()
	cfg.Results, cfg.VUs, cfg.Mode, cfg.Retry, cfg.Seed, cfg.Target = o.Results, steps, o.Mode, o.Retry, o.Seed, o.Target
	cfg.AllWarehouses, cfg.KeyingThinking = o.AllWarehouses, o.KeyingThinking
	if err := Flagged(experiment.Except(cfg.Validate(), "dsn"), TelemetryFlags); err != nil {
		return cfg, err
	}
	cfg.Thresholds, err = o.Thresholds.Parse(stored.KindTPCC)
	return cfg, err
}

// rateList reads a rate option: rates, or percentages of a measured
// maximum (fractions); none when s is empty. field is its name in
// problems ("rate", "rate_iops").
func rateList(s, field string) (rates, fractions []float64, err error) {
	if s == "" {
		return nil, nil, nil
	}
	v, percent, err := units.ParseRateList(s)
	switch {
	case err != nil:
		return nil, nil, Badf(field, "--%s: %v", strings.ReplaceAll(field, "_", "-"), err)
	case percent:
		return nil, v, nil
	}
	return v, nil, nil
}
