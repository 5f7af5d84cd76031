package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
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
	repeatOptions
	noisyOptions
	telemetryOptions
	metricsOptions
	thresholdOptions
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
	o.repeatOptions.addFlags(fs, "VU count", "1,2,4,1,2,4")
	o.noisyOptions.addFlags(fs, "step")
	o.telemetryOptions.addFlags(fs)
	o.metricsOptions.addFlags(fs)
	o.thresholdOptions.addFlags(fs, "nopm>=50000 or new_order.p99<=10ms")
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

// runSummary is the JSON of `tierbench run`. The DSN is left out: it
// carries the server's password (`server status --json` prints it).
type runSummary struct {
	Server struct {
		Engine  string `json:"engine"`
		DataDir string `json:"datadir"`
		Port    int    `json:"port"`
		Version string `json:"version"`
		Reused  bool   `json:"reused"`
	} `json:"server"`
	Build  *tpcc.BuildResult      `json:"build"` // null when a valid schema was reused
	TPCC   *experiment.TPCCResult `json:"tpcc"`
	Check  *tpcc.CheckResult      `json:"check"`  // after the run
	Report string                 `json:"report"` // the HTML report's path
}

func runMain(ctx context.Context, g *Globals, opts RunOptions) error {
	if opts.Warehouses < 1 {
		return usagef("--warehouses must be 1 or more (got %d)", opts.Warehouses)
	}
	if opts.BuildVUs < 1 || opts.BuildVUs > 1024 {
		return usagef("--build-vus must be between 1 and 1024 (got %d)", opts.BuildVUs)
	}
	if fi, err := os.Stat(opts.DataDir); err == nil && !fi.IsDir() {
		return usagef("--datadir %s is a file, not a directory; give a new or empty directory, or a managed server's", opts.DataDir)
	}
	if ext := filepath.Ext(opts.Report); opts.Report != "" && ext != ".html" && ext != ".htm" {
		// Checked now, not after the run when the report is written.
		return usagef("--report %s: give an .html file name (the Markdown and data directory are named after it)", opts.Report)
	}
	if opts.Engine != "" {
		if err := managedEngineFlag(opts.Engine); err != nil {
			return err
		}
	}
	if !opts.DataDirSet {
		opts.DataDir = reachableDataDir(ctx, g, opts.DataDir, "--datadir")
	}
	runOpts := TPCCRunOptions{VUs: opts.VUs, RampUp: opts.RampUp, Duration: opts.Duration, Results: opts.Results,
		Mode: opts.Mode, repeatOptions: opts.repeatOptions, noisyOptions: opts.noisyOptions, telemetryOptions: opts.telemetryOptions, metricsOptions: opts.metricsOptions}
	cfg, err := runOpts.validate()
	if err != nil {
		return err
	}
	if cfg.Thresholds, err = opts.thresholdOptions.parse(g, stored.KindTPCC); err != nil {
		return err
	}
	v := newView(g) // with --json, everything goes into the one document printed at the end
	obs, done, err := opts.metricsOptions.begin(ctx, g, &cfg.Record, v)
	if err != nil {
		return err
	}
	defer done()
	info, err := server.Start(ctx, server.Options{Engine: opts.Engine, DataDir: opts.DataDir, KeepRunning: true}) // it keeps running afterwards
	if err != nil {
		return experiment.ServerError(err)
	}
	var sum runSummary
	sum.Server.Engine, sum.Server.DataDir, sum.Server.Port = info.Engine, info.DataDir, info.Port
	sum.Server.Version, sum.Server.Reused = info.Version, info.AlreadyRunning
	g.progressf("server: %s %s on 127.0.0.1:%d, data in %s\n", info.Engine, info.Version, info.Port, info.DataDir)

	db, err := all.Open(ctx, info.DSN)
	if err != nil {
		return err
	}
	defer db.Close()
	sum.Build, err = experiment.EnsureSchema(ctx, db, opts.Warehouses, opts.BuildVUs, v)
	v.done()
	if err != nil {
		return err
	}
	cfg.DSN = info.DSN
	sum.TPCC, err = experiment.RunTPCC(ctx, cfg, obs)
	v.done()
	if sum.TPCC != nil && !g.JSON {
		printRunSummary(g.Stdout, sum.TPCC, v.store)
	}
	// A breached threshold is the run's verdict, given at the end: the
	// check and the report still come.
	var breached *experiment.Breached
	if err != nil && !errors.As(err, &breached) {
		// Interrupted or failed once recorded: the document says what was
		// measured, as tpcc run's does; no check and no report follow.
		return printMainPartial(g, &sum, err)
	}
	sum.Check, err = db.CheckTPCC(ctx, engine.CheckOptions{Seed: 1})
	if err != nil {
		if ctx.Err() != nil { // Ctrl-C during the check: the run itself is whole
			err = &experiment.Interrupted{RunID: sum.TPCC.RunID, Kept: fmt.Sprintf("%d finished steps", len(sum.TPCC.Steps))}
		}
		return printMainPartial(g, &sum, err)
	}
	if err := experiment.StoreCheck(ctx, opts.Results, sum.TPCC.RunID, sum.Check); err != nil {
		return err
	}
	rep, err := runReport(ctx, &Globals{Stdout: io.Discard, Stderr: g.Stderr}, ReportOptions{Results: opts.Results,
		Runs: []string{sum.TPCC.RunID}, Out: opts.Report})
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	sum.Report = rep.HTML
	if g.JSON {
		if err := g.printJSON(sum); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(g.Stdout, "\nconsistency after the run:")
		printCheckResult(g.Stdout, sum.Check)
		fmt.Fprintf(g.Stdout, "\nreport: %s\n", rep.HTML)
		fmt.Fprintf(g.Stdout, "the server keeps running; stop it with: tierbench server stop --datadir %s\n", info.DataDir)
	}
	if !sum.Check.OK {
		return &ExitError{Code: ExitFailure}
	}
	if breached != nil {
		return breached
	}
	return nil
}

// printMainPartial prints, with --json, the document of a main job that
// stopped after its TPC-C run was recorded (sum.TPCC is set): what it
// measured, with the run's status and no check or report. It returns err.
func printMainPartial(g *Globals, sum *runSummary, err error) error {
	if g.JSON && sum.TPCC != nil {
		if perr := g.printJSON(sum); perr != nil {
			return errors.Join(err, perr)
		}
	}
	return err
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
