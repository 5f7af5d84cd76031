package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/report"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/version"
)

// ReportOptions are the flags of `tierbench report`.
type ReportOptions struct {
	Results      string
	Runs         []string
	Group        string
	Labels       []string
	Out          string
	Overwrite    bool
	DiscardNoisy bool
}

// AddFlags registers the options' flags.
func (o *ReportOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Results, "results", defaultResultsDir, "results store directory")
	fs.StringSliceVar(&o.Runs, "run", nil, "runs to report, the first being the baseline (ids, unique prefixes or latest; repeat or comma-separate; default: the latest run)")
	fs.StringVar(&o.Group, "group", "", "with no --run: every run of this results group (a scenario's), oldest first")
	fs.StringArrayVar(&o.Labels, "label", nil, "name a run in the report: ID=NAME (repeatable)")
	fs.StringVar(&o.Out, "out", "", "the HTML file to write; NAME.md and NAME-data/ (CSV, SVG) go beside it (default: RESULTS/report.html)")
	fs.BoolVar(&o.Overwrite, "overwrite", false, "replace output files even when an earlier tierbench report did not write them")
	fs.BoolVar(&o.DiscardNoisy, "discard-noisy", false, "leave repetitions flagged noisy (TPC-C steps, disk points, backup phases) out of the means and comparisons (they stay listed)")
}

func newReportCommand(g *Globals) *cobra.Command {
	var opts ReportOptions
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Write the report of one or more runs: one self-contained HTML file, Markdown and CSV beside it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := runReport(cmd.Context(), g, opts)
			return err
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func (o *ReportOptions) labels() (map[string]string, error) {
	m := map[string]string{}
	for _, l := range o.Labels {
		id, name, ok := strings.Cut(l, "=")
		id, name = strings.TrimSpace(id), strings.TrimSpace(name)
		if !ok || id == "" || name == "" {
			return nil, usagef("--label %q: give ID=NAME, e.g. --label 20261121-0345=nvme", l)
		}
		m[id] = name
	}
	return m, nil
}

// runReport writes the report and prints where (with --json, report.Written).
func runReport(ctx context.Context, g *Globals, opts ReportOptions) (report.Written, error) {
	labels, err := opts.labels()
	if err != nil {
		return report.Written{}, err
	}
	if opts.Out == "" {
		opts.Out = filepath.Join(opts.Results, "report.html")
	}
	if ext := filepath.Ext(opts.Out); ext != ".html" && ext != ".htm" {
		return report.Written{}, usagef("--out %s: give an .html file name (the Markdown and data directory are named after it)", opts.Out)
	}
	store, err := openResults(opts.Results)
	if err != nil {
		return report.Written{}, err
	}
	defer store.Close()
	w, err := report.Write(ctx, store, report.Options{Runs: opts.Runs, Group: opts.Group, Labels: labels, Out: opts.Out, Overwrite: opts.Overwrite,
		DiscardNoisy: opts.DiscardNoisy, Version: version.Version})
	switch {
	case errors.Is(err, report.ErrNotOurs):
		return w, usagef("%v; choose another --out, or pass --overwrite to replace it", err)
	case errors.Is(err, results.ErrNotFound):
		return w, usagef("%v; see the run ids with: tierbench results list --results %s", err, opts.Results)
	case errors.Is(err, results.ErrAmbiguous):
		return w, usagef("%v; give more of the id", err)
	case errors.Is(err, report.ErrLabelNoRun):
		return w, usagef("--%v (the runs are chosen with --run)", err)
	case err != nil:
		return w, err
	}
	if g.JSON {
		return w, g.printJSON(w)
	}
	fmt.Fprintf(g.Stdout, "report: %s\n", w.HTML)
	fmt.Fprintf(g.Stdout, "  markdown: %s\n  data:     %s (%d CSV and SVG files)\n  runs:     %s\n  sections: %s\n",
		w.Markdown, w.DataDir, w.Files, strings.Join(w.Runs, ", "), strings.Join(w.Sections, ", "))
	return w, nil
}
