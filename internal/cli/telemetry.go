package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/stored"
)

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
