package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"

	"github.com/tierbench/tierbench/internal/engine/postgres"
	"github.com/tierbench/tierbench/internal/tpcc"
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
		Short: "Write the initial population as COPY text files (one per table and load task), with PostgreSQL DDL",
		Long: `Writes exactly what 'tpcc build' streams into the database, as tab-separated text files
(PostgreSQL COPY text format; MySQL LOAD DATA reads it too), plus postgres-schema.sql,
postgres-indexes.sql, postgres-analyze.sql and tasks.txt (one load task per line: table=file pairs).
bench/build.sh uses it to measure the database's own COPY limit.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTPCCGenerate(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

type generateResult struct {
	Warehouses int     `json:"warehouses"`
	Dir        string  `json:"dir"`
	Files      int     `json:"files"`
	Bytes      int64   `json:"bytes"`
	Seconds    float64 `json:"seconds"`
}

func runTPCCGenerate(ctx context.Context, g *Globals, opts TPCCGenerateOptions) error {
	if opts.Warehouses < 1 {
		return usagef("--warehouses must be 1 or more (got %d)", opts.Warehouses)
	}
	if opts.Out == "" {
		return usagef("--out DIR is required")
	}
	if opts.Workers < 1 {
		return usagef("--workers must be 1 or more (got %d)", opts.Workers)
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
	start := time.Now()
	tasks := tpcc.LoadTasks(opts.Warehouses)
	lines := make([]string, len(tasks))
	var bytes, files atomic.Int64
	work := make(chan int, len(tasks))
	for i := range tasks {
		work <- i
	}
	close(work)
	seeds := tpcc.NewRand(uint64(start.UnixNano()))
	cload := tpcc.NewLoadC(seeds.Child())
	eg, ctx := errgroup.WithContext(ctx)
	for range opts.Workers {
		gen := tpcc.NewGen(seeds.Child(), cload, start)
		eg.Go(func() error {
			for i := range work {
				t := tasks[i]
				var pairs []string
				for _, s := range t.Streams(gen) {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					name := fmt.Sprintf("%s.%d.tsv", s.Table, t.W)
					n, err := writeStream(filepath.Join(dir, name), s)
					if err != nil {
						return err
					}
					bytes.Add(n)
					files.Add(1)
					pairs = append(pairs, s.Table+"="+name)
				}
				if t.Kind == "rest" {
					gen.ReleasePlan(t.W)
				}
				lines[i] = strings.Join(pairs, " ")
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return fmt.Errorf("generating: %w", err)
	}
	extra := map[string]string{
		"tasks.txt":            strings.Join(lines, "\n") + "\n",
		"postgres-schema.sql":  postgres.SchemaSQL(),
		"postgres-indexes.sql": strings.Join(postgres.IndexStatements(), ";\n") + ";\n",
		"postgres-analyze.sql": strings.Join(postgres.AfterLoadStatements(), ";\n") + ";\n",
	}
	for name, content := range extra {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	res := generateResult{Warehouses: opts.Warehouses, Dir: dir, Files: int(files.Load()), Bytes: bytes.Load(),
		Seconds: time.Since(start).Seconds()}
	if g.JSON {
		return g.printJSON(res)
	}
	fmt.Fprintf(g.Stdout, "wrote %d files (%.1f MB) for %d warehouses to %s in %.1f s\n",
		res.Files, float64(res.Bytes)/1e6, res.Warehouses, res.Dir, res.Seconds)
	return nil
}

func writeStream(path string, s tpcc.Stream) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := w.ReadFrom(s.Reader())
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("writing %s: %w", path, err)
	}
	return n, nil
}
