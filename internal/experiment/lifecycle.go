package experiment

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/inventory"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/version"
)

// recording is one run's life in the results store, the same for every kind
// of run: created with its parameters and environment, fed steps and
// per-second series while telemetry samples, and finished with a status.
// A step is stored as soon as it ends, its series first, so an interrupted
// or killed run keeps both; a run killed outright stays "running" in the
// store, which shows it as such.
type recording struct {
	store    *results.Store
	run      results.Run
	series   *results.SeriesWriter
	tele     *telemetryRun
	obs      Observer
	storeErr error // the first failure to store a step or series
}

// begin is what a run records before it starts.
type begin struct {
	Record
	kind   string
	params any
	// target is the path whose devices telemetry samples and the inventory
	// describes ("": the database's data directory, when it runs here).
	target string
	db     engine.DB // the database (nil: none)
	dsn    string    // its DSN: whether it runs on this host

	// engineName and fioVersion go into the environment.
	engineName, fioVersion string
}

// start opens the store, records the run and its environment, and starts
// the series writer and telemetry. On error nothing is left open.
func start(ctx context.Context, b begin, obs Observer) (*recording, error) {
	if err := b.Telemetry.check(); err != nil {
		return nil, err
	}
	store, err := results.Open(b.Results)
	if err != nil {
		return nil, fmt.Errorf("opening the results store: %w", err)
	}
	run, err := store.CreateRunAs(ctx, b.RunID, b.kind, b.Group, b.params)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("recording the run: %w", err)
	}
	r := &recording{store: store, run: run, obs: obs}
	fail := func(err error) (*recording, error) {
		_ = store.FinishRun(context.WithoutCancel(ctx), run.ID, results.StatusFailed, nil)
		store.Close()
		return nil, err
	}
	target, pid, unseen := localTarget(ctx, b.target, b.db, b.dsn)
	env, notes := inventory.Collect(ctx, inventory.Options{Target: target, DB: b.db, Engine: b.engineName,
		TierbenchVersion: version.Version, FioVersion: b.fioVersion})
	for _, n := range notes {
		obs.Note(n)
	}
	if err := store.SetDocument(ctx, run.ID, results.DocEnvironment, env); err != nil {
		return fail(fmt.Errorf("recording the run's environment: %w", err))
	}
	r.series = store.NewSeriesWriter(run.ID, time.Second)
	if r.tele, err = startTelemetry(ctx, b.Telemetry, target, pid, unseen, b.db, r.series, obs); err != nil {
		_ = r.series.Close(context.WithoutCancel(ctx))
		return fail(err)
	}
	st := Started{RunID: run.ID, Kind: b.kind, StorePath: store.Path(), Params: b.params}
	if r.tele != nil {
		st.Resolution = r.tele.session.Resolution()
	}
	obs.Started(st)
	return r, nil
}

// addStep stores a finished step, the series sampled so far first. A
// failure is kept for the run's end; the run goes on.
func (r *recording) addStep(ctx context.Context, st results.Step) {
	bg := context.WithoutCancel(ctx)
	_ = r.series.Flush(bg) // a failed flush keeps its points for the next one; Close reports it
	st.RunID = r.run.ID
	r.keep(r.store.AddStep(bg, st))
}

func (r *recording) keep(err error) {
	if err != nil && r.storeErr == nil {
		r.storeErr = err
	}
}

// end is how a run ended.
type end struct {
	status string
	out    any    // the run's document, kept as its summary
	kept   string // what an interrupted run keeps, e.g. "2 finished steps" ("": being stopped is its normal end)
	done   string // what a failed run finished, e.g. "2 steps"
	runErr error
}

// finish stops telemetry, stores the last series and the run's status and
// summary, and closes the store. Its error says, in this order, that the
// run was interrupted (*Interrupted), that it failed, or that the store
// failed.
func (r *recording) finish(ctx context.Context, e end) error {
	bg := context.WithoutCancel(ctx)
	r.tele.stop()
	r.keep(r.series.Close(bg))
	r.keep(r.store.FinishRun(bg, r.run.ID, e.status, e.out))
	r.store.Close()
	switch {
	case e.status == results.StatusInterrupted && e.kept != "":
		return &Interrupted{RunID: r.run.ID, Kept: e.kept}
	case e.runErr != nil:
		return fmt.Errorf("run %s failed after %s: %w", r.run.ID, e.done, e.runErr)
	case r.storeErr != nil:
		return fmt.Errorf("run %s finished but the results store failed: %w", r.run.ID, r.storeErr)
	}
	return nil
}

// telemetryRun ties a telemetry session to a run: every sample goes to the
// run's series, tagged with the step running when it was taken.
type telemetryRun struct {
	session *telemetry.Session
	step    atomic.Int64
}

// startTelemetry starts sampling for a run (nil when the interval is 0).
// target is the path whose devices to sample ("" for none), pid the local
// server's main process (0: none; unseen: it runs here but cannot be
// seen), db the database whose internals to
// sample (nil for none). What cannot be sampled is a note; the run goes on.
func startTelemetry(ctx context.Context, t Telemetry, target string, pid int, unseen bool, db engine.DB,
	series *results.SeriesWriter, obs Observer) (*telemetryRun, error) {
	if t.Interval == 0 {
		return nil, nil
	}
	tr := &telemetryRun{}
	cfg := telemetry.Config{
		Interval: t.Interval, Target: target, ServerPID: pid, ServerUnseen: unseen, Workload: t.Workload,
		BlockTrace: t.BlockTrace, Nodes: t.Nodes,
		Warn: func(msg string) { obs.Note("telemetry: " + msg) },
	}
	if sr, ok := db.(engine.StatsReader); ok {
		cfg.DB = sr
	}
	cfg.OnSample = func(x telemetry.Sample) {
		step := int(tr.step.Load())
		for name, v := range x.Values() {
			series.Add(results.Point{Name: name, Step: step, T: x.T, Value: v})
		}
		obs.Progress(Progress{Telemetry: &x})
	}
	s, err := telemetry.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	tr.session = s
	return tr, nil
}

// check refuses node_exporter hosts without sampling, and malformed or
// twice-named ones.
func (t Telemetry) check() error {
	if len(t.Nodes) == 0 {
		return nil
	}
	if t.Interval <= 0 {
		return invalidf("node_exporter hosts (%s) need telemetry sampling, but its interval is 0; give one such as 1s", t.Nodes[0].Name)
	}
	if err := telemetry.CheckNodes(t.Nodes); err != nil {
		return invalidf("%v", err)
	}
	return nil
}

// nodeStatsByHost is the node_exporter figures of a's hosts by host name
// (nil for a nil a), for documents that merge them with figures of their
// own per host (a disk point's hosts).
func nodeStatsByHost(a *stored.Aggregate) map[string]*stored.NodeStats {
	if a == nil || len(a.Hosts) == 0 {
		return nil
	}
	out := make(map[string]*stored.NodeStats, len(a.Hosts))
	for i := range a.Hosts {
		out[a.Hosts[i].Host] = &a.Hosts[i].NodeStats
	}
	return out
}

// setStep tags later samples with step (nil-safe).
func (t *telemetryRun) setStep(step int) {
	if t != nil {
		t.step.Store(int64(step))
	}
}

// summarize aggregates the samples of [from, to] (nil-safe).
func (t *telemetryRun) summarize(from, to time.Time) *stored.Aggregate {
	if t == nil {
		return nil
	}
	a := telemetry.Summarize(t.session.Samples(from, to))
	return &a
}

// latest is the last sample taken (nil-safe; nil when none yet).
func (t *telemetryRun) latest() *telemetry.Sample {
	if t == nil {
		return nil
	}
	x, ok := t.session.Latest()
	if !ok {
		return nil
	}
	return &x
}

// stop ends sampling (nil-safe).
func (t *telemetryRun) stop() {
	if t != nil {
		t.session.Stop()
	}
}

// localTarget returns the path a run's telemetry and inventory look at:
// target when given, else the data directory of the database server when
// it runs on this host; the server's main process when it does (0
// otherwise); and whether it runs here unseen (its process not known), when
// its CPU cannot be told from other processes'.
func localTarget(ctx context.Context, target string, db engine.DB, dsn string) (string, int, bool) {
	if db == nil || !onThisHost(ctx, dsn) {
		return target, 0, false
	}
	sr, ok := db.(engine.StatsReader)
	if !ok {
		return target, 0, true
	}
	dataDir, pid, err := sr.ServerInfo(ctx)
	if err != nil || pid <= 0 {
		return target, 0, true
	}
	if target == "" && dataDir != "" {
		if _, err := os.Stat(dataDir); err == nil {
			target = dataDir
		}
	}
	return target, pid, false
}

// SleepUntil waits for t or ctx, whichever comes first.
func SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// onThisHost says whether a DSN's server may run on this machine: no host
// (a Unix socket), a loopback address, or an address of this machine's. A
// server on another host has a data directory and PIDs that mean nothing
// here, even when a path or a PID of the same name exists.
func onThisHost(ctx context.Context, dsn string) bool {
	u, err := url.Parse(dsn)
	if dsn == "" || err != nil {
		return true
	}
	h := u.Hostname()
	if h == "" || h == "localhost" || strings.HasPrefix(h, "/") {
		return true
	}
	var ips []net.IP
	if ip := net.ParseIP(h); ip != nil {
		ips = []net.IP{ip}
	} else {
		if me, _ := os.Hostname(); strings.EqualFold(h, me) {
			return true
		}
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, h)
		if err != nil {
			return false
		}
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	own, _ := net.InterfaceAddrs()
	for _, ip := range ips {
		if ip.IsLoopback() {
			return true
		}
		for _, a := range own {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return true
			}
		}
	}
	return false
}
