package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/units"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// TPCCRunOptions are the flags of `tpcc run`: a run's options, its --dsn
// and the live metrics endpoint's.
type TPCCRunOptions struct {
	dsnOption
	options.TPCCRun
	metricsOptions
}

// AddFlags registers the options' flags.
func (o *TPCCRunOptions) AddFlags(fs *pflag.FlagSet) {
	o.addFlag(fs)
	o.TPCCRun.AddFlags(fs)
	o.metricsOptions.addFlags(fs)
}

func newTPCCRunCommand(g *Globals) *cobra.Command {
	var opts TPCCRunOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run TPC-C in steps of virtual users: TPM/NOPM from the database, latency percentiles, input audit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := runTPCCRun(cmd.Context(), g, opts)
			return err
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runTPCCRun(ctx context.Context, g *Globals, opts TPCCRunOptions) (*experiment.TPCCResult, error) {
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
	out, err := experiment.RunTPCC(ctx, cfg, obs)
	return out, printRun(v, out, err, func() { printRunSummary(g.Stdout, out, v.store) })
}

// printStep prints a finished step's table (not with --json).
func printStep(w io.Writer, s *stored.TPCCStep, engine string) {
	rep := ""
	if s.Repetition > 0 {
		rep = fmt.Sprintf(" (repetition %d)", s.Repetition)
	}
	measured := fmt.Sprintf("%.0f s measured", s.Seconds)
	if s.Interrupted {
		measured = fmt.Sprintf("cut short by %s after %.1f s measured", s.CutBy(), s.Seconds)
	}
	fmt.Fprintf(w, "step %d: %d VUs%s, %s: %d TPM, %d NOPM (client: %d TPM, %d NOPM), %d errors, %.0f µs client CPU per transaction\n",
		s.Index+1, s.VUs, rep, measured, s.TPM, s.NOPM, s.ClientTPM, s.ClientNOPM, s.Errors, s.ClientCPUPerTxnUs)
	for _, n := range s.Notes() {
		fmt.Fprintln(w, n)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "transaction\tcount\tp50 ms\tp95 ms\tp99 ms\tp99.9 ms\tmax ms\t"
	if s.OpenLoop != nil { // latency from the intended start, then service time
		head += "service p50\tservice p99\t"
	}
	fmt.Fprintln(tw, head)
	for k := range tpcc.NumKinds {
		t := s.Txn[k.String()]
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t", k, t.Count, t.P50Ms, t.P95Ms, t.P99Ms, t.P999Ms, t.MaxMs)
		if s.OpenLoop != nil {
			svc := s.TxnService[k.String()]
			fmt.Fprintf(tw, "%.2f\t%.2f\t", svc.P50Ms, svc.P99Ms)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if line := responseTimeLine(s.ResponseTime); line != "" {
		fmt.Fprintln(w, line)
	}
	if s.EfficiencyPct != nil {
		verdict := s.EfficiencyVerdict
		if verdict == "fail" {
			verdict = fmt.Sprintf("FAIL: below %.0f%%", tpcc.MinEfficiencyPct)
		}
		fmt.Fprintf(w, "efficiency %.1f%% of the %.2f tpmC a warehouse gives at the specification's pace [%s]\n",
			*s.EfficiencyPct, tpcc.MaxTpmCPerWarehouse, verdict)
	}
	if line := telemetryLine(s.Host, s.Device, s.DB, s.Hosts...); line != "" {
		fmt.Fprintln(w, line)
	}
	// HammerDB's line, with the engine's name where HammerDB names its database.
	fmt.Fprintf(w, "System achieved %d NOPM from %d %s TPM\n\n", s.NOPM, s.TPM, all.Display(engine))
}

func printRunSummary(w io.Writer, out *experiment.TPCCResult, storePath string) {
	if len(out.Steps) == 0 {
		fmt.Fprintf(w, "run %s %s with no finished step\n", out.RunID, out.Status)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	open := out.Steps[0].OpenLoop != nil
	head := "VUs\tTPM\tNOPM\tclient TPM\tclient NOPM\tTPM/VU\tNO p95 ms\terrors\treconnects\tNOPM check\t"
	if open {
		head = "offered TPM\t" + head + "NO p99 ms\tservice p99\tlate\tunserved\t"
	}
	fmt.Fprintln(tw, head)
	for _, s := range out.Steps {
		check := "ok"
		if !s.NOPMCheck.OK {
			check = fmt.Sprintf("OFF by %d", s.NOPMCheck.Database-s.NOPMCheck.Client)
		}
		if open {
			fmt.Fprintf(tw, "%.0f\t", s.OfferedTPM)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%.2f\t%d\t%d\t%s\t", s.VUs, s.TPM, s.NOPM, s.ClientTPM, s.ClientNOPM,
			s.TPM/int64(s.VUs), s.Txn["new_order"].P95Ms, s.Errors, s.Reconnects, check)
		if o := s.OpenLoop; o != nil {
			fmt.Fprintf(tw, "%.2f\t%.2f\t%d\t%d\t", s.Txn["new_order"].P99Ms, o.TxnService["new_order"].P99Ms, o.Late, o.Unserved)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, s := range out.Steps {
		if s.Interrupted {
			fmt.Fprintf(w, "the last step was cut short by %s: its row is over the %.1f s it measured\n", s.CutBy(), s.Seconds)
		}
	}
	if out.Repeat > 1 {
		printRepeatSummary(w, out)
	}
	if p := out.RateProbe; p != nil {
		fmt.Fprintf(w, "maximum: %s served %s transactions a minute in a %.0f s closed-loop step; %s of it offered %s TPM\n",
			units.Plural(p.VUs, "VU", "VUs"), units.Thousands(p.ClientTPM), p.Seconds, units.RateListText(p.FractionsPct, true), units.RateListText(p.Rates, false))
	}
	for _, k := range out.KneeTexts() {
		fmt.Fprintln(w, k)
	}
	last := out.Steps[len(out.Steps)-1]
	var audit []string
	for _, a := range last.Audit {
		audit = append(audit, fmt.Sprintf("%s %.2f [%s]", a.Name, a.Value, a.Verdict))
	}
	fmt.Fprintf(w, "input audit (last step): %s\n", strings.Join(audit, ", "))
	fmt.Fprintf(w, "run %s %s; stored in %s\n", out.RunID, out.Status, storePath)
}

// printRepeatSummary prints each VU count's figures over its repetitions:
// the mean ± the 95% interval's half-width, and New-Order's p95 pooled
// from the repetitions' merged histograms beside the mean of theirs.
func printRepeatSummary(w io.Writer, out *experiment.TPCCResult) {
	fmt.Fprintf(w, "over %d repetitions (mean ± half the 95%% confidence interval):\n", out.Repeat)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "VUs\tn\tNOPM\tTPM\tNO p95 ms\tNO p95 ms pooled\t")
	no := tpcc.NewOrder.String()
	for _, s := range out.Steps {
		n := s.Stats["nopm"].N
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%.2f\t\n", s.VUs, n, meanCI(s.Stats["nopm"], "%.0f"), meanCI(s.Stats["tpm"], "%.0f"),
			meanCI(s.Stats[no+".p95_ms"], "%.2f"), s.TxnPooled[no].P95Ms)
	}
	tw.Flush()
}

// meanCI is a summary as "1234 ± 56", or "1234" without an interval.
func meanCI(s stats.Summary, format string) string {
	if !s.HasCI() {
		return fmt.Sprintf(format, s.Mean)
	}
	return fmt.Sprintf(format+" ± "+format, s.Mean, (s.High-s.Low)/2)
}

// responseTimeLine is a step's TPC-C response-time verdicts on one line:
// each type's 90th percentile, its limit, and the verdict.
func responseTimeLine(checks []tpcc.ResponseTimeCheck) string {
	if len(checks) == 0 {
		return ""
	}
	parts := make([]string, len(checks))
	for i, c := range checks {
		parts[i] = fmt.Sprintf("%s %.2f ms of %g s [%s]", c.Type, c.P90Ms, c.LimitMs/1000, c.Verdict)
	}
	return "90th-percentile response time against TPC-C's limit: " + strings.Join(parts, ", ")
}
