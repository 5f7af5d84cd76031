package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/scenario"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/tier"
	"github.com/tierbench/tierbench/internal/units"
)

// runScenario runs `scenario run`: the scenario's steps over the executor
// below, every run in one results group that its report shows together.
func runScenario(ctx context.Context, g *Globals, opts ScenarioRunOptions) error {
	if err := checkResultsDir(opts.Results); err != nil {
		return err
	}
	sc, err := opts.load()
	if err != nil {
		var errs scenario.Errors
		if errors.As(err, &errs) {
			return reportScenarioErrors(g, errs)
		}
		return err
	}
	ex := &scenarioExec{
		g: g, sc: sc, results: opts.Results,
		group:   sc.Name + "-" + time.Now().UTC().Format("20060102-150405"),
		targets: map[string]*execTarget{}, instances: map[string]*instance{}, lastRun: map[string]string{},
	}
	scale := sc.Scale
	if scale == "" {
		scale = "default"
	}
	g.progressf("scenario %s (%s scale): %s; results group %s\n", sc.Name, scale, sc.Title, ex.group)
	err = scenario.Run(ctx, sc, ex, func(i, n int, st scenario.Step) {
		g.progressf("\n== step %d/%d: %s\n", i, n, st)
	})
	if err == nil && ex.failedChecks > 0 {
		return &ExitError{Code: ExitFailure, Msg: fmt.Sprintf("%d consistency checks failed (see above)", ex.failedChecks)}
	}
	if err != nil && ctx.Err() != nil {
		g.progressf("scenario %s interrupted; its finished runs are in group %s\n", sc.Name, ex.group)
		return &ExitError{Code: ExitInterrupted}
	}
	return err
}

// scenarioExec carries out a scenario's steps with tierbench's own
// commands, in-process: targets (loop images for emulated tiers), managed
// servers (capped, throttled, cloned), disk, tpcc, backup and report.
type scenarioExec struct {
	g            *Globals
	sc           *scenario.Scenario
	results      string
	group        string
	targets      map[string]*execTarget
	instances    map[string]*instance
	lastRunMu    sync.Mutex
	lastRun      map[string]string // instance -> its latest tpcc run, which a check is stored with
	failedChecks int
}

type execTarget struct {
	scenario.Target
	path  string
	image *tier.Image
}

// emulated describes the tier's limits ("" when it is not emulated).
func (t *execTarget) emulated() string {
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
	return "emulated: read/write " + strings.Join(parts, ", ")
}

func limitText(v float64) string {
	if v <= 0 {
		return "∞"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

type instance struct {
	name    string
	server  scenario.Server
	target  *execTarget
	dataDir string
	dsn     string
	started bool
	limits  *cgroup.Applied // what its start applied, for the runs' parameters
}

// label is how reports name the instance's runs.
func (in *instance) label() string {
	if in.target.emulated() != "" {
		return in.name + " (emulated)"
	}
	return in.name
}

var _ scenario.Executor = (*scenarioExec)(nil)

func (e *scenarioExec) PrepareTarget(ctx context.Context, t scenario.Target) (string, error) {
	path, err := filepath.Abs(t.Path)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return "", fmt.Errorf("target %s: %w", t.Name, err)
	}
	et := &execTarget{Target: t, path: path}
	if t.Emulate != nil && t.Emulate.Loop > 0 {
		im, err := tier.Create(ctx, path, t.Name, t.Emulate.Loop)
		if err != nil {
			return "", fmt.Errorf("target %s: %w", t.Name, err)
		}
		et.image, et.path = im, im.MountPoint
		e.g.progressf("target %s: a %s loop-backed ext4 image on %s, mounted at %s\n", t.Name, units.FormatSize(t.Emulate.Loop), im.Device, im.MountPoint)
	} else {
		e.g.progressf("target %s: %s\n", t.Name, path)
	}
	if d := et.emulated(); d != "" {
		e.g.progressf("target %s is an emulated tier (%s: one budget, shared by every server on it)\n", t.Name, strings.TrimPrefix(d, "emulated: "))
	}
	e.targets[t.Name] = et
	return et.path, nil
}

// StartServers starts a server's instances whose data exist; the first is
// always started (a new data directory is initialised), the others of a
// multi-instance server are cloned from it by its tpcc-build step.
func (e *scenarioExec) StartServers(ctx context.Context, s scenario.Server, _ scenario.Target, names []string) error {
	t := e.targets[s.Target]
	for i, name := range names {
		in := &instance{name: name, server: s, target: t, dataDir: filepath.Join(t.path, name)}
		e.instances[name] = in
		if i > 0 {
			if _, err := server.Status(ctx, in.dataDir); err != nil {
				continue // cloned when the schema is built
			}
		}
		if err := e.start(ctx, in, false); err != nil {
			return err
		}
	}
	return nil
}

// start starts an instance and applies its memory cap and its target's
// throttles: one I/O budget per emulated tier (the tier's cgroup), which
// every instance on it shares, as the databases on one datastore do.
func (e *scenarioExec) start(ctx context.Context, in *instance, newPort bool) error {
	info, err := server.Start(ctx, server.Options{DataDir: in.dataDir, Memory: in.server.Memory, Settings: in.server.Settings, NewPort: newPort})
	if err != nil {
		return fmt.Errorf("server %s: %w", in.name, serverError(err))
	}
	in.dsn, in.started = info.DSN, true
	e.g.progressf("server %s: %s %s on 127.0.0.1:%d, data in %s\n", in.name, info.Engine, info.Version, info.Port, info.DataDir)
	io, wantIO := in.target.throttle()
	if in.server.Memory > 0 || wantIO {
		ap, device, err := applyLimits(ctx, in.dataDir, in.server.Memory, io, wantIO, in.target.groupName())
		if err != nil {
			return fmt.Errorf("server %s: %w", in.name, err)
		}
		in.limits = &ap
		e.g.progressf("server %s: %s\n", in.name, limitsLine(ap, in.server.Memory > 0, wantIO, device, in.target.Name))
	}
	return nil
}

func (e *scenarioExec) instance(name string) (*instance, error) {
	in, ok := e.instances[name]
	if !ok || !in.started {
		return nil, fmt.Errorf("instance %s is not running: its server's tpcc-build step must come first", name)
	}
	return in, nil
}

// forEach runs f on each instance at once; with one, in the foreground.
func (e *scenarioExec) forEach(ctx context.Context, names []string, f func(ctx context.Context, g *Globals, in *instance) error) error {
	if len(names) == 1 {
		in, err := e.instance(names[0])
		if err != nil {
			return err
		}
		return f(ctx, e.g, in)
	}
	grp, gctx := errgroup.WithContext(ctx)
	for _, name := range names {
		in, err := e.instance(name)
		if err != nil {
			return err
		}
		grp.Go(func() error { return f(gctx, e.quiet(), in) })
	}
	return grp.Wait()
}

// quiet is the output of work running beside other work: progress only
// through the scenario's own lines.
func (e *scenarioExec) quiet() *Globals {
	return &Globals{Stdout: io.Discard, Stderr: io.Discard, JSON: true}
}

func (e *scenarioExec) Disk(ctx context.Context, st *scenario.DiskStep) error {
	t := e.targets[st.Target]
	args := []string{"--target", t.path, "--results", e.results}
	if st.Profile != "" {
		args = append(args, "--profile", st.Profile)
	}
	if st.Duration > 0 {
		args = append(args, "--duration", st.Duration.String())
	}
	if st.Size > 0 {
		args = append(args, "--size", strconv.FormatInt(st.Size, 10))
	}
	var o DiskRunOptions
	fs, err := stepFlags("disk run", o.AddFlags, args)
	if err != nil {
		return err
	}
	label := t.Name
	if d := t.emulated(); d != "" {
		label += " (emulated)"
	}
	o.scenarioRun = scenarioRun{group: e.group, label: label, target: t.Name, tier: t.emulated()}
	// fio runs within the tier's I/O budget, so the profile shows the tier
	// as the database will see it.
	grp, device, note, _, err := tierGroup(t, "disk-"+strings.TrimPrefix(t.groupName(), "tier-"), 0)
	if err != nil {
		return err
	}
	switch {
	case grp != nil:
		defer grp.Remove()
		o.cgroupProcs = grp.ProcsFiles()
		e.g.progressf("target %s: the storage profile runs throttled on %s, within the I/O budget the tier's servers share\n", t.Name, device)
	case note != "":
		e.g.progressf("target %s: the storage profile is %s\n", t.Name, note)
	}
	_, err = runDiskRun(ctx, e.g, o, fs)
	return err
}

// throttle is the target's emulated I/O limit (ok false when none).
func (t *execTarget) throttle() (cgroup.IOLimit, bool) {
	em := t.Emulate
	if em == nil {
		return cgroup.IOLimit{}, false
	}
	io := cgroup.IOLimit{ReadIOPS: em.ReadIOPS, WriteIOPS: em.WriteIOPS, ReadBPS: int64(em.ReadMBps * 1e6), WriteBPS: int64(em.WriteMBps * 1e6)}
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
func tierGroup(t *execTarget, name string, memory int64) (grp *cgroup.Group, device, note string, ap cgroup.Applied, err error) {
	lim := cgroup.Limits{MemoryBytes: memory}
	var notes []string
	if io, ok := t.throttle(); ok {
		var maj, mnr uint32
		if device, maj, mnr, err = server.DeviceFor(t.path); err != nil {
			device, notes = "", append(notes, "not throttled: "+err.Error())
		} else {
			io.Major, io.Minor = maj, mnr
			lim.IO, lim.IOGroup = []cgroup.IOLimit{io}, t.groupName()
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
		device, notes = "", append(notes, "not throttled: "+orUnknown(ap.IONote))
	case ap.IONote != "":
		notes = append(notes, ap.IONote)
	}
	if lim.MemoryBytes > 0 && ap.MemoryMax == 0 {
		notes = append(notes, "memory not capped: "+orUnknown(ap.MemoryNote))
	}
	if len(ap.IO) == 0 && ap.MemoryMax == 0 {
		grp.Remove()
		grp = nil
	}
	return grp, device, strings.Join(notes, "; "), ap, nil
}

// TPCCBuild builds (or reuses) the schema on the server's first instance;
// the other instances are copies of its stopped, checked data directory.
func (e *scenarioExec) TPCCBuild(ctx context.Context, st *scenario.TPCCBuildStep) error {
	first, err := e.instance(st.Instances[0])
	if err != nil {
		return err
	}
	db, err := all.Open(ctx, first.dsn)
	if err != nil {
		return err
	}
	vus := st.BuildVUs
	if vus == 0 {
		vus = runtime.NumCPU()
	}
	build, err := ensureSchema(ctx, e.g, db, st.Warehouses, vus)
	db.Close()
	if err != nil {
		return fmt.Errorf("server %s: %w", first.name, err)
	}
	rest := st.Instances[1:]
	if len(rest) == 0 {
		return nil
	}
	if build == nil { // reused: copies made from it before are still good, if there
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
	if _, err := server.Stop(ctx, first.dataDir, "fast"); err != nil {
		return err
	}
	first.started = false
	for _, name := range rest {
		in := e.instances[name]
		if in.started {
			if _, err := server.Stop(ctx, in.dataDir, "fast"); err != nil {
				return err
			}
			in.started = false
		}
		if _, err := server.Status(ctx, in.dataDir); err == nil {
			// A copy tierbench made before, now stale.
			if err := os.RemoveAll(in.dataDir); err != nil {
				return err
			}
		}
		e.g.progressf("cloning %s into %s\n", first.dataDir, in.dataDir)
		if err := server.Clone(ctx, first.dataDir, in.dataDir); err != nil {
			return fmt.Errorf("server %s: %w", in.name, err)
		}
	}
	if err := e.start(ctx, first, false); err != nil {
		return err
	}
	for _, name := range rest {
		if err := e.start(ctx, e.instances[name], true); err != nil {
			return err
		}
	}
	return nil
}

// tpccRun runs TPC-C on one instance, as a run of the scenario's group.
func (e *scenarioExec) tpccRun(ctx context.Context, g *Globals, in *instance, vus []int, rampup, duration time.Duration,
	mode, role, phase string) error {
	args := []string{"--vus", joinInts(vus), "--rampup", rampup.String(), "--duration", duration.String(), "--results", e.results}
	if mode != "" {
		args = append(args, "--mode", mode)
	}
	var o TPCCRunOptions
	if _, err := stepFlags("tpcc run", o.AddFlags, args); err != nil {
		return err
	}
	o.DSN = in.dsn // not an argument: it holds the server's password
	o.scenarioRun = scenarioRun{group: e.group, label: in.label(), instance: in.name, role: role, phase: phase, target: in.target.Name,
		tier: in.target.emulated(), limits: in.limits, memory: in.server.Memory}
	out, err := runTPCCRun(ctx, g, o)
	if out != nil {
		e.setLastRun(in.name, out.RunID)
	}
	return err
}

func (e *scenarioExec) setLastRun(instance, runID string) {
	e.lastRunMu.Lock()
	defer e.lastRunMu.Unlock()
	e.lastRun[instance] = runID
}

// stepFlags fills a command's options from arguments, so a scenario step
// gets exactly the defaults and checks the command itself has.
func stepFlags(name string, addFlags func(*pflag.FlagSet), args []string) (*pflag.FlagSet, error) {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	addFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return fs, nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func (e *scenarioExec) TPCCRun(ctx context.Context, st *scenario.TPCCRunStep) error {
	role := ""
	if len(st.Instances) > 1 {
		role = "tpcc"
	}
	return e.forEach(ctx, st.Instances, func(ctx context.Context, g *Globals, in *instance) error {
		return e.tpccRun(ctx, g, in, st.VUs, st.RampUp, st.Duration, st.Mode, role, "")
	})
}

// backupRun runs backup cycles of one instance into DIR/backups-INSTANCE
// on the step's target (default the instance's own).
func (e *scenarioExec) backupRun(ctx context.Context, g *Globals, in *instance, target string, cycles int, interval time.Duration,
	logical bool) error {
	t := in.target
	if target != "" {
		t = e.targets[target]
	}
	args := []string{"--target", filepath.Join(t.path, "backups-"+in.name), "--cycles", strconv.Itoa(cycles),
		"--interval", interval.String(), "--results", e.results, "--datadir", in.dataDir}
	if logical {
		args = append(args, "--logical")
	}
	var o BackupRunOptions
	if _, err := stepFlags("backup run", o.AddFlags, args); err != nil {
		return err
	}
	o.DSN = in.dsn
	o.scenarioRun = scenarioRun{group: e.group, label: in.label(), instance: in.name, role: "backup", target: in.target.Name, tier: t.emulated()}
	grp, note, ap, err := backupGroup(in, t)
	if err != nil {
		return fmt.Errorf("server %s: %w", in.name, err)
	}
	o.ioNote = note
	switch {
	case grp != nil:
		defer grp.Remove() // on errors and Ctrl-C too: runBackupRun has stopped its processes by then
		o.cgroupProcs, o.memoryMax = grp.ProcsFiles(), ap.MemoryMax
		var how []string
		if len(ap.IO) > 0 {
			o.ioGroup = t.groupName()
			how = append(how, "throttled, within the I/O budget of target "+t.Name)
		}
		if ap.MemoryMax > 0 {
			how = append(how, "in a memory cap of "+units.FormatSize(ap.MemoryMax)+", as the server has")
		}
		if note != "" {
			note = " (" + note + ")"
		}
		g.progressf("server %s: its backups and restores run %s%s\n", in.name, strings.Join(how, " and "), note)
	case note != "":
		g.progressf("server %s: its backups and restores are %s\n", in.name, note)
	}
	_, err = runBackupRun(ctx, g, o)
	return err
}

// backupGroup makes the cgroup an instance's backup cycles run in: every
// process of a cycle doing I/O starts in it (backup.Options.CgroupProcs).
// It draws from the I/O budget of the target the backups go to, when that
// is throttled: that target's device is all they touch (pg_basebackup or
// pg_dump writes there, and a restore reads and writes only there; the
// source's files are read for a backup by the source server, in its own
// tier's budget). It has the instance's memory cap, when the instance has
// one: a restored copy, started with its source's settings, then also runs
// in its source's memory, page cache included, not in the whole host's.
// The group is backup-INSTANCE-HASH (HASH of the data directory and the
// target's path), so the instances of a neighbours step each have theirs.
// Nothing to limit gives no group; what the machine cannot do is a note
// ("not throttled: why", "memory not capped: why"), as is v1's writeback
// caveat.
func backupGroup(in *instance, t *execTarget) (*cgroup.Group, string, cgroup.Applied, error) {
	sum := sha256.Sum256([]byte(in.dataDir + "\x00" + t.path))
	grp, _, note, ap, err := tierGroup(t, "backup-"+in.name[:min(len(in.name), 60)]+"-"+hex.EncodeToString(sum[:4]), in.server.Memory)
	return grp, note, ap, err
}

func (e *scenarioExec) Backup(ctx context.Context, st *scenario.BackupStep) error {
	return e.forEach(ctx, st.Instances, func(ctx context.Context, g *Globals, in *instance) error {
		return e.backupRun(ctx, g, in, st.Target, st.Cycles, st.Interval, st.Logical)
	})
}

// Neighbours runs TPC-C on some instances while others run backup cycles,
// the first backup starting when the TPC-C ramp-up ends, so the backups
// fall in the measured interval.
func (e *scenarioExec) Neighbours(ctx context.Context, st *scenario.NeighboursStep) error {
	phase := "baseline"
	if len(st.Backup) > 0 {
		phase = "beside backups"
	}
	grp, gctx := errgroup.WithContext(ctx)
	for _, name := range st.TPCC {
		in, err := e.instance(name)
		if err != nil {
			return err
		}
		grp.Go(func() error {
			return e.tpccRun(gctx, e.quiet(), in, []int{st.VUs}, st.RampUp, st.Duration, st.Mode, "tpcc", phase)
		})
	}
	for _, name := range st.Backup {
		in, err := e.instance(name)
		if err != nil {
			return err
		}
		grp.Go(func() error {
			if err := sleepUntil(gctx, time.Now().Add(st.RampUp)); err != nil {
				return err
			}
			return e.backupRun(gctx, e.quiet(), in, st.Target, st.Cycles, st.Interval, st.Logical)
		})
	}
	e.g.progressf("%s: TPC-C with %d VUs on %s%s; %s ramp-up, %s measured\n", phase, st.VUs, strings.Join(st.TPCC, ", "),
		backupText(st), st.RampUp, st.Duration)
	if err := grp.Wait(); err != nil {
		return err
	}
	return e.printNeighbours(ctx, st.TPCC)
}

func backupText(st *scenario.NeighboursStep) string {
	if len(st.Backup) == 0 {
		return ""
	}
	return fmt.Sprintf(", %d backup cycles every %s on %s", st.Cycles, st.Interval, strings.Join(st.Backup, ", "))
}

// printNeighbours prints each TPC-C instance's result of a side-by-side
// step, from the store.
func (e *scenarioExec) printNeighbours(ctx context.Context, names []string) error {
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
		if m, ok := tpccMetrics(steps[len(steps)-1]); ok {
			fmt.Fprintf(e.g.Stdout, "%-12s %3.0f VUs  %8.0f TPM  %8.0f NOPM  NO p95 %.2f ms\n", name, m.VUs, m.TPM, m.NOPM, m.Txn["new_order"].P95Ms)
		}
	}
	return nil
}

// Check runs the consistency conditions on each instance and keeps the
// result with the instance's latest TPC-C run. A failure is reported at the
// end; the scenario goes on to its report.
func (e *scenarioExec) Check(ctx context.Context, st *scenario.CheckStep) error {
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
		fmt.Fprintf(e.g.Stdout, "consistency of %s:\n", name)
		printCheckResult(e.g.Stdout, c)
		if !c.OK {
			e.failedChecks++
		}
		if run := e.lastRun[name]; run != "" {
			if err := storeCheck(ctx, e.results, run, c); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *scenarioExec) Report(ctx context.Context, st *scenario.ReportStep) error {
	w, err := runReport(ctx, &Globals{Stdout: io.Discard, Stderr: e.g.Stderr}, ReportOptions{Results: e.results, Group: e.group, Out: st.Out})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.g.Stdout, "report: %s\n", w.HTML)
	return nil
}

// Stop stops a server's running instances and removes their own cgroups
// (the tier's shared I/O budget stays for the others on it). A later step
// that needs the server starts it again, as StartServers does.
func (e *scenarioExec) Stop(ctx context.Context, st *scenario.StopStep) error {
	for _, name := range st.Instances {
		in, ok := e.instances[name]
		if !ok || !in.started {
			continue
		}
		if err := stopInstance(ctx, in); err != nil {
			return err
		}
		e.g.progressf("server %s: stopped\n", name)
	}
	return nil
}

// stopInstance stops the instance when it runs and removes its own cgroups
// (not the tier's shared I/O group).
func stopInstance(ctx context.Context, in *instance) error {
	var errs []error
	if in.started {
		if _, err := server.Stop(ctx, in.dataDir, "fast"); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", in.name, err))
		} else {
			in.started = false
		}
	}
	if err := server.RemoveLimits(in.dataDir); err != nil && !errors.Is(err, cgroup.ErrNotFound) {
		errs = append(errs, fmt.Errorf("server %s: %w", in.name, err))
	}
	return errors.Join(errs...)
}

// Cleanup stops the servers the scenario started, lifts their limits (the
// servers' cgroups, then the tiers' shared ones) and removes its loop images
// (the data on them goes too). Data directories on real targets stay, so a
// later run can reuse their schema.
func (e *scenarioExec) Cleanup(ctx context.Context) error {
	var errs []error
	for _, in := range e.instances {
		if err := stopInstance(ctx, in); err != nil {
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
