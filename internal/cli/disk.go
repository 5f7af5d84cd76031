package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/units"
)

func newDiskCommand(g *Globals) *cobra.Command {
	cmd := newGroupCommand("disk", "Storage profiles through fio: IOPS, MB/s and merged latency percentiles")
	cmd.AddCommand(newDiskRunCommand(g), newDiskProfilesCommand(g))
	return cmd
}

// DiskRunOptions are the flags of `disk run`.
type DiskRunOptions struct {
	Target   string
	Profile  string
	BS       string
	RW       string
	RWMix    string
	IODepth  string
	Jobs     string
	Engine   string
	Direct   bool
	RateIOPS int
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

	Keep            bool
	OverwriteFile   bool
	DestroyDataOn   string
	EvenIfFormatted bool
	telemetryOptions
	scenarioRun // set by a scenario, not by flags
}

// adHocFlags are the flags that describe points; they replace a profile.
var adHocFlags = []string{"bs", "rw", "rwmix", "iodepth", "jobs", "rate-iops", "compress-pct", "dedupe-pct"}

// AddFlags registers the options' flags.
func (o *DiskRunOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Target, "target", "", "where to test: a directory (tierbench makes its own test file there), a file, or a block device")
	fs.StringVar(&o.Profile, "profile", "", "a bundled profile: paper, easy-run or quick (default quick unless ad-hoc flags are given)")
	fs.StringVar(&o.BS, "bs", "4k", "ad hoc: block sizes, e.g. 4k,64k,256k (a list makes a sweep)")
	fs.StringVar(&o.RW, "rw", fio.RandRW, "ad hoc: access patterns: "+strings.Join(fio.Patterns, ", "))
	fs.StringVar(&o.RWMix, "rwmix", "70", "ad hoc: percent reads of randrw, e.g. 70 or 50,70,90")
	fs.StringVar(&o.IODepth, "iodepth", "8", "ad hoc: queue depths per job, e.g. 1,8,32")
	fs.StringVar(&o.Jobs, "jobs", "4", "ad hoc: fio jobs (threads), each on its own region of the test file")
	fs.StringVar(&o.Engine, "engine", "", "fio ioengine: io_uring, libaio or psync (default: the best that works here)")
	fs.BoolVar(&o.Direct, "direct", true, "direct I/O (O_DIRECT), bypassing the page cache")
	fs.IntVar(&o.RateIOPS, "rate-iops", 0, "ad hoc: cap each job at this many IOPS (fio's rate_iops; 0: no cap)")
	fs.IntVar(&o.Compress, "compress-pct", 0, "ad hoc: make written data this percent compressible")
	fs.IntVar(&o.Dedupe, "dedupe-pct", 0, "ad hoc: make this percent of written blocks duplicates")
	fs.StringVar(&o.Duration, "duration", "", "measured time per point (default: the profile's; ad hoc 30s)")
	fs.StringVar(&o.Ramp, "ramp", "", "unmeasured warm-up before each point (default: the profile's; ad hoc 5s)")
	fs.StringVar(&o.Size, "size", "", "test file size, or how much of a device to use (default: the profile's; ad hoc 1GiB)")
	fs.StringVar(&o.Steady, "steady-state", "", "stop a point once fio sees steady state, e.g. iops_slope:2% or bw:5% (--duration is then the limit)")
	fs.StringVar(&o.SSWindow, "steady-state-window", "30s", "the window steady state is judged over")
	fs.StringVar(&o.SSRamp, "steady-state-ramp", "0s", "time before steady-state judging starts")
	fs.StringVar(&o.Results, "results", defaultResultsDir, "results store directory")
	fs.StringVar(&o.Fio, "fio", "", "the fio binary (default: fio in PATH)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the test file tierbench created (later runs reuse it)")
	fs.BoolVar(&o.OverwriteFile, "overwrite-file", false, "let fio write to a file tierbench did not create")
	fs.StringVar(&o.DestroyDataOn, "destroy-data-on", "", "let fio write to this block device, destroying its data (name the --target device again)")
	fs.BoolVar(&o.EvenIfFormatted, "even-if-formatted", false, "with --destroy-data-on: even if the device holds a filesystem or partition table")
	o.telemetryOptions.addFlags(fs)
}

// diskPlan is a validated `disk run`.
type diskPlan struct {
	profile string
	specs   []fio.Spec
	set     fio.Settings
	target  fio.TargetOptions
}

var steadyRE = regexp.MustCompile(`^(iops|bw)(_slope)?:[0-9]+(\.[0-9]+)?%?$`)

func (o *DiskRunOptions) validate(fs *pflag.FlagSet) (*diskPlan, error) {
	if o.Target == "" {
		return nil, usagef("no --target given; name a directory, a file or a block device to test")
	}
	if err := fio.CheckPath(o.Target); err != nil {
		return nil, usagef("--target: %v", err)
	}
	var adHoc []string
	for _, f := range adHocFlags {
		if fs.Changed(f) {
			adHoc = append(adHoc, "--"+f)
		}
	}
	p := &diskPlan{set: fio.Settings{Direct: o.Direct, Engine: o.Engine}}
	var defDuration, defRamp time.Duration
	var defSize int64
	switch {
	case o.Profile != "" && len(adHoc) > 0:
		return nil, usagef("--profile %s and %s describe the points twice; give one or the other", o.Profile, strings.Join(adHoc, ", "))
	case len(adHoc) > 0:
		specs, err := o.sweep()
		if err != nil {
			return nil, err
		}
		p.profile, p.specs = "ad-hoc", specs
		defDuration, defRamp, defSize = 30*time.Second, 5*time.Second, 1<<30
	default:
		name := o.Profile
		if name == "" {
			name = "quick"
		}
		prof, err := fio.LookupProfile(name)
		if err != nil {
			return nil, usagef("--profile: %v", err)
		}
		p.profile, p.specs = prof.Name, prof.Points
		defDuration, defRamp, defSize = prof.Duration, prof.Ramp, prof.Size
	}
	if o.Engine != "" && !slices.Contains(fio.Engines, o.Engine) {
		return nil, usagef("--engine %q is not one tierbench drives; use %s, or leave it out for the best that works", o.Engine, strings.Join(fio.Engines, ", "))
	}
	var err error
	if p.set.Duration, err = durationOr(o.Duration, "--duration", defDuration); err != nil {
		return nil, err
	}
	if p.set.Duration < time.Second {
		return nil, usagef("--duration %s is too short; give at least 1s", p.set.Duration)
	}
	if p.set.Ramp, err = durationOr(o.Ramp, "--ramp", defRamp); err != nil {
		return nil, err
	}
	p.target = fio.TargetOptions{Size: defSize, Keep: o.Keep, OverwriteFile: o.OverwriteFile,
		DestroyDataOn: o.DestroyDataOn, EvenIfFormatted: o.EvenIfFormatted}
	if o.Size != "" {
		if p.target.Size, err = units.ParseSize(o.Size); err != nil {
			return nil, usagef("--size: %v", err)
		}
		if p.target.Size < 1<<20 {
			return nil, usagef("--size %s is too small; give at least 1MiB", o.Size)
		}
	}
	if _, err := o.interval(); err != nil {
		return nil, err
	}
	if err := checkResultsDir(o.Results); err != nil {
		return nil, err
	}
	if o.Steady != "" {
		if !steadyRE.MatchString(o.Steady) {
			return nil, usagef("--steady-state %q is not understood; give iops, iops_slope, bw or bw_slope, a colon and a percentage, e.g. iops_slope:2%%", o.Steady)
		}
		p.set.SteadyState = o.Steady
		if p.set.SteadyWindow, err = durationOr(o.SSWindow, "--steady-state-window", 0); err != nil {
			return nil, err
		}
		if p.set.SteadyRamp, err = durationOr(o.SSRamp, "--steady-state-ramp", 0); err != nil {
			return nil, err
		}
		if p.set.SteadyWindow < 2*time.Second || p.set.SteadyWindow+p.set.SteadyRamp > p.set.Duration {
			return nil, usagef("--steady-state-window %s (plus --steady-state-ramp %s) must be at least 2s and fit in --duration %s",
				p.set.SteadyWindow, p.set.SteadyRamp, p.set.Duration)
		}
	}
	return p, nil
}

// sweep builds the ad-hoc points: the cross product of the lists.
func (o *DiskRunOptions) sweep() ([]fio.Spec, error) {
	var bs []int64
	for _, f := range strings.Split(o.BS, ",") {
		n, err := units.ParseSize(f)
		if err != nil || n < 512 || n%512 != 0 || n > 64<<20 {
			return nil, usagef("--bs entry %q is not a block size; give multiples of 512 bytes up to 64m, e.g. 4k,64k,256k", f)
		}
		bs = append(bs, n)
	}
	var rw []string
	for _, f := range strings.Split(o.RW, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(fio.Patterns, f) {
			return nil, usagef("--rw %q is unknown; use %s", f, strings.Join(fio.Patterns, ", "))
		}
		rw = append(rw, f)
	}
	var mix []int
	for _, f := range strings.Split(o.RWMix, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n > 100 {
			return nil, usagef("--rwmix entry %q is not a percentage of reads between 0 and 100", f)
		}
		mix = append(mix, n)
	}
	depth, err := units.ParseCountList(o.IODepth)
	if err != nil {
		return nil, usagef("--iodepth: %v", err)
	}
	jobs, err := units.ParseCountList(o.Jobs)
	if err != nil {
		return nil, usagef("--jobs: %v", err)
	}
	// Spec.Validate checks these too, but its message cannot name the flag.
	switch {
	case slices.Max(depth) > 4096:
		return nil, usagef("--iodepth %d is deeper than fio goes here; give 1 to 4096", slices.Max(depth))
	case slices.Max(jobs) > 256:
		return nil, usagef("--jobs %d is more than tierbench runs; give 1 to 256", slices.Max(jobs))
	case o.RateIOPS < 0:
		return nil, usagef("--rate-iops %d is negative; give 0 (no cap) or more", o.RateIOPS)
	case o.Compress < 0 || o.Compress > 100:
		return nil, usagef("--compress-pct %d is not a percentage; give 0 to 100", o.Compress)
	case o.Dedupe < 0 || o.Dedupe > 100:
		return nil, usagef("--dedupe-pct %d is not a percentage; give 0 to 100", o.Dedupe)
	}
	base := fio.Spec{RateIOPS: o.RateIOPS, CompressPc: o.Compress, DedupePc: o.Dedupe}
	specs := fio.Sweep(base, bs, rw, mix, jobs, depth)
	if len(specs) > 1000 {
		return nil, usagef("the sweep has %d points; keep it under 1000", len(specs))
	}
	for _, s := range specs {
		if err := s.Validate(); err != nil {
			return nil, usagef("point %s: %v", s.Name, err)
		}
	}
	return specs, nil
}

func durationOr(s, flag string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		return 0, usagef("%s: %v", flag, err)
	}
	return d, nil
}

func newDiskRunCommand(g *Globals) *cobra.Command {
	var opts DiskRunOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a storage profile or an ad-hoc sweep with fio and store its points",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := runDiskRun(cmd.Context(), g, opts, cmd.Flags())
			return err
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

// diskPointOutput is one point of `disk run --json` (DESIGN.md).
type diskPointOutput struct {
	Name        string           `json:"name"`
	BS          string           `json:"bs"`
	BSBytes     int64            `json:"bs_bytes"`
	RW          string           `json:"rw"`
	RWMixRead   int              `json:"rwmix_read,omitempty"`
	IODepth     int              `json:"iodepth"`
	Jobs        int              `json:"jobs"`
	Read        *fio.DirStats    `json:"read,omitempty"`
	Write       *fio.DirStats    `json:"write,omitempty"`
	UsrCPUPct   float64          `json:"usr_cpu_pct"`
	SysCPUPct   float64          `json:"sys_cpu_pct"`
	Seconds     float64          `json:"seconds"`
	SteadyState *fio.SteadyState `json:"steady_state,omitempty"`
	Interrupted bool             `json:"interrupted,omitempty"`
	// Host and Device are the telemetry of the point's measured interval.
	Host   map[string]float64 `json:"host,omitempty"`
	Device map[string]float64 `json:"device,omitempty"`
}

// diskStepMetrics is what the store keeps per point: the output and the
// exact job file, so the point can be re-run by hand.
type diskStepMetrics struct {
	diskPointOutput
	JobFile string `json:"job_file"`
}

type diskRunOutput struct {
	RunID      string            `json:"run_id"`
	Status     string            `json:"status"`
	Profile    string            `json:"profile"`
	Target     string            `json:"target"`
	File       string            `json:"file"`
	Engine     string            `json:"engine"`
	FioVersion string            `json:"fio_version"`
	Points     []diskPointOutput `json:"points"`
}

type diskRunParams struct {
	Profile     string `json:"profile"`
	Target      string `json:"target"`
	TargetKind  string `json:"target_kind"`
	File        string `json:"file"`
	Size        int64  `json:"size"`
	Engine      string `json:"engine"`
	Direct      bool   `json:"direct"`
	Duration    string `json:"duration"`
	Ramp        string `json:"ramp"`
	SteadyState string `json:"steady_state,omitempty"`
	scenarioParams
	Fio        string     `json:"fio"`
	FioVersion string     `json:"fio_version"`
	Points     []fio.Spec `json:"points"`
}

func runDiskRun(ctx context.Context, g *Globals, opts DiskRunOptions, fs *pflag.FlagSet) (*diskRunOutput, error) {
	plan, err := opts.validate(fs)
	if err != nil {
		return nil, err
	}
	runner, err := fio.Find(ctx, opts.Fio)
	if err != nil {
		return nil, err
	}
	runner.CgroupProcs = opts.cgroupProcs
	target, err := fio.PrepareTarget(opts.Target, plan.target)
	if err != nil {
		if errors.Is(err, fio.ErrRefused) {
			return nil, &UsageError{Msg: err.Error()}
		}
		return nil, err
	}
	defer func() {
		if err := target.Cleanup(); err != nil {
			g.progressf("tierbench: removing the test file: %v\n", err)
		}
	}()
	set := plan.set
	set.File, set.Size = target.File, target.Size
	if err := fio.Layout(ctx, target, func(have, want int64) {
		g.progressf("laying out the test file %s: %s to %s\n", target.File, units.FormatSize(have), units.FormatSize(want))
	}); err != nil {
		return nil, err
	}
	if set.Engine, err = runner.PickEngine(ctx, target.File, set.Direct, set.Engine); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "tierbench-fio-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	store, err := results.Open(opts.Results)
	if err != nil {
		return nil, fmt.Errorf("opening the results store: %w", err)
	}
	defer store.Close()
	run, err := store.CreateRun(ctx, "disk", opts.group, diskRunParams{
		Profile: plan.profile, Target: opts.Target, TargetKind: target.Kind, File: target.File, Size: target.Size,
		Engine: set.Engine, Direct: set.Direct, Duration: set.Duration.String(), Ramp: set.Ramp.String(),
		SteadyState: set.SteadyState, scenarioParams: opts.params(), Fio: runner.Path, FioVersion: runner.Version, Points: plan.specs,
	})
	if err != nil {
		return nil, fmt.Errorf("recording the run: %w", err)
	}
	if err := captureEnvironment(ctx, g, store, run.ID, opts.Target, nil, "", runner.Version); err != nil {
		return nil, fmt.Errorf("recording the run's environment: %w", err)
	}
	out := &diskRunOutput{RunID: run.ID, Status: results.StatusComplete, Profile: plan.profile, Target: opts.Target,
		File: target.File, Engine: set.Engine, FioVersion: runner.Version, Points: []diskPointOutput{}}
	g.progressf("run %s: profile %s, %d points on %s (%s, %s of %s), measured %s each after %s ramp, engine %s, direct=%t\n",
		run.ID, plan.profile, len(plan.specs), opts.Target, target.Kind, units.FormatSize(target.Size), target.File,
		set.Duration, set.Ramp, set.Engine, set.Direct)
	series := store.NewSeriesWriter(run.ID, time.Second)
	every, _ := opts.interval()
	tele, err := startTelemetry(ctx, g, every, opts.BlockTrace, opts.Target, nil, series)
	if err != nil {
		return nil, err
	}
	table := newDiskTable(g)
	bg := context.WithoutCancel(ctx)
	var runErr, storeErr error
	for i, spec := range plan.specs {
		tele.setStep(i)
		table.running(i, len(plan.specs), spec, set)
		p, err := runner.Run(ctx, i, spec, set, work)
		if p != nil {
			po := pointOutput(p)
			if a := tele.summarize(p.MeasureStart, p.MeasureEnd); a != nil {
				po.Host, po.Device = a.Host, a.Device
			}
			out.Points = append(out.Points, po)
			table.row(po)
			_ = series.Flush(bg) // the point's telemetry before the point: a kill keeps both (Close reports a failure)
			if err := storeDiskPoint(bg, store, run.ID, p, po); err != nil && storeErr == nil {
				storeErr = err
			}
		}
		if err != nil || ctx.Err() != nil {
			runErr = err
			break
		}
	}
	tele.stop()
	if err := series.Close(bg); err != nil && storeErr == nil {
		storeErr = err
	}
	switch {
	case ctx.Err() != nil:
		out.Status = results.StatusInterrupted
	case runErr != nil:
		out.Status = results.StatusFailed
	}
	n := len(out.Points)
	return out, g.endRun(bg, runEnd{store: store, runID: run.ID, status: out.Status, out: out,
		summary: func() {
			fmt.Fprintf(g.Stdout, "run %s %s: %d points; stored in %s\n", run.ID, out.Status, n, store.Path())
		},
		kept: fmt.Sprintf("%d points", n), done: fmt.Sprintf("%d points", n), runErr: runErr, storeErr: storeErr})
}

func pointOutput(p *fio.Point) diskPointOutput {
	r := p.Result
	return diskPointOutput{
		Name: p.Spec.Name, BS: fio.FormatBS(p.Spec.BS), BSBytes: p.Spec.BS, RW: p.Spec.RW, RWMixRead: p.Spec.RWMixRead,
		IODepth: p.Spec.IODepth, Jobs: p.Spec.Jobs, Read: r.Read, Write: r.Write,
		UsrCPUPct: r.UsrCPUPct, SysCPUPct: r.SysCPUPct, Seconds: r.RuntimeS, SteadyState: r.SteadyState,
		Interrupted: p.Interrupted,
	}
}

// storeDiskPoint stores a point as a step of the run — its numbers and job
// file, per-second series and merged latency histograms — in one
// transaction.
func storeDiskPoint(ctx context.Context, store *results.Store, runID string, p *fio.Point, po diskPointOutput) error {
	doc, err := json.Marshal(diskStepMetrics{diskPointOutput: po, JobFile: p.JobFile})
	if err != nil {
		return err
	}
	var pts []results.Point
	add := func(dir string, d *fio.DirSecond, t time.Time) {
		if d == nil {
			return
		}
		pts = append(pts,
			results.Point{Name: dir + ".iops", Step: p.Index, T: t, Value: d.IOPS},
			results.Point{Name: dir + ".mbps", Step: p.Index, T: t, Value: d.MBps},
			results.Point{Name: dir + ".clat_ms", Step: p.Index, T: t, Value: d.ClatMs})
	}
	for _, s := range p.Seconds {
		t := p.MeasureStart.Add(time.Duration(s.T) * time.Second)
		add("read", s.Read, t)
		add("write", s.Write, t)
	}
	hists := map[string][]byte{}
	for dir, d := range map[string]*fio.DirStats{"read": p.Result.Read, "write": p.Result.Write} {
		if d == nil || d.Hist == nil {
			continue
		}
		data, err := json.Marshal(d.Hist)
		if err != nil {
			return err
		}
		hists[dir+".clat_ns"] = data
	}
	return store.AddStep(ctx, results.Step{RunID: runID, Index: p.Index, Name: p.Spec.Name,
		StartedAt: p.Started, MeasureStart: p.MeasureStart, MeasureEnd: p.MeasureEnd, Metrics: doc,
		Points: pts, Histograms: hists})
}

// diskTable prints points as they finish, in fixed-width columns (not with
// --json), and says on stderr which point is running: in place on a
// terminal, as a line otherwise.
type diskTable struct {
	out, progress io.Writer
	on, tty, head bool
	drawn         bool
}

func newDiskTable(g *Globals) *diskTable {
	return &diskTable{out: g.Stdout, progress: g.Stderr, on: !g.JSON, tty: isTerminal(g.Stderr)}
}

func (t *diskTable) running(i, n int, s fio.Spec, set fio.Settings) {
	line := fmt.Sprintf("point %d/%d %s: %s ramp + %s", i+1, n, s.Name, set.Ramp, set.Duration)
	if t.tty {
		fmt.Fprintf(t.progress, "\r\033[K%s", line)
		t.drawn = true
	} else {
		fmt.Fprintln(t.progress, line)
	}
}

func (t *diskTable) row(p diskPointOutput) {
	if t.drawn {
		fmt.Fprint(t.progress, "\r\033[K")
		t.drawn = false
	}
	if !t.on {
		return
	}
	if !t.head {
		fmt.Fprintf(t.out, "%-22s %39s %39s %13s\n", "", "---------------- read ----------------", "---------------- write ---------------", "")
		fmt.Fprintf(t.out, "%-22s %9s %7s %7s %7s %7s %9s %7s %7s %7s %7s %13s\n", "point",
			"IOPS", "MB/s", "mean ms", "p99", "p99.9", "IOPS", "MB/s", "mean ms", "p99", "p99.9", "CPU usr/sys %")
		t.head = true
	}
	cells := func(d *fio.DirStats) string {
		if d == nil {
			return fmt.Sprintf("%9s %7s %7s %7s %7s", "-", "-", "-", "-", "-")
		}
		return fmt.Sprintf("%9.0f %7.1f %7.3f %7.3f %7.3f", d.IOPS, d.MBps, d.MeanMs, d.P99Ms, d.P999Ms)
	}
	name := p.Name
	if p.Interrupted {
		name += " (cut)"
	}
	fmt.Fprintf(t.out, "%-22s %s %s %13s\n", name, cells(p.Read), cells(p.Write), fmt.Sprintf("%.0f/%.0f", p.UsrCPUPct, p.SysCPUPct))
}

// diskProfilesOutput is the JSON of `disk profiles`.
type diskProfilesOutput struct {
	Profiles []diskProfileOutput `json:"profiles"`
}

type diskProfileOutput struct {
	Name     string     `json:"name"`
	Title    string     `json:"title"`
	Duration string     `json:"duration"`
	Ramp     string     `json:"ramp"`
	Size     string     `json:"size"`
	Points   []fio.Spec `json:"points"`
}

func newDiskProfilesCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "profiles",
		Short: "List the bundled storage profiles and their points",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			out := diskProfilesOutput{}
			for _, p := range fio.Profiles {
				out.Profiles = append(out.Profiles, diskProfileOutput{Name: p.Name, Title: p.Title,
					Duration: p.Duration.String(), Ramp: p.Ramp.String(), Size: units.FormatSize(p.Size), Points: p.Points})
			}
			if g.JSON {
				return g.printJSON(out)
			}
			for _, p := range fio.Profiles {
				total := time.Duration(len(p.Points)) * (p.Duration + p.Ramp)
				fmt.Fprintf(g.Stdout, "%s: %s\n  %d points, %s measured + %s ramp each (about %s), %s test file:\n",
					p.Name, p.Title, len(p.Points), p.Duration, p.Ramp, total, units.FormatSize(p.Size))
				for _, s := range p.Points {
					fmt.Fprintf(g.Stdout, "    %s\n", s.Name)
				}
			}
			return nil
		},
	}
}
