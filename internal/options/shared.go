package options

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/threshold"
	"github.com/tierbench/tierbench/internal/units"
)

// Repetitions are --repeat and --back-to-back, which every measuring
// command shares; their rules are the configs'.
type Repetitions struct {
	Repeat     int
	BackToBack bool
}

// AddFlags registers them; unit names a step ("VU count", "point") and
// order shows the interleaved order of three of them.
func (o *Repetitions) AddFlags(fs *pflag.FlagSet, unit, order string) {
	fs.IntVar(&o.Repeat, "repeat", 1, "run each "+unit+" this many times, each a whole measurement, for means, standard deviations and 95% "+
		"confidence intervals; the repetitions are interleaved ("+order+")")
	fs.BoolVar(&o.BackToBack, "back-to-back", false, "with --repeat, run each "+unit+"'s repetitions one after another instead of interleaved")
}

// Noisy judge repetitions (TPC-C steps, disk points, backup phases)
// measured on a noisy host.
type Noisy struct {
	Steal, Foreign float64
	Discard        bool
}

// AddFlags registers them; unit names what is judged ("step", "point",
// "phase").
func (o *Noisy) AddFlags(fs *pflag.FlagSet, unit string) {
	fs.Float64Var(&o.Steal, "noisy-steal", telemetry.DefaultNoisy.StealPct,
		"flag a "+unit+" noisy when the hypervisor stole more than this percent of all cores during it (0: never)")
	fs.Float64Var(&o.Foreign, "noisy-cpu", telemetry.DefaultNoisy.ForeignPct,
		"flag a "+unit+" noisy when processes other than tierbench, the servers it measures and the kernel's threads used more than this percent of all cores (0: never)")
	fs.BoolVar(&o.Discard, "discard-noisy", false, "leave noisy repetitions out of the means and intervals (they stay stored and listed)")
}

// Judge returns how to judge; a limit of 0 means never, as it does in the
// experiment layer, whose Validate checks them.
func (o *Noisy) Judge() stored.Noisy {
	return stored.Noisy{Limits: stored.NoisyLimits{StealPct: o.Steal, ForeignPct: o.Foreign}, Discard: o.Discard}
}

// Telemetry are the options every workload shares for its telemetry.
type Telemetry struct {
	Interval      string
	BlockTrace    bool
	NodeExporters []string // --node-exporter NAME=URL, repeatable
}

// AddFlags registers --interval, --block-trace and --node-exporter.
func (o *Telemetry) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Interval, "interval", "1s", "telemetry sampling interval (0: no telemetry)")
	fs.BoolVar(&o.BlockTrace, "block-trace", true, "device latency percentiles from block tracepoints, where the kernel allows it")
	AddNodeExporterFlag(fs, &o.NodeExporters)
}

// Sampling is the sampling the options ask for; its rules are the
// experiment's (Telemetry's part of each config's Validate).
func (o *Telemetry) Sampling() (experiment.Telemetry, error) {
	return Sampling(o.Interval, "interval", o.BlockTrace, o.NodeExporters)
}

// TelemetryFlags name the telemetry fields of a config's problems by the
// flags of commands whose sampling interval is --interval.
var TelemetryFlags = map[string]string{"telemetry_interval": "--interval"}

// AddNodeExporterFlag registers --node-exporter.
func AddNodeExporterFlag(fs *pflag.FlagSet, specs *[]string) {
	fs.StringArrayVar(specs, "node-exporter", nil, "also sample a host's Prometheus node_exporter, given as \x60NAME=URL\x60, "+
		"e.g. db1=http://10.0.0.5:9100/metrics: its CPU shares and each block device's iostat -x figures at every sample, "+
		"per host in each step (repeatable; a URL without a query asks only for the cpu, diskstats and time collectors; "+
		"an exporter that stops answering is a gap and a warning, not an error)")
}

// Sampling reads a sampling interval (the option named flag) and the
// --node-exporter values, each NAME=URL.
func Sampling(interval, flag string, blockTrace bool, exporters []string) (experiment.Telemetry, error) {
	d, err := units.ParseDuration(interval)
	if err != nil {
		return experiment.Telemetry{}, Badf(flag, "--%s: %v", flag, err)
	}
	t := experiment.Telemetry{Interval: d, BlockTrace: blockTrace}
	for _, spec := range exporters {
		n, err := telemetry.ParseNode(spec)
		if err != nil {
			return t, Badf("node-exporter", "--node-exporter %q: %v", telemetry.RedactNodeSpec(spec), err)
		}
		t.Nodes = append(t.Nodes, n)
	}
	return t, nil
}

// Thresholds is the repeatable --threshold of the commands whose steps or
// points can be judged.
type Thresholds struct {
	Exprs []string
}

// AddFlags registers --threshold, with an example of the kind's.
func (o *Thresholds) AddFlags(fs *pflag.FlagSet, example string) {
	fs.StringArrayVar(&o.Exprs, "threshold", nil, "pass/fail threshold judged on every step or point, e.g. "+example+
		" (repeatable; any breach exits 3; names in docs/thresholds.md)")
}

// Parse checks every threshold at once: Errors, one per problem, each
// "--threshold: …".
func (o *Thresholds) Parse(kind string) ([]threshold.Threshold, error) {
	ts, err := threshold.Parse(kind, o.Exprs)
	if err == nil {
		return ts, nil
	}
	var es Errors
	for _, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
		es = append(es, &Error{Field: "threshold", Msg: "--threshold: " + strings.TrimSpace(line)})
	}
	return nil, es
}
