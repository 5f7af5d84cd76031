package cli

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/units"
)

// telemetryOptions are the flags every workload shares for its telemetry.
type telemetryOptions struct {
	Interval   string
	BlockTrace bool
}

func (o *telemetryOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Interval, "interval", "1s", "telemetry sampling interval (0: no telemetry)")
	fs.BoolVar(&o.BlockTrace, "block-trace", true, "device latency percentiles from block tracepoints, where the kernel allows it")
}

// telemetry is the sampling the flags ask for.
func (o *telemetryOptions) telemetry() (experiment.Telemetry, error) {
	return sampling(o.Interval, "--interval", o.BlockTrace)
}

// sampling checks a sampling interval flag's value.
func sampling(interval, flag string, blockTrace bool) (experiment.Telemetry, error) {
	d, err := units.ParseDuration(interval)
	if err != nil {
		return experiment.Telemetry{}, usagef("%s: %v", flag, err)
	}
	if d != 0 && d < 100*time.Millisecond {
		return experiment.Telemetry{}, usagef("%s %s is too short; give at least 100ms (or 0 for no telemetry)", flag, interval)
	}
	return experiment.Telemetry{Interval: d, BlockTrace: blockTrace}, nil
}

// telemetryLine sums up a step's telemetry aggregates in one line ("" when
// there are none).
func telemetryLine(host, dev, db map[string]float64) string {
	if host == nil {
		return ""
	}
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
