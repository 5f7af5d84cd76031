package options

import (
	"errors"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// --node-exporter values: NAME=URL each; a refusal is a usage error of one
// line naming the value (its password masked). The rules across values
// (each name once, a sampling interval) are Telemetry's, judged by a run's
// Validate: the front end names the fields.
func TestNodeExportersFlag(t *testing.T) {
	tele, err := Sampling("1s", "interval", true, []string{"db1=http://10.0.0.5:9100/metrics", "db2=http://10.0.0.6:9100"})
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
		tele, err := Sampling(c.interval, "interval", true, c.specs)
		if err == nil {
			cfg := experiment.NewTPCCConfig()
			cfg.DSN = "postgres://localhost/x"
			cfg.Results, cfg.Telemetry = t.TempDir(), tele
			err = Flagged(cfg.Validate(), TelemetryFlags)
		}
		if !errors.Is(err, experiment.ErrInvalid) || len(List(err)) != 1 || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") ||
			strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: %v; want a usage error with %q", c.specs, err, c.want)
		}
	}
}
