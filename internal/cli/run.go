package cli

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/job"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/stored"
)

// RunOptions are the flags of `tierbench run`, the main job.
type RunOptions struct {
	DataDir    string
	Warehouses int
	BuildVUs   int
	VUs        string
	RampUp     string
	Duration   string
	Results    string
	Mode       string
	Report     string
	Engine     string
	// DataDirSet records that --datadir was given: only the default moves
	// when the server's user cannot reach it (reachableDataDir).
	DataDirSet bool
	options.OpenLoop
	options.Repetitions
	options.Noisy
	options.Telemetry
	metricsOptions
	options.Thresholds
}

// AddFlags registers the options' flags.
func (o *RunOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "datadir", "./tierbench-data", "data directory of the managed server (created on first use)")
	fs.StringVar(&o.Engine, "engine", "", "the engine of a new --datadir ("+strings.Join(all.Names(true), ", ")+"; default postgres; an existing one keeps its own)")
	fs.IntVar(&o.Warehouses, "warehouses", 2, "warehouses to build when no valid schema is there")
	fs.IntVar(&o.BuildVUs, "build-vus", runtime.NumCPU(), "parallel loader connections")
	fs.StringVar(&o.VUs, "vus", "1,2,4", "virtual users per step")
	fs.StringVar(&o.RampUp, "rampup", "5s", "ramp-up of each step")
	fs.StringVar(&o.Duration, "duration", "20s", "measured interval of each step")
	fs.StringVar(&o.Results, "results", "./tierbench-results", "results store directory")
	fs.StringVar(&o.Mode, "mode", engine.ModeRoutines, "routines or statements")
	fs.StringVar(&o.Report, "report", "", "the HTML report to write at the end (default: RESULTS/report.html)")
	o.OpenLoop.AddFlags(fs)
	o.Repetitions.AddFlags(fs, "VU count", "1,2,4,1,2,4")
	o.Noisy.AddFlags(fs, "step")
	o.Telemetry.AddFlags(fs)
	o.metricsOptions.addFlags(fs)
	o.Thresholds.AddFlags(fs, "nopm>=50000 or new_order.p99<=10ms")
}

func newRunCommand(g *Globals) *cobra.Command {
	var opts RunOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "The main job: a managed PostgreSQL (or --engine mariadb) under ./tierbench-data, TPC-C built if needed, run in steps of 1,2,4 VUs, checked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.DataDirSet = cmd.Flags().Changed("datadir")
			return runMain(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runMain(ctx context.Context, g *Globals, opts RunOptions) error {
	runOpts := options.TPCCRun{VUs: opts.VUs, OpenLoop: opts.OpenLoop, RampUp: opts.RampUp, Duration: opts.Duration, Results: opts.Results,
		Mode: opts.Mode, Repetitions: opts.Repetitions, Noisy: opts.Noisy, Telemetry: opts.Telemetry}
	run, err := runOpts.Config()
	if err != nil {
		return err
	}
	cfg := job.MainConfig{Build: experiment.BuildConfig{Warehouses: opts.Warehouses, BuildVUs: opts.BuildVUs}, TPCC: run, Report: opts.Report,
		Server: experiment.ServerConfig{Engine: opts.Engine, DataDir: opts.DataDir, KeepRunning: true}} // it keeps running afterwards
	if err := cfg.Validate(); err != nil {
		return options.Flagged(err, serverFlags)
	}
	if !opts.DataDirSet {
		cfg.Server.DataDir = reachableDataDir(ctx, g, opts.DataDir, "--datadir")
	}
	if cfg.TPCC.Thresholds, err = opts.Thresholds.Parse(stored.KindTPCC); err != nil {
		return thresholds(g, err)
	}
	v := newView(g) // with --json, everything goes into the one document printed at the end
	obs, done, err := opts.metricsOptions.begin(ctx, g, &cfg.TPCC.Record, v)
	if err != nil {
		return err
	}
	defer done()
	res, err := job.RunMain(ctx, cfg, obs)
	v.done()
	if res == nil || res.TPCC == nil {
		// Nothing was recorded: the error says why.
		return options.Flagged(err, serverFlags)
	}
	var verdict *experiment.Verdict
	if g.JSON {
		// Whatever the outcome once the run is recorded, as tpcc run's.
		if perr := g.printJSON(res); perr != nil && err == nil {
			return perr
		}
	} else {
		printRunSummary(g.Stdout, res.TPCC, v.store)
		if res.Check != nil {
			fmt.Fprintln(g.Stdout, "\nconsistency after the run:")
			printCheckResult(g.Stdout, res.Check)
		}
		if res.Report != "" {
			fmt.Fprintf(g.Stdout, "\nreport: %s\n", res.Report)
			fmt.Fprintf(g.Stdout, "the server keeps running; stop it with: tierbench server stop --datadir %s\n", res.Server.DataDir)
		}
	}
	if errors.As(err, &verdict) {
		// The verdict, the table or the document, is all that is printed.
		return &ExitError{Code: exitCodes[experiment.VerdictFailed]}
	}
	return options.Flagged(err, serverFlags)
}

// reachableDataDir returns the data directory to use for the default dir
// (server.DefaultDataDir), saying in one line when it is not dir itself;
// flag names the option that overrides it.
func reachableDataDir(ctx context.Context, g *Globals, dir, flag string) string {
	use, why := server.DefaultDataDir(ctx, dir)
	if use != dir {
		g.progressf("%s %s; using %s instead (%s DIR chooses another)\n", dir, why, use, flag)
	}
	return use
}
