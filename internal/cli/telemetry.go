package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/units"
)

// telemetryOptions are the flags every workload shares for its telemetry.
type telemetryOptions struct {
	Interval      string
	BlockTrace    bool
	NodeExporters []string // --node-exporter NAME=URL, repeatable
}

func (o *telemetryOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Interval, "interval", "1s", "telemetry sampling interval (0: no telemetry)")
	fs.BoolVar(&o.BlockTrace, "block-trace", true, "device latency percentiles from block tracepoints, where the kernel allows it")
	addNodeExporterFlag(fs, &o.NodeExporters)
}

// telemetry is the sampling the flags ask for; its rules are the
// experiment's (Telemetry's part of each config's Validate).
func (o *telemetryOptions) telemetry() (experiment.Telemetry, error) {
	return sampling(o.Interval, "--interval", o.BlockTrace, o.NodeExporters)
}

// telemetryFlags name the telemetry fields of a config's problems by the
// flags of commands whose sampling interval is --interval.
var telemetryFlags = map[string]string{"telemetry_interval": "--interval"}

// addNodeExporterFlag registers --node-exporter.
func addNodeExporterFlag(fs *pflag.FlagSet, specs *[]string) {
	fs.StringArrayVar(specs, "node-exporter", nil, "also sample a host's Prometheus node_exporter, given as \x60NAME=URL\x60, "+
		"e.g. db1=http://10.0.0.5:9100/metrics: its CPU shares and each block device's iostat -x figures at every sample, "+
		"per host in each step (repeatable; a URL without a query asks only for the cpu, diskstats and time collectors; "+
		"an exporter that stops answering is a gap and a warning, not an error)")
}

// sampling reads a sampling interval flag (named flag) and the
// --node-exporter values, each NAME=URL.
func sampling(interval, flag string, blockTrace bool, exporters []string) (experiment.Telemetry, error) {
	d, err := units.ParseDuration(interval)
	if err != nil {
		return experiment.Telemetry{}, usagef("%s: %v", flag, err)
	}
	t := experiment.Telemetry{Interval: d, BlockTrace: blockTrace}
	for _, spec := range exporters {
		n, err := telemetry.ParseNode(spec)
		if err != nil {
			return t, usagef("--node-exporter %q: %v", telemetry.RedactNodeSpec(spec), err)
		}
		t.Nodes = append(t.Nodes, n)
	}
	return t, nil
}

// telemetryLine sums up a step's telemetry aggregates in one line ("" when
// there are none), and each node_exporter host in a short line of its own
// under it.
func telemetryLine(host, dev, db map[string]float64, hosts ...stored.HostStats) string {
	if host == nil {
		return ""
	}
	var lines strings.Builder
	for _, h := range hosts {
		lines.WriteString("\n" + hostLine(h))
	}
	return localTelemetryLine(host, dev, db) + lines.String()
}

// hostLine is a node_exporter host's figures over a step: CPU shares, its
// busiest device (by %util, then IOPS), the clock offset and the samples
// it missed.
func hostLine(h stored.HostStats) string {
	if h.Samples == 0 {
		return fmt.Sprintf("  host %s: no figures (its node_exporter answered in none of %d samples)", h.Host, h.Missing)
	}
	s := fmt.Sprintf("  host %s: CPU idle %.0f%%, iowait %.0f%%, user %.0f%%, system %.0f%%", h.Host,
		h.CPUIdlePct, h.CPUIowaitPct, h.CPUUserPct, h.CPUSystemPct)
	if h.CPUStealPct >= 0.5 {
		s += fmt.Sprintf(", steal %.0f%%", h.CPUStealPct)
	}
	if len(h.Devices) > 0 {
		d := slices.MaxFunc(h.Devices, func(a, b stored.DeviceRates) int {
			return cmp.Or(cmp.Compare(a.UtilPct, b.UtilPct), cmp.Compare(a.RIOPS+a.WIOPS, b.RIOPS+b.WIOPS))
		})
		s += fmt.Sprintf("; %s: %.0f r/s %.0f w/s, %.1f/%.1f MB/s, await %.2f/%.2f ms, util %.0f%%",
			d.Name, d.RIOPS, d.WIOPS, d.RMBps, d.WMBps, d.RAwaitMs, d.WAwaitMs, d.UtilPct)
		if len(h.Devices) > 1 {
			s += fmt.Sprintf(" (busiest of %d devices)", len(h.Devices))
		}
	}
	s += fmt.Sprintf("; clock %+.1f ms", h.ClockOffsetMs)
	if h.Missing > 0 {
		s += fmt.Sprintf("; %d of %d samples missing", h.Missing, h.Missing+h.Samples)
	}
	return s
}

// localTelemetryLine is the line of this host, its target's devices and
// the database.
func localTelemetryLine(host, dev, db map[string]float64) string {
	s := fmt.Sprintf("host: CPU idle %.0f%%, iowait %.0f%%, user %.0f%%, system %.0f%%",
		host["cpu_idle_pct"], host["cpu_iowait_pct"], host["cpu_user_pct"], host["cpu_system_pct"])
	if v, ok := host["server_cpu_pct"]; ok {
		s += fmt.Sprintf(", server %.0f%% of a core", v)
	}
	if dev != nil {
		s += fmt.Sprintf("; device: %.0f r/s %.0f w/s, %.1f/%.1f MB/s, await %.2f/%.2f ms",
			dev["r_iops"], dev["w_iops"], dev["r_mbps"], dev["w_mbps"], dev["r_await_ms"], dev["w_await_ms"])
		if v, ok := dev["p99_ms"]; ok {
			s += fmt.Sprintf(", p99 %.2f ms", v)
		}
	}
	if v, ok := db["cache_hit_pct"]; ok {
		s += fmt.Sprintf("; cache hit %.1f%%", v)
	}
	if v, ok := db["read_latency_ms"]; ok {
		s += fmt.Sprintf(", DB read %.2f ms", v)
	}
	if v, ok := db["wal_sync_latency_ms"]; ok {
		s += fmt.Sprintf(", WAL sync %.2f ms", v)
	}
	return s
}
