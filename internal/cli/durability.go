package cli

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

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/durability"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/units"
)

// DurabilityOptions are the flags of `durability`.
type DurabilityOptions struct {
	dsnOption
	Managed        string
	Cycles         int
	VUs            int
	RunBeforeFault string
	Fault          string
	FaultCommand   string
	RecoverCommand string
	RecoverTimeout string
	Warehouses     int
	WarehousesSet  bool
	Mode           string
	Results        string
	Seed           uint64
}

// AddFlags registers the options' flags.
func (o *DurabilityOptions) AddFlags(fs *pflag.FlagSet) {
	o.addFlag(fs)
	fs.StringVar(&o.Managed, "managed", "", "data directory of a managed server to test instead of --dsn (started, and built with --warehouses, when needed)")
	fs.IntVar(&o.Cycles, "cycles", 3, "fault cycles to run")
	fs.IntVar(&o.VUs, "vus", 4, "virtual users running TPC-C when the fault hits")
	fs.StringVar(&o.RunBeforeFault, "run-before-fault", "20s", "TPC-C time before each fault (the audited test of clause 3.5 runs at least 5m)")
	fs.StringVar(&o.Fault, "fault", durability.FaultKill, "the failure: kill (SIGKILL of the postmaster), stop (immediate shutdown), restart (clean shutdown and start), command (--fault-command)")
	fs.StringVar(&o.FaultCommand, "fault-command", "", "shell command that causes the failure, with --fault command (e.g. a remote power cut)")
	fs.StringVar(&o.RecoverCommand, "recover-command", "", "shell command that brings the server back after the fault (then tierbench waits for it to answer)")
	fs.StringVar(&o.RecoverTimeout, "recover-timeout", "10m", "how long to wait for the database to answer after recovery")
	fs.IntVar(&o.Warehouses, "warehouses", 2, "with --managed: warehouses to build when there is no schema (or a different size is asked)")
	fs.StringVar(&o.Mode, "mode", engine.ModeRoutines, "routines or statements")
	fs.StringVar(&o.Results, "results", "./tierbench-results", "results store directory")
	fs.Uint64Var(&o.Seed, "seed", 0, "random seed (0: a new one each run)")
}

type durabilityConfig struct {
	runBeforeFault, recoverTimeout time.Duration
}

func (o *DurabilityOptions) validate() (durabilityConfig, error) {
	var c durabilityConfig
	var err error
	if o.DSN != "" && o.Managed != "" {
		return c, usagef("give either --dsn (a server you run) or --managed DIR (a server tierbench manages), not both")
	}
	if o.Managed == "" {
		if _, err := o.resolve(); err != nil {
			return c, usagef("no server to test: give --managed DIR (a server tierbench manages) or --dsn postgres://user:password@host:port/dbname")
		}
	}
	if o.Cycles < 1 || o.Cycles > 10000 {
		return c, usagef("--cycles must be between 1 and 10000 (got %d)", o.Cycles)
	}
	if o.VUs < 1 || o.VUs > 10000 {
		return c, usagef("--vus must be between 1 and 10000 (got %d)", o.VUs)
	}
	if c.runBeforeFault, err = units.ParseDuration(o.RunBeforeFault); err != nil {
		return c, usagef("--run-before-fault: %v", err)
	}
	if c.runBeforeFault < time.Second {
		return c, usagef("--run-before-fault %s is too short: give at least 1s, so transactions are in flight at the fault", o.RunBeforeFault)
	}
	if c.recoverTimeout, err = units.ParseDuration(o.RecoverTimeout); err != nil {
		return c, usagef("--recover-timeout: %v", err)
	}
	if c.recoverTimeout < time.Second {
		return c, usagef("--recover-timeout %s is too short; give at least 1s", o.RecoverTimeout)
	}
	if !slices.Contains(durability.Faults, o.Fault) {
		return c, usagef("--fault %q is unknown; use one of %s", o.Fault, strings.Join(durability.Faults, ", "))
	}
	switch {
	case o.Fault == durability.FaultCommand && strings.TrimSpace(o.FaultCommand) == "":
		return c, usagef("--fault command needs --fault-command CMD, the shell command that causes the failure")
	case o.Fault != durability.FaultCommand && o.FaultCommand != "":
		return c, usagef("--fault-command is only used with --fault command (got --fault %s)", o.Fault)
	}
	if o.Mode != engine.ModeRoutines && o.Mode != engine.ModeStatements {
		return c, usagef("--mode %q is unknown; use routines or statements", o.Mode)
	}
	if o.Warehouses < 1 {
		return c, usagef("--warehouses must be 1 or more (got %d)", o.Warehouses)
	}
	if o.WarehousesSet && o.Managed == "" {
		return c, usagef("--warehouses builds a schema on a --managed server only; build one on --dsn with tierbench tpcc build")
	}
	return c, nil
}

func newDurabilityCommand(g *Globals) *cobra.Command {
	var opts DurabilityOptions
	cmd := &cobra.Command{
		Use:   "durability",
		Short: "Durability test (TPC-C 3.5.4): log acknowledged New-Orders, crash the server under load, recover, verify none was lost",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.WarehousesSet = cmd.Flags().Changed("warehouses")
			return runDurability(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

// durabilityOutput is the JSON of `durability`.
type durabilityOutput struct {
	RunID  string                    `json:"run_id"`
	Status string                    `json:"status"`
	Fault  string                    `json:"fault"`
	VUs    int                       `json:"vus"`
	Cycles []*durability.CycleResult `json:"cycles"`
	Total  durability.Totals         `json:"total"`
}

// durabilityParams is what the results store keeps of a durability run.
// The fault and recovery commands are not kept: they may hold secrets.
type durabilityParams struct {
	DSN            string `json:"dsn,omitempty"`
	Managed        string `json:"managed,omitempty"`
	Engine         string `json:"engine"`
	Warehouses     int    `json:"warehouses"`
	Cycles         int    `json:"cycles"`
	VUs            int    `json:"vus"`
	RunBeforeFault string `json:"run_before_fault"`
	Fault          string `json:"fault"`
	RecoverCommand bool   `json:"recover_command"`
	Mode           string `json:"mode"`
	Seed           uint64 `json:"seed"`
}

func runDurability(ctx context.Context, g *Globals, opts DurabilityOptions) error {
	dc, err := opts.validate()
	if err != nil {
		return err
	}
	dsn, dataDir, err := durabilityDSN(ctx, g, opts)
	if err != nil {
		return err
	}
	open := func(ctx context.Context) (engine.DB, error) { return all.Open(ctx, dsn) }
	db, err := openDSN(ctx, dsn, opts.flag())
	if err != nil {
		return err
	}
	defer db.Close()
	fault, err := durabilityFault(ctx, g, opts, dc, db, dataDir)
	if err != nil {
		return err
	}
	schema, err := durabilitySchema(ctx, g, db, opts)
	if err != nil {
		return err
	}
	seed := opts.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}

	store, err := results.Open(opts.Results)
	if err != nil {
		return fmt.Errorf("opening the results store: %w", err)
	}
	defer store.Close()
	scheme, _ := engine.SchemeOf(dsn)
	params := durabilityParams{Managed: opts.Managed, Engine: scheme, Warehouses: schema.Warehouses, Cycles: opts.Cycles,
		VUs: opts.VUs, RunBeforeFault: dc.runBeforeFault.String(), Fault: opts.Fault, RecoverCommand: opts.RecoverCommand != "",
		Mode: opts.Mode, Seed: seed}
	if opts.Managed == "" {
		params.DSN = engine.Redact(dsn)
	}
	run, err := store.CreateRun(ctx, "durability", "", params)
	if err != nil {
		return fmt.Errorf("recording the run: %w", err)
	}
	if err := captureEnvironment(ctx, g, store, run.ID, "", db, scheme, ""); err != nil {
		return fmt.Errorf("recording the run's environment: %w", err)
	}
	db.Close()
	logDir := filepath.Join(opts.Results, "durability-"+run.ID)
	if err := os.Mkdir(logDir, 0o700); err != nil {
		return fmt.Errorf("creating the success-log directory: %w", err)
	}
	g.progressf("durability run %s: %d cycles of %s TPC-C with %d VUs on %d warehouses, then %s; success logs in %s\n",
		run.ID, opts.Cycles, dc.runBeforeFault, opts.VUs, schema.Warehouses, opts.Fault, logDir)

	var storeErr error
	bg := context.WithoutCancel(ctx)
	cycles, runErr := durability.Run(ctx, durability.Config{
		Open: open, Cycles: opts.Cycles, VUs: opts.VUs, RunBeforeFault: dc.runBeforeFault, Fault: fault,
		RecoverTimeout: dc.recoverTimeout, LogDir: logDir, Mode: opts.Mode, Seed: seed,
		OnProgress: func(cycle int, elapsed time.Duration, acked int64) {
			if n := int(elapsed.Seconds()); n > 0 && n%5 == 0 {
				g.progressf("cycle %d/%d: %2.0f s, %d New-Orders acknowledged\n", cycle, opts.Cycles, elapsed.Seconds(), acked)
			}
		},
		OnCycle: func(c *durability.CycleResult) {
			if !g.JSON {
				printCycle(g.Stdout, c, opts)
			}
			if err := storeCycle(bg, store, run.ID, c); err != nil && storeErr == nil {
				storeErr = err
			}
		},
	})
	out := &durabilityOutput{RunID: run.ID, Status: results.StatusComplete, Fault: opts.Fault, VUs: opts.VUs,
		Cycles: cycles, Total: durability.Total(cycles)}
	if out.Cycles == nil {
		out.Cycles = []*durability.CycleResult{}
	}
	switch {
	case errors.Is(runErr, durability.ErrInterrupted):
		out.Status = results.StatusInterrupted
		if opts.Managed != "" {
			if st, err := server.Status(bg, opts.Managed); err == nil && !st.Running {
				g.progressf("the managed server in %s is stopped (the interrupted cycle's fault); start it with: tierbench server start --datadir %s\n",
					st.DataDir, st.DataDir)
			}
		}
	case runErr != nil:
		out.Status = results.StatusFailed
	}
	err = g.endRun(bg, runEnd{store: store, runID: run.ID, status: out.Status, out: out,
		summary: func() { printDurabilityTotal(g.Stdout, out, store.Path()) },
		kept:    fmt.Sprintf("%d finished cycles", len(cycles)), done: fmt.Sprintf("%d cycles", len(cycles)),
		runErr: runErr, storeErr: storeErr})
	if err == nil && !out.Total.OK {
		return &ExitError{Code: ExitFailure, Msg: fmt.Sprintf("durability test failed in %d of %d cycles: %d committed New-Orders lost",
			out.Total.FailedCycles, out.Total.Cycles, out.Total.Lost)}
	}
	return err
}

// durabilityDSN returns the DSN to test: a managed server's (started if
// it is not running, with its data directory) or the user's.
func durabilityDSN(ctx context.Context, g *Globals, opts DurabilityOptions) (dsn, managedDir string, err error) {
	if opts.Managed == "" {
		dsn, err = opts.resolve()
		return dsn, "", err
	}
	// The server is the user's to keep, as `tierbench run`'s is.
	info, err := server.Start(ctx, server.Options{DataDir: opts.Managed, KeepRunning: true})
	if err != nil {
		return "", "", serverError(err)
	}
	g.progressf("server: %s %s on 127.0.0.1:%d, data in %s\n", info.Engine, info.Version, info.Port, info.DataDir)
	return info.DSN, info.DataDir, nil
}

// durabilityFault returns the fault to cause: on a managed server, or on
// the server db is, which a signal can reach only when it runs on this
// host.
func durabilityFault(ctx context.Context, g *Globals, opts DurabilityOptions, dc durabilityConfig, db engine.DB, managedDir string) (durability.Fault, error) {
	if managedDir != "" {
		return &durability.ManagedFault{DataDir: managedDir, Kind: opts.Fault, Command: opts.FaultCommand,
			RecoverCommand: opts.RecoverCommand, StartTimeout: dc.recoverTimeout, Output: g.Stderr}, nil
	}
	fault := &durability.ServerFault{Kind: opts.Fault, Command: opts.FaultCommand, RecoverCommand: opts.RecoverCommand, Output: g.Stderr}
	if opts.Fault == durability.FaultCommand {
		return fault, nil
	}
	// A signal needs the postmaster's PID: postmaster.pid in the data
	// directory the server names, readable here.
	if sr, ok := db.(engine.StatsReader); ok {
		fault.DataDir, _, _ = sr.ServerInfo(ctx)
	}
	if _, err := os.Stat(filepath.Join(fault.DataDir, "postmaster.pid")); fault.DataDir == "" || err != nil {
		return nil, usagef("--fault %s signals the server's postmaster, which needs the server on this host and its data directory readable "+
			"(the server did not name one, or postmaster.pid is not readable there); use --fault command --fault-command CMD instead", opts.Fault)
	}
	if opts.RecoverCommand == "" {
		g.progressf("no --recover-command: after each %s, tierbench waits up to %s for the server to come back by itself\n",
			opts.Fault, dc.recoverTimeout)
	}
	return fault, nil
}

// durabilitySchema returns the TPC-C schema to run on: the one there, or
// on a managed server a new one when there is none or --warehouses asks
// for another size.
func durabilitySchema(ctx context.Context, g *Globals, db engine.DB, opts DurabilityOptions) (tpcc.SchemaInfo, error) {
	runner, ok := db.(engine.Runner)
	if !ok {
		return tpcc.SchemaInfo{}, usagef("this engine cannot run TPC-C yet")
	}
	schema, err := runner.Schema(ctx)
	build := opts.Managed != "" && (errors.Is(err, engine.ErrNoSchema) || (err == nil && opts.WarehousesSet && schema.Warehouses != opts.Warehouses))
	if !build {
		return schema, err
	}
	if _, err := ensureSchema(ctx, g, db, opts.Warehouses, runtime.NumCPU()); err != nil {
		return schema, err
	}
	return runner.Schema(ctx)
}

func storeCycle(ctx context.Context, store *results.Store, runID string, c *durability.CycleResult) error {
	doc, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return store.AddStep(ctx, results.Step{RunID: runID, Index: c.Cycle - 1, Name: fmt.Sprintf("cycle=%d", c.Cycle),
		StartedAt: c.StartedAt, MeasureStart: c.StartedAt, MeasureEnd: c.FaultAt, Metrics: doc})
}

func printCycle(w io.Writer, c *durability.CycleResult, opts DurabilityOptions) {
	verdict := "ok"
	if !c.OK {
		verdict = "FAILED: " + strings.Join(c.Problems, "; ")
	}
	consistency := "hold"
	if !c.Consistency {
		consistency = "FAIL " + strings.Join(c.Failed, ",")
	}
	fmt.Fprintf(w, "cycle %d/%d: %.0f s of TPC-C, then %s: %d New-Orders acknowledged (%d committed, %d rolled back); "+
		"found %d, lost %d, rolled back but found %d; excess %d (at most %d); recovered in %.2f s; consistency conditions %s; %s\n",
		c.Cycle, opts.Cycles, c.RanSeconds, opts.Fault, c.Acknowledged, c.Committed, c.RolledBack,
		c.Found, c.Lost, c.RolledBackFound, c.Excess, c.ExcessBound, c.RecoverySeconds, consistency, verdict)
	for _, v := range c.Violations {
		state := "committed, missing"
		if v.RolledBack {
			state = "rolled back, present"
		}
		fmt.Fprintf(w, "  order w=%d d=%d o_id=%d (customer %d, %d lines): %s\n", v.W, v.D, v.OID, v.Customer, v.Lines, state)
	}
}

func printDurabilityTotal(w io.Writer, out *durabilityOutput, storePath string) {
	t := out.Total
	if t.Cycles == 0 {
		fmt.Fprintf(w, "durability run %s %s with no finished cycle\n", out.RunID, out.Status)
		return
	}
	verdict := "PASS"
	if !t.OK {
		verdict = fmt.Sprintf("FAIL (%d cycles)", t.FailedCycles)
	}
	fmt.Fprintf(w, "durability: %d cycles of %s with %d VUs: %d committed New-Orders acknowledged, %d found, %d lost, %d rolled back but found; "+
		"excess at most %d (bound %d); recovery %.2f–%.2f s; %s\n",
		t.Cycles, out.Fault, out.VUs, t.Committed, t.Found, t.Lost, t.RolledBackFound, t.MaxExcess, out.VUs, t.MinRecovery, t.MaxRecovery, verdict)
	fmt.Fprintf(w, "run %s %s; stored in %s\n", out.RunID, out.Status, storePath)
}
