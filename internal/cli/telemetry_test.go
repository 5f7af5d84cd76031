package cli

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/stored"
)

// A step's telemetry has a short line per node_exporter host under its
// own.
func TestTelemetryLineHosts(t *testing.T) {
	host := map[string]float64{"cpu_idle_pct": 50}
	hosts := []stored.HostStats{
		{Host: "db1", NodeStats: stored.NodeStats{CPUIdlePct: 60, CPUIowaitPct: 5, CPUUserPct: 25, CPUSystemPct: 10, Samples: 9, Missing: 1,
			ClockOffsetMs: -1.25, Devices: []stored.DeviceRates{{Name: "sda", WIOPS: 10, UtilPct: 5},
				{Name: "nvme0n1", RIOPS: 1200, WIOPS: 300, RMBps: 9.6, WMBps: 2.4, RAwaitMs: 0.21, WAwaitMs: 0.05, UtilPct: 41}}}},
		{Host: "db2", NodeStats: stored.NodeStats{Missing: 10}},
	}
	got := strings.Split(telemetryLine(host, nil, nil, hosts...), "\n")
	want := []string{
		"  host db1: CPU idle 60%, iowait 5%, user 25%, system 10%; nvme0n1: 1200 r/s 300 w/s, 9.6/2.4 MB/s, await 0.21/0.05 ms, util 41% (busiest of 2 devices); clock -1.2 ms; 1 of 10 samples missing",
		"  host db2: no figures (its node_exporter answered in none of 10 samples)",
	}
	if len(got) != 3 || !strings.HasPrefix(got[0], "host: CPU idle 50%") || got[1] != want[0] || got[2] != want[1] {
		t.Errorf("lines:\n%s\nwant under the host line:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if telemetryLine(nil, nil, nil, hosts...) != "" {
		t.Error("lines without telemetry")
	}
}
