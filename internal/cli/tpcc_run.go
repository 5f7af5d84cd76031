package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/stored"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/units"
)

// TPCCRunOptions are the flags of `tpcc run`.
type TPCCRunOptions struct {
	dsnOption
	VUs            string
	RampUp         string
	Duration       string
	Results        string
	Mode           string
	AllWarehouses  bool
	KeyingThinking bool
	Mix            string
	MixUnchecked   bool
	Retry          int
	Seed           uint64
	Target         string
	repeatOptions
	noisyOptions
	telemetryOptions
	metricsOptions
	thresholdOptions
}

// AddFlags registers the options' flags.
func (o *TPCCRunOptions) AddFlags(fs *pflag.FlagSet) {
	d := experiment.NewTPCCConfig()
	o.addFlag(fs)
	fs.StringVar(&o.VUs, "vus", units.FormatCountList(d.VUs), "virtual users per step, e.g. 1,2,3,5,8,13 (ranges like 1-4 too)")
	fs.StringVar(&o.RampUp, "rampup", units.FormatDuration(d.RampUp), "ramp-up before each step's measured interval (not measured)")
	fs.StringVar(&o.Duration, "duration", units.FormatDuration(d.Duration), "measured interval of each step")
	fs.StringVar(&o.Results, "results", d.Results, "results store directory")
	fs.StringVar(&o.Mode, "mode", d.Mode, "routines (one stored-routine call per transaction) or statements (client-side prepared statements)")
	fs.BoolVar(&o.AllWarehouses, "all-warehouses", false, "each transaction draws any warehouse, instead of the VU's home warehouse")
	fs.BoolVar(&o.KeyingThinking, "keying-thinking", false, "keying and think times of clause 5.2.5 (off: maximum throughput, as HammerDB's default)")
	fs.StringVar(&o.Mix, "mix", "", "transaction mix in percent, e.g. no=45,p=43,os=4,d=4,sl=4 (default: the spec's 23-card deck)")
	fs.BoolVar(&o.MixUnchecked, "mix-unchecked", false, "allow a --mix below the spec's minimums")
	fs.IntVar(&o.Retry, "retry", 0, "retries of a transaction that hit a serialization failure, deadlock or lock-wait timeout (each attempt is counted)")
	fs.Uint64Var(&o.Seed, "seed", 0, "random seed (0: a new one each run)")
	fs.StringVar(&o.Target, "target", "", "the path whose devices telemetry samples (default: the server's data directory, when it runs on this host)")
	o.repeatOptions.addFlags(fs, "VU count", "1,2,4,1,2,4")
	o.noisyOptions.addFlags(fs, "step")
	o.telemetryOptions.addFlags(fs)
	o.metricsOptions.addFlags(fs)
	o.thresholdOptions.addFlags(fs, "nopm>=50000 or new_order.p99<=10ms")
}

// validate turns the flags into a run's config; the run's rules are its
// Validate's, and the DSN is checked where it is read (dsnOption).
func (o *TPCCRunOptions) validate() (experiment.TPCCConfig, error) {
	var cfg experiment.TPCCConfig
	steps, err := units.ParseCountList(o.VUs)
	if err != nil {
		return cfg, usagef("--vus: %v", err)
	}
	if cfg.RampUp, err = units.ParseDuration(o.RampUp); err != nil {
		return cfg, usagef("--rampup: %v", err)
	}
	if cfg.Duration, err = units.ParseDuration(o.Duration); err != nil {
		return cfg, usagef("--duration: %v", err)
	}
	cfg.Mix = tpcc.DefaultMix
	if o.Mix != "" {
		if cfg.Mix, err = tpcc.ParseMix(o.Mix, o.MixUnchecked); err != nil {
			return cfg, usagef("--mix: %v", err)
		}
	}
	if cfg.Telemetry, err = o.telemetry(); err != nil {
		return cfg, err
	}
	cfg.Repeat, cfg.BackToBack = o.Repeat, o.BackToBack
	cfg.Noisy = o.noisyOptions.noisy()
	cfg.Results, cfg.VUs, cfg.Mode, cfg.Retry, cfg.Seed, cfg.Target = o.Results, steps, o.Mode, o.Retry, o.Seed, o.Target
	cfg.AllWarehouses, cfg.KeyingThinking = o.AllWarehouses, o.KeyingThinking
	return cfg, flagged(experiment.Except(cfg.Validate(), "dsn"), telemetryFlags)
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
	cfg, err := opts.validate()
	if err != nil {
		return nil, err
	}
	if cfg.DSN, err = opts.check(g); err != nil {
		return nil, err
	}
	if cfg.Thresholds, err = opts.thresholdOptions.parse(g, stored.KindTPCC); err != nil {
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
	fmt.Fprintf(w, "step %d: %d VUs%s, %.0f s measured: %d TPM, %d NOPM (client: %d TPM, %d NOPM), %d errors, %.0f µs client CPU per transaction\n",
		s.Index+1, s.VUs, rep, s.Seconds, s.TPM, s.NOPM, s.ClientTPM, s.ClientNOPM, s.Errors, s.ClientCPUPerTxnUs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "transaction\tcount\tp50 ms\tp95 ms\tp99 ms\tp99.9 ms\tmax ms\t")
	for k := range tpcc.NumKinds {
		t := s.Txn[k.String()]
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", k, t.Count, t.P50Ms, t.P95Ms, t.P99Ms, t.P999Ms, t.MaxMs)
	}
	tw.Flush()
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
	fmt.Fprintln(tw, "VUs\tTPM\tNOPM\tclient TPM\tclient NOPM\tTPM/VU\tNO p95 ms\terrors\treconnects\tNOPM check\t")
	for _, s := range out.Steps {
		check := "ok"
		if !s.NOPMCheck.OK {
			check = fmt.Sprintf("OFF by %d", s.NOPMCheck.Database-s.NOPMCheck.Client)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%.2f\t%d\t%d\t%s\t\n", s.VUs, s.TPM, s.NOPM, s.ClientTPM, s.ClientNOPM,
			s.TPM/int64(s.VUs), s.Txn["new_order"].P95Ms, s.Errors, s.Reconnects, check)
	}
	tw.Flush()
	if out.Repeat > 1 {
		printRepeatSummary(w, out)
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
