package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/units"
)

func newTPCCCommand(g *Globals) *cobra.Command {
	cmd := newGroupCommand("tpcc", "Build, run and check the TPC-C workload")
	cmd.AddCommand(newTPCCBuildCommand(g), newTPCCCheckCommand(g), newTPCCGenerateCommand(g), newTPCCRunCommand(g))
	return cmd
}

// dsnOption is the --dsn flag every database command shares.
type dsnOption struct {
	DSN string
	// stdinDSN is the DSN read from standard input for --dsn -, once.
	stdinDSN string
}

func (o *dsnOption) addFlag(fs *pflag.FlagSet) {
	fs.StringVar(&o.DSN, "dsn", "", "database to use, e.g. postgres://user:password@127.0.0.1:5432/dbname; - reads it from the first line of standard input (default $TIERBENCH_DSN)")
}

// maxStdinDSN bounds the line --dsn - reads.
const maxStdinDSN = 64 << 10

// check returns the DSN, falling back to $TIERBENCH_DSN, once its scheme
// names an engine. --dsn - reads it from the first line of standard input
// (up to a newline or the end of input: a caller that keeps stdin open
// need not close it). Both keep the password out of the process list, and
// stdin out of every command line, such as one run over ssh.
func (o *dsnOption) check(g *Globals) (string, error) {
	dsn := o.DSN
	if dsn == "-" {
		if o.stdinDSN == "" {
			line, err := readDSNLine(g.Stdin)
			if err != nil {
				return "", err
			}
			o.stdinDSN = line
		}
		dsn = o.stdinDSN
	}
	if dsn == "" {
		dsn = g.Getenv("TIERBENCH_DSN")
	}
	if dsn == "" {
		return "", usagef("no database given; pass --dsn postgres://user:password@host:port/dbname, --dsn - with the DSN on standard input, or set TIERBENCH_DSN")
	}
	if _, err := all.NameOf(dsn); err != nil {
		// The message may quote the DSN; one from stdin is in no argument
		// for the last line of defence (scrubPasswords) to find.
		return "", &UsageError{Msg: o.flag() + ": " + engine.RedactIn(err.Error(), dsn)}
	}
	return dsn, nil
}

// readDSNLine reads the first line of r for --dsn -, without its line end.
func readDSNLine(r io.Reader) (string, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, maxStdinDSN+1), 4096)
	line, err := br.ReadString('\n')
	switch {
	case err == io.EOF && line == "":
		return "", usagef("--dsn - reads the DSN from standard input, which is empty; send the DSN as its first line, e.g. printf '%%s\\n' \"$DSN\" | tierbench … --dsn -")
	case err != nil && err != io.EOF:
		return "", fmt.Errorf("--dsn -: reading standard input: %w", err)
	case err == io.EOF && len(line) > maxStdinDSN:
		return "", usagef("--dsn -: the first line of standard input is longer than %d KiB; send the DSN alone on it", maxStdinDSN>>10)
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return "", usagef("--dsn -: the first line of standard input is empty; send the DSN on it")
	}
	return line, nil
}

// flag names where the DSN came from, for messages.
func (o *dsnOption) flag() string {
	switch o.DSN {
	case "":
		return "$TIERBENCH_DSN"
	case "-":
		return "--dsn - (standard input)"
	}
	return "--dsn"
}

// open checks the DSN and opens its database (see openDSN).
func (o *dsnOption) open(ctx context.Context, g *Globals) (engine.DB, error) {
	dsn, err := o.check(g)
	if err != nil {
		return nil, err
	}
	return openDSN(ctx, dsn, o.flag())
}

// openDSN opens the database a user's DSN names: a DSN that does not parse
// is bad input, said naming flag (where the DSN came from).
func openDSN(ctx context.Context, dsn, flag string) (engine.DB, error) {
	db, err := experiment.Open(ctx, dsn)
	if errors.Is(err, experiment.ErrInvalid) {
		return nil, &UsageError{Msg: flag + ": " + err.Error()}
	}
	return db, err
}

// TPCCBuildOptions are the flags of `tpcc build`.
type TPCCBuildOptions struct {
	dsnOption
	Warehouses   int
	BuildVUs     int
	Drop         bool
	Reuse        bool
	RoutinesOnly bool
}

// tpccBuildResult is the JSON of `tpcc build`: the build's, and with
// --reuse whether an existing schema was kept instead (then only its
// warehouses are said).
type tpccBuildResult struct {
	*tpcc.BuildResult
	Reused bool `json:"reused"`
}

// AddFlags registers the options' flags.
func (o *TPCCBuildOptions) AddFlags(fs *pflag.FlagSet) {
	o.addFlag(fs)
	fs.IntVar(&o.Warehouses, "warehouses", 0, "number of warehouses to build (each about 100 MB)")
	fs.IntVar(&o.BuildVUs, "build-vus", runtime.NumCPU(), "parallel loader connections")
	fs.BoolVar(&o.Drop, "drop", false, "drop an existing TPC-C schema first")
	fs.BoolVar(&o.Reuse, "reuse", false, "keep an existing TPC-C schema that is complete and has --warehouses warehouses (checked first), else build it and check it; "+
		"a schema of another size is dropped only with --drop")
	fs.BoolVar(&o.RoutinesOnly, "routines-only", false, "only (re)install the stored routines of --mode routines in an existing schema")
}

func newTPCCBuildCommand(g *Globals) *cobra.Command {
	var opts TPCCBuildOptions
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Create and load the TPC-C schema (parallel COPY), then build its keys and indexes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTPCCBuild(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runTPCCBuild(ctx context.Context, g *Globals, opts TPCCBuildOptions) error {
	dsn, err := opts.check(g)
	if err != nil {
		return err
	}
	if opts.RoutinesOnly {
		return installRoutines(ctx, g, dsn)
	}
	if err := options.Flagged(experiment.BuildConfig{Warehouses: opts.Warehouses, BuildVUs: opts.BuildVUs}.Validate(), nil); err != nil {
		return err
	}
	db, err := openDSN(ctx, dsn, opts.flag())
	if err != nil {
		return err
	}
	defer db.Close()
	v := newView(&Globals{Stdout: io.Discard, Stderr: g.Stderr, JSON: true}) // the result is printed below
	var res *tpcc.BuildResult
	if opts.Reuse {
		res, err = experiment.ReuseSchema(ctx, db, opts.Warehouses, opts.BuildVUs, opts.Drop, v)
	} else {
		res, err = experiment.Build(ctx, db, engine.BuildOptions{Warehouses: opts.Warehouses, Workers: opts.BuildVUs, Drop: opts.Drop}, v)
	}
	v.done()
	if err != nil {
		if errors.Is(err, engine.ErrBadInput) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("build interrupted; the partial schema was dropped")
		}
		return fmt.Errorf("build failed (the partial schema was dropped): %w", err)
	}
	if res == nil { // --reuse kept the schema
		if g.JSON {
			return g.printJSON(tpccBuildResult{BuildResult: &tpcc.BuildResult{Warehouses: opts.Warehouses}, Reused: true})
		}
		fmt.Fprintf(g.Stdout, "kept the complete %d-warehouse TPC-C schema already there\n", opts.Warehouses)
		return nil
	}
	if g.JSON {
		return g.printJSON(tpccBuildResult{BuildResult: res})
	}
	printBuildResult(g.Stdout, res)
	return nil
}

func installRoutines(ctx context.Context, g *Globals, dsn string) error {
	db, err := openDSN(ctx, dsn, "--dsn")
	if err != nil {
		return err
	}
	defer db.Close()
	runner, ok := db.(engine.Runner)
	if !ok {
		return usagef("this engine has no stored routines")
	}
	if _, err := runner.Schema(ctx); err != nil {
		return err
	}
	if err := runner.InstallRoutines(ctx); err != nil {
		return fmt.Errorf("installing the routines: %w", err)
	}
	if g.JSON {
		return g.printJSON(map[string]bool{"routines_installed": true})
	}
	fmt.Fprintln(g.Stdout, "TPC-C routines installed")
	return nil
}

func printBuildResult(w io.Writer, res *tpcc.BuildResult) {
	fmt.Fprintf(w, "built %s in %.1f s (load %.1f s, keys and indexes %.1f s), %s on disk, %.0f MB/s streamed\n",
		units.Plural(res.Warehouses, "warehouse", "warehouses"), res.Seconds, res.LoadSec, res.IndexSec, units.FormatSize(res.Bytes),
		float64(res.CopyBytes)/1e6/max(res.LoadSec, 1e-9))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "table\trows\t")
	for _, t := range tpcc.Tables {
		fmt.Fprintf(tw, "%s\t%d\t\n", t, res.Rows[t])
	}
	tw.Flush()
}

// TPCCCheckOptions are the flags of `tpcc check`.
type TPCCCheckOptions struct {
	dsnOption
	All bool
}

// AddFlags registers the options' flags.
func (o *TPCCCheckOptions) AddFlags(fs *pflag.FlagSet) {
	o.addFlag(fs)
	fs.BoolVar(&o.All, "all", false, "run the expensive conditions (3.3.2.10, 3.3.2.12) on every warehouse instead of a sample")
}

func newTPCCCheckCommand(g *Globals) *cobra.Command {
	var opts TPCCCheckOptions
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Verify the 12 consistency conditions (3.3.2) and the table cardinalities (4.2.2)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTPCCCheck(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runTPCCCheck(ctx context.Context, g *Globals, opts TPCCCheckOptions) error {
	db, err := opts.open(ctx, g)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := db.CheckTPCC(ctx, engine.CheckOptions{All: opts.All, Seed: uint64(time.Now().UnixNano())})
	if err != nil {
		return err
	}
	if g.JSON {
		if err := g.printJSON(res); err != nil {
			return err
		}
	} else {
		printCheckResult(g.Stdout, res)
	}
	if !res.OK {
		// The verdict is printed; exit 1 without another message.
		return &ExitError{Code: ExitFailure}
	}
	return nil
}

func printCheckResult(w io.Writer, res *tpcc.CheckResult) {
	verdict := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "FAIL"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "condition\tresult\tviolations\tscope\twhat")
	for _, c := range res.Conditions {
		scope := c.Scope
		if c.Scope == "sample" {
			ws := make([]string, len(c.Warehouses))
			for i, x := range c.Warehouses {
				ws[i] = fmt.Sprint(x)
			}
			scope = "sample (warehouses " + strings.Join(ws, ",") + ")"
		}
		result := verdict(c.OK)
		if c.Scope == "not-applicable" {
			result = "n/a"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", c.ID, result, c.Violations, scope, c.Title)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "table (4.2.2)\tresult\trows\texpected\tnote")
	cards := append([]tpcc.Cardinality(nil), res.Cardinalities...)
	sort.SliceStable(cards, func(i, j int) bool { return !cards[i].OK && cards[j].OK })
	for _, c := range cards {
		exp := fmt.Sprint(c.Expected)
		if c.Tolerance > 0 {
			exp += fmt.Sprintf(" ±%.0f%%", c.Tolerance*100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", c.Table, verdict(c.OK), c.Found, exp, c.Note)
	}
	tw.Flush()
	if res.OK {
		fmt.Fprintf(w, "\nall consistency conditions hold (%s)\n", units.Plural(res.Warehouses, "warehouse", "warehouses"))
	} else {
		fmt.Fprintf(w, "\nconsistency check FAILED\n")
	}
}
