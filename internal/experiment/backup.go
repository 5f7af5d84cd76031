package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/internal/backup"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/units"
)

// BackupConfig is a backup run: Cycles backups of the database at DSN into
// Target, each restored and checked.
type BackupConfig struct {
	Record
	DSN     string
	Target  string        // a directory on the storage under test (tierbench's own, or empty)
	Cycles  int           // at least 1
	Spacing time.Duration // from one cycle's start to the next's (0: back to back)
	Logical bool          // the engine's logical dump and restore (pg_dump/pg_restore, tierbench-dump/-load) instead of a physical backup and a restored server
	Jobs    int           // parallel jobs of a logical backup and restore
	DataDir string        // the source's managed data directory ("": found from the server)
	PgBin   string        // PostgreSQL's backup tools' directory ("": beside the server's, else PATH); PostgreSQL only
	Keep    bool          // keep the backups (restored copies are always removed)
	Verify  bool          // check each restored database: consistency and row counts
	IOGroup string        // the emulated tier's I/O group whose share CgroupProcs are ("": none)
	IONote  string        // why a throttled tier's phases run in no group, or what escapes it
	// MemoryMax is the memory cap of the group the phases run in (0: none).
	MemoryMax   int64
	CgroupProcs []string // every phase's processes start in these cgroups
	// StartAt is when the first cycle starts (zero: once the run is set
	// up); one already past starts at once, with a note.
	StartAt time.Time
	// Repeat runs the cycles that many times over (1 to repeat.MaxRepeat): Cycles ×
	// Repeat cycles, numbered on from 1 and spaced as the cycles are. A
	// cycle is already one repetition of the measurement, a backup then
	// its restore, so there is nothing to interleave or run back to back.
	Repeat int
}

// BackupCycle is one cycle of `backup run --json`.
type BackupCycle struct {
	Cycle   int                 `json:"cycle"`
	Backup  *stored.PhaseResult `json:"backup,omitempty"`
	Restore *stored.PhaseResult `json:"restore,omitempty"`
}

// BackupResult is a backup run's document.
type BackupResult struct {
	RunID  string        `json:"run_id"`
	Status string        `json:"status"`
	Repeat int           `json:"repeat"`
	Cycles []BackupCycle `json:"cycles"`
	// Stats is each phase kind's figures over every cycle that finished
	// (stored.SummarizePhases), less the noisy phases Discarded counts when the
	// run discards them.
	Stats     stored.PhaseStats `json:"stats"`
	Discarded int               `json:"discarded_noisy,omitempty"`
}

// NewBackupConfig is a backup run as a user gets it unless told
// otherwise: 3 physical cycles back to back, once, each restored copy
// verified, a logical dump's jobs one per core, recorded as DefaultRecord.
// Its DSN and Target are to be given.
func NewBackupConfig() BackupConfig {
	return BackupConfig{Record: DefaultRecord(), Cycles: 3, Jobs: runtime.NumCPU(), Verify: true, Repeat: 1}
}

// Validate reports every problem of the config at once, each a *Problem
// naming its field: dsn, target, cycles, interval (the cycles' spacing),
// jobs, start_at, repeat and the Record's.
func (c BackupConfig) Validate() error {
	var ps problems
	dsn(&ps, c.DSN)
	c.Record.validate(&ps)
	if strings.TrimSpace(c.Target) == "" {
		ps.missing("target", "is empty; name a directory on the storage to test, where tierbench writes the backups")
	} else if fi, err := os.Stat(c.Target); err == nil && !fi.IsDir() {
		ps.add("target", c.Target, "is a file; give a new or empty directory for the backups")
	}
	ps.intRange("cycles", c.Cycles, 1, MaxBackupCycles, "cycles")
	if c.Spacing < 0 {
		ps.add("interval", c.Spacing, "is negative; give 0s (back to back) or more")
	}
	ps.intRange("jobs", c.Jobs, 1, MaxBackupJobs, "jobs")
	if !c.StartAt.IsZero() {
		if wait := time.Until(c.StartAt); wait > 24*time.Hour {
			ps.add("start_at", Verbatim(c.StartAt.Format(time.RFC3339Nano)), "is %s away; give a time within a day (is this host's clock or the time zone off?)",
				wait.Round(time.Minute))
		}
	}
	repetitions(&ps, c.Repeat)
	c.validatePgBin(&ps)
	return ps.err()
}

// validatePgBin checks a given PgBin: PostgreSQL's tools, for a PostgreSQL
// DSN, holding the tools the method needs (without it, they are looked for
// when the run starts).
func (c BackupConfig) validatePgBin(ps *problems) {
	if c.PgBin == "" {
		return
	}
	if name, err := all.NameOf(c.DSN); err == nil && name != server.EnginePostgres {
		ps.add("pg_bin", Verbatim(c.PgBin), "names the directory of PostgreSQL's backup tools, and {dsn} is a %s server's, whose backup does not use them; leave it out",
			all.Display(name))
		return
	}
	tools := []string{backup.MethodBasebackup}
	if c.Logical {
		tools = []string{backup.MethodDump, backup.MethodRestore}
	}
	const install = "install the PostgreSQL client tools (apt-get install postgresql-client) and leave it out, or give the directory that holds them"
	if fi, err := os.Stat(c.PgBin); err != nil || !fi.IsDir() {
		ps.add("pg_bin", Verbatim(c.PgBin), "is not a directory holding %s; %s", strings.Join(tools, " and "), install)
		return
	}
	for _, t := range tools {
		fi, err := os.Stat(filepath.Join(c.PgBin, t))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			ps.add("pg_bin", Verbatim(c.PgBin), "has no %s; %s", t, install)
			return
		}
	}
}

// RunBackup times backup and restore cycles and records them. The result
// is returned whenever the run was recorded, with the phases that finished.
func RunBackup(ctx context.Context, cfg BackupConfig, obs Observer) (*BackupResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	obs = serial(obs) // telemetry samples come from their own goroutine
	db, err := Open(ctx, cfg.DSN)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	warehouses := 0
	if runner, ok := db.(engine.Runner); ok {
		schema, err := runner.Schema(ctx)
		switch {
		case err == nil:
			warehouses = schema.Warehouses
		case cfg.Verify:
			// Verification is TPC-C's: without a schema there is nothing to check.
			return nil, fmt.Errorf("%w (or give --verify=false to back up any database unchecked)", err)
		}
	}
	dataDir, err := sourceDataDir(ctx, db, cfg.DSN, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	name, _ := all.NameOf(cfg.DSN)     // Open took it
	if cfg.Telemetry.Workload == nil { // its restored copies' servers are the run's own
		cfg.Telemetry.Workload = &telemetry.Workload{}
	}
	bo := backup.Options{DSN: cfg.DSN, Engine: name, DataDir: dataDir, Target: cfg.Target, Logical: cfg.Logical, Jobs: cfg.Jobs,
		PgBin: cfg.PgBin, CgroupProcs: cfg.CgroupProcs, Workload: cfg.Telemetry.Workload}
	if dataDir == "" && !cfg.Logical {
		return nil, invalidf("a physical backup and restore (%s) needs the source to be a %s server tierbench manages on this host: give its --datadir, or use --logical",
			bo.Method(), all.Display(name))
	}
	if err := bo.Check(); err != nil {
		return nil, ServerError(err)
	}
	if err := backup.Prepare(cfg.Target); err != nil {
		if errors.Is(err, backup.ErrRefused) {
			return nil, Invalid(err)
		}
		return nil, err
	}
	defer func() {
		if err := backup.Cleanup(context.WithoutCancel(ctx), cfg.Target, cfg.Keep); err != nil {
			obs.Note(fmt.Sprintf("cleaning up %s: %v", cfg.Target, err))
		}
	}()
	params := &stored.BackupParams{DSN: engine.Redact(cfg.DSN), Engine: name, Warehouses: warehouses, Target: cfg.Target,
		DataDir: dataDir, Cycles: cfg.Cycles, Repeat: cfg.Repeat, Spacing: cfg.Spacing.String(), Method: bo.Method(), Verify: cfg.Verify, Keep: cfg.Keep,
		IOGroup: cfg.IOGroup, IONote: cfg.IONote, MemoryMax: cfg.MemoryMax, Placement: cfg.Placement, Noisy: cfg.Noisy}
	if cfg.Logical {
		params.Jobs = cfg.Jobs
	}
	rec, err := start(ctx, begin{Record: cfg.Record, kind: stored.KindBackup, params: params, target: cfg.Target, db: db, dsn: cfg.DSN, engineName: name}, obs)
	if err != nil {
		return nil, err
	}
	c := &backupCycles{cfg: cfg, bo: bo, rec: rec, obs: obs,
		out: &BackupResult{RunID: rec.run.ID, Status: results.StatusComplete, Repeat: cfg.Repeat, Cycles: []BackupCycle{}}}
	runErr := c.run(ctx)
	out := c.out
	var phases []*stored.PhaseResult
	for _, cy := range out.Cycles {
		for _, p := range []*stored.PhaseResult{cy.Backup, cy.Restore} {
			if p != nil {
				phases = append(phases, p)
			}
		}
	}
	out.Stats, out.Discarded = stored.SummarizePhases(phases, c.cfg.Noisy.Discard)
	switch {
	case ctx.Err() != nil:
		out.Status, runErr = results.StatusInterrupted, nil
	case runErr != nil:
		out.Status = results.StatusFailed
	}
	return out, rec.finish(ctx, end{status: out.Status, out: out, runErr: runErr,
		kept: units.Plural(c.phases, "finished phase", "finished phases"), done: units.Plural(c.phases, "phase", "phases")})
}

// backupCycles is a backup run's loop.
type backupCycles struct {
	cfg    BackupConfig
	bo     backup.Options
	rec    *recording
	obs    Observer
	out    *BackupResult
	phases int
	// before and after are the source's row counts before and after the
	// cycle's backup, which the restored copy must lie between.
	before, after backup.Counts
	label         atomic.Value // the running phase's name, for progress
}

func (c *backupCycles) run(ctx context.Context) error {
	cfg := c.cfg
	if cfg.Verify {
		c.bo.Verify = func(ctx context.Context, dsn string) error {
			c.label.Store("verify") // the restore's timing ended
			return verifyRestored(ctx, dsn, c.before, c.after)
		}
	}
	var first time.Time // cycle 1's backup start: the schedule's origin
	for cycle := 1; cycle <= c.total() && ctx.Err() == nil; cycle++ {
		c.rec.tele.setStep(results.NoStep)
		var err error
		if cfg.Verify {
			if c.before, err = backup.CountTPCC(ctx, cfg.DSN); err != nil {
				return err
			}
		}
		if cycle > 1 && cfg.Spacing > 0 {
			at := first.Add(time.Duration(cycle-1) * cfg.Spacing)
			if late := time.Since(at); late > 0 {
				c.obs.Note(fmt.Sprintf("cycle %d starts %s after its time: the cycles take longer than the spacing of %s",
					cycle, late.Round(time.Second), cfg.Spacing))
			}
			if err := SleepUntil(ctx, at); err != nil {
				return err
			}
		}
		if cycle == 1 {
			if !cfg.StartAt.IsZero() {
				if late := time.Since(cfg.StartAt); late > 0 {
					c.obs.Note(fmt.Sprintf("the first cycle starts %s after its time (--start-at): the run took that long to set up",
						late.Round(time.Millisecond)))
				}
				if err := SleepUntil(ctx, cfg.StartAt); err != nil {
					return err
				}
			}
			first = time.Now()
		}
		index := 2 * (cycle - 1)
		c.rec.tele.setStep(index)
		stop := c.progress(cycle, stored.PhaseBackup)
		ph, dir, err := backup.Backup(ctx, c.bo, cycle)
		stop()
		if err != nil {
			return err
		}
		c.record(ctx, ph, index)
		c.rec.tele.setStep(results.NoStep)
		if cfg.Verify {
			if c.after, err = backup.CountTPCC(ctx, cfg.DSN); err != nil {
				return err
			}
		}

		c.rec.tele.setStep(index + 1)
		stop = c.progress(cycle, stored.PhaseRestore)
		ph, err = backup.Restore(ctx, c.bo, cycle, dir)
		stop()
		c.rec.tele.setStep(results.NoStep)
		if ph.Seconds > 0 { // timed to its end, even if verification then failed
			c.record(ctx, ph, index+1)
		}
		if !cfg.Keep {
			os.RemoveAll(dir) // the next cycle must not find the space taken
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// total is the run's number of cycles: Cycles, Repeat times over.
func (c *backupCycles) total() int { return c.cfg.Cycles * c.cfg.Repeat }

// progress tells the observer of the running phase once a second until the
// returned stop is called.
func (c *backupCycles) progress(cycle int, phase string) (stop func()) {
	c.label.Store(phase)
	start := time.Now()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			c.obs.Progress(Progress{Telemetry: c.rec.tele.latest(), Phase: &PhaseProgress{Cycle: cycle, Cycles: c.total(),
				Phase: c.label.Load().(string), Elapsed: time.Since(start)}})
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// record adds a phase, with the telemetry of its interval, to the result
// and the store.
func (c *backupCycles) record(ctx context.Context, ph stored.Phase, index int) {
	out := c.out
	if n := len(out.Cycles); n == 0 || out.Cycles[n-1].Cycle != ph.Cycle {
		out.Cycles = append(out.Cycles, BackupCycle{Cycle: ph.Cycle})
	}
	cy := &out.Cycles[len(out.Cycles)-1]
	m := &stored.PhaseResult{Phase: ph}
	every := c.cfg.Telemetry.Interval
	a := c.rec.tele.summarize(ph.Started, ph.Ended)
	// A phase shorter than a sampling interval, or one during which a
	// busy host delayed the sampler: the samples nearest to it, once
	// taken, looking up to four intervals around it.
	for i := time.Duration(1); a != nil && a.Samples == 0 && i <= 4 && ctx.Err() == nil; i++ {
		_ = SleepUntil(ctx, ph.Ended.Add(i*every+every/4))
		a = c.rec.tele.summarize(ph.Started.Add(-i*every/2), ph.Ended.Add(i*every/2))
	}
	if a != nil {
		m.Host, m.Device, m.Hosts = a.Host, a.Device, a.Hosts
		m.Noisy = judgeNoisy(c.cfg.Noisy, a)
	}
	if ph.Phase == stored.PhaseBackup {
		cy.Backup = m
	} else {
		cy.Restore = m
	}
	c.phases++
	if doc, err := json.Marshal(m); err != nil { // stored first, then told
		c.rec.keep(err)
	} else {
		c.rec.addStep(ctx, results.Step{Index: index, Name: fmt.Sprintf("%s %d", m.Phase.Phase, m.Cycle),
			StartedAt: m.Started, MeasureStart: m.Started, MeasureEnd: m.Ended, Metrics: doc})
	}
	c.obs.Result(Result{Phase: m})
}

// sourceDataDir is the managed data directory of the server behind db: the
// one given (which must be that server's), else the server's own when it
// runs on this host under tierbench's management, else "".
func sourceDataDir(ctx context.Context, db engine.DB, dsn, given string) (string, error) {
	var dir string
	var pid int
	if sr, ok := db.(engine.StatsReader); ok {
		if d, p, err := sr.ServerInfo(ctx); err == nil {
			dir, pid = d, p
		}
	}
	if given == "" {
		if dir == "" || pid == 0 {
			return "", nil // not on this host, or it will not say
		}
		st, err := server.Status(ctx, dir)
		if err != nil || !st.Running || st.PID != pid {
			return "", nil // not one of tierbench's
		}
		return st.DataDir, nil
	}
	st, err := server.Status(ctx, given)
	if err != nil {
		return "", ServerError(err)
	}
	if !st.Running {
		return "", invalidf("--datadir %s: its server is not running; start it (tierbench server start --datadir %s)", given, given)
	}
	same := st.PID == pid
	if pid == 0 { // the server would not say where it runs: compare ports
		same = st.Port == dsnPort(dsn)
	}
	if !same {
		return "", invalidf("--datadir %s is the managed server on port %d, not the server --dsn names (%s)", given, st.Port, engine.Redact(dsn))
	}
	return st.DataDir, nil
}

// dsnPort is the port a URL DSN names (its engine's default when none).
func dsnPort(dsn string) int {
	u, err := url.Parse(dsn)
	if err != nil {
		return 0
	}
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		return n
	}
	name, _ := all.NameOf(dsn)
	e, _ := all.Lookup(name)
	return e.DefaultPort
}

// verifyRestored checks a restored TPC-C database: the consistency
// conditions of 3.3.2 and the cardinalities hold, and its row counts are
// the source's (see backup.CompareCounts).
func verifyRestored(ctx context.Context, dsn string, before, after backup.Counts) error {
	db, err := all.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := db.CheckTPCC(ctx, engine.CheckOptions{Seed: 1})
	if err != nil {
		return err
	}
	if !res.OK {
		return fmt.Errorf("consistency check failed: %s", CheckFailures(res))
	}
	counts, err := backup.CountTPCC(ctx, dsn)
	if err != nil {
		return err
	}
	return backup.CompareCounts(counts, before, after)
}

// ServerError makes a data directory that cannot be used as asked bad input;
// anything else stays a failure.
func ServerError(err error) error {
	var de *server.DataDirError
	if errors.As(err, &de) {
		return Invalid(err)
	}
	return err
}
