package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
)

const defaultResultsDir = experiment.DefaultResults

func newResultsCommand(g *Globals) *cobra.Command {
	cmd := newGroupCommand("results", "List and show the runs in a results store")
	cmd.AddCommand(newResultsListCommand(g), newResultsShowCommand(g))
	return cmd
}

// ResultsListOptions are the flags of `results list`.
type ResultsListOptions struct {
	Dir string
}

// AddFlags registers the options' flags.
func (o *ResultsListOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Dir, "results", defaultResultsDir, "results store directory")
}

// ResultsShowOptions are the flags and argument of `results show`.
type ResultsShowOptions struct {
	Dir string
	Run string // an id, a unique prefix of one, or "latest"
}

// AddFlags registers the options' flags.
func (o *ResultsShowOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Dir, "results", defaultResultsDir, "results store directory")
}

func newResultsListCommand(g *Globals) *cobra.Command {
	var opts ResultsListOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the runs in a results store, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runResultsList(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func newResultsShowCommand(g *Globals) *cobra.Command {
	var opts ResultsShowOptions
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one run: its parameters, steps and series (RUN: an id, a unique prefix of one, or latest)",
		Args:  needArgs(1, "one run: an id, a unique prefix of one, or latest"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run = args[0]
			return runResultsShow(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

// checkResultsDir refuses a --results that can never be a store's
// directory (experiment.CheckResults), before anything starts.
func checkResultsDir(dir string) error { return options.Flagged(experiment.CheckResults(dir), nil) }

// openResults opens an existing store read-only: listing must not create one.
func openResults(dir string) (*results.Store, error) {
	if err := checkResultsDir(dir); err != nil {
		return nil, err
	}
	s, err := results.OpenReadOnly(dir)
	if errors.Is(err, results.ErrNoStore) {
		return nil, usagef("no results store in %s; run a benchmark first (e.g. tierbench run), or point --results at one", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the results store: %w", err)
	}
	return s, nil
}

func runResultsList(ctx context.Context, g *Globals, opts ResultsListOptions) error {
	store, err := openResults(opts.Dir)
	if err != nil {
		return err
	}
	defer store.Close()
	list, _, err := store.List(ctx, results.ListQuery{})
	if err != nil {
		return err
	}
	if g.JSON {
		return g.printJSON(struct {
			Runs []results.Listed `json:"runs"`
		}{list})
	}
	if len(list) == 0 {
		fmt.Fprintf(g.Stdout, "no runs in %s yet\n", store.Path())
		return nil
	}
	tw := tabwriter.NewWriter(g.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tSTARTED\tDURATION\tSTEPS\tHEADLINE")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, r.Kind, r.Status, localTime(r.StartedAt),
			runDuration(r.Run), r.Steps, cmp.Or(r.Headline, "-"))
	}
	return tw.Flush()
}

func localTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }

// runDuration is finished - started; a run still going shows its age so far.
func runDuration(r results.Run) string {
	switch {
	case r.FinishedAt != nil:
		return r.FinishedAt.Sub(r.StartedAt).Round(time.Second).String()
	case r.Status == results.StatusRunning:
		return time.Since(r.StartedAt).Round(time.Second).String() + " so far"
	}
	return "-"
}

func runResultsShow(ctx context.Context, g *Globals, opts ResultsShowOptions) error {
	store, err := openResults(opts.Dir)
	if err != nil {
		return err
	}
	defer store.Close()
	out, err := store.Show(ctx, opts.Run)
	switch {
	case errors.Is(err, results.ErrNotFound) && opts.Run == "latest":
		return usagef("no runs in %s yet; run a benchmark first (e.g. tierbench run)", opts.Dir)
	case errors.Is(err, results.ErrNotFound):
		return usagef("no run %q in %s; see the run ids with: tierbench results list --results %s", opts.Run, opts.Dir, opts.Dir)
	case errors.Is(err, results.ErrAmbiguous):
		return usagef("%q matches more than one run in %s; give more of the id (tierbench results list --results %s)", opts.Run, opts.Dir, opts.Dir)
	case err != nil:
		return err
	}
	if g.JSON {
		return g.printJSON(out)
	}
	printRunShow(g.Stdout, out)
	return nil
}

func printRunShow(w io.Writer, out results.Shown) {
	r := out.Run
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s\n", r.ID)
	fmt.Fprintf(tw, "kind\t%s\n", r.Kind)
	if r.Group != "" {
		fmt.Fprintf(tw, "group\t%s\n", r.Group)
	}
	fmt.Fprintf(tw, "status\t%s\n", r.Status)
	fmt.Fprintf(tw, "host\t%s (pid %d)\n", r.Host, r.PID)
	fmt.Fprintf(tw, "started\t%s\n", localTime(r.StartedAt))
	if r.FinishedAt != nil {
		fmt.Fprintf(tw, "finished\t%s (%s)\n", localTime(*r.FinishedAt), runDuration(r))
	}
	tw.Flush()
	if len(r.Params) > 0 {
		fmt.Fprintf(w, "params\n%s\n", indentJSON(r.Params))
	}

	fmt.Fprintln(w)
	switch {
	case len(out.Steps) == 0:
		fmt.Fprintln(w, "no finished steps")
	case r.Kind == stored.KindTPCC:
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "step\tVUs\tTPM\tNOPM\tclient TPM\tclient NOPM\terrors\tNO p95 ms\tNO p99 ms\t")
		for _, st := range out.Steps {
			var m stored.TPCCStep
			if json.Unmarshal(st.Metrics, &m) != nil {
				fmt.Fprintf(tw, "%d\t(unreadable metrics)\t\t\t\t\t\t\t\t\n", st.Index+1)
				continue
			}
			no := m.Txn["new_order"]
			step := strconv.Itoa(st.Index + 1)
			if m.Interrupted {
				step += " (cut)" // as disk points are
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.2f\t%.2f\t\n", step, m.VUs, m.TPM, m.NOPM,
				m.ClientTPM, m.ClientNOPM, m.Errors, no.P95Ms, no.P99Ms)
		}
		tw.Flush()
	default:
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "STEP\tNAME\tMEASURED")
		for _, st := range out.Steps {
			fmt.Fprintf(tw, "%d\t%s\t%s\n", st.Index+1, st.Name, st.MeasureEnd.Sub(st.MeasureStart).Round(time.Millisecond))
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	if len(out.Series) == 0 {
		fmt.Fprintln(w, "series: none")
	} else {
		fmt.Fprintf(w, "series: %s\n", strings.Join(out.Series, ", "))
	}
}

// indentJSON pretty-prints a JSON document, indented under its heading.
func indentJSON(doc json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, doc, "  ", "  "); err != nil {
		return "  " + string(doc)
	}
	return "  " + b.String()
}

// runEnd is how a stored run ended.
type runEnd struct {
	store            *results.Store
	runID, status    string
	out              any    // the run's document: printed with --json, kept as the run's summary
	summary          func() // prints the run's end without --json
	kept             string // what an interrupted run keeps, e.g. "2 finished steps"
	done             string // what a failed run finished, e.g. "2 steps"
	runErr, storeErr error
}

// endRun records a run's end in the store, prints it, and returns the
// command's outcome: exit 130 when interrupted, then the run's failure, then
// the store's.
func (g *Globals) endRun(ctx context.Context, e runEnd) error {
	storeErr := e.storeErr
	if err := e.store.FinishRun(ctx, e.runID, e.status, e.out); err != nil && storeErr == nil {
		storeErr = err
	}
	if g.JSON {
		if err := g.printJSON(e.out); err != nil {
			return err
		}
	} else {
		e.summary()
	}
	switch {
	case e.status == results.StatusInterrupted:
		return &ExitError{Code: ExitInterrupted, Msg: fmt.Sprintf("interrupted; %s kept in run %s", e.kept, e.runID)}
	case e.runErr != nil:
		return fmt.Errorf("run %s failed after %s: %w", e.runID, e.done, e.runErr)
	case storeErr != nil:
		return fmt.Errorf("run %s finished but the results store failed: %w", e.runID, storeErr)
	}
	return nil
}
