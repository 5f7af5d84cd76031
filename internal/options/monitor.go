package options

import (
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/units"
)

// Monitor are the options of a monitoring session (`monitor`). Its DSN is
// an optional plain value: no front end reads it from elsewhere.
type Monitor struct {
	Target   string
	Duration string
	DSN      string
	Results  string
	Telemetry
}

// AddFlags registers the options.
func (o *Monitor) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Target, "target", "", "a path: its devices are sampled (a directory, a file or a block device)")
	fs.StringVar(&o.Duration, "duration", "0s", "how long to sample (0: until Ctrl-C)")
	fs.StringVar(&o.DSN, "dsn", "", "also sample this database's internals, e.g. postgres://user:password@127.0.0.1:5432/dbname")
	fs.StringVar(&o.Results, "results", experiment.DefaultResults, "results store directory")
	o.Telemetry.AddFlags(fs)
}

// Config turns the options into a session's config; its rules are its
// Validate's.
func (o *Monitor) Config() (experiment.MonitorConfig, error) {
	d, err := units.ParseDuration(o.Duration)
	if err != nil {
		return experiment.MonitorConfig{}, Badf("duration", "--duration: %v", err)
	}
	tele, err := o.Sampling()
	if err != nil {
		return experiment.MonitorConfig{}, err
	}
	cfg := experiment.MonitorConfig{Results: o.Results, Target: o.Target, DSN: o.DSN, Duration: d, Telemetry: tele}
	return cfg, Flagged(cfg.Validate(), TelemetryFlags)
}
