package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/durability"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/units"
)

// DurabilityOptions are the flags of `durability`.
type DurabilityOptions struct {
	dsnOption
	Managed        string
	Engine         string // with --managed: the engine of a new data directory
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
	metricsOptions
}

// AddFlags registers the options' flags.
func (o *DurabilityOptions) AddFlags(fs *pflag.FlagSet) {
	o.addFlag(fs)
	fs.StringVar(&o.Managed, "managed", "", "data directory of a managed server to test instead of --dsn (started, and built with --warehouses, when needed)")
	fs.StringVar(&o.Engine, "engine", "", "with --managed: the engine of a new data directory ("+strings.Join(all.Names(true), ", ")+"; default postgres; an existing one keeps its own)")
	fs.IntVar(&o.Cycles, "cycles", 3, "fault cycles to run")
	fs.IntVar(&o.VUs, "vus", 4, "virtual users running TPC-C when the fault hits")
	fs.StringVar(&o.RunBeforeFault, "run-before-fault", "20s", "TPC-C time before each fault (the audited test of clause 3.5 runs at least 5m)")
	fs.StringVar(&o.Fault, "fault", durability.FaultKill, "the failure: kill (SIGKILL of the server's main process), stop (immediate shutdown; MariaDB: a kill), restart (clean shutdown and start), command (--fault-command)")
	fs.StringVar(&o.FaultCommand, "fault-command", "", "shell command that causes the failure, with --fault command (e.g. a remote power cut)")
	fs.StringVar(&o.RecoverCommand, "recover-command", "", "shell command that brings the server back after the fault (then tierbench waits for it to answer)")
	fs.StringVar(&o.RecoverTimeout, "recover-timeout", "10m", "how long to wait for the database to answer after recovery")
	fs.IntVar(&o.Warehouses, "warehouses", 2, "with --managed: warehouses to build when there is no schema (or a different size is asked)")
	fs.StringVar(&o.Mode, "mode", engine.ModeRoutines, "routines or statements")
	fs.StringVar(&o.Results, "results", "./tierbench-results", "results store directory")
	fs.Uint64Var(&o.Seed, "seed", 0, "random seed (0: a new one each run)")
	o.metricsOptions.addFlags(fs)
}

// validate turns the flags into a run's config (its DSN, when given, not yet
// checked).
func (o *DurabilityOptions) validate() (experiment.DurabilityConfig, error) {
	c := experiment.DurabilityConfig{Results: o.Results, Managed: o.Managed, Engine: o.Engine, Cycles: o.Cycles, VUs: o.VUs, Fault: o.Fault,
		FaultCommand: o.FaultCommand, RecoverCommand: o.RecoverCommand, Warehouses: o.Warehouses, Rebuild: o.WarehousesSet,
		Mode: o.Mode, Seed: o.Seed}
	var err error
	if o.DSN != "" && o.Managed != "" {
		return c, usagef("give either --dsn (a server you run) or --managed DIR (a server tierbench manages), not both")
	}
	if o.Engine != "" {
		if err := managedEngineFlag(o.Engine); err != nil {
			return c, err
		}
		if o.Managed == "" {
			return c, usagef("--engine names the engine of a new --managed server; with --dsn the DSN's scheme says it")
		}
	}
	if o.Managed == "" {
		if c.DSN, err = o.check(); err != nil {
			return c, usagef("no server to test: give --managed DIR (a server tierbench manages) or --dsn postgres://user:password@host:port/dbname")
		}
	}
	if o.Cycles < 1 || o.Cycles > 10000 {
		return c, usagef("--cycles must be between 1 and 10000 (got %d)", o.Cycles)
	}
	if o.VUs < 1 || o.VUs > 10000 {
		return c, usagef("--vus must be between 1 and 10000 (got %d)", o.VUs)
	}
	if c.RunBeforeFault, err = units.ParseDuration(o.RunBeforeFault); err != nil {
		return c, usagef("--run-before-fault: %v", err)
	}
	if c.RunBeforeFault < time.Second {
		return c, usagef("--run-before-fault %s is too short: give at least 1s, so transactions are in flight at the fault", o.RunBeforeFault)
	}
	if c.RecoverTimeout, err = units.ParseDuration(o.RecoverTimeout); err != nil {
		return c, usagef("--recover-timeout: %v", err)
	}
	if c.RecoverTimeout < time.Second {
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
	if err := checkResultsDir(o.Results); err != nil {
		return c, err
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

func runDurability(ctx context.Context, g *Globals, opts DurabilityOptions) error {
	cfg, err := opts.validate()
	if err != nil {
		return err
	}
	cfg.CommandOutput = g.Stderr
	v := newView(g)
	obs, done, err := opts.metricsOptions.begin(ctx, g, nil, v)
	if err != nil {
		return err
	}
	defer done()
	out, err := experiment.RunDurability(ctx, cfg, obs)
	return printRun(v, out, err, func() { printDurabilityTotal(g.Stdout, out, v.store) })
}

func printDurabilityTotal(w io.Writer, out *experiment.DurabilityResult, storePath string) {
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
