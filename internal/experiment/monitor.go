package experiment

import (
	"context"
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
	Target    string
	DSN       string        // "": no database
	Duration  time.Duration // 0: until the context ends
	Telemetry Telemetry     // its Interval must not be 0
}

// MonitorResult is a monitor's document: averages over the whole session.
type MonitorResult struct {
	RunID      string                `json:"run_id"`
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
// the run is marked interrupted (and no error says so).
func RunMonitor(ctx context.Context, cfg MonitorConfig, obs Observer) (*MonitorResult, error) {
	obs = serial(obs) // telemetry samples come from their own goroutine
	if cfg.Telemetry.Interval <= 0 {
		return nil, invalidf("a monitor needs a sampling interval")
	}
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
	rec, err := start(ctx, begin{Record: Record{Results: cfg.Results, Telemetry: cfg.Telemetry}, kind: stored.KindMonitor,
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
	status := results.StatusComplete
	if ctx.Err() != nil && cfg.Duration > 0 {
		status = results.StatusInterrupted
	}
	return out, rec.finish(ctx, end{status: status, out: out})
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
