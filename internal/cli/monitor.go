package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// MonitorOptions are the flags of `monitor`: a session's options and the
// live metrics endpoint's.
type MonitorOptions struct {
	options.Monitor
	metricsOptions
}

// AddFlags registers the options' flags.
func (o *MonitorOptions) AddFlags(fs *pflag.FlagSet) {
	o.Monitor.AddFlags(fs)
	o.metricsOptions.addFlags(fs)
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

func runMonitor(ctx context.Context, g *Globals, opts MonitorOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	v := newView(g)
	obs, done, err := opts.metricsOptions.begin(ctx, g, nil, v)
	if err != nil {
		return err
	}
	defer done()
	out, err := experiment.RunMonitor(ctx, cfg, obs)
	return printRun(v, out, err, func() {
		fmt.Fprintf(g.Stdout, "monitor %s: %d samples over %.0f s; stored in %s\n", out.RunID, out.Samples, out.Seconds, v.store)
	})
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
	defer printHostSamples(w, x.Hosts)
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

// printHostSamples prints each node_exporter host's CPU and devices of one
// sample, under the controller's.
func printHostSamples(w io.Writer, hosts []telemetry.HostSample) {
	for _, h := range hosts {
		if !h.Up {
			fmt.Fprintf(w, "  host %s: no answer\n", h.Host)
			continue
		}
		fmt.Fprintf(w, "  host %-8s CPU user %5.1f%%  system %5.1f%%  iowait %5.1f%%  idle %5.1f%%  steal %4.1f%%\n",
			h.Host, h.CPU.UserPct, h.CPU.SystemPct, h.CPU.IOWaitPct, h.CPU.IdlePct, h.CPU.StealPct)
		for _, d := range h.Devices {
			if d.RIOPS+d.WIOPS == 0 && d.UtilPct == 0 {
				continue // idle devices would bury the busy ones
			}
			fmt.Fprintf(w, "    %-10s %8.1f %8.1f %8.2f %8.2f %8.2f %8.2f %7.2f %6.1f\n",
				d.Name, d.RIOPS, d.WIOPS, d.RMBps, d.WMBps, d.RAwaitMs, d.WAwaitMs, d.AquSz, d.UtilPct)
		}
	}
}
