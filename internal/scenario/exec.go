package scenario

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/report"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/space"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/threshold"
	"github.com/tierbench/tierbench/internal/tier"
	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/units"
	"github.com/tierbench/tierbench/internal/version"
)

// Listener hears a scenario's run. Its experiment.Observer hears the
// scenario's notes and the experiments that run in the foreground (one
// instance at a time); experiments running side by side are not heard, so
// that their output does not interleave.
type Listener interface {
	experiment.Observer
	// Step says a step (1-based, of total) starts.
	Step(step, total int, st Step)
	// Checked is an instance's consistency check.
	Checked(instance string, c *tpcc.CheckResult)
	// Neighbour is a TPC-C instance's last step in a side-by-side step.
	Neighbour(instance string, s *stored.TPCCStep)
	// Reported says where the report was written.
	Reported(w report.Written)
}

// ChecksFailed is the error of a scenario whose steps all ran but whose
// consistency checks found violations (shown through Listener.Checked), or
// whose durability tests lost acknowledged New-Orders (or found the
// database inconsistent after recovery).
type ChecksFailed struct{ N int }

func (e *ChecksFailed) Error() string {
	return fmt.Sprintf("%d consistency checks or durability tests failed (see above)", e.N)
}

// ThresholdsBreached is the error of a scenario whose steps all ran and whose checks
// held, but whose runs breached thresholds: one *experiment.Breached per
// run, which errors.As finds.
type ThresholdsBreached struct{ Runs []*experiment.Breached }

func (e *ThresholdsBreached) Error() string {
	parts := make([]string, len(e.Runs))
	for i, r := range e.Runs {
		parts[i] = r.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns each run's breach.
func (e *ThresholdsBreached) Unwrap() []error {
	errs := make([]error, len(e.Runs))
	for i, r := range e.Runs {
		errs[i] = r
	}
	return errs
}

// Options are what a front end adds to a scenario's execution.
type Options struct {
	// Background, when set, gives each experiment that runs side by side
	// an observer of its own, e.g. a live metrics exporter's; it must not
	// print, since those experiments' output would interleave. Nil: they
	// are not heard.
	Background func() experiment.Observer
	// LatencyBuckets go into every run's experiment.Record.
	LatencyBuckets []time.Duration
	// Noisy is how every run judges repetitions measured on a noisy host
	// (zero: never noisy; experiment.DefaultNoisy is what a user expects).
	Noisy stored.Noisy
	// Group is the results group of its runs ("": the scenario's name and
	// the time it starts, e.g. oltp-tiers-20261128-031500).
	Group string
}

// Execute runs a scenario with tierbench's experiments, in-process: its
// targets (loop images for emulated tiers), managed servers (capped,
// throttled, cloned), disk, TPC-C, backup, check and report steps. Every run
// goes into one results group, returned, which the report shows together.
// Before any step, every host that runs a server must run this tierbench's
// version (CheckVersions). When ctx is cancelled the error wraps ctx.Err().
func Execute(ctx context.Context, sc *Scenario, resultsDir string, obs Listener, opts Options) (group string, err error) {
	ex := &executor{
		obs: obs, opts: opts, sc: sc, results: resultsDir,
		group:   cmp.Or(opts.Group, sc.Name+"-"+time.Now().UTC().Format("20060102-150405")),
		targets: map[string]*execTarget{}, instances: map[string]*instance{}, lastRun: map[string]string{},
		offsets: map[string]time.Duration{}, workload: &telemetry.Workload{},
	}
	scale := sc.Scale
	if scale == "" {
		scale = "default"
	}
	obs.Note(fmt.Sprintf("scenario %s (%s scale): %s; results group %s", sc.Name, scale, sc.Title, ex.group))
	if err := CheckVersions(ctx, sc); err != nil {
		return ex.group, err
	}
	ex.measureClocks(ctx)
	err = Run(ctx, sc, ex, obs.Step)
	switch {
	case err == nil && ex.failedChecks > 0:
		return ex.group, &ChecksFailed{N: ex.failedChecks}
	case err == nil && len(ex.breached) > 0:
		return ex.group, &ThresholdsBreached{Runs: ex.breached}
	}
	return ex.group, err
}

// executor carries out a scenario's steps.
type executor struct {
	obs          Listener
	opts         Options
	sc           *Scenario
	results      string
	group        string
	targets      map[string]*execTarget
	instances    map[string]*instance
	lastRunMu    sync.Mutex
	lastRun      map[string]string // instance -> its latest tpcc run, which a check is stored with
	failedChecks int
	breachedMu   sync.Mutex
	breached     []*experiment.Breached // runs that breached their thresholds
	offsetMu     sync.Mutex
	offsets      map[string]time.Duration // host -> its clock minus the controller's
	// workload holds the main processes of the servers the scenario runs
	// on this host: every run's telemetry counts their CPU as the
	// experiment's, so side-by-side instances are not each other's noise.
	workload *telemetry.Workload
}

// gate lets the scenario go on past a run that breached its thresholds,
// keeping the breach for the scenario's end; other errors pass.
func (e *executor) gate(err error) error {
	var b *experiment.Breached
	if !errors.As(err, &b) {
		return err
	}
	e.breachedMu.Lock()
	defer e.breachedMu.Unlock()
	e.breached = append(e.breached, b)
	return nil
}

// thresholds parses a step's thresholds, which validation has checked.
func thresholds(kind string, exprs []string) ([]threshold.Threshold, error) {
	ts, err := threshold.Parse(kind, exprs)
	if err != nil {
		return nil, experiment.Invalid(err)
	}
	return ts, nil
}

type execTarget struct {
	Target
	path  string
	image *tier.Image
}

// actualStored says what an emulated tier's file system really stored of
// path (for btrfs with inline compression, compsize's figures), beside a
// space scan's estimate; nil for a target that is not an emulated tier.
func (t *execTarget) actualStored(path string) func(context.Context) (*space.Actual, error) {
	im := t.image
	if im == nil {
		return nil
	}
	return func(ctx context.Context) (*space.Actual, error) {
		s, err := im.Stored(ctx, path)
		if err != nil {
			return nil, err
		}
		fs, compress := im.FS, im.Compress
		if fs == "" {
			fs = "ext4"
		}
		if compress == "" {
			compress = "none"
		}
		return &space.Actual{FS: fs, Compress: compress, Tool: s.Tool, Uncompressed: s.Uncompressed, Disk: s.Disk, Ratio: s.Ratio}, nil
	}
}

// emulated describes the emulated tier: its file system when it is btrfs
// and its throttles ("" when it is neither).
func (t *execTarget) emulated() string {
	var parts []string
	if im := t.image; im != nil && im.FS == "btrfs" {
		parts = append(parts, fsText(im))
	}
	if d := t.throttled(); d != "" {
		parts = append(parts, "read/write "+d)
	}
	if len(parts) == 0 {
		return ""
	}
	return "emulated: " + strings.Join(parts, "; ")
}

// fsText names a tier image's file system, with btrfs's options.
func fsText(im *tier.Image) string {
	if im.FS != "btrfs" {
		return im.FS
	}
	return fmt.Sprintf("btrfs, compression %s, data checksums %s", im.Compress, map[bool]string{true: "on", false: "off"}[im.Checksum])
}

// throttled describes the tier's throttles ("" when it has none).
func (t *execTarget) throttled() string {
	if _, ok := t.throttle(); !ok {
		return ""
	}
	e := t.Emulate
	var parts []string
	if e.ReadIOPS > 0 || e.WriteIOPS > 0 {
		parts = append(parts, fmt.Sprintf("%s/%s IOPS", limitText(float64(e.ReadIOPS)), limitText(float64(e.WriteIOPS))))
	}
	if e.ReadMBps > 0 || e.WriteMBps > 0 {
		parts = append(parts, fmt.Sprintf("%s/%s MB/s", limitText(e.ReadMBps), limitText(e.WriteMBps)))
	}
	return strings.Join(parts, ", ")
}

// label is how reports name runs on the target.
func (t *execTarget) label(name string) string {
	if t.emulated() != "" {
		return name + " (emulated)"
	}
	return name
}

func limitText(v float64) string {
	if v <= 0 {
		return "∞"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

type instance struct {
	name    string
	host    string // "": the controller
	server  Server
	target  *execTarget
	dataDir string
	dsn     string
	started bool
	limits  *stored.Applied // what its start applied, for the runs' parameters
	pid     int             // its server's main process, on this host (0: none known)
	// schemaFrom says how its schema came, when copied from another
	// server's (tpcc-build from): for the runs' parameters.
	schemaFrom string
}

// placement is where a TPC-C workload on the instance runs, for its runs'
// parameters: its label, target and tier, what its start applied, its host,
// and how its schema came.
func (in *instance) placement() stored.Placement {
	return stored.Placement{Label: in.target.label(in.name), Instance: in.name, Target: in.target.Name, Tier: in.target.emulated(),
		Limits: in.limits, Memory: in.server.Memory, Host: in.host, SchemaFrom: in.schemaFrom}
}

var _ Executor = (*executor)(nil)

func (e *executor) note(format string, args ...any) { e.obs.Note(fmt.Sprintf(format, args...)) }

func (e *executor) PrepareTarget(ctx context.Context, t Target) (string, error) {
	path, err := filepath.Abs(t.Path)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return "", fmt.Errorf("target %s: %w", t.Name, err)
	}
	if !t.Local() { // used on other hosts only: each host's tierbench makes what it needs there
		e.targets[t.Name] = &execTarget{Target: t, path: t.Path}
		e.note("target %s: %s on host %s", t.Name, t.Path, strings.Join(t.Hosts, ", "))
		return t.Path, nil
	}
	et := &execTarget{Target: t, path: path}
	if t.Emulate != nil && t.Emulate.Loop > 0 {
		em := t.Emulate
		im, err := tier.CreateWith(ctx, path, t.Name, em.Loop, tier.Options{FS: em.FS, Compress: em.Compress, Checksum: em.Checksum})
		if err != nil {
			return "", fmt.Errorf("target %s: %w", t.Name, err)
		}
		et.image, et.path = im, im.MountPoint
		e.note("target %s: a %s loop-backed image (%s) on %s, mounted at %s", t.Name, units.FormatSize(em.Loop), fsText(im), im.Device, im.MountPoint)
	} else {
		e.note("target %s: %s", t.Name, path)
	}
	if d := et.throttled(); d != "" {
		e.note("target %s is an emulated tier (read/write %s: one budget, shared by every server on it)", t.Name, d)
	}
	e.targets[t.Name] = et
	return et.path, nil
}

// StartServers starts a server's instances whose data exist; the first is
// always started (a new data directory is initialised), the others of a
// multi-instance server are cloned from it by its tpcc-build step.
func (e *executor) StartServers(ctx context.Context, s Server, _ Target, names []string) error {
	if !s.Managed() {
		in := &instance{name: s.Name, host: s.HostOf(0), server: s, dsn: s.DSN, started: true, target: &execTarget{}}
		e.instances[s.Name] = in
		e.note("server %s: not managed by tierbench: %s", s.Name, engine.Redact(s.DSN))
		return nil
	}
	t := e.targets[s.Target]
	for i, name := range names {
		in := &instance{name: name, host: s.HostOf(i), server: s, target: t, dataDir: filepath.Join(t.path, name)}
		if in.host != "" {
			in.dataDir = path.Join(t.path, name)
		}
		if was, ok := e.instances[name]; ok {
			in.schemaFrom = was.schemaFrom // started again after a stop step: its data came as before
		}
		e.instances[name] = in
		if i%s.Count > 0 { // not its host's first
			if in.host != "" && !e.remoteExists(ctx, in) {
				continue
			}
			if _, err := server.Status(ctx, in.dataDir); in.host == "" && err != nil {
				continue // cloned when the schema is built
			}
		}
		if err := e.start(ctx, in, false); err != nil {
			return err
		}
	}
	return nil
}

// start starts an instance as experiment.StartServer does, with its memory
// cap and its target's throttles: one I/O budget per emulated tier (the
// tier's cgroup), which every instance on it shares, as the databases on
// one datastore do. newPort picks a free port rather than its last one.
func (e *executor) start(ctx context.Context, in *instance, newPort bool) error {
	if in.host != "" {
		return e.startRemote(ctx, in)
	}
	cfg := e.localConfig(in)
	cfg.NewPort = newPort
	res, err := experiment.StartServer(ctx, cfg, e.obs)
	return e.started(in, res, err)
}

// localConfig is how a local instance runs: its server's config
// (serverConfig) on its target, drawing from the tier's budget.
func (e *executor) localConfig(in *instance) experiment.ServerConfig {
	cfg := serverConfig(in.server, in.dataDir, "", in.target.Emulate)
	cfg.IOGroup, cfg.Tier = in.target.groupName(), in.target.Name
	return cfg
}

// started records what starting (or cloning) a local instance gave: a
// server that runs, even when its limits then failed, is the instance's,
// so that Cleanup stops it.
func (e *executor) started(in *instance, res *experiment.ServerStarted, err error) error {
	if res != nil {
		info := res.Info
		in.dsn, in.started, in.pid, in.limits = info.DSN, true, info.PID, res.Limits
		e.workload.Add(in.pid)
		e.note("server %s: %s %s on 127.0.0.1:%d, data in %s", in.name, info.Engine, info.Version, info.Port, info.DataDir)
		if res.LimitsText != "" {
			e.note("server %s: %s", in.name, res.LimitsText)
		}
	}
	if err != nil {
		return fmt.Errorf("server %s: %w", in.name, err)
	}
	return nil
}

func (e *executor) instance(name string) (*instance, error) {
	in, ok := e.instances[name]
	if !ok || !in.started {
		return nil, fmt.Errorf("instance %s is not running: its server's tpcc-build step must come first", name)
	}
	return in, nil
}

// forEach runs f on each instance at once; with one, in the foreground,
// heard by the scenario's observer.
func (e *executor) forEach(ctx context.Context, names []string, f func(ctx context.Context, obs experiment.Observer, in *instance) error) error {
	if len(names) == 1 {
		in, err := e.instance(names[0])
		if err != nil {
			return err
		}
		return f(ctx, e.obs, in)
	}
	ins, err := e.instancesOf(names)
	if err != nil {
		return err
	}
	grp, gctx := errgroup.WithContext(ctx)
	for _, in := range ins {
		obs := e.background()
		grp.Go(func() error { return f(gctx, obs, in) })
	}
	return grp.Wait()
}

// instancesOf is the named instances, all found before any is used.
func (e *executor) instancesOf(names []string) ([]*instance, error) {
	ins := make([]*instance, len(names))
	for i, name := range names {
		in, err := e.instance(name)
		if err != nil {
			return nil, err
		}
		ins[i] = in
	}
	return ins, nil
}

// background is the observer of an experiment that runs side by side.
func (e *executor) background() experiment.Observer {
	if e.opts.Background != nil {
		return e.opts.Background()
	}
	return experiment.Nop{}
}

// record is how the scenario's runs are recorded: in its group, sampled as
// the command line samples by default.
// Every run samples every host's node_exporter: the cluster's telemetry.
func (e *executor) record(p stored.Placement) experiment.Record {
	tele := experiment.DefaultTelemetry
	for _, h := range e.sc.Hosts {
		if h.NodeExporter != "" {
			tele.Nodes = append(tele.Nodes, telemetry.Node{Name: h.Name, URL: h.NodeExporter})
		}
	}
	tele.Workload = e.workload
	return experiment.Record{Results: e.results, Group: e.group, Placement: p, Telemetry: tele,
		LatencyBuckets: e.opts.LatencyBuckets, Noisy: e.opts.Noisy}
}

func (e *executor) Disk(ctx context.Context, st *DiskStep) error {
	t := e.targets[st.Target]
	cfg, err := diskConfig(st)
	if err != nil {
		return err
	}
	cfg.Target = t.path
	cfg.Record = e.record(stored.Placement{Label: t.label(t.Name), Target: t.Name, Tier: t.emulated()})
	if cfg.Thresholds, err = thresholds(stored.KindDisk, st.Thresholds); err != nil {
		return err
	}
	if len(st.Hosts) > 0 { // fio's client/server mode: the profile on every host at once
		for _, name := range st.Hosts {
			h, _ := e.sc.Host(name)
			cfg.Servers = append(cfg.Servers, h.Fio())
		}
		cfg.Record.Placement.Label = t.Name + " on " + strings.Join(st.Hosts, ", ")
		return e.diskRun(ctx, cfg)
	}
	// fio runs within the tier's I/O budget, so the profile shows the tier
	// as the database will see it.
	grp, device, note, _, err := tierGroup(t, "disk-"+strings.TrimPrefix(t.groupName(), "tier-"), 0)
	if err != nil {
		return err
	}
	switch {
	case grp != nil:
		defer grp.Remove()
		cfg.CgroupProcs = grp.ProcsFiles()
		e.note("target %s: the storage profile runs throttled on %s, within the I/O budget the tier's servers share", t.Name, device)
	case note != "":
		e.note("target %s: the storage profile is %s", t.Name, note)
	}
	return e.diskRun(ctx, cfg)
}

// diskRun runs a disk step's profile and notes its knees, as disk run
// prints them.
func (e *executor) diskRun(ctx context.Context, cfg experiment.DiskConfig) error {
	out, err := experiment.RunDisk(ctx, cfg, e.obs)
	for _, k := range out.KneeTexts() {
		e.obs.Note(k)
	}
	return e.gate(err)
}

// throttle is the target's emulated I/O limit (ok false when none).
func (t *execTarget) throttle() (stored.IOLimit, bool) {
	em := t.Emulate
	if em == nil {
		return stored.IOLimit{}, false
	}
	io := stored.IOLimit{ReadIOPS: em.ReadIOPS, WriteIOPS: em.WriteIOPS, ReadBPS: int64(em.ReadMBps * 1e6), WriteBPS: int64(em.WriteMBps * 1e6)}
	return io, io.ReadIOPS > 0 || io.WriteIOPS > 0 || io.ReadBPS > 0 || io.WriteBPS > 0
}

// groupName is the cgroup of the target's I/O budget ("" when the target is
// not throttled): every server on the target, and the storage profile, draw
// from it. tier-NAME-HASH, the hash of the target's path, so that the
// targets of one name of two scenarios (paper-2's and paper-5's "slow")
// never share a budget, nor remove each other's.
func (t *execTarget) groupName() string {
	if _, ok := t.throttle(); !ok {
		return ""
	}
	sum := sha256.Sum256([]byte(t.path))
	return "tier-" + t.Name[:min(len(t.Name), 80)] + "-" + hex.EncodeToString(sum[:4])
}

// tierGroup makes the cgroup name, within target t's I/O budget (the one
// its servers share), that a workload's processes (fio, a backup cycle's)
// start in, capped at memory bytes when memory > 0. A target that is not
// throttled and no memory give nothing; a machine that cannot throttle gives
// no I/O limit and a note "not throttled: why", and no group unless the
// memory cap applied. A group comes with the device it throttles ("" when
// it does not), what the machine noted (v1's writeback caveat, a cap it
// could not set) and what applied.
func tierGroup(t *execTarget, name string, memory int64) (grp *cgroup.Group, device, note string, ap stored.Applied, err error) {
	lim := cgroup.Limits{MemoryBytes: memory}
	var notes []string
	if io, ok := t.throttle(); ok {
		var maj, mnr uint32
		if device, maj, mnr, err = server.DeviceFor(t.path); err != nil {
			device, notes = "", append(notes, "not throttled: "+err.Error())
		} else {
			io.Major, io.Minor = maj, mnr
			lim.IO, lim.IOGroup = []stored.IOLimit{io}, t.groupName()
		}
	}
	if lim.MemoryBytes == 0 && len(lim.IO) == 0 {
		return nil, "", strings.Join(notes, "; "), ap, nil
	}
	grp, ap, err = cgroup.Create(name, lim)
	if err != nil {
		return nil, "", "", ap, err
	}
	switch {
	case len(lim.IO) > 0 && len(ap.IO) == 0:
		device, notes = "", append(notes, "not throttled: "+experiment.OrUnknown(ap.IONote))
	case ap.IONote != "":
		notes = append(notes, ap.IONote)
	}
	if lim.MemoryBytes > 0 && ap.MemoryMax == 0 {
		notes = append(notes, "memory not capped: "+experiment.OrUnknown(ap.MemoryNote))
	}
	if len(ap.IO) == 0 && ap.MemoryMax == 0 {
		grp.Remove()
		grp = nil
	}
	return grp, device, strings.Join(notes, "; "), ap, nil
}

// TPCCBuild builds (or reuses) the schema on the server's first instance
// on each of its hosts, the hosts at once (onEachHost); the host's other
// instances are copies of its stopped, checked data directory.
func (e *executor) TPCCBuild(ctx context.Context, st *TPCCBuildStep) error {
	if st.From != "" {
		return e.copyBuilt(ctx, st)
	}
	return e.onEachHost(ctx, st.Instances, func(ctx context.Context, names []string) error { return e.buildOn(ctx, st, names) })
}

// onEachHost runs f with each host's instances among names, in their
// order, every host at once: the hosts are different machines. The
// scenario's listener hears them one call at a time.
func (e *executor) onEachHost(ctx context.Context, names []string, f func(ctx context.Context, names []string) error) error {
	var hosts []string // in the order of their first instance
	on := map[string][]string{}
	for _, name := range names {
		h := ""
		if in, ok := e.instances[name]; ok {
			h = in.host
		}
		if _, ok := on[h]; !ok {
			hosts = append(hosts, h)
		}
		on[h] = append(on[h], name)
	}
	if len(hosts) == 1 {
		return f(ctx, on[hosts[0]])
	}
	obs := e.obs
	e.obs = &lockedListener{Listener: obs}
	defer func() { e.obs = obs }()
	grp, gctx := errgroup.WithContext(ctx)
	for _, h := range hosts {
		grp.Go(func() error { return f(gctx, on[h]) })
	}
	return grp.Wait()
}

// lockedListener passes each Observer call to its Listener in turn, for
// work done at once (onEachHost) whose listener expects one call at a time.
type lockedListener struct {
	mu sync.Mutex
	Listener
}

// inTurn runs f when no other call is running.
func (l *lockedListener) inTurn(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

func (l *lockedListener) Note(msg string)                { l.inTurn(func() { l.Listener.Note(msg) }) }
func (l *lockedListener) Started(s experiment.Started)   { l.inTurn(func() { l.Listener.Started(s) }) }
func (l *lockedListener) Progress(p experiment.Progress) { l.inTurn(func() { l.Listener.Progress(p) }) }
func (l *lockedListener) Tick(t experiment.Tick)         { l.inTurn(func() { l.Listener.Tick(t) }) }
func (l *lockedListener) Result(r experiment.Result)     { l.inTurn(func() { l.Listener.Result(r) }) }

// buildOn builds the schema on the first of one host's instances and
// clones it into the others.
func (e *executor) buildOn(ctx context.Context, st *TPCCBuildStep, names []string) error {
	first, err := e.instance(names[0])
	if err != nil {
		return err
	}
	vus := st.BuildVUs
	built := false
	if first.host != "" {
		if built, err = e.buildRemote(ctx, first, st.Warehouses, vus); err != nil {
			return err
		}
	} else {
		db, err := all.Open(ctx, first.dsn)
		if err != nil {
			return err
		}
		if vus == 0 {
			vus = runtime.NumCPU()
		}
		build, err := experiment.EnsureSchema(ctx, db, st.Warehouses, vus, e.obs)
		db.Close()
		if err != nil {
			return fmt.Errorf("server %s: %w", first.name, err)
		}
		built = build != nil
	}
	rest := names[1:]
	if len(rest) == 0 {
		return nil
	}
	if !built { // reused: copies made from it before are still good, if there
		missing := false
		for _, name := range rest {
			if in := e.instances[name]; !in.started {
				missing = true
			}
		}
		if !missing {
			return nil
		}
	}
	if err := e.stopServer(ctx, first); err != nil {
		return err
	}
	for _, name := range rest {
		in := e.instances[name]
		if in.started {
			if err := e.stopServer(ctx, in); err != nil {
				return err
			}
		}
	}
	// Each copy (replacing one made before, now stale) starts on a free
	// port other than the source's, which then starts again on its own.
	for _, name := range rest {
		if err := e.clone(ctx, first, e.instances[name]); err != nil {
			return err
		}
	}
	return e.start(ctx, first, false)
}

// copyBuilt gives a server's instances the schema another server built:
// the source's first instance is stopped, its data directory copied cold
// (the copies' pages dropped from the page cache) into each, replacing
// what they held, and each copy started; the source starts again if it
// ran. Loading through a throttled tier would measure only the throttle.
func (e *executor) copyBuilt(ctx context.Context, st *TPCCBuildStep) error {
	src, ok := e.instances[st.FromInstance]
	if !ok || src.dataDir == "" {
		return fmt.Errorf("server %s: its schema is to come from %s, which has no data directory yet", st.Server, st.From)
	}
	wasRunning := src.started
	if wasRunning {
		if err := e.stopServer(ctx, src); err != nil {
			return err
		}
	}
	for _, name := range st.Instances {
		in := e.instances[name]
		if in == nil {
			return fmt.Errorf("server %s: instance %s was not set up", st.Server, name)
		}
		if in.started {
			if err := e.stopServer(ctx, in); err != nil {
				return err
			}
		}
		if err := e.clone(ctx, src, in); err != nil {
			return err
		}
		in.schemaFrom = fmt.Sprintf("copied cold from %s (%s), not loaded through this tier", src.name, src.target.Name)
		e.note("server %s: the %d-warehouse schema built on %s copied cold into %s, not loaded through its tier", in.name, st.Warehouses, src.name, in.dataDir)
	}
	if wasRunning {
		return e.start(ctx, src, false)
	}
	return nil
}

// clone copies the stopped first instance's data directory into in's,
// replacing a stale copy, and starts the copy on a free port, as
// experiment.CloneServer does (on in's host, `server clone`).
func (e *executor) clone(ctx context.Context, first, in *instance) error {
	if in.host != "" {
		return e.cloneRemote(ctx, first, in)
	}
	res, err := experiment.CloneServer(ctx, experiment.CloneConfig{From: first.dataDir, Replace: true, ServerConfig: e.localConfig(in)}, e.obs)
	return e.started(in, res, err)
}

// stopServer stops a running instance, on its host.
func (e *executor) stopServer(ctx context.Context, in *instance) error {
	if in.host != "" {
		return e.stopRemote(ctx, in)
	}
	return e.stopLocal(ctx, in)
}

// stopLocal stops a local instance's server with a fast shutdown and
// removes its own cgroup (experiment.StopServer), saying so when the
// shutdown hung and an immediate one stopped it.
func (e *executor) stopLocal(ctx context.Context, in *instance) error {
	st, err := experiment.StopServer(ctx, in.dataDir, experiment.StopFast, e.obs)
	if err != nil {
		return err
	}
	if st.Fallback != "" {
		e.note("server %s: %s", in.name, st.Fallback)
	}
	e.stopped(in)
	return nil
}

// stopped marks a local instance stopped.
func (e *executor) stopped(in *instance) {
	e.workload.Remove(in.pid)
	in.started, in.pid = false, 0
}

// tpccRun runs TPC-C on one instance, as a run of the scenario's group.
func (e *executor) tpccRun(ctx context.Context, obs experiment.Observer, in *instance, vus []int, rampup, duration time.Duration,
	rep Repetitions, rate Rate, pace Pace, mode, role, phase string, exprs []string, together *experiment.Barrier) error {
	ts, err := thresholds(stored.KindTPCC, exprs)
	if err != nil {
		return err
	}
	cfg := tpccConfig(vus, rampup, duration, rep, mode, rate, pace)
	place := in.placement()
	place.Role, place.Phase = role, phase
	cfg.Record = e.record(place)
	cfg.DSN, cfg.Thresholds, cfg.Together = in.dsn, ts, together
	out, err := experiment.RunTPCC(ctx, cfg, obs)
	if out != nil {
		e.setLastRun(in.name, out.RunID)
	}
	for _, k := range out.KneeTexts() { // as tpcc run prints it
		obs.Note(k)
	}
	return e.gate(err)
}

func (e *executor) setLastRun(instance, runID string) {
	e.lastRunMu.Lock()
	defer e.lastRunMu.Unlock()
	e.lastRun[instance] = runID
}

func (e *executor) TPCCRun(ctx context.Context, st *TPCCRunStep) error {
	role := ""
	var together *experiment.Barrier // several instances: each step starts on all of them at once
	if len(st.Instances) > 1 {
		role, together = stored.KindTPCC, experiment.NewBarrier(len(st.Instances))
	}
	return e.forEach(ctx, st.Instances, func(ctx context.Context, obs experiment.Observer, in *instance) error {
		return e.tpccRun(ctx, obs, in, st.VUs, st.RampUp, st.Duration, st.Repetitions, st.Rate, st.Pace, st.Mode, role, "", st.Thresholds, together)
	})
}

// backupRun runs backup cycles of one instance into DIR/backups-INSTANCE
// on the step's target (default the instance's own).
func (e *executor) backupRun(ctx context.Context, obs experiment.Observer, in *instance, target string, cycles, repeat int, spacing time.Duration,
	startAt time.Time, logical bool) error {
	t := in.target
	if target != "" {
		t = e.targets[target]
	}
	place := stored.Placement{Label: in.target.label(in.name), Instance: in.name, Role: stored.KindBackup,
		Target: in.target.Name, Tier: t.emulated(), Host: in.host}
	if in.host != "" {
		return e.backupRemote(ctx, obs, in, t, cycles, repeat, spacing, startAt, logical, place)
	}
	cfg := backupConfig(cycles, repeat, spacing, startAt, logical)
	cfg.Record, cfg.DSN, cfg.Target, cfg.DataDir = e.record(place), in.dsn, filepath.Join(t.path, "backups-"+in.name), in.dataDir
	grp, note, ap, err := backupGroup(in, t)
	if err != nil {
		return fmt.Errorf("server %s: %w", in.name, err)
	}
	cfg.IONote = note
	switch {
	case grp != nil:
		defer grp.Remove() // on errors and Ctrl-C too: RunBackup has stopped its processes by then
		cfg.CgroupProcs, cfg.MemoryMax = grp.ProcsFiles(), ap.MemoryMax
		var how []string
		if len(ap.IO) > 0 {
			cfg.IOGroup = t.groupName()
			how = append(how, "throttled, within the I/O budget of target "+t.Name)
		}
		if ap.MemoryMax > 0 {
			how = append(how, "in a memory cap of "+units.FormatSize(ap.MemoryMax)+", as the server has")
		}
		if note != "" {
			note = " (" + note + ")"
		}
		obs.Note(fmt.Sprintf("server %s: its backups and restores run %s%s", in.name, strings.Join(how, " and "), note))
	case note != "":
		obs.Note(fmt.Sprintf("server %s: its backups and restores are %s", in.name, note))
	}
	_, err = experiment.RunBackup(ctx, cfg, obs)
	return err
}

// backupGroup makes the cgroup an instance's backup cycles run in: every
// process of a cycle doing I/O starts in it (backup.Options.CgroupProcs).
// It draws from the I/O budget of the target the backups go to, when that
// is throttled: that target's device is all they touch (the backup tool,
// pg_basebackup, pg_dump, mariadb-backup or tierbench-dump's writers,
// writes there, and a restore reads and writes only there; the source's
// files are read for a backup by the source server, in its own tier's
// budget, except by mariadb-backup, which reads them itself from inside
// this group: throttled when they are on the target's device, not drawn
// from the source tier's budget when they are not). It has the instance's
// memory cap, when the instance has
// one: a restored copy, started with its source's settings, then also runs
// in its source's memory, page cache included, not in the whole host's.
// The group is backup-INSTANCE-HASH (HASH of the data directory and the
// target's path), so the instances of a neighbours step each have theirs.
// Nothing to limit gives no group; what the machine cannot do is a note
// ("not throttled: why", "memory not capped: why"), as is v1's writeback
// caveat.
func backupGroup(in *instance, t *execTarget) (*cgroup.Group, string, stored.Applied, error) {
	sum := sha256.Sum256([]byte(in.dataDir + "\x00" + t.path))
	grp, _, note, ap, err := tierGroup(t, "backup-"+in.name[:min(len(in.name), 60)]+"-"+hex.EncodeToString(sum[:4]), in.server.Memory)
	return grp, note, ap, err
}

func (e *executor) Backup(ctx context.Context, st *BackupStep) error {
	return e.forEach(ctx, st.Instances, func(ctx context.Context, obs experiment.Observer, in *instance) error {
		return e.backupRun(ctx, obs, in, st.Target, st.Cycles, st.Repeat, st.Interval, time.Time{}, st.Logical)
	})
}

// Neighbours runs TPC-C on some instances while others run backup cycles,
// the first backup starting when the TPC-C ramp-up ends, so the backups
// fall in the measured interval.
func (e *executor) Neighbours(ctx context.Context, st *NeighboursStep) error {
	phase := "baseline"
	if len(st.Backup) > 0 {
		phase = "beside backups"
	}
	tpccIns, err := e.instancesOf(st.TPCC)
	if err != nil {
		return err
	}
	backupIns, err := e.instancesOf(st.Backup)
	if err != nil {
		return err
	}
	// A repetition is the whole step again: every TPC-C instance's
	// measured interval beside the same backup schedule, so that each sees
	// the same backup pressure; each is a run of its own per instance,
	// which the report pools by instance and phase.
	for r := 1; r <= max(st.Repeat, 1); r++ {
		rep := ""
		if st.Repeat > 1 {
			rep = fmt.Sprintf(" (repetition %d of %d)", r, st.Repeat)
		}
		load := ""
		if len(st.Rates) > 0 {
			load = " at " + units.RateListText(st.Rates, false) + " TPM each"
		}
		e.note("%s%s: TPC-C%s with %s on %s%s; %s ramp-up, %s measured", phase, rep, load, units.Plural(st.VUs, "VU", "VUs"), strings.Join(st.TPCC, ", "),
			backupText(st), st.RampUp, st.Duration)
		if err := e.neighboursOnce(ctx, st, phase, tpccIns, backupIns); err != nil {
			return err
		}
	}
	return e.neighbours(ctx, st.TPCC)
}

// neighboursOnce runs one repetition of a neighbours step.
func (e *executor) neighboursOnce(ctx context.Context, st *NeighboursStep, phase string, tpccIns, backupIns []*instance) error {
	// Every TPC-C instance starts its step at once, on whichever host it
	// runs, when the last of them has connected; the backups count the
	// ramp-up from that moment.
	together := experiment.NewBarrier(len(tpccIns))
	grp, gctx := errgroup.WithContext(ctx)
	for _, in := range tpccIns {
		obs := e.background()
		grp.Go(func() error {
			return e.tpccRun(gctx, obs, in, []int{st.VUs}, st.RampUp, st.Duration, Repetitions{Repeat: 1}, st.Rate, st.Pace, st.Mode, stored.KindTPCC, phase, st.Thresholds, together)
		})
	}
	for _, in := range backupIns {
		obs := e.background()
		grp.Go(func() error {
			select {
			case <-together.Started():
			case <-gctx.Done():
				return gctx.Err()
			}
			// Set up during the ramp-up (over ssh on another host), the
			// first cycle at its end.
			return e.backupRun(gctx, obs, in, st.Target, st.Cycles, 1, st.Interval, together.StartedAt().Add(st.RampUp), st.Logical)
		})
	}
	return grp.Wait()
}

func backupText(st *NeighboursStep) string {
	if len(st.Backup) == 0 {
		return ""
	}
	return fmt.Sprintf(", %d backup cycles every %s on %s", st.Cycles, st.Interval, strings.Join(st.Backup, ", "))
}

// neighbours tells the observer each TPC-C instance's last step of a
// side-by-side step, from the store.
func (e *executor) neighbours(ctx context.Context, names []string) error {
	store, err := results.OpenReadOnly(e.results)
	if err != nil {
		return err
	}
	defer store.Close()
	for _, name := range names {
		steps, err := store.Steps(ctx, e.lastRun[name])
		if err != nil || len(steps) == 0 {
			continue
		}
		var s stored.TPCCStep
		if json.Unmarshal(steps[len(steps)-1].Metrics, &s) == nil {
			e.obs.Neighbour(name, &s)
		}
	}
	return nil
}

// Space scans what dedup, compression and erasure coding would save: each
// instance's data directory, its server stopped first so that the scan reads
// a consistent copy (a later step that needs it starts it again), or a
// target's directory. One scan at a time: each uses every core.
func (e *executor) Space(ctx context.Context, st *SpaceStep) error {
	o := space.Options{BlockSize: int(st.Block), KeepBelow: st.KeepBelow, ZstdSample: st.ZstdSample}
	if st.Target != "" {
		t := e.targets[st.Target]
		return e.spaceRun(ctx, experiment.SpaceConfig{
			Record: e.record(stored.Placement{Label: "target " + t.Name, Target: t.Name, Tier: t.emulated()}),
			Target: t.path, Options: o, Actual: t.actualStored(t.path),
		})
	}
	for _, name := range st.Instances {
		in, ok := e.instances[name] // running or stopped: its data directory is what counts
		if !ok {
			return fmt.Errorf("instance %s has no data yet: its server's tpcc-build step must come before a space step", name)
		}
		if in.started {
			if err := e.stopServer(ctx, in); err != nil {
				return fmt.Errorf("server %s: stopping it for a consistent scan: %w", in.name, err)
			}
		}
		err := e.spaceRun(ctx, experiment.SpaceConfig{
			Record: e.record(stored.Placement{Label: in.target.label(in.name), Instance: in.name, Target: in.target.Name,
				Tier: in.target.emulated(), Memory: in.server.Memory}),
			Target: in.dataDir, Options: o, Actual: in.target.actualStored(in.dataDir),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// spaceRun runs one scan, as a run of the scenario's group.
func (e *executor) spaceRun(ctx context.Context, cfg experiment.SpaceConfig) error {
	_, err := experiment.RunSpace(ctx, cfg, e.obs)
	return err
}

// Check runs the consistency conditions on each instance and keeps the
// result with the instance's latest TPC-C run. A failure is reported at the
// end; the scenario goes on to its report.
func (e *executor) Check(ctx context.Context, st *CheckStep) error {
	for _, name := range st.Instances {
		in, err := e.instance(name)
		if err != nil {
			return err
		}
		db, err := all.Open(ctx, in.dsn)
		if err != nil {
			return err
		}
		c, err := db.CheckTPCC(ctx, engine.CheckOptions{Seed: 1, All: st.All})
		db.Close()
		if err != nil {
			return fmt.Errorf("server %s: %w", name, err)
		}
		e.obs.Checked(name, c)
		if !c.OK {
			e.failedChecks++
		}
		if run := e.lastRun[name]; run != "" {
			if err := experiment.StoreCheck(ctx, e.results, run, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// Durability runs the durability test on each instance, one after
// another, on its schema. A test that lost acknowledged New-Orders is
// reported at the end, as a failed check is; the scenario goes on.
func (e *executor) Durability(ctx context.Context, st *DurabilityStep) error {
	for _, name := range st.Instances {
		in, err := e.instance(name)
		if err != nil {
			return err
		}
		place := in.placement()
		var passed bool
		if in.host != "" {
			passed, err = e.durabilityRemote(ctx, in, st, place)
		} else {
			cfg := durabilityConfig(st, in.dataDir)
			cfg.Results, cfg.Group, cfg.Placement = e.results, e.group, place
			var out *experiment.DurabilityResult
			out, err = experiment.RunDurability(ctx, cfg, e.obs)
			passed = out != nil && out.Total.OK
		}
		if err != nil {
			return fmt.Errorf("server %s: %w", name, err)
		}
		if !passed {
			e.failedChecks++
		}
	}
	return nil
}

func (e *executor) Report(ctx context.Context, st *ReportStep) error {
	out := st.Out
	if out == "" {
		out = filepath.Join(e.results, "report.html")
	}
	store, err := results.OpenReadOnly(e.results)
	if err != nil {
		return fmt.Errorf("opening the results store: %w", err)
	}
	defer store.Close()
	w, err := report.Write(ctx, store, report.Options{Group: e.group, Out: out, Version: version.Version})
	if err != nil {
		return err
	}
	e.obs.Reported(w)
	return nil
}

// Stop stops a server's running instances and removes their own cgroups
// (the tier's shared I/O budget stays for the others on it). A later step
// that needs the server starts it again, as StartServers does.
func (e *executor) Stop(ctx context.Context, st *StopStep) error {
	for _, name := range st.Instances {
		in, ok := e.instances[name]
		if !ok || !in.started {
			continue
		}
		if err := e.stopInstance(ctx, in); err != nil {
			return err
		}
		e.note("server %s: stopped", name)
	}
	return nil
}

// stopInstance stops the instance when it runs, which removes its own
// cgroup (not the tier's shared I/O group). A server tierbench does not
// manage is left alone; one on another host is stopped there (its own
// tierbench removes its cgroups).
func (e *executor) stopInstance(ctx context.Context, in *instance) error {
	switch {
	case !in.server.Managed(), !in.started:
		return nil
	case in.host != "":
		return e.stopRemote(ctx, in)
	}
	if err := e.stopLocal(ctx, in); err != nil {
		return fmt.Errorf("stopping %s: %w", in.name, err)
	}
	return nil
}

// Cleanup stops the servers the scenario started, lifts their limits (the
// servers' cgroups, then the tiers' shared ones) and removes its loop images
// (the data on them goes too). Data directories on real targets stay, so a
// later run can reuse their schema.
func (e *executor) Cleanup(ctx context.Context) error {
	var errs []error
	for _, in := range e.instances {
		if err := e.stopInstance(ctx, in); err != nil {
			errs = append(errs, err)
		}
	}
	for _, t := range e.targets {
		if name := t.groupName(); name != "" {
			if g, err := cgroup.Open(name); err == nil {
				if err := g.Remove(); err != nil {
					errs = append(errs, fmt.Errorf("removing the I/O budget of target %s: %w", t.Name, err))
				}
			} else if !errors.Is(err, cgroup.ErrNotFound) {
				errs = append(errs, err)
			}
		}
		if t.image != nil {
			if err := t.image.Remove(ctx); err != nil {
				errs = append(errs, fmt.Errorf("removing the image of target %s: %w", t.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}
