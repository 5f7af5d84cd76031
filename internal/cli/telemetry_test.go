package cli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// --node-exporter values: NAME=URL each; a refusal is a usage error of one
// line naming the value (its password masked). The rules across values
// (each name once, a sampling interval) are Telemetry's, judged by a run's
// Validate: the CLI names the flags.
func TestNodeExportersFlag(t *testing.T) {
	tele, err := sampling("1s", "--interval", true, []string{"db1=http://10.0.0.5:9100/metrics", "db2=http://10.0.0.6:9100"})
	if err != nil || len(tele.Nodes) != 2 || tele.Nodes[1] != (telemetry.Node{Name: "db2", URL: "http://10.0.0.6:9100/metrics"}) {
		t.Fatalf("nodes %+v, %v", tele.Nodes, err)
	}
	for _, c := range []struct {
		specs    []string
		interval string
		want     string
	}{
		{[]string{"x"}, "1s", `--node-exporter "x": give NAME=URL, e.g. db1=http://10.0.0.5:9100/metrics`},
		{[]string{"=http://h"}, "1s", `--node-exporter "=http://h": give NAME=URL, e.g. db1=http://10.0.0.5:9100/metrics`},
		{[]string{"db1=ftp://h/m"}, "1s", `--node-exporter "db1=ftp://h/m": give an http:// or https:// URL`},
		{[]string{"db1=http://u:hunter2@h", "db1=http://u:hunter2@g"}, "1s", `--node-exporter "db1" is given twice`},
		{[]string{"db.1=http://h"}, "1s", `the name "db.1" may hold only letters, digits, - and _`},
		{[]string{"db1=http://h"}, "0s", `--interval 0s samples nothing, and node_exporter hosts are sampled at each interval`},
	} {
		tele, err := sampling(c.interval, "--interval", true, c.specs)
		if err == nil {
			cfg := experiment.TPCCConfig{DSN: "postgres://localhost/x", VUs: []int{1}, Duration: time.Second}
			cfg.Results, cfg.Telemetry = t.TempDir(), tele
			err = flagged(cfg.Validate(), telemetryFlags)
		}
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") ||
			strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: %v; want a usage error with %q", c.specs, err, c.want)
		}
	}
}

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
