package report

import (
	"fmt"

	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
)

// kindTitles names run kinds in the report, in the order their telemetry
// is shown.
var kindTitles = []struct{ kind, title string }{
	{stored.KindTPCC, "TPC-C"}, {stored.KindDisk, "storage profile"}, {stored.KindBackup, "backup and restore"}, {stored.KindMonitor, "monitor"},
}

// telemetryCharts are the timelines drawn for each group of runs.
var telemetryCharts = []struct {
	id, title, ylabel string
	refs              []seriesRef
}{
	{"iops", "Device IOPS", "I/O per second", []seriesRef{{"dev.total.r_iops", "reads", false}, {"dev.total.w_iops", "writes", true}}},
	{"mbps", "Device throughput", "MB/s", []seriesRef{{"dev.total.r_mbps", "read MB/s", false}, {"dev.total.w_mbps", "write MB/s", true}}},
	{"latency", "Device latency", "latency (ms)", []seriesRef{
		{"dev.total.r_await_ms", "read await", false}, {"dev.total.w_await_ms", "write await", true}, {"dev.p99_ms", "p99 (traced)", false}}},
	{"cpu", "Host CPU", "% of all cores", []seriesRef{
		{"host.cpu_user_pct", "user", false}, {"host.cpu_system_pct", "system", true},
		{"host.cpu_iowait_pct", "iowait", false}, {"host.cpu_idle_pct", "idle", true}}},
}

// telemetrySection is the per-second telemetry of the runs, per kind of
// run: whole-run timelines with step boundaries, and each step's own
// timelines folded under its name.
func telemetrySection(runs []*runData) *Section {
	s := &Section{ID: "telemetry", Title: "Telemetry timelines"}
	s.text("Sampled once a second underneath the workload: the target's devices (iostat -x arithmetic over the whole disks " +
		"holding the target; p99 from block tracepoints where the kernel allowed tracing) and the host's CPU.")
	for _, k := range kindTitles {
		var group []*runData
		for _, rd := range runs {
			if rd.Kind == k.kind && rd.has("host.") {
				group = append(group, rd)
			}
		}
		if len(group) == 0 {
			continue
		}
		for _, tc := range telemetryCharts {
			s.figure(timeline(group, slug("telemetry", k.kind, tc.id), fmt.Sprintf("%s of the %s run", tc.title, k.title),
				tc.ylabel, tc.refs, results.AllSteps))
		}
		// One step at a time: steps of the same index overlay across runs.
		for _, st := range group[0].Steps {
			var blocks []Block
			for _, tc := range telemetryCharts {
				f := timeline(group, slug("telemetry", k.kind, tc.id, fmt.Sprint(st.Index)),
					fmt.Sprintf("%s, %s step %s", tc.title, k.title, stepLabel(group[0], st)), tc.ylabel, tc.refs, st.Index)
				if !f.Chart.Empty() {
					blocks = append(blocks, figureBlock(f))
				}
			}
			if len(blocks) > 0 {
				s.Blocks = append(s.Blocks, detailsBlock(&Details{
					Summary: fmt.Sprintf("%s step %d: %s", k.title, st.Index+1, stepLabel(group[0], st)), Blocks: blocks}))
			}
		}
	}
	return s
}
