package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpch"
	"github.com/tierbench/tierbench/internal/units"
)

func newTPCHCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tpch",
		Short: "The analytic workload: TPC-H's data, as the reference generator (dbgen) makes it, built in a database",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newTPCHGenerateCommand(g), newTPCHBuildCommand(g), newTPCHRunCommand(g), newTPCHQueriesCommand(g))
	return cmd
}

func newTPCHGenerateCommand(g *Globals) *cobra.Command {
	var cfg experiment.TPCHGenerateConfig
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Write the TPC-H tables of a scale factor as TABLE.tbl files, byte for byte dbgen's",
		Long: `Writes the eight TPC-H tables (or those of --tables) at scale factor --scale into --out as
part.tbl, partsupp.tbl, supplier.tbl, customer.tbl, orders.tbl, lineitem.tbl, nation.tbl and region.tbl:
the reference generator's flat-file format ('|' after every field), the same bytes dbgen writes for
that scale factor. --scale is a whole number from 1 (1, 10, 30, 100, …) or below 1 in steps of 0.001
(0.01, 0.1). The files are made new: --out must be new or empty.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := options.Flagged(cfg.Validate(), nil); err != nil {
				return err
			}
			res, err := experiment.GenerateTPCH(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if g.JSON {
				return g.printJSON(res)
			}
			for _, t := range res.Tables {
				fmt.Fprintf(g.Stdout, "%-9s %12d rows %10.1f MB  %s\n", t.Table, t.Rows, float64(t.Bytes)/1e6, t.File)
			}
			for _, t := range res.Refresh {
				fmt.Fprintf(g.Stdout, "%-16s %5d rows %10.1f MB  %s\n", t.Table, t.Rows, float64(t.Bytes)/1e6, t.File)
			}
			fmt.Fprintf(g.Stdout, "wrote %.1f MB at scale factor %g in %.1f s\n", float64(res.Bytes)/1e6, res.Scale, res.Seconds)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.Float64Var(&cfg.Scale, "scale", 0, "scale factor, e.g. 0.01, 0.1, 1, 10 (SF 1 is about 1 GB of files)")
	fs.StringVar(&cfg.Out, "out", "", "directory to write into (created; must be empty if it exists)")
	fs.StringSliceVar(&cfg.Tables, "tables", nil, "tables to write (default: all eight), e.g. lineitem,orders")
	fs.IntVar(&cfg.Workers, "workers", runtime.NumCPU(), "parallel generators")
	fs.IntVar(&cfg.Refresh, "refresh", 0, "also write this many update sets of the refresh functions, as dbgen -U does: orders.tbl.uN, lineitem.tbl.uN, delete.N")
	return cmd
}

// TPCHBuildOptions are the flags of `tpch build`.
type TPCHBuildOptions struct {
	dsnOption
	experiment.TPCHBuildConfig
}

func newTPCHBuildCommand(g *Globals) *cobra.Command {
	var opts TPCHBuildOptions
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Create and load the TPC-H tables of a scale factor (parallel COPY or LOAD DATA), then their keys, indexes and statistics",
		Long: `Creates the eight TPC-H tables in the database of --dsn (PostgreSQL or MariaDB) and loads them with
--build-vus connections in parallel, from tierbench's generator: the rows dbgen writes for --scale. Then
come the primary keys, the foreign-key indexes and fresh statistics (VACUUM ANALYZE, ANALYZE TABLE).
Build TPC-H in a database of its own: TPC-C has an ORDERS table too, which tierbench never drops for
TPC-H. An existing TPC-H build is replaced only with --drop.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTPCHBuild(cmd.Context(), g, opts)
		},
	}
	fs := cmd.Flags()
	opts.addFlag(fs)
	fs.Float64Var(&opts.Scale, "scale", 0, "scale factor, e.g. 0.01, 0.1, 1, 10 (SF 1 is about 1 GB of rows)")
	fs.IntVar(&opts.BuildVUs, "build-vus", runtime.NumCPU(), "parallel loader connections")
	fs.BoolVar(&opts.Drop, "drop", false, "drop an existing TPC-H build first")
	return cmd
}

func runTPCHBuild(ctx context.Context, g *Globals, opts TPCHBuildOptions) error {
	dsn, err := opts.check(g)
	if err != nil {
		return err
	}
	if err := options.Flagged(opts.Validate(), nil); err != nil {
		return err
	}
	db, err := openDSN(ctx, dsn, opts.flag())
	if err != nil {
		return err
	}
	defer db.Close()
	v := newView(&Globals{Stdout: io.Discard, Stderr: g.Stderr, JSON: true}) // the result is printed below
	res, err := experiment.BuildTPCH(ctx, db, opts.TPCHBuildConfig, v)
	v.done()
	if err != nil {
		if errors.Is(err, engine.ErrBadInput) || errors.Is(err, experiment.ErrInvalid) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("build interrupted; the partial tables were dropped")
		}
		return fmt.Errorf("build failed (the partial tables were dropped): %w", err)
	}
	if g.JSON {
		return g.printJSON(res)
	}
	fmt.Fprintf(g.Stdout, "built TPC-H at scale factor %g in %.1f s (load %.1f s, keys and indexes %.1f s, statistics %.1f s), %s on disk, %.0f MB/s streamed\n",
		res.Scale, res.Seconds, res.LoadSec, res.IndexSec, res.AnalyzeSec, units.FormatSize(res.Bytes), float64(res.CopyBytes)/1e6/max(res.LoadSec, 1e-9))
	tw := tabwriter.NewWriter(g.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "table\trows\t")
	for _, t := range tpch.Tables {
		fmt.Fprintf(tw, "%s\t%d\t\n", t, res.Rows[t])
	}
	return tw.Flush()
}

func newTPCHQueriesCommand(g *Globals) *cobra.Command {
	var cfg experiment.TPCHQueriesConfig
	cmd := &cobra.Command{
		Use:   "queries",
		Short: "Print a query stream's 22 queries with their substitution parameters, as qgen does",
		Long: `Prints the 22 queries of query stream --stream in its order, each ending with ';', in the SQL of
--dialect (postgres or mariadb), with the substitution parameters qgen -r draws for --seed + --stream
at --scale, or with --validate the specification's validation parameters. These are the statements
tpch run sends; --json prints them with their parameters.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := experiment.TPCHQueries(cfg)
			if err = options.Flagged(err, nil); err != nil {
				return err
			}
			if g.JSON {
				return g.printJSON(out)
			}
			for _, q := range out {
				fmt.Fprintf(g.Stdout, "-- Q%d: %s\n", q.Query, strings.Join(q.Params, ", "))
				for _, s := range q.SQL {
					fmt.Fprintf(g.Stdout, "%s;\n", s)
				}
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.Int64Var(&cfg.Seed, "seed", 1, "seed of the parameters, as qgen -r's; stream S draws from seed + S")
	fs.Float64Var(&cfg.Scale, "scale", 1, "scale factor (Q11's fraction depends on it)")
	fs.IntVar(&cfg.Stream, "stream", 0, "query stream: its order, its seed, Q15's view name")
	fs.BoolVar(&cfg.Validation, "validate", false, "the specification's validation parameters instead of drawn ones")
	fs.StringVar(&cfg.Dialect, "dialect", string(tpch.Postgres), "postgres or mariadb")
	return cmd
}

// TPCHRunOptions are the flags of `tpch run`.
type TPCHRunOptions struct {
	dsnOption
	options.TPCHRun
	metricsOptions
}

func newTPCHRunCommand(g *Globals) *cobra.Command {
	var opts TPCHRunOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the power test (RF1, the 22 queries, RF2) and, with --streams, the throughput test on a TPC-H build",
		Long: `Runs the TPC-H-derived workload on the build in --dsn's database (tpch build makes one). The power
test runs RF1, the 22 queries in the specification's order for stream 0 with the substitution parameters
qgen draws from --seed, and RF2, one after another; --repeat runs it again. --streams S adds the
throughput test: S query streams at once, each in its own order, beside a refresh stream of S RF1/RF2
pairs. Each query's time is the client's; with telemetry, the storage's read MB/s, await and p99
during it are recorded beside it. The figures are the geometric mean of the power test's query times,
the total time, the throughput test's queries per hour, and tierbench's composite of both; none is an
audited TPC-H metric. --validate runs the specification's validation parameters instead and checks
every answer; a wrong answer fails the run (exit 1), naming the query and its first differing row.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := runTPCHRun(cmd.Context(), g, opts)
			return err
		},
	}
	opts.addFlag(cmd.Flags())
	opts.TPCHRun.AddFlags(cmd.Flags())
	opts.metricsOptions.addFlags(cmd.Flags())
	return cmd
}

func runTPCHRun(ctx context.Context, g *Globals, opts TPCHRunOptions) (*experiment.TPCHRunResult, error) {
	cfg, err := opts.Config()
	if err = thresholds(g, err); err != nil {
		return nil, err
	}
	if cfg.DSN, err = opts.check(g); err != nil {
		return nil, err
	}
	v := newView(g)
	obs, done, err := opts.metricsOptions.begin(ctx, g, &cfg.Record, v)
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := experiment.RunTPCH(ctx, cfg, obs)
	return out, printRun(v, out, err, func() { printTPCHSummary(g.Stdout, out) })
}

// printTPCHQuery prints a finished query's line (not with --json).
func printTPCHQuery(w io.Writer, q *stored.TPCHQuery) {
	what := q.Refresh
	if what == "" {
		what = fmt.Sprintf("Q%d", q.Query)
	}
	line := fmt.Sprintf("%-10s %2d  %-4s %10.3f s  %8d rows  %s", q.Test, max(q.Rep, q.Stream), what, q.Seconds, q.Rows, q.Status)
	if q.Telemetry != nil {
		line += fmt.Sprintf("  read %.1f MB/s, await %.2f ms, p99 %.2f ms", q.ReadMBps, q.ReadAwait, q.DeviceP99)
	}
	if q.Error != "" {
		line += ": " + q.Error
	}
	fmt.Fprintln(w, line)
}

// printTPCHSummary prints a TPC-H run's figures (not with --json).
func printTPCHSummary(w io.Writer, out *experiment.TPCHRunResult) {
	for _, p := range out.Power {
		note := ""
		if p.Incomplete {
			note = " (a query timed out: its timeout counts)"
		}
		fmt.Fprintf(w, "power test %d: %.1f s, geometric mean of the 22 queries %.3f s%s, power@size %.1f\n", p.Rep, p.Seconds, p.GeoMean, note, p.PowerAtSize)
	}
	if out.Repeat > 1 {
		fmt.Fprintf(w, "geometric mean over %d power tests: %s (95%% interval)\n", out.Repeat, meanUnitCI(out.GeoMean, "s"))
	}
	if t := out.Throughput; t != nil {
		fmt.Fprintf(w, "throughput test: %d streams in %.1f s, throughput@size %.1f queries an hour\n", t.Streams, t.Seconds, t.ThroughputAtSize)
		fmt.Fprintf(w, "tierbench composite (not an audited QphH): %.1f\n", out.Composite)
	}
	switch {
	case out.AnswersChecked && len(out.Wrong) == 0:
		fmt.Fprintln(w, "answers: every query's answer is the reference's")
	case len(out.Wrong) > 0:
		fmt.Fprintf(w, "answers: WRONG for %s\n", strings.Join(out.Wrong, ", "))
	}
	fmt.Fprintf(w, "run %s: %s, scale factor %g, seed %d\n", out.RunID, out.Status, out.Scale, out.Seed)
}
