package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/units"
)

// MonitorOptions are the flags of `monitor`.
type MonitorOptions struct {
	Target   string
	Duration string
	DSN      string
	Results  string
	telemetryOptions
}

// AddFlags registers the options' flags.
func (o *MonitorOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Target, "target", "", "a path: its devices are sampled (a directory, a file or a block device)")
	fs.StringVar(&o.Duration, "duration", "0s", "how long to sample (0: until Ctrl-C)")
	fs.StringVar(&o.DSN, "dsn", "", "also sample this database's internals, e.g. postgres://user:password@127.0.0.1:5432/dbname")
	fs.StringVar(&o.Results, "results", defaultResultsDir, "results store directory")
	o.telemetryOptions.addFlags(fs)
}

func newMonitorCommand(g *Globals) *cobra.Command {
	var opts MonitorOptions
	cmd := &cobra.Command{
		Use:   "monitor",
		Short: "Sample host CPU, the target's devices (like iostat -x) and, with --dsn, the database, second by second",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMonitor(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

// monitorOutput is the JSON of `monitor` (DESIGN.md): averages over the
// whole session.
type monitorOutput struct {
	RunID      string                  `json:"run_id"`
	Seconds    float64                 `json:"seconds"`
	Resolution *telemetry.Resolution   `json:"resolution,omitempty"`
	Devices    []telemetry.DeviceRates `json:"devices"`
	Host       map[string]float64      `json:"host"`
	Device     map[string]float64      `json:"device,omitempty"`
	DB         map[string]float64      `json:"db,omitempty"`
}

func runMonitor(ctx context.Context, g *Globals, opts MonitorOptions) error {
	if opts.Target == "" {
		return usagef("no --target given; name the path whose devices to sample, e.g. --target /var/lib/postgresql")
	}
	d, err := units.ParseDuration(opts.Duration)
	if err != nil {
		return usagef("--duration: %v", err)
	}
	every, err := opts.interval()
	if err != nil {
		return err
	}
	if every == 0 {
		return usagef("--interval 0 would sample nothing; give an interval such as 1s")
	}
	if err := checkResultsDir(opts.Results); err != nil {
		return err
	}
	var db engine.DB
	if opts.DSN != "" {
		if db, err = openDSN(ctx, opts.DSN, "--dsn"); err != nil {
			return err
		}
		defer db.Close()
	}
	store, err := results.Open(opts.Results)
	if err != nil {
		return fmt.Errorf("opening the results store: %w", err)
	}
	defer store.Close()
	run, err := store.CreateRun(ctx, "monitor", "", map[string]any{
		"target": opts.Target, "interval": every.String(), "duration": d.String(), "dsn": engine.Redact(opts.DSN)})
	if err != nil {
		return fmt.Errorf("recording the run: %w", err)
	}
	scheme := ""
	if db != nil {
		scheme, _ = engine.SchemeOf(opts.DSN)
	}
	if err := captureEnvironment(ctx, g, store, run.ID, opts.Target, db, scheme, ""); err != nil {
		return fmt.Errorf("recording the run's environment: %w", err)
	}
	series := store.NewSeriesWriter(run.ID, time.Second)
	tele, err := startTelemetry(ctx, g, every, opts.BlockTrace, opts.Target, db, series)
	if err != nil {
		return err
	}
	start := time.Now()
	g.progressf("monitor %s: sampling every %s", run.ID, every)
	if r := tele.session.Resolution(); r != nil {
		g.progressf(" %s (%s on %s, devices %v)", opts.Target, r.FSType, r.Mount, r.Devices)
	}
	g.progressf("; Ctrl-C ends it\n")
	wait := ctx.Done()
	var timer <-chan time.Time
	if d > 0 {
		timer = time.After(d)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	shown := time.Time{}
loop:
	for {
		select {
		case <-wait:
			break loop
		case <-timer:
			break loop
		case <-tick.C:
			if x, ok := tele.session.Latest(); ok && x.T.After(shown) && !g.JSON {
				printSample(g.Stdout, x)
				shown = x.T
			}
		}
	}
	end := time.Now()
	tele.stop()
	bg := context.WithoutCancel(ctx)
	samples := tele.session.Samples(start, end)
	agg := telemetry.Summarize(samples)
	out := monitorOutput{RunID: run.ID, Seconds: end.Sub(start).Seconds(), Resolution: tele.session.Resolution(),
		Devices: averageDevices(samples), Host: agg.Host, Device: agg.Device, DB: agg.DB}
	storeErr := series.Close(bg)
	status := results.StatusComplete
	if ctx.Err() != nil && d > 0 {
		status = results.StatusInterrupted
	}
	if err := store.FinishRun(bg, run.ID, status, out); err != nil && storeErr == nil {
		storeErr = err
	}
	if g.JSON {
		if err := g.printJSON(out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(g.Stdout, "monitor %s: %d samples over %.0f s; stored in %s\n", run.ID, len(samples), out.Seconds, store.Path())
	}
	if storeErr != nil {
		return fmt.Errorf("monitor %s: the results store failed: %w", run.ID, storeErr)
	}
	return nil
}

// averageDevices averages each device's rates over the samples.
func averageDevices(samples []telemetry.Sample) []telemetry.DeviceRates {
	by := map[string][]telemetry.DeviceRates{}
	for _, x := range samples {
		for _, d := range x.Devices {
			by[d.Name] = append(by[d.Name], d)
		}
	}
	out := []telemetry.DeviceRates{}
	for name, xs := range by {
		a := telemetry.AverageRates(xs)
		a.Name = name
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// printSample prints one sample like iostat -x, with CPU and database
// rates above the device table.
func printSample(w io.Writer, x telemetry.Sample) {
	fmt.Fprintf(w, "%s  CPU user %5.1f%%  system %5.1f%%  iowait %5.1f%%  idle %5.1f%%  steal %4.1f%%",
		x.T.Local().Format("15:04:05"), x.CPU.UserPct, x.CPU.SystemPct, x.CPU.IOWaitPct, x.CPU.IdlePct, x.CPU.StealPct)
	if x.DB != nil {
		fmt.Fprintf(w, "  db %6.0f commits/s  hit %5.1f%%  WAL %6.2f MB/s", x.DB["commits_per_s"], x.DB["cache_hit_pct"], x.DB["wal_bytes_per_s"]/1e6)
	}
	fmt.Fprintln(w)
	if len(x.Devices) == 0 {
		return
	}
	fmt.Fprintf(w, "  %-10s %8s %8s %8s %8s %8s %8s %7s %6s", "device", "r/s", "w/s", "rMB/s", "wMB/s", "r_await", "w_await", "aqu-sz", "%util")
	if x.Latency != nil {
		fmt.Fprintf(w, "   p50 ms   p95 ms   p99 ms")
	}
	fmt.Fprintln(w)
	for _, d := range x.Devices {
		fmt.Fprintf(w, "  %-10s %8.1f %8.1f %8.2f %8.2f %8.2f %8.2f %7.2f %6.1f\n",
			d.Name, d.RIOPS, d.WIOPS, d.RMBps, d.WMBps, d.RAwaitMs, d.WAwaitMs, d.AquSz, d.UtilPct)
	}
	if x.Latency != nil {
		fmt.Fprintf(w, "  %-10s %70s %8.3f %8.3f %8.3f\n", "traced", fmt.Sprintf("%d requests (1 in %d)", x.Latency.Count, max(x.Latency.OneIn, 1)),
			x.Latency.P50Ms, x.Latency.P95Ms, x.Latency.P99Ms)
	}
}
