package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/durability"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/units"
)

// DurabilityConfig is the durability test of TPC-C clause 3.5.4 on a
// managed server (Managed) or the database at DSN.
type DurabilityConfig struct {
	Results        string // the results store's directory
	RunID          string // the id to record the run under ("": a new one; see Record.RunID)
	Group          string // the results group, e.g. a scenario's ("": none)
	Placement      stored.Placement
	DSN            string // the database ("" with Managed)
	Managed        string // a managed server's data directory, started (and built) when needed
	Engine         string // the engine of a new Managed directory ("": PostgreSQL; an existing one keeps its own)
	Cycles         int
	VUs            int
	Rate           float64 // transactions a minute offered to the VUs as a pool (0: a closed loop)
	RunBeforeFault time.Duration
	Fault          string // durability.FaultKill, FaultStop, FaultRestart or FaultCommand
	FaultCommand   string
	RecoverCommand string
	RecoverTimeout time.Duration
	// ColdCache drops a Managed server's data directory from the page cache
	// after each fault, so that recovery reads from the storage
	// (durability.ManagedFault.ColdCache).
	ColdCache bool
	// Warehouses is the schema a managed server gets when it has none, or,
	// with Rebuild, when it has another size.
	Warehouses int
	Rebuild    bool
	Mode       string // "" is engine.ModeRoutines
	Seed       uint64 // 0: a new one
	// CommandOutput receives the fault and recovery commands' output (nil:
	// discarded).
	CommandOutput io.Writer
}

// NewDurabilityConfig is a durability test as a user gets it unless told
// otherwise: 3 cycles of 4 virtual users killed after 20 s of TPC-C, 10
// minutes for the database to answer again, a 2-warehouse schema on a
// managed server that has none, through stored routines, recorded in
// DefaultResults. Its DSN or Managed is to be given.
func NewDurabilityConfig() DurabilityConfig {
	return DurabilityConfig{Results: DefaultResults, Cycles: 3, VUs: 4, RunBeforeFault: 20 * time.Second, Fault: durability.FaultKill,
		RecoverTimeout: 10 * time.Minute, Warehouses: 2, Mode: engine.ModeRoutines}
}

// Validate reports every problem of the config at once, each a *Problem
// naming its field: dsn or managed, engine, cycles, vus, rate,
// run_before_fault, recover_timeout, fault, fault_command, mode,
// warehouses, cold_cache and results.
func (c DurabilityConfig) Validate() error {
	var ps problems
	switch {
	case c.DSN != "" && c.Managed != "":
		ps.add("managed", Verbatim(c.Managed), "and {dsn} both name the server to test; give one or the other, not both")
	case c.Managed == "":
		if c.DSN == "" {
			ps.missing("dsn", "is empty; give the server to test, or a {managed} server's data directory")
		} else {
			dsn(&ps, c.DSN)
		}
	}
	if c.Engine != "" {
		if managedEngine(&ps, c.Engine) && c.Managed == "" {
			ps.add("engine", c.Engine, "names the engine of a new {managed} server; with {dsn} the DSN's scheme says it")
		}
	}
	ps.intRange("cycles", c.Cycles, 1, MaxDurabilityCycles, "fault cycles")
	ps.intRange("vus", c.VUs, 1, MaxVUs, "virtual users")
	if !(c.Rate >= 0 && c.Rate <= MaxRate) {
		ps.add("rate", c.Rate, "is out of range; %s", DurabilityRateRange())
	}
	if c.RunBeforeFault < time.Second {
		ps.add("run_before_fault", c.RunBeforeFault, "is too short; give at least 1s, so that transactions are in flight at the fault")
	}
	if c.RecoverTimeout < time.Second {
		ps.add("recover_timeout", c.RecoverTimeout, "is too short; give at least 1s")
	}
	switch {
	case !slices.Contains(durability.Faults, c.Fault):
		ps.add("fault", c.Fault, "is unknown; use one of %s", strings.Join(durability.Faults, ", "))
	case c.Fault == durability.FaultCommand && strings.TrimSpace(c.FaultCommand) == "":
		ps.missing("fault_command", "is empty; {fault} command needs the shell command that causes the failure")
	case c.Fault != durability.FaultCommand && c.FaultCommand != "":
		ps.missing("fault_command", "is only used with {fault} command (got {fault} %s)", c.Fault)
	}
	if c.Mode != "" && c.Mode != engine.ModeRoutines && c.Mode != engine.ModeStatements {
		ps.add("mode", c.Mode, "is unknown; use %s or %s", engine.ModeRoutines, engine.ModeStatements)
	}
	switch {
	case c.Managed != "" && (c.Warehouses < 1 || c.Warehouses > MaxWarehouses):
		ps.add("warehouses", c.Warehouses, "is out of range; give 1 to %d warehouses", MaxWarehouses)
	case c.Rebuild && c.Managed == "":
		ps.add("warehouses", c.Warehouses, "builds a schema on a {managed} server only; build one on {dsn} with tierbench tpcc build")
	}
	if c.ColdCache && c.Managed == "" {
		ps.missing("cold_cache", "needs a {managed} server, whose data directory it drops from the page cache after each fault; tierbench knows none of a server at {dsn}")
	}
	resultsDir(&ps, c.Results)
	return ps.err()
}

// DurabilityResult is a durability run's document.
type DurabilityResult struct {
	RunID  string                    `json:"run_id"`
	Status string                    `json:"status"`
	Fault  string                    `json:"fault"`
	VUs    int                       `json:"vus"`
	Rate   float64                   `json:"rate,omitempty"` // the open loop's transactions a minute
	Cycles []*stored.DurabilityCycle `json:"cycles"`
	Total  durability.Totals         `json:"total"`
}

// RunDurability runs the fault cycles and records them. A cycle that lost
// an acknowledged New-Order is not an error: the result's Total says so.
func RunDurability(ctx context.Context, cfg DurabilityConfig, obs Observer) (*DurabilityResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	obs = serial(obs) // telemetry samples come from their own goroutine
	if cfg.Mode == "" {
		cfg.Mode = engine.ModeRoutines
	}
	if cfg.CommandOutput == nil {
		cfg.CommandOutput = io.Discard
	}
	dsn := cfg.DSN
	if cfg.Managed != "" {
		// The server is the user's to keep, as `tierbench run`'s is.
		info, err := server.Start(ctx, server.Options{Engine: cfg.Engine, DataDir: cfg.Managed, KeepRunning: true})
		if err != nil {
			return nil, ServerError(err)
		}
		obs.Note(fmt.Sprintf("server: %s %s on 127.0.0.1:%d, data in %s", info.Engine, info.Version, info.Port, info.DataDir))
		dsn, cfg.Managed = info.DSN, info.DataDir
	}
	db, err := Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	fault, err := durabilityFault(ctx, cfg, obs)
	if err != nil {
		return nil, err
	}
	schema, err := durabilitySchema(ctx, cfg, db, obs)
	if err != nil {
		return nil, err
	}
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	name, _ := all.NameOf(dsn)
	params := &stored.DurabilityParams{Managed: cfg.Managed, Engine: name, Warehouses: schema.Warehouses, Cycles: cfg.Cycles,
		VUs: cfg.VUs, Rate: cfg.Rate, RunBeforeFault: cfg.RunBeforeFault.String(), Fault: cfg.Fault, RecoverCommand: cfg.RecoverCommand != "",
		Mode: cfg.Mode, Seed: cfg.Seed, ColdCache: cfg.ColdCache, Placement: cfg.Placement}
	if cfg.Managed == "" {
		params.DSN = engine.Redact(dsn)
	}
	// The run's ID names the log directory, which must exist before the
	// run starts: it is made once the run is recorded, before any cycle.
	rec, err := start(ctx, begin{Record: Record{Results: cfg.Results, RunID: cfg.RunID, Group: cfg.Group, Placement: cfg.Placement}, kind: stored.KindDurability, params: params, db: db, dsn: cfg.DSN, engineName: name},
		logDirNamer{obs, params, cfg.Results})
	if err != nil {
		return nil, err
	}
	db.Close()
	if err := os.Mkdir(params.LogDir, 0o700); err != nil {
		_ = rec.finish(ctx, end{status: results.StatusFailed, runErr: err})
		return nil, fmt.Errorf("creating the success-log directory: %w", err)
	}
	cycles, runErr := durability.Run(ctx, durability.Config{
		Open:   func(ctx context.Context) (engine.DB, error) { return all.Open(ctx, dsn) },
		Cycles: cfg.Cycles, VUs: cfg.VUs, Rate: cfg.Rate, RunBeforeFault: cfg.RunBeforeFault, Fault: fault,
		RecoverTimeout: cfg.RecoverTimeout, LogDir: params.LogDir, Mode: cfg.Mode, Seed: cfg.Seed,
		OnProgress: func(cycle int, elapsed time.Duration, acked int64) {
			obs.Progress(Progress{Cycle: &CycleProgress{Cycle: cycle, Cycles: cfg.Cycles, Elapsed: elapsed, Acknowledged: acked}})
		},
		OnCycle: func(c *stored.DurabilityCycle) {
			if doc, err := json.Marshal(c); err != nil { // stored first, then told
				rec.keep(err)
			} else {
				rec.addStep(ctx, results.Step{Index: c.Cycle - 1, Name: fmt.Sprintf("cycle=%d", c.Cycle),
					StartedAt: c.StartedAt, MeasureStart: c.StartedAt, MeasureEnd: c.FaultAt, Metrics: doc})
			}
			obs.Result(Result{Cycle: c})
		},
	})
	out := &DurabilityResult{RunID: rec.run.ID, Status: results.StatusComplete, Fault: cfg.Fault, VUs: cfg.VUs, Rate: cfg.Rate,
		Cycles: cycles, Total: durability.Total(cycles)}
	if out.Cycles == nil {
		out.Cycles = []*stored.DurabilityCycle{}
	}
	switch {
	case errors.Is(runErr, durability.ErrInterrupted):
		out.Status = results.StatusInterrupted
		if cfg.Managed != "" {
			if st, err := server.Status(context.WithoutCancel(ctx), cfg.Managed); err == nil && !st.Running {
				obs.Note(fmt.Sprintf("the managed server in %s is stopped (the interrupted cycle's fault); start it with: tierbench server start --datadir %s",
					st.DataDir, st.DataDir))
			}
		}
	case runErr != nil:
		out.Status = results.StatusFailed
	}
	err = rec.finish(ctx, end{status: out.Status, out: out, runErr: runErr,
		kept: units.Plural(len(cycles), "finished cycle", "finished cycles"), done: units.Plural(len(cycles), "cycle", "cycles")})
	if err == nil && !out.Total.OK {
		// The test's verdict: a durability test that lost committed work failed.
		err = &Verdict{RunID: out.RunID, Msg: fmt.Sprintf("durability test failed in %d of %d cycles: %d committed New-Orders lost",
			out.Total.FailedCycles, out.Total.Cycles, out.Total.Lost)}
	}
	return out, err
}

// logDirNamer names the success-log directory after the run as soon as it
// is recorded, so that the observer's Started sees it.
type logDirNamer struct {
	Observer
	params  *stored.DurabilityParams
	results string
}

func (l logDirNamer) Started(s Started) {
	l.params.LogDir = filepath.Join(l.results, "durability-"+s.RunID)
	l.Observer.Started(s)
}

// durabilityFault returns the fault to cause: on a managed server, or on
// the server of cfg.DSN, which a signal can reach only when it runs on this
// host.
func durabilityFault(ctx context.Context, cfg DurabilityConfig, obs Observer) (durability.Fault, error) {
	if cfg.Managed != "" {
		return &durability.ManagedFault{DataDir: cfg.Managed, Kind: cfg.Fault, Command: cfg.FaultCommand,
			RecoverCommand: cfg.RecoverCommand, StartTimeout: cfg.RecoverTimeout, Output: cfg.CommandOutput, ColdCache: cfg.ColdCache}, nil
	}
	eng, _ := all.NameOf(cfg.DSN)
	fault := &durability.ServerFault{Kind: cfg.Fault, Command: cfg.FaultCommand, RecoverCommand: cfg.RecoverCommand, Output: cfg.CommandOutput,
		Name: all.Display(eng), Signals: all.FaultSignals(eng)}
	if cfg.Fault == durability.FaultCommand {
		return fault, nil
	}
	// A signal needs the server's main process on this host, which the
	// engine finds from what the server says of itself, asked afresh before
	// every fault: a supervisor that restarted the server gave it a new PID.
	fault.Locate = func(ctx context.Context) int {
		db, err := all.Open(ctx, cfg.DSN)
		if err != nil {
			return 0
		}
		defer db.Close()
		sr, ok := db.(engine.StatsReader)
		if !ok {
			return 0
		}
		_, pid, _ := sr.ServerInfo(ctx)
		return pid
	}
	if fault.Locate(ctx) <= 0 {
		return nil, invalidf("--fault %s signals the server's main process, which needs the server on this host "+
			"(tierbench could not find its process here); use --fault command --fault-command CMD instead", cfg.Fault)
	}
	if cfg.RecoverCommand == "" {
		obs.Note(fmt.Sprintf("no --recover-command: after each %s, tierbench waits up to %s for the server to come back by itself",
			cfg.Fault, cfg.RecoverTimeout))
	}
	return fault, nil
}

// durabilitySchema returns the TPC-C schema to run on: the one there, or
// on a managed server a new one when there is none or Rebuild asks for
// another size.
func durabilitySchema(ctx context.Context, cfg DurabilityConfig, db engine.DB, obs Observer) (tpcc.SchemaInfo, error) {
	runner, ok := db.(engine.Runner)
	if !ok {
		return tpcc.SchemaInfo{}, invalidf("this engine cannot run TPC-C yet")
	}
	schema, err := runner.Schema(ctx)
	build := cfg.Managed != "" && (errors.Is(err, engine.ErrNoSchema) || (err == nil && cfg.Rebuild && schema.Warehouses != cfg.Warehouses))
	if !build {
		return schema, err
	}
	if _, err := EnsureSchema(ctx, db, cfg.Warehouses, runtime.NumCPU(), obs); err != nil {
		return schema, err
	}
	return runner.Schema(ctx)
}

// ParseDurabilityRate reads a durability test's rate, as every front end
// takes it: one number of transactions a minute, or "" for none (0, a
// closed loop). A fraction has no maximum to be a fraction of here (a
// durability test runs no probe step), a list no steps to take, and 0
// given is not "no rate". name is the value's name in the front end's
// words ("--rate", "durability: rate"), which its error begins with.
func ParseDurabilityRate(name, s string) (float64, error) {
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	v, percent, err := units.ParseRateList(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s: %w", name, err)
	case percent:
		return 0, fmt.Errorf("%s %s: a durability test takes transactions a minute, e.g. 20000; it measures no maximum for a fraction to be of", name, s)
	case len(v) > 1:
		return 0, fmt.Errorf("%s %s: a durability test takes one rate, e.g. 20000; its cycles are not steps", name, s)
	case !(v[0] > 0):
		return 0, fmt.Errorf("%s %s is out of range; %s", name, s, DurabilityRateRange())
	}
	return v[0], nil
}

// DurabilityRateRange says what a durability test's rate may be.
func DurabilityRateRange() string {
	return "give above 0 to " + units.Thousands(MaxRate) + " transactions a minute, or leave it out for a closed loop"
}
