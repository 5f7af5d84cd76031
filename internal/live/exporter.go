// Package live exports a running benchmark as Prometheus metrics: an
// Exporter hears the experiments' events (it gives each run an
// experiment.Observer of its own) and a Server serves them at /metrics in
// the Prometheus text format, or OpenMetrics when a scraper asks, through
// client_golang.
//
// The workload never waits for it: events update a little state per run
// under one lock, and a scrape turns that state into metrics. Every series
// is labelled run, instance, engine and target; their values come from the
// run's parameters, so their number is bounded by the runs of the process
// (never a value per second). The names are listed in docs/metrics.md.
package live

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// LatencyBuckets are the upper bounds of the transaction latency
// histograms: fine below a millisecond, where a New-Order on a fast server
// lands, and up to the 10 s where a stalled one does. A run that exports
// metrics passes them as experiment.Record.LatencyBuckets.
var LatencyBuckets = []time.Duration{
	50 * time.Microsecond, 100 * time.Microsecond, 200 * time.Microsecond, 300 * time.Microsecond,
	500 * time.Microsecond, 750 * time.Microsecond, time.Millisecond, 1500 * time.Microsecond,
	2 * time.Millisecond, 3 * time.Millisecond, 5 * time.Millisecond, 7500 * time.Microsecond,
	10 * time.Millisecond, 15 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second,
	2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// Exporter holds the state of every run it has heard and is the
// prometheus.Collector that turns it into metrics.
type Exporter struct {
	mu   sync.Mutex
	runs []*runState
	reg  *prometheus.Registry
}

// New returns an Exporter whose registry also carries the Go runtime's and
// this process's own metrics (its CPU, memory and open files).
func New() *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry()}
	e.reg.MustRegister(e, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{Namespace: "tierbench"}))
	return e
}

// Registry is what a Server serves.
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Observer returns an observer for runs made one after another (a command,
// or a scenario's foreground); each run it hears Started for is exported
// from then on. Runs that go side by side need an observer each.
func (e *Exporter) Observer() experiment.Observer { return &observer{e: e} }

// runState is what a run's metrics show: its labels and the latest of each
// figure, counters added up.
type runState struct {
	labels    []string // run, instance, engine, target
	kind      string
	label     string
	startedAt time.Time

	tpcc *tpccState
	// points are the disk points heard, one per name in the order they
	// first finished: a repeated point keeps its latest repetition's
	// figures, so that its series stay one per label set.
	points []*pointState
	point  pointProgress
	backup *backupState
	dur    *durabilityState
	tpch   *tpchState
	sample *telemetry.Sample
}

type tpccState struct {
	vus, step, steps    int
	measuring           bool
	tpm, nopm           float64
	dbTxns, dbNewOrders int64
	offered             float64              // the open-loop step's rate (0: a closed loop)
	queue, late         int64                // waiting now; late since the run started
	open                bool                 // an open-loop step ran
	done                [tpcc.NumKinds]int64 // completions, rolled back included
	rolledBack, failed  [tpcc.NumKinds]int64
	buckets             [tpcc.NumKinds][]uint64 // cumulative counts per LatencyBuckets bound and above
	sum                 [tpcc.NumKinds]float64  // seconds
	// finished are the finished steps, one per VU count when the run
	// repeats its steps (its latest repetition's figures, in the order the
	// counts first finished), so that each has one step label.
	finished []stepFigures
}

type stepFigures struct {
	vus       int
	tpm, nopm int64
	offered   float64 // an open-loop step's rate
	unserved  int64
	repeated  bool // a repetition of its VU count (the run repeats its steps)
}

type pointProgress struct{ index, count int }

type pointState struct {
	name string
	res  stored.Point
}

type backupState struct {
	cycle, cycles int
	phase         string
	elapsed       float64
	finished      map[string]*stored.PhaseResult // the last finished phase of each kind
	count         map[string]int64
}

type durabilityState struct {
	cycle, cycles int
	acknowledged  int64
	finished      int64
	lost, excess  int64
	last          *stored.DurabilityCycle
}

// observer is one run-after-run sequence's Observer.
type observer struct {
	experiment.Nop
	e   *Exporter
	run *runState
}

// labelsOf derives a run's labels from its stored parameters.
func labelsOf(s experiment.Started) *runState {
	r := &runState{kind: s.Kind, startedAt: time.Now()}
	var engineName, target string
	var pl stored.Placement
	switch p := s.Params.(type) {
	case *stored.TPCCParams:
		engineName, pl = p.Engine, p.Placement
	case *stored.DiskParams:
		target, pl = p.Target, p.Placement
	case *stored.BackupParams:
		engineName, target, pl = p.Engine, p.Target, p.Placement
	case *stored.TPCHParams:
		engineName, pl = p.Engine, p.Placement
	case *stored.DurabilityParams:
		engineName = p.Engine
	case *stored.MonitorParams:
		target = p.Target
	}
	if pl.Target != "" {
		target = pl.Target // a scenario's target names the tier
	}
	r.label = pl.Label
	r.labels = []string{s.RunID, pl.Instance, engineName, target}
	return r
}

func (o *observer) Started(s experiment.Started) {
	r := labelsOf(s)
	o.e.mu.Lock()
	o.e.runs = append(o.e.runs, r)
	o.run = r
	o.e.mu.Unlock()
}

// update runs f on the current run's state under the exporter's lock
// (nothing before a run has started).
func (o *observer) update(f func(r *runState)) {
	o.e.mu.Lock()
	defer o.e.mu.Unlock()
	if o.run != nil {
		f(o.run)
	}
}

func (o *observer) Tick(t experiment.Tick) {
	o.update(func(r *runState) {
		if t.Telemetry != nil {
			r.sample = t.Telemetry
		}
		if t.TPCC != nil {
			r.tpccTick(t)
		}
	})
}

func (r *runState) tpccTick(x experiment.Tick) {
	t := x.TPCC
	s := r.tpcc
	if s == nil {
		s = &tpccState{}
		r.tpcc = s
	}
	s.vus, s.step, s.steps, s.measuring = t.VUs, t.Step, t.Steps, t.Phase == "measure"
	if s.nopm = t.NOPM; !t.NoTPM {
		s.tpm = t.TPM // else the last second's stands until the next reading
	}
	s.offered, s.queue = t.OfferedTPM, t.Queue
	s.late += t.Late
	s.open = s.open || t.OfferedTPM > 0
	s.dbTxns += t.Transactions
	s.dbNewOrders += t.NewOrders
	for k := range tpcc.NumKinds {
		s.done[k] += t.TxnPerSec[k]
		s.rolledBack[k] += t.RolledBack[k]
		s.failed[k] += t.Failed[k]
		b := t.Latency[k]
		if b.Counts == nil {
			continue
		}
		if s.buckets[k] == nil {
			s.buckets[k] = make([]uint64, len(b.Counts))
		}
		for i, n := range b.Counts {
			if i < len(s.buckets[k]) {
				s.buckets[k][i] += uint64(n)
			}
		}
		s.sum[k] += b.Sum.Seconds()
	}
}

func (o *observer) Progress(p experiment.Progress) {
	o.update(func(r *runState) {
		if p.Telemetry != nil {
			r.sample = p.Telemetry
		}
		switch {
		case p.Point != nil:
			r.point = pointProgress{index: p.Point.Index + 1, count: p.Point.Count}
		case p.Phase != nil:
			b := r.backupState()
			b.cycle, b.cycles, b.phase, b.elapsed = p.Phase.Cycle, p.Phase.Cycles, p.Phase.Phase, p.Phase.Elapsed.Seconds()
		case p.Cycle != nil:
			d := r.durabilityState()
			d.cycle, d.cycles, d.acknowledged = p.Cycle.Cycle, p.Cycle.Cycles, p.Cycle.Acknowledged
		}
	})
}

func (r *runState) backupState() *backupState {
	if r.backup == nil {
		r.backup = &backupState{finished: map[string]*stored.PhaseResult{}, count: map[string]int64{}}
	}
	return r.backup
}

func (r *runState) durabilityState() *durabilityState {
	if r.dur == nil {
		r.dur = &durabilityState{}
	}
	return r.dur
}

func (o *observer) Result(x experiment.Result) {
	o.update(func(r *runState) {
		switch {
		case x.TPCC != nil:
			if r.tpcc == nil {
				r.tpcc = &tpccState{}
			}
			r.tpcc.finish(x.TPCC)
		case x.Point != nil:
			r.finishPoint(*x.Point)
		case x.TPCHQuery != nil:
			r.tpchState().finish(x.TPCHQuery)
		case x.Phase != nil:
			b := r.backupState()
			ph := *x.Phase
			b.finished[ph.Phase.Phase] = &ph
			b.count[ph.Phase.Phase]++
		case x.Cycle != nil:
			d := r.durabilityState()
			c := *x.Cycle
			d.last = &c
			d.finished++
			d.lost += c.Lost
			d.excess += c.Excess
		}
	})
}

// finish keeps a finished step's figures. A repetition of a VU count
// already heard replaces that count's figures: the series stay one per
// step and VU count, showing the latest repetition (the means are the
// stored run's, in its report and --json). A step of a run that does not
// repeat is a step of its own, as it ran.
func (t *tpccState) finish(s *stored.TPCCStep) {
	f := stepFigures{vus: s.VUs, tpm: s.TPM, nopm: s.NOPM, repeated: s.Repetition > 0}
	if o := s.OpenLoop; o != nil {
		f.offered, f.unserved = o.OfferedTPM, o.Unserved
	}
	if f.repeated {
		for i, g := range t.finished {
			if g.repeated && g.vus == f.vus && g.offered == f.offered {
				t.finished[i] = f
				return
			}
		}
	}
	t.finished = append(t.finished, f)
}

// finishPoint keeps a finished disk point's figures, replacing those of
// an earlier point of the same name (a repetition): the point label
// names one series per point, which shows the latest repetition.
func (r *runState) finishPoint(p stored.Point) {
	for _, q := range r.points {
		if q.name == p.Name {
			q.res = p
			return
		}
	}
	r.points = append(r.points, &pointState{name: p.Name, res: p})
}

// dbMetricName turns a database internal's sampled name into a Prometheus
// name and the factor that converts its value into base units: rates end
// in _per_second, percentages become ratios, milliseconds seconds.
func dbMetricName(name string) (string, float64) {
	var b strings.Builder
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			b.WriteRune(c)
		case c >= 'A' && c <= 'Z':
			b.WriteRune(c - 'A' + 'a')
		default:
			b.WriteByte('_')
		}
	}
	n, f := b.String(), 1.0
	suffix := ""
	if s, ok := strings.CutSuffix(n, "_per_s"); ok {
		n, suffix = s, "_per_second"
	}
	switch {
	case strings.HasSuffix(n, "_pct"):
		n, f = strings.TrimSuffix(n, "_pct")+"_ratio", 0.01
	case strings.HasSuffix(n, "_ms"):
		n, f = strings.TrimSuffix(n, "_ms")+"_seconds", 0.001
	}
	return "tierbench_db_" + n + suffix, f
}
