package experiment

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// MonitorConfig samples telemetry alone: the host, Target's devices and,
// with a DSN, the database's internals, for Duration or until the context
// ends.
type MonitorConfig struct {
	Results   string
	RunID     string // the id to record the run under ("": a new one; see Record.RunID)
	Target    string
	DSN       string        // "": no database
	Duration  time.Duration // 0: until the context ends
	Telemetry Telemetry     // its Interval must not be 0
}

// Validate reports every problem of the config at once, each a *Problem
// naming its field: target, dsn, duration, results and telemetry_interval.
func (c MonitorConfig) Validate() error {
	var ps problems
	if c.Target == "" && len(c.Telemetry.Nodes) == 0 {
		ps.missing("target", "is empty; name the path whose devices to sample, e.g. /var/lib/postgresql (or only other hosts', through their node_exporters)")
	}
	if c.DSN != "" {
		dsn(&ps, c.DSN)
	}
	if c.Duration < 0 {
		ps.add("duration", c.Duration, "is negative; give 0 (until stopped) or more")
	}
	resultsDir(&ps, c.Results)
	if c.Telemetry.Interval == 0 {
		ps.add("telemetry_interval", c.Telemetry.Interval, "would sample nothing; give an interval such as 1s")
	}
	c.Telemetry.validate(&ps)
	return ps.err()
}

// MonitorResult is a monitor's document: averages over the whole session.
type MonitorResult struct {
	RunID      string                `json:"run_id"`
	Status     string                `json:"status"` // complete, or interrupted before its Duration
	Seconds    float64               `json:"seconds"`
	Resolution *telemetry.Resolution `json:"resolution,omitempty"`
	Devices    []stored.DeviceRates  `json:"devices"`
	Host       map[string]float64    `json:"host"`
	Device     map[string]float64    `json:"device,omitempty"`
	DB         map[string]float64    `json:"db,omitempty"`
	Hosts      []stored.HostStats    `json:"hosts,omitempty"` // the node_exporter hosts
	// Samples is how many samples the averages are of.
	Samples int `json:"-"`
}

// RunMonitor samples and records a monitor run; each sample is a Tick. Its
// end by the context is its normal end unless a Duration was given, when
// the run is marked interrupted and the error is *Interrupted.
func RunMonitor(ctx context.Context, cfg MonitorConfig, obs Observer) (*MonitorResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	obs = serial(obs) // telemetry samples come from their own goroutine
	var db engine.DB
	name := ""
	if cfg.DSN != "" {
		var err error
		if db, err = Open(ctx, cfg.DSN); err != nil {
			return nil, err
		}
		defer db.Close()
		name, _ = all.NameOf(cfg.DSN)
	}
	rec, err := start(ctx, begin{Record: Record{Results: cfg.Results, RunID: cfg.RunID, Telemetry: cfg.Telemetry}, kind: stored.KindMonitor,
		target: cfg.Target, db: db, dsn: cfg.DSN, engineName: name,
		params: &stored.MonitorParams{Target: cfg.Target, Interval: cfg.Telemetry.Interval.String(), Duration: cfg.Duration.String(),
			DSN: engine.Redact(cfg.DSN)}}, obs)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var timer <-chan time.Time
	if cfg.Duration > 0 {
		timer = time.After(cfg.Duration)
	}
	tick := time.NewTicker(cfg.Telemetry.Interval)
	defer tick.Stop()
	shown := time.Time{}
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-timer:
			break loop
		case <-tick.C:
			if x := rec.tele.latest(); x != nil && x.T.After(shown) {
				obs.Tick(Tick{Telemetry: x})
				shown = x.T
			}
		}
	}
	stop := time.Now()
	rec.tele.stop()
	samples := rec.tele.session.Samples(start, stop)
	agg := telemetry.Summarize(samples)
	out := &MonitorResult{RunID: rec.run.ID, Seconds: stop.Sub(start).Seconds(), Resolution: rec.tele.session.Resolution(),
		Devices: averageDevices(samples), Host: agg.Host, Device: agg.Device, DB: agg.DB, Hosts: agg.Hosts, Samples: len(samples)}
	// Without a Duration, Ctrl-C is how a monitor ends. With one, Ctrl-C
	// before it is up is an interruption, as in every other run: the
	// samples so far are kept and the error is *Interrupted.
	e := end{status: results.StatusComplete, out: out}
	if ctx.Err() != nil && cfg.Duration > 0 {
		e.status, e.kept = results.StatusInterrupted, fmt.Sprintf("%d samples over %.0f s", len(samples), out.Seconds)
	}
	out.Status = e.status
	return out, rec.finish(ctx, e)
}

// averageDevices averages each device's rates over the samples.
func averageDevices(samples []telemetry.Sample) []stored.DeviceRates {
	by := map[string][]stored.DeviceRates{}
	for _, x := range samples {
		for _, d := range x.Devices {
			by[d.Name] = append(by[d.Name], d)
		}
	}
	out := []stored.DeviceRates{}
	for name, xs := range by {
		a := telemetry.AverageRates(xs)
		a.Name = name
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
