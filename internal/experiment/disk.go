package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/repeat"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/threshold"
	"github.com/tierbench/tierbench/internal/units"
)

// DiskConfig is a disk run: fio points, one after another, on Target.
type DiskConfig struct {
	Record
	Target  string // a directory (tierbench's own test file goes there), a file or a block device
	Profile string // the points' name: a bundled profile's, or "ad-hoc"
	Points  []fio.Spec
	// RatesIOPS offers each point at each of these rates in turn (each
	// job's fio rate_iops, whole I/Os a second), one point per rate.
	// RateFractions, instead, are percentages of what each point did
	// uncapped: the points run as given first, then at each fraction.
	// KneeP99 bounds the p99 completion latency below the knee of a
	// point's rates (0: ten times the lowest rate's).
	RatesIOPS     []float64
	RateFractions []float64
	KneeP99       time.Duration
	// Repeat runs each point that many times (1 to repeat.MaxRepeat), each repetition
	// a whole point (its ramp and measured time); interleaved with the
	// other points (A,B,C,A,B,C) unless BackToBack (A,A,B,B,C,C).
	Repeat     int
	BackToBack bool
	// Settings are what every point shares (its File and Size are the
	// prepared target's).
	Settings fio.Settings
	// TargetOptions say what may be written and how much (Size).
	TargetOptions fio.TargetOptions
	Fio           string // the fio binary ("": fio in PATH)
	// CgroupProcs put fio's processes into these cgroups (an emulated tier's
	// budget) as they start.
	CgroupProcs []string
	// Thresholds are judged on each point (stored.KindDisk).
	Thresholds []threshold.Threshold
	// Servers, when given, run every point on all of them at once through
	// fio's client/server mode; Target is then a directory on each (or a
	// device, refused unless TargetOptions confirm it and it was checked
	// there).
	Servers []fio.Server
}

// steadyRE is fio's steadystate criterion as tierbench passes it on.
var steadyRE = regexp.MustCompile(`^(iops|bw)(_slope)?:[0-9]+(\.[0-9]+)?%?$`)

// Validate reports every problem of the config at once, each a *Problem
// naming its field: target, points (and each point's bs, rw, rwmix,
// iodepth, jobs, rate_iops, compress_pct, dedupe_pct), duration, ramp,
// size, ioengine, steady_state, steady_state_window, fio_server, repeat and
// the Record's.
func (c DiskConfig) Validate() error {
	var ps problems
	c.Record.validate(&ps)
	if c.Target == "" {
		ps.missing("target", "is empty; name a directory, a file or a block device to test")
	} else if err := fio.CheckPath(c.Target); err != nil {
		ps.missing("target", "%v", err)
	}
	switch n := len(c.Points) * (max(1, len(c.RatesIOPS)) + len(c.RateFractions)); {
	case len(c.Points) == 0:
		ps.missing("points", "has no point; give a profile or at least one point")
	case n > MaxDiskPoints:
		ps.missing("points", "has %d points; keep it to at most %d", n, MaxDiskPoints)
	}
	c.validateRates(&ps)
	seen := map[string]bool{}
	for _, pt := range c.Points {
		for _, p := range pt.Problems() {
			if !seen[p.Field+p.Value] {
				seen[p.Field+p.Value] = true
				ps.list = append(ps.list, &Problem{Field: p.Field, Value: Quote(p.Value), Msg: p.Msg})
			}
		}
	}
	set := c.Settings
	if set.Duration < MinDiskDuration {
		ps.add("duration", set.Duration, "is too short; give at least %s", MinDiskDuration)
	}
	if set.Ramp < 0 {
		ps.add("ramp", set.Ramp, "is negative; give 0s or more")
	}
	if size := c.TargetOptions.Size; size != 0 && size < MinDiskSize {
		ps.add("size", Bytes(size), "is too small; give at least %s", units.FormatSize(MinDiskSize))
	}
	if set.IOEngine != "" && !slices.Contains(fio.IOEngines, set.IOEngine) {
		ps.add("ioengine", set.IOEngine, "is not an ioengine tierbench drives; use %s, or leave it out for the best that works",
			strings.Join(fio.IOEngines, ", "))
	}
	if set.SteadyState != "" {
		if !steadyRE.MatchString(set.SteadyState) {
			ps.add("steady_state", set.SteadyState, "is not understood; give iops, iops_slope, bw or bw_slope, a colon and a percentage, e.g. iops_slope:2%%")
		}
		if set.SteadyWindow < 2*time.Second || set.SteadyWindow+set.SteadyRamp > set.Duration {
			ps.add("steady_state_window", set.SteadyWindow, "(plus a steady-state ramp of %s) must be at least 2s and fit in the duration %s",
				set.SteadyRamp, set.Duration)
		}
	}
	if len(c.Servers) > 0 {
		t := c.TargetOptions
		switch {
		case t.Keep || t.OverwriteFile:
			ps.missing("fio_server", "runs the points on other hosts, where each test file is tierbench's own and removed at the end; keeping or overwriting files is for a local target")
		case t.DestroyDataOn != "":
			ps.missing("fio_server", "runs the points on other hosts, whose block devices cannot be checked from here "+
				"(tierbench looks for mounts, filesystems and partitions before it writes to a device); give a directory on each host")
		}
	}
	repetitions(&ps, c.Repeat)
	return ps.err()
}

// validateRates checks a disk run's rate list or fractions.
func (c DiskConfig) validateRates(ps *problems) {
	for _, r := range c.RatesIOPS {
		if !(r >= 1 && r <= MaxRateIOPS && r == math.Trunc(r)) {
			ps.add("rate_iops", r, "is not a rate; give whole I/Os a second per job, 1 to %s", units.Thousands(MaxRateIOPS))
			break
		}
	}
	fractions(ps, "rate_iops", c.RateFractions)
	if c.KneeP99 < 0 {
		ps.add("knee_p99", c.KneeP99, "is negative; give the p99 completion latency a rate below the knee may reach, e.g. 5ms, or 0s for ten times the lowest rate's")
	}
	if len(c.RatesIOPS) == 0 && len(c.RateFractions) == 0 {
		if c.KneeP99 > 0 {
			ps.add("knee_p99", c.KneeP99, "bounds the knee of rates, and no {rate_iops} list is given; give {rate_iops} too, or leave {knee_p99} out")
		}
		return
	}
	switch {
	case len(c.RatesIOPS) > 0 && len(c.RateFractions) > 0:
		ps.missing("rate_iops", "has both rates and fractions; give I/Os a second per job or percentages of the maximum, not both")
	}
	for _, p := range c.Points {
		if p.RateIOPS > 0 {
			ps.add("rate_iops", p.Name, "has its own rate; give the rates as a list for every point, or on the points, not both")
			break
		}
	}
}

// kneeParam is the knee bound as the parameters keep it: only for rates.
func kneeParam(c DiskConfig) string {
	if len(c.RatesIOPS) == 0 && len(c.RateFractions) == 0 {
		return ""
	}
	return c.KneeP99.String()
}

// atRates is each point at each rate (each job's rate_iops), the rates of
// a point together.
func atRates(points []fio.Spec, rates []float64) []fio.Spec {
	if len(rates) == 0 {
		return points
	}
	var out []fio.Spec
	for _, p := range points {
		for _, r := range rates {
			q := p
			q.RateIOPS = int(r)
			q.Name = fio.PointName(q)
			out = append(out, q)
		}
	}
	return out
}

// atFractions is each point given at each fraction of what it did
// uncapped (measured, one per point, all its jobs together, on all its
// hosts when it ran on several: each job on each host is then offered an
// even share).
func atFractions(points []fio.Spec, measured []stored.Point, fractions []float64) []fio.Spec {
	var out []fio.Spec
	for i, p := range points[:min(len(points), len(measured))] {
		iops := measured[i].IOPS()
		jobs := max(1, p.Jobs) * measured[i].FioHosts()
		for _, f := range fractions {
			q := p
			q.RateIOPS = max(1, int(math.Round(f/100*iops/float64(jobs))))
			q.Name = fio.PointName(q)
			out = append(out, q)
		}
	}
	return out
}

// ProfileConfig returns a disk run of a bundled profile, its duration, ramp
// and test file size the profile's unless given (non-zero), once, recorded
// as DefaultRecord: the disk run as a user gets it unless told otherwise
// ("" is the quick profile). Its Target is to be given.
func ProfileConfig(name string, duration, ramp time.Duration, size int64) (DiskConfig, error) {
	if name == "" {
		name = "quick"
	}
	p, err := fio.LookupProfile(name)
	if err != nil {
		return DiskConfig{}, Invalid(err)
	}
	c := DiskConfig{Record: DefaultRecord(), Profile: p.Name, Points: p.Points, Repeat: 1,
		Settings:      fio.Settings{Direct: true, Duration: p.Duration, Ramp: p.Ramp},
		TargetOptions: fio.TargetOptions{Size: p.Size}}
	if duration > 0 {
		c.Settings.Duration = duration
	}
	if ramp > 0 {
		c.Settings.Ramp = ramp
	}
	if size > 0 {
		c.TargetOptions.Size = size
	}
	return c, nil
}

// SweepConfig returns a disk run of ad-hoc points (a front end's sweep,
// named "ad-hoc"): 30 s measured after a 5 s ramp at each point, on a
// 1 GiB test file, recorded as DefaultRecord: the ad-hoc run as a user gets
// it unless told otherwise (a sweep has no profile to say). Its Target is
// to be given.
func SweepConfig(points []fio.Spec) DiskConfig {
	return DiskConfig{Record: DefaultRecord(), Profile: "ad-hoc", Points: points, Repeat: 1,
		Settings:      fio.Settings{Direct: true, Duration: 30 * time.Second, Ramp: 5 * time.Second},
		TargetOptions: fio.TargetOptions{Size: 1 << 30}}
}

// DiskResult is a disk run's document: what `disk run --json` prints and
// the store keeps as the run's summary.
type DiskResult struct {
	RunID      string `json:"run_id"`
	Status     string `json:"status"`
	Profile    string `json:"profile"`
	Target     string `json:"target"`
	File       string `json:"file"`
	IOEngine   string `json:"engine"` // the contract's key for fio's ioengine
	FioVersion string `json:"fio_version"`
	Repeat     int    `json:"repeat"`
	// Points has one point per point given, in their order: with
	// repetitions, their means, their Stats, their pooled percentiles and
	// the repetitions as they ran (stored.GroupPoints).
	Points     []stored.Point      `json:"points"`
	Thresholds []threshold.Verdict `json:"thresholds,omitempty"`
	// RateFractions, when the rates were fractions, are those: the points
	// as given ran first, uncapped, and each fraction of what each did
	// after them. Knees are the knees of the points offered at two or
	// more rates, bounded by kneeP99.
	RateFractions []float64         `json:"rate_fractions_pct,omitempty"`
	Knees         []stored.DiskKnee `json:"knees,omitempty"`
	kneeP99       time.Duration
}

// KneeTexts are the knees of the points offered at several rates, in the
// words every front end gives them (DiskKnee.Text), in the points' order.
func (r *DiskResult) KneeTexts() []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, k := range r.Knees {
		out = append(out, k.Text())
	}
	return out
}

// RunDisk runs the points with fio and records them. tierbench writes only
// to a test file it creates, or where TargetOptions allow. The result is
// returned whenever the run was recorded, with the points that finished.
func RunDisk(ctx context.Context, cfg DiskConfig, obs Observer) (*DiskResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Points = atRates(cfg.Points, cfg.RatesIOPS)
	obs = serial(obs) // telemetry samples come from their own goroutine
	runner, err := fio.Find(ctx, cfg.Fio)
	if err != nil {
		return nil, err
	}
	runner.CgroupProcs = cfg.CgroupProcs
	if len(cfg.Servers) > 0 {
		return runDiskHosts(ctx, cfg, runner, obs)
	}
	target, err := fio.PrepareTarget(cfg.Target, cfg.TargetOptions)
	if err != nil {
		if errors.Is(err, fio.ErrRefused) {
			return nil, Invalid(err)
		}
		return nil, err
	}
	defer func() {
		if err := target.Cleanup(); err != nil {
			obs.Note(fmt.Sprintf("removing the test file: %v", err))
		}
	}()
	set := cfg.Settings
	set.File, set.Size = target.File, target.Size
	if err := fio.Layout(ctx, target, func(have, want int64) {
		obs.Progress(Progress{Layout: &LayoutProgress{File: target.File, Have: have, Want: want}})
	}); err != nil {
		return nil, err
	}
	if set.IOEngine, err = runner.PickIOEngine(ctx, target.File, set.Direct, set.IOEngine); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "tierbench-fio-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	rec, err := start(ctx, begin{Record: cfg.Record, kind: stored.KindDisk, target: cfg.Target, fioVersion: runner.Version,
		params: &stored.DiskParams{
			Profile: cfg.Profile, Target: cfg.Target, TargetKind: target.Kind, File: target.File, Size: target.Size,
			IOEngine: set.IOEngine, Direct: set.Direct, Duration: set.Duration.String(), Ramp: set.Ramp.String(),
			SteadyState: set.SteadyState, Repeat: cfg.Repeat, BackToBack: cfg.BackToBack, Placement: cfg.Placement, Noisy: cfg.Noisy,
			Fio: runner.Path, FioVersion: runner.Version, Points: pointSpecs(cfg.Points),
			RateFractions: cfg.RateFractions, KneeP99: kneeParam(cfg),
		}}, obs)
	if err != nil {
		return nil, err
	}
	out := &DiskResult{RunID: rec.run.ID, Status: results.StatusComplete, Profile: cfg.Profile, Target: cfg.Target,
		File: target.File, IOEngine: set.IOEngine, FioVersion: runner.Version, Repeat: cfg.Repeat, Points: []stored.Point{},
		RateFractions: cfg.RateFractions, kneeP99: cfg.KneeP99}
	ran, j, runErr := runPoints(ctx, cfg, set, rec, obs, func(i int, spec fio.Spec) (*fio.Point, error) {
		return runner.Run(ctx, i, spec, set, work)
	})
	return finishDisk(ctx, rec, out, ran, cfg.Noisy.Discard, j, runErr)
}

// runPoints runs each point with run, as many times as the run repeats
// them and in the order internal/repeat gives, judges and stores each
// run of a point as its own step, and returns them, the judge, and the
// error that stopped the run (nil when every point ran). run's i is the
// step's index: its place in the run, repetitions counted.
func runPoints(ctx context.Context, cfg DiskConfig, set fio.Settings, rec *recording, obs Observer,
	run func(i int, spec fio.Spec) (*fio.Point, error)) ([]stored.Ran, *judge, error) {
	j := &judge{ts: cfg.Thresholds, obs: obs}
	ran, err := runMorePoints(ctx, cfg, set, rec, obs, j, nil, run)
	if err == nil && ctx.Err() == nil && len(cfg.RateFractions) > 0 {
		// The points as given measured what each does at most: now each
		// fraction of it.
		rated := cfg
		rated.Points = atFractions(cfg.Points, stored.GroupPointsDiscarding(ran, cfg.Noisy.Discard), cfg.RateFractions)
		names := make([]string, len(rated.Points))
		for i, p := range rated.Points {
			names[i] = p.Name
		}
		obs.Note(fmt.Sprintf("%s of what each point did uncapped: %s", units.RateListText(cfg.RateFractions, true), strings.Join(names, ", ")))
		ran, err = runMorePoints(ctx, rated, set, rec, obs, j, ran, run)
	}
	return ran, j, err
}

// runMorePoints runs cfg's points after those already ran (the steps and
// points of a run are numbered on from them) and returns all.
func runMorePoints(ctx context.Context, cfg DiskConfig, set fio.Settings, rec *recording, obs Observer, j *judge, ran []stored.Ran,
	run func(i int, spec fio.Spec) (*fio.Point, error)) ([]stored.Ran, error) {
	firstStep, firstPoint := len(ran), 0
	for _, r := range ran {
		firstPoint = max(firstPoint, r.Point+1)
	}
	plan := repeat.Plan(len(cfg.Points), cfg.Repeat, cfg.BackToBack)
	count := firstStep + len(plan)
	if firstStep == 0 {
		count *= 1 + len(cfg.RateFractions) // each fraction of each point follows
	}
	_, err := repeat.Run(ctx, plan, func(ctx context.Context, sl repeat.Slot) error {
		spec := cfg.Points[sl.Step]
		sl.Index += firstStep
		rec.tele.setStep(sl.Index)
		obs.Progress(Progress{Point: &PointProgress{Index: sl.Index, Count: count, Spec: spec, Ramp: set.Ramp, Duration: set.Duration}})
		p, err := run(sl.Index, spec)
		if p != nil {
			po := fio.NewPointResult(p)
			if cfg.Repeat > 1 {
				po.Repetition = sl.Rep
			}
			if a := rec.tele.summarize(p.MeasureStart, p.MeasureEnd); a != nil {
				po.Host, po.Device = a.Host, a.Device
				po.Hosts = withNodeStats(po.Hosts, a)
				po.Noisy = judgeNoisy(cfg.Noisy, a)
			}
			ran = append(ran, stored.Ran{Point: firstPoint + sl.Step, Result: po})
			if st, err := diskStep(p, po); err != nil { // stored first, then told
				rec.keep(err)
			} else {
				rec.addStep(ctx, st)
			}
			obs.Result(Result{Point: &po})
			j.step(sl.Index, pointName(po), &po)
		}
		if err == nil {
			err = ctx.Err() // a point cut short by Ctrl-C is kept; the run stops there
		}
		return err
	})
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		err = nil // interrupted: finishDisk says so from ctx
	}
	return ran, err
}

// pointName is how a point is named in verdicts: "4k-randread-qd1x1", or
// "4k-randread-qd1x1, repetition 2".
func pointName(p stored.Point) string {
	if p.Repetition == 0 {
		return p.Name
	}
	return fmt.Sprintf("%s, repetition %d", p.Name, p.Repetition)
}

// withNodeStats adds each host's node_exporter figures to the point's
// hosts (fio's), and the hosts node_exporter watched but fio did not run on.
func withNodeStats(hosts []stored.HostPoint, a *stored.Aggregate) []stored.HostPoint {
	ns := nodeStatsByHost(a)
	for i := range hosts {
		hosts[i].NodeStats = ns[hosts[i].Host]
		delete(ns, hosts[i].Host)
	}
	for _, h := range a.Hosts {
		if s, ok := ns[h.Host]; ok {
			hosts = append(hosts, stored.HostPoint{Host: h.Host, NodeStats: s})
		}
	}
	return hosts
}

// finishDisk records a disk run's end: its points gathered, one per point
// given (stored.GroupPointsDiscarding: with discard, noisy repetitions left out of
// the means), its status, the thresholds no point had a figure for, the
// run's document.
func finishDisk(ctx context.Context, rec *recording, out *DiskResult, ran []stored.Ran, discard bool, j *judge, runErr error) (*DiskResult, error) {
	switch {
	case ctx.Err() != nil:
		out.Status = results.StatusInterrupted
	case runErr != nil:
		out.Status = results.StatusFailed
	}
	out.Points = stored.GroupPointsDiscarding(ran, discard)
	out.Knees = stored.FindDiskKnees(out.Points, out.kneeP99)
	what := units.Plural(len(ran), "point", "points")
	if out.Repeat > 1 {
		what = units.Plural(len(ran), "run", "runs") + " of " + units.Plural(len(out.Points), "point", "points")
	}
	out.Thresholds = j.finish(ctx, rec, out.Status)
	err := rec.finish(ctx, end{status: out.Status, out: out, runErr: runErr, kept: what, done: what})
	return out, gate(out.RunID, err, out.Thresholds)
}

// diskStep is a point as the store keeps it: its figures and job file,
// per-second series and merged latency histograms.
func diskStep(p *fio.Point, po stored.Point) (results.Step, error) {
	doc, err := json.Marshal(stored.PointStep{Point: po, JobFile: p.JobFile})
	if err != nil {
		return results.Step{}, err
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
	seconds := func(prefix string, secs []fio.Second) {
		for _, s := range secs {
			t := p.MeasureStart.Add(time.Duration(s.T) * time.Second)
			add(prefix+"read", s.Read, t)
			add(prefix+"write", s.Write, t)
		}
	}
	seconds("", p.Seconds)
	hists := map[string][]byte{}
	histograms := func(prefix string, r *fio.Result) error {
		if r == nil {
			return nil
		}
		for dir, d := range map[string]*stored.DirStats{"read": r.Read, "write": r.Write} {
			if d == nil || d.Hist == nil {
				continue
			}
			data, err := json.Marshal(d.Hist)
			if err != nil {
				return err
			}
			hists[prefix+dir+".clat_ns"] = data
		}
		return nil
	}
	if err := histograms("", p.Result); err != nil {
		return results.Step{}, err
	}
	// Each host's own, beside the aggregate: fio.HOST.read.iops …, and
	// the histograms HOST:read.clat_ns.
	for _, h := range p.Hosts {
		seconds("fio."+h.Server.Name+".", h.Seconds)
		if err := histograms(h.Server.Name+":", h.Result); err != nil {
			return results.Step{}, err
		}
	}
	return results.Step{Index: p.Index, Name: p.Spec.Name, StartedAt: p.Started, MeasureStart: p.MeasureStart,
		MeasureEnd: p.MeasureEnd, Metrics: doc, Points: pts, Histograms: hists}, nil
}

// runDiskHosts runs the points on every fio server at once (fio's
// client/server mode), as HCIBench runs fio in VMs spread over a cluster:
// each point's figures are the aggregate of all hosts' jobs, with each
// host's own beside them. The target is a directory on each host, where
// fio makes the host's own test file and removes it at the end.
func runDiskHosts(ctx context.Context, cfg DiskConfig, runner *fio.Runner, obs Observer) (*DiskResult, error) {
	set := cfg.Settings
	set.File, set.Size = cfg.Target, cfg.TargetOptions.Size
	if set.Size <= 0 {
		return nil, invalidf("give --size for the test file on each host, e.g. 4GiB")
	}
	// The servers' fio versions and the target directory on every host, in
	// one round trip: fio would create a missing directory, and a mistyped
	// target would fill another file system.
	if err := runner.CheckHostTarget(ctx, cfg.Target, cfg.Servers, set.RemoteDeviceChecked); err != nil {
		if errors.Is(err, fio.ErrRefused) {
			return nil, Invalid(err)
		}
		return nil, err
	}
	if set.IOEngine == "" {
		// The hosts cannot be probed as a local target is: libaio is in
		// every Linux fio build, and what tierbench tries second locally.
		set.IOEngine = "libaio"
	}
	work, err := os.MkdirTemp("", "tierbench-fio-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	defer func() {
		if err := runner.RemoveHostFiles(ctx, cfg.Target, cfg.Servers); err != nil {
			obs.Note(fmt.Sprintf("removing the test files on the hosts: %v", err))
		}
	}()
	names := make([]string, len(cfg.Servers))
	for i, s := range cfg.Servers {
		names[i] = s.Name
	}
	file := fio.HostFile(cfg.Target, fio.Server{Name: "HOST"})
	obs.Note(fmt.Sprintf("each point runs on %s at once through their fio servers, each on its own %s", strings.Join(names, ", "), file))
	rec, err := start(ctx, begin{Record: cfg.Record, kind: stored.KindDisk, target: "", fioVersion: runner.Version,
		params: &stored.DiskParams{
			Profile: cfg.Profile, Target: cfg.Target, TargetKind: "directory on each host", File: file, Size: set.Size,
			IOEngine: set.IOEngine, Direct: set.Direct, Duration: set.Duration.String(), Ramp: set.Ramp.String(),
			SteadyState: set.SteadyState, Repeat: cfg.Repeat, BackToBack: cfg.BackToBack, Placement: cfg.Placement, Noisy: cfg.Noisy,
			Fio: runner.Path, FioVersion: runner.Version, Points: pointSpecs(cfg.Points),
			Servers: fioServers(cfg.Servers), RateFractions: cfg.RateFractions, KneeP99: kneeParam(cfg),
		}}, obs)
	if err != nil {
		return nil, err
	}
	out := &DiskResult{RunID: rec.run.ID, Status: results.StatusComplete, Profile: cfg.Profile, Target: cfg.Target,
		File: file, IOEngine: set.IOEngine, FioVersion: runner.Version, Repeat: cfg.Repeat, Points: []stored.Point{},
		RateFractions: cfg.RateFractions, kneeP99: cfg.KneeP99}
	ran, j, runErr := runPoints(ctx, cfg, set, rec, obs, func(i int, spec fio.Spec) (*fio.Point, error) {
		return runner.RunHosts(ctx, i, spec, set, work, cfg.Servers)
	})
	return finishDisk(ctx, rec, out, ran, cfg.Noisy.Discard, j, runErr)
}

// pointSpecs are the points' specs as the run's parameters keep them.
func pointSpecs(specs []fio.Spec) []stored.PointSpec {
	out := make([]stored.PointSpec, len(specs))
	for i, s := range specs {
		out[i] = stored.PointSpec{Name: s.Name, BS: s.BS, RW: s.RW, RWMixRead: s.RWMixRead, IODepth: s.IODepth, Jobs: s.Jobs,
			RateIOPS: s.RateIOPS, CompressPc: s.CompressPc, DedupePc: s.DedupePc}
	}
	return out
}

// fioServers are the fio servers as the run's parameters keep them (none:
// nil, so that the key is left out).
func fioServers(servers []fio.Server) []stored.FioServer {
	var out []stored.FioServer
	for _, s := range servers {
		out = append(out, stored.FioServer{Name: s.Name, Addr: s.Addr, Port: s.Port})
	}
	return out
}
