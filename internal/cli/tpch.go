package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/tpch"
	"github.com/tierbench/tierbench/internal/units"
)

func newTPCHCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tpch",
		Short: "The analytic workload: TPC-H's data, as the reference generator (dbgen) makes it, built in a database",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newTPCHGenerateCommand(g), newTPCHBuildCommand(g))
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
