package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
)

func newTPCHCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tpch",
		Short: "The analytic workload: TPC-H's data, as the reference generator (dbgen) makes it",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newTPCHGenerateCommand(g))
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
			fmt.Fprintf(g.Stdout, "wrote %.1f MB at scale factor %g in %.1f s\n", float64(res.Bytes)/1e6, res.Scale, res.Seconds)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.Float64Var(&cfg.Scale, "scale", 0, "scale factor, e.g. 0.01, 0.1, 1, 10 (SF 1 is about 1 GB of files)")
	fs.StringVar(&cfg.Out, "out", "", "directory to write into (created; must be empty if it exists)")
	fs.StringSliceVar(&cfg.Tables, "tables", nil, "tables to write (default: all eight), e.g. lineitem,orders")
	fs.IntVar(&cfg.Workers, "workers", runtime.NumCPU(), "parallel generators")
	return cmd
}
