package cli

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/live"
	"github.com/tierbench/tierbench/internal/report"
	"github.com/tierbench/tierbench/internal/scenario"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/units"
)

// metricsOptions are the live metrics flags of the commands that run
// something: a Prometheus endpoint, off unless --metrics-listen is given.
type metricsOptions struct {
	MetricsListen string
	MetricsGrace  string
}

func (o *metricsOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.MetricsListen, "metrics-listen", "", "serve live Prometheus metrics at http://ADDR:PORT/metrics while the run goes (127.0.0.1:0: any free port, printed)")
	fs.StringVar(&o.MetricsGrace, "metrics-grace", "15s", "with --metrics-listen: how long the endpoint stays up after the run, so that a last scrape sees its end (Ctrl-C ends it)")
}

// validate checks the flags without serving anything.
func (o *metricsOptions) validate() (time.Duration, error) {
	grace, err := units.ParseDuration(o.MetricsGrace)
	if err != nil || grace < 0 {
		return 0, usagef("--metrics-grace %q is not a duration; give e.g. 15s, or 0s to stop at once", o.MetricsGrace)
	}
	if o.MetricsListen == "" {
		return grace, nil
	}
	if err := live.CheckAddr(o.MetricsListen); err != nil {
		return 0, usagef("--metrics-listen %v", err)
	}
	return grace, nil
}

// liveMetrics is a command's endpoint (nil-safe: a nil one exports nothing).
type liveMetrics struct {
	g     *Globals
	exp   *live.Exporter
	srv   *live.Server
	grace time.Duration
}

// start serves the endpoint when asked for and says where (nil without
// --metrics-listen).
func (o *metricsOptions) start(g *Globals) (*liveMetrics, error) {
	grace, err := o.validate()
	if err != nil || o.MetricsListen == "" {
		return nil, err
	}
	exp := live.New()
	srv, err := live.Serve(o.MetricsListen, exp)
	if err != nil {
		return nil, err
	}
	g.progressf("metrics: serving %s\n", srv.URL())
	return &liveMetrics{g: g, exp: exp, srv: srv, grace: grace}, nil
}

// observe adds the exporter to a command's observer.
func (m *liveMetrics) observe(v experiment.Observer) experiment.Observer {
	if m == nil {
		return v
	}
	return experiment.Tee(v, m.exp.Observer())
}

// record asks the run for what the exporter needs.
func (m *liveMetrics) record(r *experiment.Record) {
	if m != nil {
		r.LatencyBuckets = live.LatencyBuckets
	}
}

// begin starts the endpoint when asked for, asks the run recorded in rec
// (nil: none to ask) for what the exporter needs, and returns the observer
// to run with and what to defer: the grace period and the endpoint's stop.
func (o *metricsOptions) begin(ctx context.Context, g *Globals, rec *experiment.Record, v experiment.Observer) (experiment.Observer, func(), error) {
	m, err := o.start(g)
	if err != nil {
		return nil, nil, err
	}
	if rec != nil {
		m.record(rec)
	}
	return m.observe(v), func() { m.close(ctx) }, nil
}

// scenario adds the exporter to a scenario's view.
func (m *liveMetrics) scenario(v *scenarioView) scenario.Listener {
	if m == nil {
		return v
	}
	return &liveScenario{Observer: m.observe(v.view), v: v}
}

// scenarioOptions give the experiments that run side by side an exporter's
// observer each.
func (m *liveMetrics) scenarioOptions() scenario.Options {
	if m == nil {
		return scenario.Options{}
	}
	return scenario.Options{Background: m.exp.Observer, LatencyBuckets: live.LatencyBuckets}
}

// liveScenario is a scenario's view with the exporter hearing its
// experiments.
type liveScenario struct {
	experiment.Observer
	v *scenarioView
}

func (l *liveScenario) Step(i, n int, st scenario.Step) { l.v.Step(i, n, st) }
func (l *liveScenario) Checked(instance string, c *tpcc.CheckResult) {
	l.v.Checked(instance, c)
}
func (l *liveScenario) Neighbour(instance string, s *stored.TPCCStep) {
	l.v.Neighbour(instance, s)
}
func (l *liveScenario) Reported(w report.Written) { l.v.Reported(w) }

// close keeps the endpoint up for its grace period, then stops it. A run
// already stopped by Ctrl-C, or a Ctrl-C meanwhile, ends the wait.
func (m *liveMetrics) close(ctx context.Context) {
	if m == nil {
		return
	}
	if m.grace > 0 && ctx.Err() == nil {
		m.g.progressf("metrics: still serving %s for %s (Ctrl-C ends it)\n", m.srv.URL(), m.grace)
	}
	m.srv.Close(ctx, m.grace)
}
