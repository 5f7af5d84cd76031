package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/units"
)

// DurabilityOptions are the flags of `durability`: a test's options, its
// --dsn and the live metrics endpoint's.
type DurabilityOptions struct {
	dsnOption
	options.Durability
	metricsOptions
}

// AddFlags registers the options' flags.
func (o *DurabilityOptions) AddFlags(fs *pflag.FlagSet) {
	o.addFlag(fs)
	o.Durability.AddFlags(fs)
	o.metricsOptions.addFlags(fs)
}

// config turns the flags into a test's config: the DSN is read (from
// standard input or $TIERBENCH_DSN too) unless --managed names the server.
func (o *DurabilityOptions) config(g *Globals) (experiment.DurabilityConfig, error) {
	var dsn string
	if o.Managed == "" {
		var err error
		if dsn, err = o.check(g); err != nil {
			return experiment.DurabilityConfig{}, usagef("no server to test: give --managed DIR (a server tierbench manages) or --dsn postgres://user:password@host:port/dbname")
		}
	} else if o.DSN != "" {
		dsn = o.DSN // refused beside --managed by Validate
	}
	return o.Config(dsn)
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
	cfg, err := opts.config(g)
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
		verdict = fmt.Sprintf("FAIL (%s)", units.Plural(t.FailedCycles, "cycle", "cycles"))
	}
	fmt.Fprintf(w, "durability: %s of %s with %s: %d committed New-Orders acknowledged, %d found, %d lost, %d rolled back but found; "+
		"excess at most %d (bound %d); recovery %.2f–%.2f s; %s\n",
		units.Plural(t.Cycles, "cycle", "cycles"), out.Fault, units.Plural(out.VUs, "VU", "VUs"), t.Committed, t.Found, t.Lost, t.RolledBackFound, t.MaxExcess, out.VUs, t.MinRecovery, t.MaxRecovery, verdict)
	fmt.Fprintf(w, "run %s %s; stored in %s\n", out.RunID, out.Status, storePath)
}
