package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/backup"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/units"
)

func newBackupCommand(g *Globals) *cobra.Command {
	cmd := newGroupCommand("backup", "Back up and restore a database on the storage under test, timing each phase")
	cmd.AddCommand(newBackupRunCommand(g))
	return cmd
}

// BackupRunOptions are the flags of `backup run`.
type BackupRunOptions struct {
	dsnOption
	Target   string
	Cycles   int
	Interval string // between cycle starts (telemetry's sampling interval is --sample-interval here)
	Logical  bool
	Jobs     int
	Results  string
	DataDir  string
	PgBin    string
	Keep     bool
	Verify   bool
	telemetryOptions
	scenarioRun // set by a scenario, not by flags
	// ioGroup is the emulated tier's I/O group (its budget) whose share
	// scenarioRun.cgroupProcs are, which every phase runs in; ioNote says
	// why a throttled tier's phases run in none, or what escapes the group
	// (v1's writeback). Set by a scenario.
	ioGroup, ioNote string
	// memoryMax is the memory cap of the group every phase runs in (the
	// instance's own; 0: none). Set by a scenario.
	memoryMax int64
}

// AddFlags registers the options' flags.
func (o *BackupRunOptions) AddFlags(fs *pflag.FlagSet) {
	o.addFlag(fs)
	fs.StringVar(&o.Target, "target", "", "directory on the storage under test for the backups (created by tierbench, or an empty one)")
	fs.IntVar(&o.Cycles, "cycles", 3, "backup and restore cycles")
	fs.StringVar(&o.Interval, "interval", "0s", "time from one cycle's start to the next's (0: back to back), e.g. 100s")
	fs.BoolVar(&o.Logical, "logical", false, "pg_dump -Fd -j / pg_restore -j into a new database, instead of pg_basebackup and a restored server")
	fs.IntVar(&o.Jobs, "jobs", runtime.NumCPU(), "parallel jobs of pg_dump and pg_restore (--logical)")
	fs.StringVar(&o.Results, "results", defaultResultsDir, "results store directory")
	fs.StringVar(&o.DataDir, "datadir", "", "the source's managed data directory (default: found from the server, when tierbench manages it on this host)")
	fs.StringVar(&o.PgBin, "pg-bin", "", "directory of pg_basebackup, pg_dump and pg_restore (default: beside the server's binaries, else PATH)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the backups in --target (restored copies are always removed)")
	fs.BoolVar(&o.Verify, "verify", true, "check each restored database: TPC-C consistency conditions and row counts equal to the source's")
	// telemetryOptions' own --interval is this command's cycle spacing (the
	// white paper's "a backup every 100 s"), so sampling has its own name.
	fs.StringVar(&o.telemetryOptions.Interval, "sample-interval", "1s", "telemetry sampling interval (0: no telemetry)")
	fs.BoolVar(&o.BlockTrace, "block-trace", true, "device latency percentiles from block tracepoints, where the kernel allows it")
}

// backupPlan is a validated `backup run`.
type backupPlan struct {
	interval time.Duration // between cycle starts
	every    time.Duration // telemetry sampling
}

func (o *BackupRunOptions) validate() (backupPlan, error) {
	var p backupPlan
	if strings.TrimSpace(o.Target) == "" {
		return p, usagef("no --target given; name a directory on the storage to test, where tierbench writes the backups")
	}
	if o.Cycles < 1 || o.Cycles > 1000 {
		return p, usagef("--cycles must be between 1 and 1000 (got %d)", o.Cycles)
	}
	var err error
	if p.interval, err = units.ParseDuration(o.Interval); err != nil {
		return p, usagef("--interval: %v", err)
	}
	if p.interval < 0 {
		return p, usagef("--interval %s is negative", o.Interval)
	}
	if o.Jobs < 1 || o.Jobs > 256 {
		return p, usagef("--jobs must be between 1 and 256 (got %d)", o.Jobs)
	}
	if p.every, err = units.ParseDuration(o.telemetryOptions.Interval); err != nil {
		return p, usagef("--sample-interval: %v", err)
	}
	if p.every != 0 && p.every < 100*time.Millisecond {
		return p, usagef("--sample-interval %s is too short; give at least 100ms (or 0 for no telemetry)", o.telemetryOptions.Interval)
	}
	if fi, err := os.Stat(o.Target); err == nil && !fi.IsDir() {
		return p, usagef("--target %s is a file; give a new or empty directory for the backups", o.Target)
	}
	if err := checkResultsDir(o.Results); err != nil {
		return p, err
	}
	return p, o.checkPgBin()
}

// checkPgBin makes sure a given --pg-bin holds the tools the method needs,
// before anything connects (without it, they are looked for later).
func (o *BackupRunOptions) checkPgBin() error {
	if o.PgBin == "" {
		return nil
	}
	tools := []string{backup.MethodBasebackup}
	if o.Logical {
		tools = []string{backup.MethodDump, backup.MethodRestore}
	}
	const install = "install the PostgreSQL client tools (apt-get install postgresql-client) and leave --pg-bin out, or give the directory that holds them"
	if fi, err := os.Stat(o.PgBin); err != nil || !fi.IsDir() {
		return usagef("--pg-bin %s is not a directory holding %s; %s", o.PgBin, strings.Join(tools, " and "), install)
	}
	for _, t := range tools {
		fi, err := os.Stat(filepath.Join(o.PgBin, t))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return usagef("--pg-bin %s has no %s; %s", o.PgBin, t, install)
		}
	}
	return nil
}

func newBackupRunCommand(g *Globals) *cobra.Command {
	var opts BackupRunOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Back up and restore the database N times: duration and MB/s per phase, with the storage's telemetry",
		Long: `Back up the database at --dsn into --target and restore it from there, --cycles times.

Physical (default): pg_basebackup -X stream -c fast into TARGET/cycle-N; the
restore copies it into TARGET/restore-N and starts it as a second managed
server (a free port) until it accepts connections. The source must be a server
tierbench manages on this host (--datadir, found from the server by default).
Logical (--logical): pg_dump -Fd -j into TARGET/cycle-N; the restore is
pg_restore -j into a new database on the source server.

Each restored database is checked (TPC-C consistency, row counts), then
removed; the backups too unless --keep. tierbench writes only into a target it
created, an empty directory, or one it prepared before.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := runBackupRun(cmd.Context(), g, opts)
			return err
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

// backupStepMetrics is a phase as the store keeps it (what the report's
// backupStep reads), with the telemetry of its timed interval.
type backupStepMetrics struct {
	backup.Phase
	Host   map[string]float64 `json:"host,omitempty"`
	Device map[string]float64 `json:"device,omitempty"`
}

type backupCycleOutput struct {
	Cycle   int                `json:"cycle"`
	Backup  *backupStepMetrics `json:"backup,omitempty"`
	Restore *backupStepMetrics `json:"restore,omitempty"`
}

// backupRunOutput is the JSON of `backup run`.
type backupRunOutput struct {
	RunID  string              `json:"run_id"`
	Status string              `json:"status"`
	Cycles []backupCycleOutput `json:"cycles"`
}

type backupRunParams struct {
	DSN        string `json:"dsn"`
	Engine     string `json:"engine"`
	Warehouses int    `json:"warehouses,omitempty"`
	Target     string `json:"target"`
	DataDir    string `json:"datadir,omitempty"`
	Cycles     int    `json:"cycles"`
	Interval   string `json:"interval"`
	Method     string `json:"method"`
	Jobs       int    `json:"jobs,omitempty"`
	Verify     bool   `json:"verify"`
	Keep       bool   `json:"keep"`
	// IOGroup is the I/O group every phase's processes ran in (an emulated
	// tier's budget: backup.Options.CgroupProcs); IONote why they ran in
	// none on a throttled tier, or what escaped the group.
	IOGroup string `json:"io_group,omitempty"`
	IONote  string `json:"io_note,omitempty"`
	// MemoryMax is the memory cap (bytes, page cache included) of the group
	// every phase's processes, the restored server's among them, ran in: the
	// source server's own cap.
	MemoryMax int64 `json:"memory_max_bytes,omitempty"`
	scenarioParams
}

func runBackupRun(ctx context.Context, g *Globals, opts BackupRunOptions) (*backupRunOutput, error) {
	plan, err := opts.validate()
	if err != nil {
		return nil, err
	}
	dsn, db, err := opts.open(ctx)
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
		case opts.Verify:
			// Verification is TPC-C's: without a schema there is nothing to check.
			return nil, fmt.Errorf("%w (or give --verify=false to back up any database unchecked)", err)
		}
	}
	dataDir, err := sourceDataDir(ctx, db, dsn, opts.DataDir)
	if err != nil {
		return nil, err
	}
	if dataDir == "" && !opts.Logical {
		return nil, usagef("a physical backup and restore (pg_basebackup) needs the source to be a server tierbench manages on this host: give its --datadir, or use --logical")
	}
	bo := backup.Options{DSN: dsn, DataDir: dataDir, Target: opts.Target, Logical: opts.Logical, Jobs: opts.Jobs, PgBin: opts.PgBin,
		CgroupProcs: opts.cgroupProcs}
	if err := bo.Check(); err != nil {
		return nil, serverError(err)
	}
	if err := backup.Prepare(opts.Target); err != nil {
		if errors.Is(err, backup.ErrRefused) {
			return nil, &UsageError{Msg: err.Error()}
		}
		return nil, err
	}
	defer func() {
		if err := backup.Cleanup(context.WithoutCancel(ctx), opts.Target, opts.Keep); err != nil {
			g.progressf("tierbench: cleaning up %s: %v\n", opts.Target, err)
		}
	}()

	store, err := results.Open(opts.Results)
	if err != nil {
		return nil, fmt.Errorf("opening the results store: %w", err)
	}
	defer store.Close()
	scheme, _ := engine.SchemeOf(dsn)
	params := backupRunParams{DSN: engine.Redact(dsn), Engine: scheme, Warehouses: warehouses, Target: opts.Target,
		DataDir: dataDir, Cycles: opts.Cycles, Interval: plan.interval.String(), Method: bo.Method(), Verify: opts.Verify, Keep: opts.Keep,
		IOGroup: opts.ioGroup, IONote: opts.ioNote, MemoryMax: opts.memoryMax, scenarioParams: opts.params()}
	if opts.Logical {
		params.Jobs = opts.Jobs
	}
	run, err := store.CreateRun(ctx, "backup", opts.group, params)
	if err != nil {
		return nil, fmt.Errorf("recording the run: %w", err)
	}
	if err := captureEnvironment(ctx, g, store, run.ID, opts.Target, db, scheme, ""); err != nil {
		return nil, fmt.Errorf("recording the run's environment: %w", err)
	}
	g.progressf("run %s: %d cycles of %s backup and restore into %s%s\n", run.ID, opts.Cycles, bo.Method(), opts.Target,
		map[bool]string{true: ", one every " + plan.interval.String(), false: ""}[plan.interval > 0])
	series := store.NewSeriesWriter(run.ID, time.Second)
	tele, err := startTelemetry(ctx, g, plan.every, opts.BlockTrace, opts.Target, db, series)
	if err != nil {
		return nil, err
	}

	// Verification: the restored database is consistent (3.3.2) and has the
	// source's rows, counted before and after its backup.
	var before, after backup.Counts
	var prog *phaseProgress
	if opts.Verify {
		bo.Verify = func(ctx context.Context, dsn string) error {
			prog.setLabel("verify") // the restore's timing ended
			return verifyRestored(ctx, dsn, before, after)
		}
	}
	out := &backupRunOutput{RunID: run.ID, Status: results.StatusComplete, Cycles: []backupCycleOutput{}}
	table := newBackupTable(g)
	bg := context.WithoutCancel(ctx)
	var runErr, storeErr error
	phases := 0
	record := func(ph backup.Phase, index int) {
		if n := len(out.Cycles); n == 0 || out.Cycles[n-1].Cycle != ph.Cycle {
			out.Cycles = append(out.Cycles, backupCycleOutput{Cycle: ph.Cycle})
		}
		c := &out.Cycles[len(out.Cycles)-1]
		m := &backupStepMetrics{Phase: ph}
		a := tele.summarize(ph.Started, ph.Ended)
		if a != nil && a.Samples == 0 {
			// A phase shorter than a sampling interval: the samples that
			// overlap it, once the last of them is taken.
			sleepUntil(ctx, ph.Ended.Add(plan.every+plan.every/4))
			a = tele.summarize(ph.Started.Add(-plan.every/2), ph.Ended.Add(plan.every/2))
		}
		if a != nil {
			m.Host, m.Device = a.Host, a.Device
		}
		if ph.Phase == backup.PhaseBackup {
			c.Backup = m
		} else {
			c.Restore = m
		}
		table.row(m)
		phases++
		if err := storeBackupStep(bg, store, run.ID, index, m); err != nil && storeErr == nil {
			storeErr = err
		}
	}
	var first time.Time // cycle 1's backup start: the schedule's origin
	for cycle := 1; cycle <= opts.Cycles && runErr == nil && ctx.Err() == nil; cycle++ {
		tele.setStep(results.NoStep)
		if opts.Verify {
			if before, runErr = backup.CountTPCC(ctx, dsn); runErr != nil {
				break
			}
		}
		if cycle > 1 && plan.interval > 0 {
			at := first.Add(time.Duration(cycle-1) * plan.interval)
			if late := time.Since(at); late > 0 {
				g.progressf("cycle %d starts %s after its time: the cycles take longer than --interval %s\n",
					cycle, late.Round(time.Second), plan.interval)
			}
			if runErr = sleepUntil(ctx, at); runErr != nil {
				break
			}
		}

		if cycle == 1 {
			first = time.Now()
		}
		index := 2 * (cycle - 1)
		tele.setStep(index)
		prog = table.running(cycle, opts.Cycles, backup.PhaseBackup, tele)
		ph, dir, err := backup.Backup(ctx, bo, cycle)
		prog.stop()
		if err != nil {
			runErr = err
			break
		}
		record(ph, index)
		tele.setStep(results.NoStep)
		if opts.Verify {
			if after, runErr = backup.CountTPCC(ctx, dsn); runErr != nil {
				break
			}
		}

		tele.setStep(index + 1)
		prog = table.running(cycle, opts.Cycles, backup.PhaseRestore, tele)
		ph, err = backup.Restore(ctx, bo, cycle, dir)
		prog.stop()
		tele.setStep(results.NoStep)
		if ph.Seconds > 0 { // timed to its end, even if verification then failed
			record(ph, index+1)
		}
		if !opts.Keep {
			os.RemoveAll(dir) // the next cycle must not find the space taken
		}
		runErr = err
	}
	tele.stop()
	if err := series.Close(bg); err != nil && storeErr == nil {
		storeErr = err
	}
	switch {
	case ctx.Err() != nil:
		out.Status, runErr = results.StatusInterrupted, nil
	case runErr != nil:
		out.Status = results.StatusFailed
	}
	return out, g.endRun(bg, runEnd{store: store, runID: run.ID, status: out.Status, out: out,
		summary: func() {
			fmt.Fprintf(g.Stdout, "run %s %s; stored in %s\n", run.ID, out.Status, store.Path())
		},
		kept: fmt.Sprintf("%d finished phases", phases), done: fmt.Sprintf("%d phases", phases),
		runErr: runErr, storeErr: storeErr})
}

// sourceDataDir is the managed data directory of the server behind db: the
// one given (which must be that server's), else the server's own when it
// runs on this host under tierbench's management, else "".
func sourceDataDir(ctx context.Context, db engine.DB, dsn, given string) (string, error) {
	var dir string
	var pid int
	if sr, ok := db.(engine.StatsReader); ok {
		if d, backend, err := sr.ServerInfo(ctx); err == nil {
			dir, pid = d, localServerPID(backend)
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
		return "", serverError(err)
	}
	if !st.Running {
		return "", usagef("--datadir %s: its server is not running; start it (tierbench server start --datadir %s)", given, given)
	}
	same := st.PID == pid
	if pid == 0 { // the server would not say where it runs: compare ports
		same = st.Port == dsnPort(dsn)
	}
	if !same {
		return "", usagef("--datadir %s is the managed server on port %d, not the server --dsn names (%s)", given, st.Port, engine.Redact(dsn))
	}
	return st.DataDir, nil
}

func dsnPort(dsn string) int {
	u, err := url.Parse(dsn)
	if err != nil {
		return 0
	}
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		return n
	}
	return 5432
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
		var bad []string
		for _, c := range res.Conditions {
			if !c.OK {
				bad = append(bad, fmt.Sprintf("%s (%d violations)", c.ID, c.Violations))
			}
		}
		for _, c := range res.Cardinalities {
			if !c.OK {
				bad = append(bad, fmt.Sprintf("%s has %d rows, want %d", c.Table, c.Found, c.Expected))
			}
		}
		return fmt.Errorf("consistency check failed: %s", strings.Join(bad, ", "))
	}
	counts, err := backup.CountTPCC(ctx, dsn)
	if err != nil {
		return err
	}
	return backup.CompareCounts(counts, before, after)
}

// sleepUntil waits for t or ctx, whichever comes first.
func sleepUntil(ctx context.Context, t time.Time) error {
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

func storeBackupStep(ctx context.Context, store *results.Store, runID string, index int, m *backupStepMetrics) error {
	doc, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return store.AddStep(ctx, results.Step{RunID: runID, Index: index, Name: fmt.Sprintf("%s %d", m.Phase.Phase, m.Cycle),
		StartedAt: m.Started, MeasureStart: m.Started, MeasureEnd: m.Ended, Metrics: doc})
}

// backupTable prints phases as they finish (not with --json) and, on
// stderr, the running phase with the devices' telemetry: redrawn in place on
// a terminal, every fifth second as a line otherwise.
type backupTable struct {
	out, progress io.Writer
	on, tty, head bool
}

func newBackupTable(g *Globals) *backupTable {
	return &backupTable{out: g.Stdout, progress: g.Stderr, on: !g.JSON, tty: isTerminal(g.Stderr)}
}

func (t *backupTable) row(m *backupStepMetrics) {
	if !t.on {
		return
	}
	if !t.head {
		fmt.Fprintf(t.out, "%5s  %-7s  %-13s  %9s  %10s  %8s  %15s  %15s  %8s\n",
			"cycle", "phase", "method", "seconds", "size", "MB/s", "dev r/w IOPS", "await r/w ms", "verified")
		t.head = true
	}
	iops, await := "-", "-"
	if d := m.Device; d != nil {
		iops = fmt.Sprintf("%.0f/%.0f", d["r_iops"], d["w_iops"])
		await = fmt.Sprintf("%.2f/%.2f", d["r_await_ms"], d["w_await_ms"])
	}
	verified := "-"
	if m.Phase.Phase == backup.PhaseRestore {
		verified = map[bool]string{true: "yes", false: "no"}[m.Verified]
	}
	fmt.Fprintf(t.out, "%5d  %-7s  %-13s  %9.2f  %10s  %8.1f  %15s  %15s  %8s\n",
		m.Cycle, m.Phase.Phase, m.Method, m.Seconds, units.FormatSize(m.Bytes), m.MBps, iops, await, verified)
}

// phaseProgress shows a running phase until stop.
type phaseProgress struct {
	label atomic.Value // string
	done  chan struct{}
	wg    chan struct{}
}

// setLabel renames what runs, e.g. "verify" once a restore is timed.
func (p *phaseProgress) setLabel(s string) {
	if p != nil {
		p.label.Store(s)
	}
}

// running shows the running phase on stderr until stop is called.
func (t *backupTable) running(cycle, cycles int, phase string, tele *telemetryRun) *phaseProgress {
	p := &phaseProgress{done: make(chan struct{}), wg: make(chan struct{})}
	p.label.Store(phase)
	start := time.Now()
	go func() {
		defer close(p.wg)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		drawn := false
		for n := 1; ; n++ {
			select {
			case <-p.done:
				if drawn {
					fmt.Fprint(t.progress, "\r\033[K")
				}
				return
			case <-tick.C:
			}
			line := fmt.Sprintf("cycle %d/%d %-7s %4.0fs", cycle, cycles, p.label.Load(), time.Since(start).Seconds()) + tele.status()
			switch {
			case t.tty:
				fmt.Fprintf(t.progress, "\r\033[K%s", line)
				drawn = true
			case n%5 == 0:
				fmt.Fprintln(t.progress, line)
			}
		}
	}()
	return p
}

func (p *phaseProgress) stop() {
	close(p.done)
	<-p.wg
}
