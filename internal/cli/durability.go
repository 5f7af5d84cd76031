package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
	d := experiment.NewDurabilityConfig()
	o.addFlag(fs)
	fs.StringVar(&o.Managed, "managed", "", "data directory of a managed server to test instead of --dsn (started, and built with --warehouses, when needed)")
	fs.StringVar(&o.Engine, "engine", "", "with --managed: the engine of a new data directory ("+strings.Join(all.Names(true), ", ")+"; default postgres; an existing one keeps its own)")
	fs.IntVar(&o.Cycles, "cycles", d.Cycles, "fault cycles to run")
	fs.IntVar(&o.VUs, "vus", d.VUs, "virtual users running TPC-C when the fault hits")
	fs.StringVar(&o.RunBeforeFault, "run-before-fault", units.FormatDuration(d.RunBeforeFault), "TPC-C time before each fault (the audited test of clause 3.5 runs at least 5m)")
	fs.StringVar(&o.Fault, "fault", d.Fault, "the failure: kill (SIGKILL of the server's main process), stop (immediate shutdown; MariaDB: a kill), restart (clean shutdown and start), command (--fault-command)")
	fs.StringVar(&o.FaultCommand, "fault-command", "", "shell command that causes the failure, with --fault command (e.g. a remote power cut)")
	fs.StringVar(&o.RecoverCommand, "recover-command", "", "shell command that brings the server back after the fault (then tierbench waits for it to answer)")
	fs.StringVar(&o.RecoverTimeout, "recover-timeout", units.FormatDuration(d.RecoverTimeout), "how long to wait for the database to answer after recovery")
	fs.IntVar(&o.Warehouses, "warehouses", d.Warehouses, "with --managed: warehouses to build when there is no schema (or a different size is asked)")
	fs.StringVar(&o.Mode, "mode", d.Mode, "routines or statements")
	fs.StringVar(&o.Results, "results", d.Results, "results store directory")
	fs.Uint64Var(&o.Seed, "seed", 0, "random seed (0: a new one each run)")
	o.metricsOptions.addFlags(fs)
}

// validate turns the flags into a run's config (its DSN, when given, not yet
// checked).
func (o *DurabilityOptions) validate(g *Globals) (experiment.DurabilityConfig, error) {
	c := experiment.DurabilityConfig{Results: o.Results, Managed: o.Managed, Engine: o.Engine, Cycles: o.Cycles, VUs: o.VUs, Fault: o.Fault,
		FaultCommand: o.FaultCommand, RecoverCommand: o.RecoverCommand, Warehouses: o.Warehouses, Rebuild: o.WarehousesSet,
		Mode: o.Mode, Seed: o.Seed}
	var err error
	if o.Managed == "" {
		if c.DSN, err = o.check(g); err != nil {
			return c, usagef("no server to test: give --managed DIR (a server tierbench manages) or --dsn postgres://user:password@host:port/dbname")
		}
	} else if o.DSN != "" {
		c.DSN = o.DSN // refused beside --managed by Validate
	}
	if c.RunBeforeFault, err = units.ParseDuration(o.RunBeforeFault); err != nil {
		return c, usagef("--run-before-fault: %v", err)
	}
	if c.RecoverTimeout, err = units.ParseDuration(o.RecoverTimeout); err != nil {
		return c, usagef("--recover-timeout: %v", err)
	}
	return c, flagged(c.Validate(), nil)
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
	cfg, err := opts.validate(g)
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
