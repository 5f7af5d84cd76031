package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/units"
)

// TPCCGenerateOptions are the flags of `tpcc generate`.
type TPCCGenerateOptions struct {
	Warehouses int
	Out        string
	Workers    int
}

// AddFlags registers the options' flags.
func (o *TPCCGenerateOptions) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Warehouses, "warehouses", 0, "number of warehouses to generate")
	fs.StringVar(&o.Out, "out", "", "directory to write into (created; must be empty if it exists)")
	fs.IntVar(&o.Workers, "workers", runtime.NumCPU(), "parallel generators")
}

func newTPCCGenerateCommand(g *Globals) *cobra.Command {
	var opts TPCCGenerateOptions
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Write the initial population as COPY text files (one per table and load task), with PostgreSQL's and MariaDB's DDL",
		Long: `Writes exactly what 'tpcc build' streams into the database, as tab-separated text files
(PostgreSQL COPY text format; MariaDB's and MySQL's LOAD DATA reads it too), plus postgres-schema.sql,
postgres-indexes.sql, postgres-analyze.sql, mariadb-schema.sql, mariadb-indexes.sql and tasks.txt (one
load task per line: table=file pairs). The files are the same whichever engine loads them.
bench/build.sh uses it to measure the database's own COPY limit.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTPCCGenerate(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runTPCCGenerate(ctx context.Context, g *Globals, opts TPCCGenerateOptions) error {
	if err := options.Flagged(experiment.BuildConfig{Warehouses: opts.Warehouses, BuildVUs: opts.Workers}.Validate(),
		map[string]string{"build_vus": "--workers"}); err != nil {
		return err
	}
	if opts.Out == "" {
		return usagef("--out DIR is required")
	}
	dir, err := filepath.Abs(opts.Out)
	if err != nil {
		return usagef("--out %q: %v", opts.Out, err)
	}
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return usagef("--out %s is a file; give a new or empty directory", dir)
		}
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			return usagef("--out %s is not empty; give a new or empty directory (tierbench does not overwrite files it did not create)", dir)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	res, err := experiment.Generate(ctx, opts.Warehouses, opts.Workers, dir)
	if err != nil {
		return err
	}
	if g.JSON {
		return g.printJSON(res)
	}
	fmt.Fprintf(g.Stdout, "wrote %s (%.1f MB) for %s to %s in %.1f s\n",
		units.Plural(res.Files, "file", "files"), float64(res.Bytes)/1e6, units.Plural(res.Warehouses, "warehouse", "warehouses"), res.Dir, res.Seconds)
	return nil
}
