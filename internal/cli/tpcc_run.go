package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/driver"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/results"
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
	telemetryOptions
	scenarioRun // set by a scenario, not by flags
}

// scenarioRun ties a run to a scenario: its results group and how the
// report names it.
type scenarioRun struct {
	group    string
	label    string // the run's name in reports ("": its id)
	instance string // the server instance, when several run side by side
	role     string // what the instance does meanwhile, e.g. "tpcc" beside "backup"
	phase    string // which part of a side-by-side experiment, e.g. "baseline"
	target   string // the scenario target the instance runs on
	tier     string // an emulated tier's limits ("": a real one)
	// cgroupProcs put the workload's own processes (fio) into an emulated
	// tier's throttling cgroup.
	cgroupProcs []string
	limits      *cgroup.Applied // the server's memory cap and throttles, as read back
	memory      int64           // the memory the scenario gave the server, bytes (0: engine defaults)
}

// scenarioParams is what a run's stored parameters say of the scenario it
// ran in; the report reads them. Target is the name of the scenario target
// (the tier) the instance runs on, under its own key: backup and disk runs
// use "target" for a path.
type scenarioParams struct {
	Label    string          `json:"label,omitempty"`
	Instance string          `json:"instance,omitempty"`
	Role     string          `json:"role,omitempty"`
	Phase    string          `json:"phase,omitempty"`
	Target   string          `json:"scenario_target,omitempty"`
	Tier     string          `json:"tier,omitempty"`
	Limits   *cgroup.Applied `json:"limits,omitempty"`
	Memory   int64           `json:"server_memory_bytes,omitempty"`
}

func (s scenarioRun) params() scenarioParams {
	return scenarioParams{Label: s.label, Instance: s.instance, Role: s.role, Phase: s.phase, Target: s.target, Tier: s.tier, Limits: s.limits,
		Memory: s.memory}
}

// AddFlags registers the options' flags.
func (o *TPCCRunOptions) AddFlags(fs *pflag.FlagSet) {
	o.addFlag(fs)
	fs.StringVar(&o.VUs, "vus", "1", "virtual users per step, e.g. 1,2,3,5,8,13 (ranges like 1-4 too)")
	fs.StringVar(&o.RampUp, "rampup", "2m", "ramp-up before each step's measured interval (not measured)")
	fs.StringVar(&o.Duration, "duration", "5m", "measured interval of each step")
	fs.StringVar(&o.Results, "results", "./tierbench-results", "results store directory")
	fs.StringVar(&o.Mode, "mode", engine.ModeRoutines, "routines (one stored-routine call per transaction) or statements (client-side prepared statements)")
	fs.BoolVar(&o.AllWarehouses, "all-warehouses", false, "each transaction draws any warehouse, instead of the VU's home warehouse")
	fs.BoolVar(&o.KeyingThinking, "keying-thinking", false, "keying and think times of clause 5.2.5 (off: maximum throughput, as HammerDB's default)")
	fs.StringVar(&o.Mix, "mix", "", "transaction mix in percent, e.g. no=45,p=43,os=4,d=4,sl=4 (default: the spec's 23-card deck)")
	fs.BoolVar(&o.MixUnchecked, "mix-unchecked", false, "allow a --mix below the spec's minimums")
	fs.IntVar(&o.Retry, "retry", 0, "retries of a transaction that hit a serialization failure or deadlock (each attempt is counted)")
	fs.Uint64Var(&o.Seed, "seed", 0, "random seed (0: a new one each run)")
	fs.StringVar(&o.Target, "target", "", "the path whose devices telemetry samples (default: the server's data directory, when it runs on this host)")
	o.telemetryOptions.addFlags(fs)
}

// validated is a run's checked configuration.
func (o *TPCCRunOptions) validate() (driver.Config, error) {
	var cfg driver.Config
	steps, err := units.ParseCountList(o.VUs)
	if err != nil {
		return cfg, usagef("--vus: %v", err)
	}
	for _, n := range steps {
		if n > 10000 {
			return cfg, usagef("--vus %d is more virtual users than tierbench runs (at most 10000)", n)
		}
	}
	if cfg.RampUp, err = units.ParseDuration(o.RampUp); err != nil {
		return cfg, usagef("--rampup: %v", err)
	}
	if cfg.Duration, err = units.ParseDuration(o.Duration); err != nil {
		return cfg, usagef("--duration: %v", err)
	}
	if cfg.Duration < time.Second {
		return cfg, usagef("--duration %s is too short; give at least 1s", o.Duration)
	}
	if o.Mode != engine.ModeRoutines && o.Mode != engine.ModeStatements {
		return cfg, usagef("--mode %q is unknown; use routines or statements", o.Mode)
	}
	cfg.Mix = tpcc.DefaultMix
	if o.Mix != "" {
		if cfg.Mix, err = tpcc.ParseMix(o.Mix, o.MixUnchecked); err != nil {
			return cfg, usagef("--mix: %v", err)
		}
	}
	if o.Retry < 0 || o.Retry > 100 {
		return cfg, usagef("--retry must be between 0 and 100 (got %d)", o.Retry)
	}
	if _, err := o.interval(); err != nil {
		return cfg, err
	}
	if err := checkResultsDir(o.Results); err != nil {
		return cfg, err
	}
	cfg.Steps, cfg.Mode, cfg.Retry, cfg.Seed = steps, o.Mode, o.Retry, o.Seed
	cfg.AllWarehouses, cfg.KeyingThinking = o.AllWarehouses, o.KeyingThinking
	return cfg, nil
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

// tpccRunOutput is the JSON of `tpcc run` (DESIGN.md).
type tpccRunOutput struct {
	RunID     string               `json:"run_id"`
	Status    string               `json:"status"`
	Mode      string               `json:"mode"`
	Mix       string               `json:"mix"`
	NOPMAgree bool                 `json:"nopm_agree"`
	Steps     []*driver.StepResult `json:"steps"`
}

// tpccRunParams is what the results store keeps of a run's parameters:
// everything needed to repeat it, the DSN without its password.
type tpccRunParams struct {
	DSN            string `json:"dsn"`
	Engine         string `json:"engine"`
	Warehouses     int    `json:"warehouses"`
	VUs            []int  `json:"vus"`
	RampUp         string `json:"rampup"`
	Duration       string `json:"duration"`
	Mode           string `json:"mode"`
	Mix            string `json:"mix"`
	AllWarehouses  bool   `json:"all_warehouses"`
	KeyingThinking bool   `json:"keying_thinking"`
	Retry          int    `json:"retry"`
	Seed           uint64 `json:"seed"`
	scenarioParams
}

func runTPCCRun(ctx context.Context, g *Globals, opts TPCCRunOptions) (*tpccRunOutput, error) {
	cfg, err := opts.validate()
	if err != nil {
		return nil, err
	}
	dsn, db, err := opts.open(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	runner, ok := db.(engine.Runner)
	if !ok {
		return nil, usagef("this engine cannot run TPC-C yet")
	}
	schema, err := runner.Schema(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	store, err := results.Open(opts.Results)
	if err != nil {
		return nil, fmt.Errorf("opening the results store: %w", err)
	}
	defer store.Close()
	scheme, _ := engine.SchemeOf(dsn)
	run, err := store.CreateRun(ctx, "tpcc", opts.group, tpccRunParams{
		DSN: engine.Redact(dsn), Engine: scheme, Warehouses: schema.Warehouses, VUs: cfg.Steps,
		RampUp: cfg.RampUp.String(), Duration: cfg.Duration.String(), Mode: cfg.Mode, Mix: cfg.Mix.String(),
		AllWarehouses: cfg.AllWarehouses, KeyingThinking: cfg.KeyingThinking, Retry: cfg.Retry, Seed: cfg.Seed,
		scenarioParams: opts.params(),
	})
	if err != nil {
		return nil, fmt.Errorf("recording the run: %w", err)
	}
	if err := captureEnvironment(ctx, g, store, run.ID, opts.Target, db, scheme, ""); err != nil {
		return nil, fmt.Errorf("recording the run's environment: %w", err)
	}
	g.progressf("run %s: %d warehouses, steps %s VUs, ramp-up %s, measured %s per step, mode %s\n",
		run.ID, schema.Warehouses, opts.VUs, cfg.RampUp, cfg.Duration, cfg.Mode)
	series := store.NewSeriesWriter(run.ID, time.Second)
	every, _ := opts.interval()
	tele, err := startTelemetry(ctx, g, every, opts.BlockTrace, opts.Target, db, series)
	if err != nil {
		return nil, err
	}
	live := newLiveLine(g.Stderr, tele.status)
	var storeErr error
	cfg.Runner = runner
	cfg.OnTick = func(t driver.Tick) {
		tele.setStep(t.Step - 1)
		live.show(t)
		step := t.Step - 1
		for name, v := range map[string]float64{
			"tpm": t.TPM, "nopm": t.NOPM, "client_tpm": t.ClientTPM,
			"new_order.p50_ms": t.NewOrderP50Ms, "new_order.p95_ms": t.NewOrderP95Ms, "new_order.p99_ms": t.NewOrderP99Ms,
		} {
			series.Add(results.Point{Name: name, Step: step, T: t.T, Value: v})
		}
	}
	cfg.OnStep = func(s *driver.StepResult) {
		live.clear()
		if a := tele.summarize(s.MeasureStart, s.MeasureEnd); a != nil {
			s.Host, s.Device, s.DB = a.Host, a.Device, a.DB
		}
		printStep(g.Stdout, g.JSON, s)
		// A finished step is stored at once, its per-second series first,
		// so an interrupted or killed run keeps both. A failed flush keeps
		// its points for the next one, and Close reports it.
		_ = series.Flush(context.WithoutCancel(ctx))
		if err := storeStep(context.WithoutCancel(ctx), store, run.ID, s); err != nil && storeErr == nil {
			storeErr = err
		}
	}
	steps, runErr := driver.Run(ctx, cfg)
	live.clear()
	tele.stop()
	bg := context.WithoutCancel(ctx)
	if err := series.Close(bg); err != nil && storeErr == nil {
		storeErr = err
	}
	out := &tpccRunOutput{RunID: run.ID, Status: results.StatusComplete, Mode: cfg.Mode, Mix: cfg.Mix.String(), NOPMAgree: true, Steps: steps}
	for _, s := range steps {
		out.NOPMAgree = out.NOPMAgree && s.NOPMCheck.OK
	}
	switch {
	case errors.Is(runErr, driver.ErrInterrupted):
		out.Status = results.StatusInterrupted
	case runErr != nil:
		out.Status = results.StatusFailed
	}
	return out, g.endRun(bg, runEnd{store: store, runID: run.ID, status: out.Status, out: out,
		summary: func() { printRunSummary(g.Stdout, out, store.Path()) },
		kept:    fmt.Sprintf("%d finished steps", len(steps)), done: fmt.Sprintf("%d steps", len(steps)),
		runErr: runErr, storeErr: storeErr})
}

// storeStep stores a step with its histograms, in one transaction.
func storeStep(ctx context.Context, store *results.Store, runID string, s *driver.StepResult) error {
	doc, err := json.Marshal(s)
	if err != nil {
		return err
	}
	hists := map[string][]byte{}
	for k, h := range s.Histograms {
		data, err := h.Encode(hdr.V2CompressedEncodingCookieBase) // readable by every HdrHistogram library
		if err != nil {
			return err
		}
		hists[tpcc.Kind(k).String()] = data
	}
	return store.AddStep(ctx, results.Step{RunID: runID, Index: s.Index, Name: fmt.Sprintf("vus=%d", s.VUs),
		StartedAt: s.StartedAt, MeasureStart: s.MeasureStart, MeasureEnd: s.MeasureEnd, Metrics: doc, Histograms: hists})
}

// liveLine shows the last second on stderr: redrawn in place on a terminal,
// every fifth second as a line otherwise.
type liveLine struct {
	w     io.Writer
	tty   bool
	drawn bool
	n     int
	extra func() string // more to show, e.g. telemetry
}

func newLiveLine(w io.Writer, extra func() string) *liveLine {
	return &liveLine{w: w, tty: isTerminal(w), extra: extra}
}

func (l *liveLine) show(t driver.Tick) {
	line := fmt.Sprintf("step %d/%d  %d VUs  %-7s %4.0fs  TPM %8.0f  NOPM %8.0f  NO p95 %6.2f ms",
		t.Step, t.Steps, t.VUs, t.Phase, t.Elapsed.Seconds(), t.TPM, t.NOPM, t.NewOrderP95Ms) + l.extra()
	l.n++
	if l.tty {
		fmt.Fprintf(l.w, "\r\033[K%s", line)
		l.drawn = true
	} else if l.n%5 == 0 {
		fmt.Fprintln(l.w, line)
	}
}

func (l *liveLine) clear() {
	if l.drawn {
		fmt.Fprint(l.w, "\r\033[K")
		l.drawn = false
	}
}

// printStep prints a finished step's table (not with --json).
func printStep(w io.Writer, asJSON bool, s *driver.StepResult) {
	if asJSON {
		return
	}
	fmt.Fprintf(w, "step %d: %d VUs, %.0f s measured: %d TPM, %d NOPM (client: %d TPM, %d NOPM), %d errors, %.0f µs client CPU per transaction\n",
		s.Index+1, s.VUs, s.Seconds, s.TPM, s.NOPM, s.ClientTPM, s.ClientNOPM, s.Errors, s.ClientCPUPerTxnUs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "transaction\tcount\tp50 ms\tp95 ms\tp99 ms\tp99.9 ms\tmax ms\t")
	for k := range tpcc.NumKinds {
		t := s.Txn[k.String()]
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", k, t.Count, t.P50Ms, t.P95Ms, t.P99Ms, t.P999Ms, t.MaxMs)
	}
	tw.Flush()
	if line := telemetryLine(s.Host, s.Device, s.DB); line != "" {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "System achieved %d NOPM from %d PostgreSQL TPM\n\n", s.NOPM, s.TPM)
}

func printRunSummary(w io.Writer, out *tpccRunOutput, storePath string) {
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
	last := out.Steps[len(out.Steps)-1]
	var audit []string
	for _, a := range last.Audit {
		audit = append(audit, fmt.Sprintf("%s %.2f [%s]", a.Name, a.Value, a.Verdict))
	}
	fmt.Fprintf(w, "input audit (last step): %s\n", strings.Join(audit, ", "))
	fmt.Fprintf(w, "run %s %s; stored in %s\n", out.RunID, out.Status, storePath)
}
