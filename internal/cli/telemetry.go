package cli

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/procfs"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/telemetry"
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

func (o *telemetryOptions) interval() (time.Duration, error) {
	d, err := units.ParseDuration(o.Interval)
	if err != nil {
		return 0, usagef("--interval: %v", err)
	}
	if d != 0 && d < 100*time.Millisecond {
		return 0, usagef("--interval %s is too short; give at least 100ms (or 0 for no telemetry)", o.Interval)
	}
	return d, nil
}

// telemetryRun ties a telemetry session to a run: every sample goes to the
// run's series, tagged with the step running when it was taken.
type telemetryRun struct {
	session *telemetry.Session
	step    atomic.Int64
}

// startTelemetry starts sampling for a run (nil when the interval is 0).
// target is the path whose devices to sample ("" for none), db the database
// whose internals to sample (nil for none). What cannot be sampled is said
// once on stderr; the run goes on.
func startTelemetry(ctx context.Context, g *Globals, every time.Duration, blockTrace bool, target string,
	db engine.DB, series *results.SeriesWriter) (*telemetryRun, error) {
	if every == 0 {
		return nil, nil
	}
	tr := &telemetryRun{}
	cfg := telemetry.Config{
		Interval: every, Target: target, BlockTrace: blockTrace,
		Warn: func(msg string) { g.progressf("telemetry: %s\n", msg) },
	}
	if sr, ok := db.(engine.StatsReader); ok {
		cfg.DB = sr
	}
	cfg.Target, cfg.ServerPID = localTarget(ctx, target, db)
	if series != nil {
		cfg.OnSample = func(x telemetry.Sample) {
			step := int(tr.step.Load())
			for name, v := range x.Values() {
				series.Add(results.Point{Name: name, Step: step, T: x.T, Value: v})
			}
		}
	}
	s, err := telemetry.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	tr.session = s
	return tr, nil
}

// localTarget returns the path a run's telemetry and inventory look at:
// target when given, else the data directory of the database server when
// it runs on this host; and the server's main process when it does (0
// otherwise).
func localTarget(ctx context.Context, target string, db engine.DB) (string, int) {
	sr, ok := db.(engine.StatsReader)
	if !ok {
		return target, 0
	}
	dataDir, backend, err := sr.ServerInfo(ctx)
	if err != nil {
		return target, 0
	}
	pid := localServerPID(backend)
	if target == "" && pid > 0 && dataDir != "" {
		if _, err := os.Stat(dataDir); err == nil {
			target = dataDir
		}
	}
	return target, pid
}

// localServerPID returns the main process of the database server whose
// backend has PID backend, when that backend runs on this host: its parent,
// if the parent is a postgres process. 0 otherwise.
func localServerPID(backend int) int {
	p, err := procfs.NewProc(backend)
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil || st.Comm != "postgres" {
		return 0
	}
	parent, err := procfs.NewProc(st.PPID)
	if err != nil {
		return 0
	}
	pst, err := parent.Stat()
	if err != nil || (pst.Comm != "postgres" && pst.Comm != "postmaster") {
		return 0
	}
	return st.PPID
}

// setStep tags later samples with step (nil-safe).
func (t *telemetryRun) setStep(step int) {
	if t != nil {
		t.step.Store(int64(step))
	}
}

// summarize aggregates the samples of [from, to] (nil-safe).
func (t *telemetryRun) summarize(from, to time.Time) *telemetry.Aggregate {
	if t == nil {
		return nil
	}
	a := telemetry.Summarize(t.session.Samples(from, to))
	return &a
}

// status is the short telemetry part of a live line: CPU idle and iowait,
// and the target's device latency.
func (t *telemetryRun) status() string {
	if t == nil {
		return ""
	}
	x, ok := t.session.Latest()
	if !ok {
		return ""
	}
	s := fmt.Sprintf("  idle %3.0f%% iowait %3.0f%%", x.CPU.IdlePct, x.CPU.IOWaitPct)
	if x.Total != nil {
		s += fmt.Sprintf("  dev r %5.0f w %5.0f IOPS await %5.2f/%5.2f ms", x.Total.RIOPS, x.Total.WIOPS, x.Total.RAwaitMs, x.Total.WAwaitMs)
	}
	if x.Latency != nil && x.Latency.Count > 0 {
		s += fmt.Sprintf(" p99 %5.2f ms", x.Latency.P99Ms)
	}
	return s
}

// stop ends sampling (nil-safe).
func (t *telemetryRun) stop() {
	if t != nil {
		t.session.Stop()
	}
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
