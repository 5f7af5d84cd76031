package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/threshold"
	"github.com/tierbench/tierbench/internal/tpch"
	"github.com/tierbench/tierbench/internal/units"
)

// The TPC-H run's limits.
const (
	// MaxTPCHStreams is the most query streams a throughput test runs.
	MaxTPCHStreams = 64
	// MinTPCHTimeout is the shortest per-query timeout.
	MinTPCHTimeout = 10 * time.Millisecond
	// MaxTPCHSeed is the largest seed: stream S draws from seed + S, a
	// qgen seed.
	MaxTPCHSeed = tpch.MaxSeed - MaxTPCHStreams
)

// TPCHRunConfig is a TPC-H run: power tests, and a throughput test when
// Streams is above 0, on a database that holds a TPC-H build.
type TPCHRunConfig struct {
	Record
	DSN    string
	Target string // the path whose devices telemetry samples ("": the server's data directory)
	// Seed draws the substitution parameters as qgen's -r does (0: one
	// from the clock, recorded).
	Seed int64
	// Validation runs the queries with the specification's validation
	// parameters and no refresh functions, and checks every answer where
	// reference answers exist (SF 0.01, 0.1 and 1).
	Validation bool
	NoRefresh  bool // leave RF1 and RF2 out
	Streams    int  // the throughput test's query streams (0: no throughput test)
	Repeat     int  // power tests
	// Timeout cancels a query on the server after this long (0: never); it
	// is recorded as timed out.
	Timeout time.Duration
	// Thresholds are judged on each power test and on the throughput test
	// (stored.KindTPCH): geomean<=2s, q18.seconds<=30s.
	Thresholds []threshold.Threshold
}

// NewTPCHRunConfig returns a TPC-H run's defaults: one power test with the
// refresh functions, no throughput test, no timeout.
func NewTPCHRunConfig() TPCHRunConfig { return TPCHRunConfig{Record: DefaultRecord(), Repeat: 1} }

// Validate reports every problem of the config at once.
func (c TPCHRunConfig) Validate() error {
	var ps problems
	dsn(&ps, c.DSN)
	c.Record.validate(&ps)
	if c.Seed < 0 || c.Seed > MaxTPCHSeed {
		ps.add("seed", c.Seed, "is out of range; give 0 (from the clock) to %d", MaxTPCHSeed)
	}
	ps.intRange("streams", c.Streams, 0, MaxTPCHStreams, "query streams (0: no throughput test)")
	repetitions(&ps, c.Repeat)
	if c.Timeout != 0 && c.Timeout < MinTPCHTimeout {
		ps.add("timeout", c.Timeout, "is too short; give 0 (none) or at least %s", MinTPCHTimeout)
	}
	if c.Validation && c.Seed != 0 {
		ps.add("seed", c.Seed, "draws parameters, but {validate} uses the specification's own; give one or the other")
	}
	return ps.err()
}

// GivenStreams is the rule for a number of query streams a user wrote
// (a flag, a key, a step's field): a throughput test has at least one
// query stream, and leaving the number out runs the power tests alone.
// Config's 0 is that default, not a value to write.
func GivenStreams(n int) error {
	var ps problems
	if n == 0 {
		ps.add("streams", n, "runs no throughput test; give 1 to %d query streams, or leave streams out to run the power test alone", MaxTPCHStreams)
	}
	return ps.err()
}

// TPCHRunResult is a TPC-H run's document: what --json prints and the
// store keeps as the run's summary.
type TPCHRunResult struct {
	RunID    string           `json:"run_id"`
	Status   string           `json:"status"`
	Engine   string           `json:"engine"`
	Scale    float64          `json:"scale"`
	Seed     int64            `json:"seed"`
	Validate bool             `json:"validate"`
	Refresh  bool             `json:"refresh"`
	Streams  int              `json:"streams"`
	Repeat   int              `json:"repeat"`
	Timeout  string           `json:"timeout,omitempty"`
	Power    []*TPCHPowerTest `json:"power"`
	// GeoMean is the power tests' geometric mean of the 22 queries'
	// seconds, over the repetitions: the headline figure.
	GeoMean    stats.Summary       `json:"geomean_seconds"`
	Throughput *TPCHThroughputTest `json:"throughput,omitempty"`
	// Composite is tierbench's composite of the power and throughput
	// figures, √(power@size × throughput@size), made as TPC-H makes its
	// QphH but not an audited TPC metric.
	Composite float64 `json:"composite_qph,omitempty"`
	// AnswersChecked says whether every query's answer was compared with
	// the reference's; Wrong lists the queries whose answers differed.
	AnswersChecked bool                `json:"answers_checked"`
	Wrong          []string            `json:"wrong,omitempty"`
	Thresholds     []threshold.Verdict `json:"thresholds,omitempty"`
}

// TPCHPowerTest is one power test: RF1, the 22 queries of stream 0 in the
// specification's order, RF2, one after another on one connection.
type TPCHPowerTest struct {
	Rep     int     `json:"rep"`
	Seconds float64 `json:"seconds"`
	// GeoMean is the geometric mean of the 22 queries' seconds; with a
	// query timed out it counts the timeout, and Incomplete says so. A
	// test cut short (interrupted, or a query failed) has none (0) and is
	// incomplete.
	GeoMean    float64 `json:"geomean_seconds"`
	Incomplete bool    `json:"incomplete,omitempty"`
	// PowerAtSize is 3600 · SF over the geometric mean of the 22 queries'
	// and the refresh functions' seconds, as TPC-H's Power@Size.
	PowerAtSize float64             `json:"power_at_size"`
	Queries     []*stored.TPCHQuery `json:"queries"`
}

// TPCHThroughputTest is the throughput test: Streams query streams at once,
// each in its own order, beside one refresh stream of Streams RF1/RF2 pairs.
type TPCHThroughputTest struct {
	Streams int     `json:"streams"`
	Seconds float64 `json:"seconds"`
	// ThroughputAtSize is S · 22 · 3600 / seconds · SF, as TPC-H's
	// Throughput@Size.
	ThroughputAtSize float64             `json:"throughput_at_size"`
	Queries          []*stored.TPCHQuery `json:"queries"`
}

// tpchRun is one run's state while it runs.
type tpchRun struct {
	cfg     TPCHRunConfig
	runner  engine.TPCHRunner
	dialect tpch.Dialect
	scale   tpch.Scale
	info    engine.TPCHBuildInfo
	refresh bool
	check   bool // answers are compared
	rec     *recording
	obs     Observer
	sets    map[int]tpch.RefreshSet // the update sets RF1 and RF2 apply, made before the tests
	judge   *judge
	mu      sync.Mutex // guards steps, rec and obs in the throughput test
	steps   int
}

// RunTPCH runs cfg's power tests and throughput test on the TPC-H build in
// cfg.DSN's database and records every query as a step. A wrong answer
// completes the run and returns a *Verdict; a query the database refused
// fails it.
func RunTPCH(ctx context.Context, cfg TPCHRunConfig, obs Observer) (*TPCHRunResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Seed == 0 && !cfg.Validation {
		cfg.Seed = rand.Int64N(MaxTPCHSeed) + 1
	}
	db, err := Open(ctx, cfg.DSN)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	runner, ok := db.(engine.TPCHRunner)
	if !ok {
		return nil, invalidf("this engine cannot run TPC-H; give a postgres:// or mariadb:// DSN")
	}
	info, err := runner.TPCHBuild(ctx)
	if err != nil {
		return nil, err
	}
	sc, err := tpch.NewScale(info.Scale)
	if err != nil {
		return nil, fmt.Errorf("the TPC-H build's scale factor: %w", err)
	}
	r := &tpchRun{cfg: cfg, runner: runner, dialect: runner.TPCHDialect(), scale: sc, info: info, obs: obs,
		refresh: !cfg.NoRefresh && !cfg.Validation, judge: &judge{ts: cfg.Thresholds, obs: obs}}
	if cfg.Validation {
		if info.RF1Sets > 0 || info.RF2Sets > 0 {
			return nil, invalidf("the TPC-H build has had refresh functions applied (%d inserted and %d deleted update sets), which change the answers; "+
				"validate a fresh build (tpch build --drop)", info.RF1Sets, info.RF2Sets)
		}
		if tpch.HasAnswers(info.Scale) {
			r.check = true
		} else {
			obs.Note(fmt.Sprintf("no reference answers at scale factor %g (there are at 0.01, 0.1 and 1): the queries run with the validation parameters, unchecked", info.Scale))
		}
	}
	if r.refresh {
		if need := max(info.RF1Sets, info.RF2Sets) + cfg.Repeat + cfg.Streams; need > tpch.MaxRefreshSets {
			return nil, invalidf("the build has had %d update sets refreshed and this run needs %d more, beyond the %d there are; build again (tpch build --drop) or run without the refresh functions",
				max(info.RF1Sets, info.RF2Sets), cfg.Repeat+cfg.Streams, tpch.MaxRefreshSets)
		}
		if sc.RefreshOrders() == 0 {
			obs.Note(fmt.Sprintf("at scale factor %g an update set has no orders: the refresh functions change nothing", info.Scale))
		}
		// Made before any is timed: the first set makes the text pool of
		// the comments, which takes seconds.
		obs.Note("making the refresh functions' update sets")
		r.sets = map[int]tpch.RefreshSet{}
		for _, from := range []int{info.RF1Sets, info.RF2Sets} {
			for n := from + 1; n <= from+cfg.Repeat+cfg.Streams; n++ {
				if _, ok := r.sets[n]; ok {
					continue
				}
				if r.sets[n], err = tpch.NewRefreshSet(sc, n); err != nil {
					return nil, err
				}
			}
		}
	}
	name, _ := all.NameOf(cfg.DSN)
	timeout := ""
	if cfg.Timeout > 0 {
		timeout = cfg.Timeout.String()
	}
	// The analytic settings each test's sessions run with, from the
	// server's memory and how many sessions share it (engine.TPCHShare).
	settings, err := engine.TPCHSettings(ctx, runner, engine.TPCHSessionOptions{Sessions: 1})
	if err != nil {
		return nil, err
	}
	var tput map[string]string
	if cfg.Streams > 0 {
		if tput, err = engine.TPCHSettings(ctx, runner, engine.TPCHSessionOptions{Sessions: cfg.Streams + 1}); err != nil {
			return nil, err
		}
	}
	params := &stored.TPCHParams{DSN: engine.Redact(cfg.DSN), Engine: name, Scale: info.Scale, Seed: cfg.Seed, Validate: cfg.Validation,
		Refresh: r.refresh, Streams: cfg.Streams, Repeat: cfg.Repeat, Timeout: timeout, Placement: cfg.Placement,
		Settings: settings, ThroughputSettings: tput}
	r.rec, err = start(ctx, begin{Record: cfg.Record, kind: stored.KindTPCH, params: params, target: cfg.Target, db: db, dsn: cfg.DSN, engineName: name}, obs)
	if err != nil {
		return nil, err
	}
	out := &TPCHRunResult{RunID: r.rec.run.ID, Engine: name, Scale: info.Scale, Seed: cfg.Seed, Validate: cfg.Validation, Refresh: r.refresh,
		Streams: cfg.Streams, Repeat: cfg.Repeat, Timeout: timeout, AnswersChecked: r.check, Power: []*TPCHPowerTest{}}
	runErr := r.run(ctx, out)
	var geo []float64
	for _, p := range out.Power {
		if p.GeoMean > 0 { // not a power test cut short
			geo = append(geo, p.GeoMean)
		}
	}
	out.GeoMean = stats.Of(geo)
	if out.Throughput != nil {
		if len(out.Power) > 0 {
			out.Composite = tpchComposite(out.Power, out.Throughput)
		}
		r.judge.step(len(out.Power), "throughput test", out.Throughput.judged(out.Composite))
	}
	for _, q := range out.queries() {
		if q.Status == stored.TPCHWrong {
			out.Wrong = append(out.Wrong, q.Name())
		}
	}
	out.Status = results.StatusComplete
	kept := ""
	switch {
	case ctx.Err() != nil:
		out.Status = results.StatusInterrupted
		kept = units.Plural(len(out.queries()), "finished query", "finished queries")
		runErr = nil
	case runErr != nil:
		out.Status = results.StatusFailed
	}
	out.Thresholds = r.judge.finish(ctx, r.rec, out.Status)
	err = r.rec.finish(ctx, end{status: out.Status, out: out, kept: kept, done: units.Plural(len(out.queries()), "query", "queries"), runErr: runErr})
	if err == nil && len(out.Wrong) > 0 {
		first := ""
		for _, q := range out.queries() {
			if q.Status == stored.TPCHWrong {
				first = q.Error
				break
			}
		}
		err = &Verdict{RunID: out.RunID, Msg: fmt.Sprintf("run %s: %d wrong answers (%s); %s", out.RunID, len(out.Wrong), strings.Join(out.Wrong, ", "), first)}
	}
	return out, gate(out.RunID, err, out.Thresholds)
}

// judged is the document a power test's thresholds read: its own figures
// (the geometric mean and power@size only when all 22 queries finished)
// and each query's and refresh function's, under q1 … q22, rf1 and rf2.
func (p *TPCHPowerTest) judged() map[string]any {
	doc := map[string]any{"seconds": p.Seconds}
	if p.GeoMean > 0 {
		doc["geomean_seconds"] = p.GeoMean
	}
	if p.PowerAtSize > 0 {
		doc["power_at_size"] = p.PowerAtSize
	}
	for _, q := range p.Queries {
		name := strings.ToLower(q.Refresh)
		if name == "" {
			name = "q" + strconv.Itoa(q.Query)
		}
		doc[name] = q
	}
	return doc
}

// judged is the document the throughput test's thresholds read.
func (t *TPCHThroughputTest) judged(composite float64) map[string]any {
	doc := map[string]any{"throughput_seconds": t.Seconds}
	if t.ThroughputAtSize > 0 {
		doc["throughput_at_size"] = t.ThroughputAtSize
	}
	if composite > 0 {
		doc["composite_qph"] = composite
	}
	return doc
}

// queries are every query and refresh function the run finished.
func (o *TPCHRunResult) queries() []*stored.TPCHQuery {
	var out []*stored.TPCHQuery
	for _, p := range o.Power {
		out = append(out, p.Queries...)
	}
	if o.Throughput != nil {
		out = append(out, o.Throughput.Queries...)
	}
	return out
}

// tpchComposite is √(mean power@size × throughput@size), over the power
// tests that finished (0 when none did).
func tpchComposite(power []*TPCHPowerTest, t *TPCHThroughputTest) float64 {
	var sum float64
	n := 0
	for _, p := range power {
		if p.PowerAtSize > 0 {
			sum, n = sum+p.PowerAtSize, n+1
		}
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(sum / float64(n) * t.ThroughputAtSize)
}

func (r *tpchRun) run(ctx context.Context, out *TPCHRunResult) error {
	for rep := 1; rep <= r.cfg.Repeat; rep++ {
		r.obs.Note(fmt.Sprintf("power test %d of %d", rep, r.cfg.Repeat))
		p, err := r.power(ctx, rep)
		if p != nil {
			out.Power = append(out.Power, p)
			r.judge.step(rep-1, fmt.Sprintf("power test %d", rep), p.judged())
		}
		if err != nil {
			return err
		}
	}
	if r.cfg.Streams > 0 {
		r.obs.Note(fmt.Sprintf("throughput test: %d query streams and a refresh stream", r.cfg.Streams))
		t, err := r.throughput(ctx)
		out.Throughput = t
		if err != nil {
			return err
		}
	}
	return nil
}

// power runs one power test.
func (r *tpchRun) power(ctx context.Context, rep int) (*TPCHPowerTest, error) {
	sess, err := r.runner.NewTPCHSession(ctx, engine.TPCHSessionOptions{Sessions: 1})
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	p := &TPCHPowerTest{Rep: rep, Queries: []*stored.TPCHQuery{}}
	subs := r.substitutions(0)
	start := time.Now()
	defer p.figures(start, r.scale.SF)
	add := func(q *stored.TPCHQuery, err error) error {
		if q != nil {
			p.Queries = append(p.Queries, q)
		}
		return err
	}
	if r.refresh {
		if err := add(r.refreshFn(ctx, sess, stored.TPCHPower, rep, 0, "RF1", r.info.RF1Sets+rep)); err != nil {
			return p, err
		}
	}
	for _, n := range tpch.StreamOrder(0) {
		if err := add(r.query(ctx, sess, stored.TPCHPower, rep, 0, n, subs[n-1])); err != nil {
			return p, err
		}
	}
	if r.refresh {
		if err := add(r.refreshFn(ctx, sess, stored.TPCHPower, rep, 0, "RF2", r.info.RF2Sets+rep)); err != nil {
			return p, err
		}
	}
	return p, nil
}

// figures sets the power test's seconds since start and, when all 22
// queries finished, their geometric mean and power@size at scale factor
// sf; a test cut short has neither and is incomplete.
func (p *TPCHPowerTest) figures(start time.Time, sf float64) {
	p.Seconds = time.Since(start).Seconds()
	var qs, all []float64
	for _, q := range p.Queries {
		all = append(all, q.Seconds)
		if q.Refresh == "" {
			qs = append(qs, q.Seconds)
			p.Incomplete = p.Incomplete || q.Status == stored.TPCHTimeout
		}
	}
	if len(qs) < 22 {
		p.Incomplete = true
		return
	}
	p.GeoMean = stored.GeoMean(qs)
	if g := stored.GeoMean(all); g > 0 {
		p.PowerAtSize = 3600 * sf / g
	}
}

// throughput runs the throughput test: each query stream on a connection
// of its own, and the refresh stream's pairs one after another on another.
func (r *tpchRun) throughput(ctx context.Context) (*TPCHThroughputTest, error) {
	t := &TPCHThroughputTest{Streams: r.cfg.Streams, Queries: []*stored.TPCHQuery{}}
	start := time.Now()
	var mu sync.Mutex
	var errs []error
	keep := func(q *stored.TPCHQuery, err error) error {
		mu.Lock()
		defer mu.Unlock()
		if q != nil {
			t.Queries = append(t.Queries, q)
		}
		if err != nil {
			errs = append(errs, err)
		}
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	// stream runs body on a connection of its own; the first error ends
	// every stream.
	stream := func(body func(sess engine.TPCHSession) error) {
		wg.Go(func() {
			sess, err := r.runner.NewTPCHSession(ctx, engine.TPCHSessionOptions{Sessions: r.cfg.Streams + 1})
			if keep(nil, err) != nil {
				cancel()
				return
			}
			defer sess.Close()
			if body(sess) != nil { // kept by body
				cancel()
			}
		})
	}
	for s := 1; s <= r.cfg.Streams; s++ {
		stream(func(sess engine.TPCHSession) error {
			subs := r.substitutions(s)
			for _, n := range tpch.StreamOrder(s) {
				if err := keep(r.query(ctx, sess, stored.TPCHThroughput, 0, s, n, subs[n-1])); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if r.refresh {
		stream(func(sess engine.TPCHSession) error {
			for i := 1; i <= r.cfg.Streams; i++ {
				for _, fn := range []string{"RF1", "RF2"} {
					set := r.info.RF1Sets + r.cfg.Repeat + i
					if fn == "RF2" {
						set = r.info.RF2Sets + r.cfg.Repeat + i
					}
					if err := keep(r.refreshFn(ctx, sess, stored.TPCHThroughput, 0, 0, fn, set)); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	wg.Wait()
	t.Seconds = time.Since(start).Seconds()
	slices.SortStableFunc(t.Queries, func(a, b *stored.TPCHQuery) int { return a.Stream - b.Stream })
	if t.Seconds > 0 {
		t.ThroughputAtSize = float64(r.cfg.Streams*22) * 3600 / t.Seconds * r.scale.SF
	}
	if len(errs) > 0 {
		return t, errs[0]
	}
	return t, nil
}

// substitutions are stream's parameters of the 22 queries.
func (r *tpchRun) substitutions(stream int) [22][]string {
	return TPCHSubstitutions(r.cfg.Validation, r.cfg.Seed, r.scale.SF, stream)
}

// query runs query n with its parameters and records it. Only a
// database's refusal or the context's end is an error: a timeout or a
// wrong answer is recorded as such.
func (r *tpchRun) query(ctx context.Context, sess engine.TPCHSession, test string, rep, stream, n int, subs []string) (*stored.TPCHQuery, error) {
	stmts, err := tpch.Statements(r.dialect, n, subs, stream)
	if err != nil {
		return nil, err
	}
	q := &stored.TPCHQuery{Test: test, Rep: rep, Stream: stream, Query: n, Params: subs}
	idx := r.nextStep(test)
	began := time.Now()
	rows, err := sess.Query(ctx, append(slices.Clone(stmts.Setup), stmts.Answer), r.cfg.Timeout)
	ended := time.Now()
	if err == nil {
		// The answer statement's time on the server, read now: after the
		// client's time was taken and before the teardown's statements.
		q.ServerSeconds = sess.ServerSeconds(ctx)
	}
	if len(stmts.Teardown) > 0 {
		// Also after a failure: Q15's view must not outlive the query.
		if _, terr := sess.Query(context.WithoutCancel(ctx), stmts.Teardown, 0); terr != nil && err == nil {
			err = terr
		}
	}
	q.Seconds, q.Rows, q.Status = ended.Sub(began).Seconds(), len(rows), stored.TPCHOK
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, engine.ErrQueryTimeout):
		q.Status, q.Error = stored.TPCHTimeout, err.Error()
	case err != nil:
		q.Status, q.Error = stored.TPCHFailed, err.Error()
	case r.check:
		if cerr := tpch.CheckAnswer(r.scale.SF, n, rows); cerr != nil {
			q.Status, q.Error = stored.TPCHWrong, cerr.Error()
		}
	}
	r.store(ctx, idx, q, began, ended)
	if q.Status == stored.TPCHFailed {
		return q, fmt.Errorf("%s: %s", q.Name(), q.Error)
	}
	return q, nil
}

// refreshFn runs RF1 or RF2 of update set n and records it.
func (r *tpchRun) refreshFn(ctx context.Context, sess engine.TPCHSession, test string, rep, stream int, fn string, n int) (*stored.TPCHQuery, error) {
	set := r.sets[n]
	var err error
	q := &stored.TPCHQuery{Test: test, Rep: rep, Stream: stream, Refresh: fn, Params: []string{fmt.Sprint(n)}, Status: stored.TPCHOK}
	idx := r.nextStep(test)
	began := time.Now()
	if fn == "RF1" {
		err = sess.RF1(ctx, set)
		q.Rows = len(set.Deletes) + strings.Count(string(set.LineItems), "\n")
	} else {
		err = sess.RF2(ctx, set)
		q.Rows = len(set.Deletes)
	}
	ended := time.Now()
	q.Seconds = ended.Sub(began).Seconds()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		q.Status, q.Error = stored.TPCHFailed, err.Error()
	}
	r.store(ctx, idx, q, began, ended)
	if err != nil {
		return q, fmt.Errorf("%s of update set %d: %w", fn, n, err)
	}
	return q, nil
}

// nextStep numbers the next step; in the power test, later samples are
// tagged with it.
func (r *tpchRun) nextStep(test string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps++
	if test == stored.TPCHPower {
		r.rec.tele.setStep(r.steps)
	}
	return r.steps
}

// store keeps a finished query as step idx, with what the storage did
// meanwhile, and tells the observer.
func (r *tpchRun) store(ctx context.Context, idx int, q *stored.TPCHQuery, began, ended time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.rec.tele.summarize(began, ended); a != nil && a.Samples > 0 {
		q.Telemetry = a
		q.ReadMBps, q.ReadAwait, q.DeviceP99 = a.Device["r_mbps"], a.Device["r_await_ms"], a.Device["p99_ms"]
	}
	metrics, err := json.Marshal(q)
	r.rec.keep(err)
	r.rec.addStep(ctx, results.Step{Index: idx, Name: q.Name(), StartedAt: began, MeasureStart: began, MeasureEnd: ended, Metrics: metrics})
	r.obs.Result(Result{TPCHQuery: q})
}
