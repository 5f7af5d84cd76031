package options

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/units"
)

// DiskRun are the options of a disk run (`disk run`): a bundled profile,
// or ad-hoc points whose lists make a sweep.
type DiskRun struct {
	Target   string
	Profile  string
	BS       string
	RW       string
	RWMix    string
	IODepth  string
	Jobs     string
	IOEngine string // fio's ioengine: the --engine option
	Direct   bool
	RateIOPS string
	KneeP99  string
	Compress int
	Dedupe   int
	Duration string
	Ramp     string
	Size     string
	Steady   string
	SSWindow string
	SSRamp   string
	Results  string
	Fio      string
	// FioServers run every point on those hosts at once (fio's
	// client/server mode); Target is then a directory on each.
	FioServers []string

	Keep            bool
	OverwriteFile   bool
	DestroyDataOn   string
	EvenIfFormatted bool
	Repetitions
	Noisy
	Telemetry
	Thresholds
}

// adHocFlags are the options that describe points; they replace a profile.
var adHocFlags = []string{"bs", "rw", "rwmix", "iodepth", "jobs", "compress-pct", "dedupe-pct"}

// AddFlags registers the options.
func (o *DiskRun) AddFlags(fs *pflag.FlagSet) {
	sw := experiment.SweepConfig(nil)
	fs.StringVar(&o.Target, "target", "", "where to test: a directory (tierbench makes its own test file there), a file, or a block device")
	fs.StringVar(&o.Profile, "profile", "", "a bundled profile: paper, easy-run or quick (default quick unless ad-hoc flags are given)")
	fs.StringVar(&o.BS, "bs", "4k", "ad hoc: block sizes, e.g. 4k,64k,256k (a list makes a sweep)")
	fs.StringVar(&o.RW, "rw", fio.RandRW, "ad hoc: access patterns: "+strings.Join(fio.Patterns, ", "))
	fs.StringVar(&o.RWMix, "rwmix", "70", "ad hoc: percent reads of randrw, e.g. 70 or 50,70,90")
	fs.StringVar(&o.IODepth, "iodepth", "8", "ad hoc: queue depths per job, e.g. 1,8,32")
	fs.StringVar(&o.Jobs, "jobs", "4", "ad hoc: fio jobs (threads), each on its own region of the test file")
	fs.StringVar(&o.IOEngine, "engine", "", "fio ioengine: io_uring, libaio or psync (default: the best that works here)")
	fs.BoolVar(&o.Direct, "direct", sw.Settings.Direct, "direct I/O (O_DIRECT), bypassing the page cache")
	fs.StringVar(&o.RateIOPS, "rate-iops", "", "offer each point at these rates, each job's I/Os a second (fio's rate_iops, Poisson arrivals), one point per rate, e.g. 500,1000,2000; "+
		"or at fractions of what each point does uncapped, which it measures first, e.g. 20%,50%,100%")
	fs.StringVar(&o.KneeP99, "knee-p99", "0s", "with several rates: the p99 completion latency a rate below the knee may reach (0s: ten times the lowest rate's)")
	fs.IntVar(&o.Compress, "compress-pct", 0, "ad hoc: make written data this percent compressible")
	fs.IntVar(&o.Dedupe, "dedupe-pct", 0, "ad hoc: make this percent of written blocks duplicates")
	fs.StringVar(&o.Duration, "duration", "", "measured time per point (default: the profile's; ad hoc "+units.FormatDuration(sw.Settings.Duration)+")")
	fs.StringVar(&o.Ramp, "ramp", "", "unmeasured warm-up before each point (default: the profile's; ad hoc "+units.FormatDuration(sw.Settings.Ramp)+")")
	fs.StringVar(&o.Size, "size", "", "test file size, or how much of a device to use (default: the profile's; ad hoc "+units.FormatSize(sw.TargetOptions.Size)+")")
	fs.StringVar(&o.Steady, "steady-state", "", "stop a point once fio sees steady state, e.g. iops_slope:2% or bw:5% (--duration is then the limit)")
	fs.StringVar(&o.SSWindow, "steady-state-window", "30s", "the window steady state is judged over")
	fs.StringVar(&o.SSRamp, "steady-state-ramp", "0s", "time before steady-state judging starts")
	fs.StringVar(&o.Results, "results", sw.Results, "results store directory")
	fs.StringVar(&o.Fio, "fio", "", "the fio binary (default: fio in PATH)")
	fs.StringArrayVar(&o.FioServers, "fio-server", nil, "run each point on this host's `fio --server` too, given as HOST[:PORT] (default port 8765) or NAME=HOST[:PORT], NAME being the host's --node-exporter name; "+
		"repeatable: every point runs on all of them at once and is reported as their aggregate with each host's own figures; "+
		"--target is then an absolute directory on each host, where each gets its own test file")
	fs.BoolVar(&o.Keep, "keep", false, "keep the test file tierbench created (later runs reuse it)")
	fs.BoolVar(&o.OverwriteFile, "overwrite-file", false, "let fio write to a file tierbench did not create")
	fs.StringVar(&o.DestroyDataOn, "destroy-data-on", "", "let fio write to this block device, destroying its data (name the --target device again)")
	fs.BoolVar(&o.EvenIfFormatted, "even-if-formatted", false, "with --destroy-data-on: even if the device holds a filesystem or partition table")
	o.Repetitions.AddFlags(fs, "point", "A,B,C,A,B,C")
	o.Noisy.AddFlags(fs, "point")
	o.Telemetry.AddFlags(fs)
	o.Thresholds.AddFlags(fs, "read.iops>=100k or write.p99.9<=2ms")
}

// diskFlags name a disk run's fields by their options where the names
// differ.
var diskFlags = map[string]string{"ioengine": "--engine", "points": "the sweep", "telemetry_interval": "--interval", "rate_iops": "--rate-iops"}

// Config turns the options into a run's config; the run's rules are its
// Validate's. fs tells the ad-hoc options given (adHocFlags), which replace a
// profile, from their defaults.
func (o *DiskRun) Config(fs *pflag.FlagSet) (*experiment.DiskConfig, error) {
	if o.Target == "" {
		return nil, Badf("target", "no --target given; name a directory, a file or a block device to test")
	}
	var adHoc []string
	for _, f := range adHocFlags {
		if fs.Changed(f) {
			adHoc = append(adHoc, "--"+f)
		}
	}
	var p experiment.DiskConfig
	switch {
	case o.Profile != "" && len(adHoc) > 0:
		return nil, Badf("profile", "--profile %s and %s describe the points twice; give one or the other", o.Profile, strings.Join(adHoc, ", "))
	case len(adHoc) > 0:
		specs, err := o.sweep()
		if err != nil {
			return nil, err
		}
		p = experiment.SweepConfig(specs)
	default:
		var err error
		if p, err = experiment.ProfileConfig(o.Profile, 0, 0, 0); err != nil {
			return nil, Badf("profile", "--profile: %v", err)
		}
	}
	p.Settings.Direct, p.Settings.IOEngine = o.Direct, o.IOEngine
	var err error
	if o.RateIOPS != "0" { // 0: no cap, as before lists
		if p.RatesIOPS, p.RateFractions, err = rateList(o.RateIOPS, "rate_iops"); err != nil {
			return nil, err
		}
	}
	if p.KneeP99, err = durationOr(o.KneeP99, "knee-p99", 0); err != nil {
		return nil, err
	}
	set := &p.Settings
	if set.Duration, err = durationOr(o.Duration, "duration", set.Duration); err != nil {
		return nil, err
	}
	if set.Ramp, err = durationOr(o.Ramp, "ramp", set.Ramp); err != nil {
		return nil, err
	}
	p.TargetOptions = fio.TargetOptions{Size: p.TargetOptions.Size, Keep: o.Keep, OverwriteFile: o.OverwriteFile,
		DestroyDataOn: o.DestroyDataOn, EvenIfFormatted: o.EvenIfFormatted}
	if o.Size != "" {
		if p.TargetOptions.Size, err = units.ParseSize(o.Size); err != nil {
			return nil, Badf("size", "--size: %v", err)
		}
	}
	if p.Telemetry, err = o.Sampling(); err != nil {
		return nil, err
	}
	p.Repeat, p.BackToBack = o.Repeat, o.BackToBack
	p.Noisy = o.Judge()
	if o.Steady != "" {
		set.SteadyState = o.Steady
		if set.SteadyWindow, err = durationOr(o.SSWindow, "steady-state-window", 0); err != nil {
			return nil, err
		}
		if set.SteadyRamp, err = durationOr(o.SSRamp, "steady-state-ramp", 0); err != nil {
			return nil, err
		}
	}
	p.Results, p.Target, p.Fio = o.Results, o.Target, o.Fio
	if p.Servers, err = fioServers(o.FioServers); err != nil {
		return nil, err
	}
	if err := Flagged(p.Validate(), diskFlags); err != nil {
		return nil, err
	}
	p.Thresholds, err = o.Thresholds.Parse(stored.KindDisk)
	return &p, err
}

// sweep builds the ad-hoc points: the cross product of the lists. Their
// values' rules are a point's (checked by the run's Validate).
func (o *DiskRun) sweep() ([]fio.Spec, error) {
	var bs []int64
	for _, f := range strings.Split(o.BS, ",") {
		n, err := units.ParseSize(f)
		if err != nil {
			return nil, Badf("bs", "--bs entry %q is not a block size; give multiples of 512 bytes up to 64m, e.g. 4k,64k,256k", f)
		}
		bs = append(bs, n)
	}
	var rw []string
	for _, f := range strings.Split(o.RW, ",") {
		rw = append(rw, strings.TrimSpace(f))
	}
	var mix []int
	for _, f := range strings.Split(o.RWMix, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, Badf("rwmix", "--rwmix entry %q is not a percentage of reads between 0 and 100", f)
		}
		mix = append(mix, n)
	}
	depth, err := units.ParseCountList(o.IODepth)
	if err != nil {
		return nil, Badf("iodepth", "--iodepth: %v", err)
	}
	jobs, err := units.ParseCountList(o.Jobs)
	if err != nil {
		return nil, Badf("jobs", "--jobs: %v", err)
	}
	base := fio.Spec{CompressPc: o.Compress, DedupePc: o.Dedupe}
	return fio.Sweep(base, bs, rw, mix, jobs, depth), nil
}

// durationOr reads the duration option named flag, def when not given.
func durationOr(s, flag string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		return 0, Badf(flag, "--%s: %v", flag, err)
	}
	return d, nil
}

// fioServers checks the --fio-server values: each HOST[:PORT], each once.
func fioServers(specs []string) ([]fio.Server, error) {
	var out []fio.Server
	seen := map[string]bool{}
	for _, spec := range specs {
		// NAME=HOST[:PORT] names the host as a --node-exporter NAME=URL
		// does, so that its telemetry joins its fio figures.
		name, addr, named := strings.Cut(spec, "=")
		if !named {
			addr = spec
		}
		s, err := fio.ParseServer(addr)
		if err != nil {
			return nil, Badf("fio-server", "--fio-server %q: %v", spec, err)
		}
		if named {
			if err := telemetry.CheckHostName(name); err != nil {
				return nil, Badf("fio-server", "--fio-server %q: %v; give NAME=HOST[:PORT], e.g. db1=10.0.0.11", spec, err)
			}
			s.Name = name
		}
		if seen[s.HostPort()] {
			return nil, Badf("fio-server", "--fio-server %s is given twice; give each host once", s.HostPort())
		}
		seen[s.HostPort()] = true
		out = append(out, s)
	}
	return out, nil
}
