package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/internal/driver"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/threshold"
	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/units"
	"github.com/tierbench/tierbench/internal/version"
)

// TPCCConfig is a TPC-C run: steps of virtual users, each a ramp-up and a
// measured interval, on the database at DSN.
type TPCCConfig struct {
	Record
	DSN string
	VUs []int // virtual users per step
	// Rates, when set, makes the run open-loop: one step per rate, in
	// transactions a minute, each served by a pool of VUs[0] virtual users
	// (driver.Config.Rates). Arrival is driver.ArrivalPoisson ("" too) or
	// driver.ArrivalConstant; an arrival that waits for a VU longer than
	// LateAfter is late.
	Rates     []float64
	Arrival   string
	LateAfter time.Duration
	// RateFractions, instead of Rates, are percentages of the most the
	// pool serves: a closed-loop step of Probe (after RampUp) measures it
	// first, and each fraction of it is a step.
	RateFractions []float64
	Probe         time.Duration
	// KneeP99 bounds the New-Order p99 below the knee of a rate sweep (0:
	// ten times the lowest rate's).
	KneeP99  time.Duration
	RampUp   time.Duration
	Duration time.Duration
	// Repeat runs each VU count that many times (1 to
	// repeat.MaxRepeat), interleaved with the others unless BackToBack.
	Repeat         int
	BackToBack     bool
	Mode           string   // engine.ModeRoutines (""), or engine.ModeStatements
	Mix            tpcc.Mix // zero: the spec's deck (tpcc.DefaultMix)
	AllWarehouses  bool
	KeyingThinking bool
	// ThinkTime, in a closed loop, is the mean think time of each VU
	// after each transaction (driver.Config.ThinkTime); 0: none.
	ThinkTime time.Duration
	Retry     int
	Seed      uint64 // 0: a new one
	// Target is the path whose devices telemetry samples ("": the server's
	// data directory, when it runs on this host).
	Target string
	// Thresholds are judged on each step (stored.KindTPCC).
	Thresholds []threshold.Threshold
	// Together, when set, is shared by runs side by side: each step starts
	// when every one of them is ready for it (Barrier). The run leaves it
	// when it returns.
	Together *Barrier
}

// TPCCResult is a TPC-C run's document: what `tpcc run --json` prints and
// the store keeps as the run's summary.
type TPCCResult struct {
	RunID     string `json:"run_id"`
	Status    string `json:"status"`
	Mode      string `json:"mode"`
	Mix       string `json:"mix"`
	NOPMAgree bool   `json:"nopm_agree"`
	Repeat    int    `json:"repeat"`
	// Steps has one step per VU count, in the order given: with
	// repetitions, their means, their Stats, and the repetitions as they
	// ran (stored.GroupTPCC).
	Steps      []*stored.TPCCStep  `json:"steps"`
	Thresholds []threshold.Verdict `json:"thresholds,omitempty"`
	// RateProbe is the closed-loop step that measured the maximum of a
	// sweep given as fractions; Knee is where a sweep of several rates
	// stopped keeping up.
	RateProbe *RateProbe   `json:"rate_probe,omitempty"`
	Knee      *stored.Knee `json:"knee,omitempty"`
}

// RateProbe is the closed-loop step of a sweep's pool of VUs that
// measured the most they serve (ClientTPM, transactions completed a
// minute), and the rates its fractions came to.
type RateProbe struct {
	VUs          int       `json:"vus"`
	RampUp       string    `json:"rampup"`
	Seconds      float64   `json:"measured_seconds"`
	TPM          int64     `json:"tpm"`
	ClientTPM    int64     `json:"client_tpm"`
	FractionsPct []float64 `json:"fractions_pct"`
	Rates        []float64 `json:"rates"`
}

// findMaxRate runs the closed-loop step that measures what cfg's pool of
// VUs serves at most, and turns cfg's fractions into rates of it.
func findMaxRate(ctx context.Context, runner engine.Runner, cfg TPCCConfig, obs Observer) (*RateProbe, error) {
	vus := cfg.VUs[0]
	obs.Note(fmt.Sprintf("finding the maximum that rates of %s are fractions of: a closed-loop step of %s, %s ramp-up and %s measured",
		units.RateListText(cfg.RateFractions, true), vusName(vus), cfg.RampUp, cfg.Probe))
	ran, err := driver.Run(ctx, driver.Config{Runner: runner, Mode: cfg.Mode, Steps: []int{vus}, RampUp: cfg.RampUp, Duration: cfg.Probe,
		AllWarehouses: cfg.AllWarehouses, Mix: cfg.Mix, Retry: cfg.Retry, Seed: cfg.Seed})
	if err != nil {
		return nil, fmt.Errorf("the closed-loop step finding the maximum rate: %w", err)
	}
	s := ran[0]
	if s.ClientTPM <= 0 {
		return nil, fmt.Errorf("the closed-loop step finding the maximum rate completed no transaction in %s; give a longer probe, or rates in transactions a minute", cfg.Probe)
	}
	p := &RateProbe{VUs: vus, RampUp: cfg.RampUp.String(), Seconds: s.Seconds, TPM: s.TPM, ClientTPM: s.ClientTPM, FractionsPct: cfg.RateFractions}
	for _, f := range cfg.RateFractions {
		p.Rates = append(p.Rates, min(MaxRate, max(1, math.Round(f/100*float64(s.ClientTPM)))))
	}
	obs.Note(fmt.Sprintf("%s served at most %s transactions a minute; offering %s", vusName(vus), units.Thousands(s.ClientTPM), units.RateListText(p.Rates, false)))
	return p, nil
}

// NewTPCCConfig is a TPC-C run as a user gets it unless told otherwise:
// one virtual user, 2 minutes of ramp-up and 5 measured (HammerDB's
// defaults), once, through stored routines, the spec's mix, recorded as
// DefaultRecord. Its DSN is to be given.
func NewTPCCConfig() TPCCConfig {
	return TPCCConfig{Record: DefaultRecord(), VUs: []int{1}, RampUp: 2 * time.Minute, Duration: 5 * time.Minute, Repeat: 1,
		Mode: engine.ModeRoutines, Mix: tpcc.DefaultMix, Arrival: driver.ArrivalPoisson, LateAfter: time.Second, Probe: DefaultProbe}
}

// Validate reports every problem of the config at once, each a *Problem
// naming its field (dsn, vus, rampup, duration, mode, retry, repeat and
// the Record's).
func (c TPCCConfig) Validate() error {
	var ps problems
	dsn(&ps, c.DSN)
	c.Record.validate(&ps)
	if len(c.VUs) == 0 {
		ps.missing("vus", "is empty; give the virtual users of each step, e.g. 1,2,4")
	}
	for _, n := range c.VUs {
		if n < 1 || n > MaxVUs {
			ps.add("vus", n, "is out of range; give 1 to %d virtual users per step", MaxVUs)
			break
		}
	}
	c.validateRates(&ps)
	c.validateThinking(&ps)
	if c.RampUp < 0 {
		ps.add("rampup", c.RampUp, "is negative; give 0s or more")
	}
	if c.Duration < MinTPCCDuration {
		ps.add("duration", c.Duration, "is too short; give at least %s", MinTPCCDuration)
	}
	if c.Mode != "" && c.Mode != engine.ModeRoutines && c.Mode != engine.ModeStatements {
		ps.add("mode", c.Mode, "is unknown; use %s or %s", engine.ModeRoutines, engine.ModeStatements)
	}
	if c.Retry < 0 || c.Retry > MaxRetry {
		ps.add("retry", c.Retry, "is out of range; give 0 to %d retries", MaxRetry)
	}
	repetitions(&ps, c.Repeat)
	return ps.err()
}

// validateRates checks an open loop's rates, arrivals and pool.
func (c TPCCConfig) validateRates(ps *problems) {
	if c.Arrival != "" && c.Arrival != driver.ArrivalPoisson && c.Arrival != driver.ArrivalConstant {
		ps.add("arrival", c.Arrival, "is unknown; use %s or %s", driver.ArrivalPoisson, driver.ArrivalConstant)
	}
	if c.LateAfter <= 0 && (c.open() || c.LateAfter < 0) {
		ps.add("late_after", c.LateAfter, "is not above 0; give how long an arrival may wait for a VU, e.g. 1s")
	}
	if c.KneeP99 < 0 {
		ps.add("knee_p99", c.KneeP99, "is negative; give the New-Order p99 a rate below the knee may reach, e.g. 50ms, or 0s for ten times the lowest rate's")
	}
	if !c.open() {
		if c.KneeP99 > 0 {
			ps.add("knee_p99", c.KneeP99, "bounds the knee of rates, and no {rate} is given; give {rate} too, or leave {knee_p99} out")
		}
		return
	}
	for _, r := range c.Rates {
		if !(r > 0 && r <= MaxRate) {
			ps.add("rate", r, "is out of range; give above 0 to %s transactions a minute", units.Thousands(MaxRate))
			break
		}
	}
	fractions(ps, "rate", c.RateFractions)
	switch {
	case len(c.Rates) > 0 && len(c.RateFractions) > 0:
		ps.missing("rate", "has both rates and fractions; give transactions a minute or percentages of the maximum, not both")
	case len(c.RateFractions) > 0 && c.Probe < MinTPCCDuration:
		ps.add("probe", c.Probe, "leaves no room to find the maximum that {rate} %s is a fraction of: a closed-loop step of {probe} measures it first; "+
			"give %s or more (%s by default), or {rate} in transactions a minute", units.FormatRateList(c.RateFractions, true), MinTPCCDuration, DefaultProbe)
	}
	if len(c.VUs) > 1 {
		ps.add("vus", units.FormatCountList(c.VUs), "is a list; with a rate the VUs are one pool that serves the arrivals, so give one count, e.g. 8")
	}
	if c.KeyingThinking {
		ps.missing("keying_thinking", "paces each VU itself and cannot be combined with a rate, which paces the arrivals; leave one of them out")
	}
}

// validateThinking checks a closed loop's think time.
func (c TPCCConfig) validateThinking(ps *problems) {
	switch {
	case c.ThinkTime < 0 || c.ThinkTime > MaxThinkTime:
		ps.add("think_time", c.ThinkTime, "is out of range; give a mean think time from 0s (none) to %s, e.g. 2ms", units.FormatDuration(MaxThinkTime))
	case c.ThinkTime > 0 && c.KeyingThinking:
		ps.add("think_time", c.ThinkTime, "cannot be combined with {keying_thinking}, which draws the spec's own think times; give one of them")
	case c.ThinkTime > 0 && c.open():
		ps.add("think_time", c.ThinkTime, "paces each VU of a closed loop and cannot be combined with {rate}, which paces the arrivals of an open loop; give one of them")
	}
}

// fractions checks rates given as percentages of a measured maximum.
func fractions(ps *problems, field string, fs []float64) {
	for _, f := range fs {
		if !(f > 0 && f <= MaxRatePct) {
			ps.add(field, units.FormatRateList([]float64{f}, true), "is out of range; give fractions above 0%% and up to %d%% of the maximum", MaxRatePct)
			return
		}
	}
}

// open says whether the run is open-loop: rates, or fractions of a
// maximum.
func (c TPCCConfig) open() bool { return len(c.Rates) > 0 || len(c.RateFractions) > 0 }

// Warnings are what a valid config may still get wrong, for the front end
// to say before the run: a rate that its pool of VUs cannot serve even at
// MinServiceTime a transaction.
func (c TPCCConfig) Warnings() []string {
	if len(c.Rates) == 0 || len(c.VUs) != 1 {
		return nil
	}
	vus := c.VUs[0]
	most := float64(vus) * float64(time.Minute/MinServiceTime)
	for _, r := range c.Rates {
		if r > most {
			return []string{fmt.Sprintf("a rate of %s transactions a minute is more than %s can serve: %s a second each, one every %s, "+
				"and a TPC-C transaction takes at least %s, so the pool serves at most %d x 60 s / %s = %s a minute; arrivals beyond that only queue; give more VUs",
				units.Thousands(int64(r)), vusName(vus), units.Thousands(int64(r/60/float64(vus))), (time.Duration(60 * float64(time.Second) * float64(vus) / r)).Round(time.Microsecond),
				MinServiceTime, vus, MinServiceTime, units.Thousands(int64(most)))}
		}
	}
	return nil
}

// RunTPCC runs TPC-C and records it. The result is returned whenever the
// run was recorded, with the steps that finished, even with an error.
func RunTPCC(ctx context.Context, cfg TPCCConfig, obs Observer) (*TPCCResult, error) {
	defer cfg.Together.Leave()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	obs = serial(obs) // telemetry samples come from their own goroutine
	if cfg.Mode == "" {
		cfg.Mode = engine.ModeRoutines
	}
	if cfg.Mix == (tpcc.Mix{}) {
		cfg.Mix = tpcc.DefaultMix
	}
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	for _, w := range cfg.Warnings() {
		obs.Note("warning: " + w)
	}
	db, err := Open(ctx, cfg.DSN)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	runner, ok := db.(engine.Runner)
	if !ok {
		return nil, invalidf("this engine cannot run TPC-C yet")
	}
	schema, err := runner.Schema(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.KeyingThinking {
		for _, n := range slices.Compact(slices.Sorted(slices.Values(cfg.VUs))) {
			if _, note := tpcc.PacedWarehouses(n, schema.Warehouses); note != "" {
				obs.Note("warning: " + note)
			}
		}
	}
	var probe *RateProbe
	if len(cfg.RateFractions) > 0 {
		if probe, err = findMaxRate(ctx, runner, cfg, obs); err != nil {
			return nil, err
		}
		cfg.Rates = probe.Rates
		for _, w := range cfg.Warnings() {
			obs.Note("warning: " + w)
		}
	}
	steps := cfg.VUs
	if len(cfg.Rates) > 0 {
		steps = make([]int, len(cfg.Rates))
		for i := range steps {
			steps[i] = cfg.VUs[0]
		}
	}
	name, _ := all.NameOf(cfg.DSN)
	rec, err := start(ctx, begin{Record: cfg.Record, kind: stored.KindTPCC, target: cfg.Target, db: db, dsn: cfg.DSN, engineName: name,
		params: &stored.TPCCParams{
			DSN: engine.Redact(cfg.DSN), Engine: name, Warehouses: schema.Warehouses, VUs: cfg.VUs,
			RampUp: cfg.RampUp.String(), Duration: cfg.Duration.String(), Repeat: cfg.Repeat, BackToBack: cfg.BackToBack,
			Noisy: cfg.Noisy, Mode: cfg.Mode, Mix: cfg.Mix.String(),
			AllWarehouses: cfg.AllWarehouses, KeyingThinking: cfg.KeyingThinking, ThinkTime: thinkText(cfg.ThinkTime), Retry: cfg.Retry, Seed: cfg.Seed,
			Placement: cfg.Placement, Rates: cfg.Rates, Arrival: openOnly(cfg.Rates, cfg.Arrival), LateAfter: openOnly(cfg.Rates, cfg.LateAfter.String()),
			RateFractions: cfg.RateFractions, Probe: openOnly(cfg.RateFractions, cfg.Probe.String()), KneeP99: openOnly(cfg.Rates, cfg.KneeP99.String()),
		}}, obs)
	if err != nil {
		return nil, err
	}
	dc := driver.Config{Runner: runner, Mode: cfg.Mode, Steps: steps, Rates: cfg.Rates, Arrival: cfg.Arrival, LateAfter: cfg.LateAfter,
		Repeat: cfg.Repeat, BackToBack: cfg.BackToBack,
		RampUp: cfg.RampUp, Duration: cfg.Duration,
		AllWarehouses: cfg.AllWarehouses, KeyingThinking: cfg.KeyingThinking, ThinkTime: cfg.ThinkTime, Mix: cfg.Mix, Retry: cfg.Retry, Seed: cfg.Seed,
		LatencyBuckets: cfg.LatencyBuckets}
	if cfg.Together != nil {
		dc.BeforeStep = func(ctx context.Context, _ int) error { return cfg.Together.Wait(ctx) }
	}
	dc.OnTick = func(t driver.Tick) {
		step := t.Step - 1
		rec.tele.setStep(step)
		obs.Tick(Tick{TPCC: &t, Telemetry: rec.tele.latest()})
		for name, v := range map[string]float64{
			"tpm": t.TPM, "nopm": t.NOPM, "client_tpm": t.ClientTPM,
			"new_order.p50_ms": t.NewOrderP50Ms, "new_order.p95_ms": t.NewOrderP95Ms, "new_order.p99_ms": t.NewOrderP99Ms,
		} {
			if name == "tpm" && t.NoTPM {
				continue // the next second's covers this one
			}
			rec.series.Add(results.Point{Name: name, Step: step, T: t.T, Value: v})
		}
	}
	j := &judge{ts: cfg.Thresholds, obs: obs}
	dc.KeepInterrupted = true
	dc.OnStep = func(s *stored.TPCCStep) {
		if a := rec.tele.summarize(s.MeasureStart, s.MeasureEnd); a != nil {
			s.Host, s.Device, s.DB, s.Hosts = a.Host, a.Device, a.DB, a.Hosts
			s.Noisy = judgeNoisy(cfg.Noisy, a)
		}
		// Stored first, then told: a front end that hears of a step can
		// count on the store keeping it, even if the process dies next.
		if st, err := tpccStep(s); err != nil {
			rec.keep(err)
		} else {
			rec.addStep(ctx, st)
		}
		obs.Result(Result{TPCC: s})
		j.step(s.Index, repName(s), s)
	}
	ran, runErr := driver.Run(ctx, dc)
	keys := make([]stored.StepKey, len(steps))
	for i, n := range steps {
		keys[i].VUs = n
		if len(cfg.Rates) > 0 {
			keys[i].OfferedTPM = cfg.Rates[i]
		}
	}
	out := &TPCCResult{RunID: rec.run.ID, Status: results.StatusComplete, Mode: cfg.Mode, Mix: cfg.Mix.String(), NOPMAgree: true,
		Repeat: cfg.Repeat, Steps: stored.GroupTPCCDiscarding(ran, keys, cfg.Noisy.Discard)}
	if out.Steps == nil {
		out.Steps = []*stored.TPCCStep{}
	}
	out.RateProbe = probe
	if len(cfg.Rates) > 1 {
		out.Knee = stored.FindKnee(out.Steps, cfg.KneeP99)
	}
	for _, s := range ran {
		out.NOPMAgree = out.NOPMAgree && s.NOPMCheck.OK
	}
	switch {
	case errors.Is(runErr, driver.ErrInterrupted):
		out.Status = results.StatusInterrupted
	case runErr != nil:
		out.Status = results.StatusFailed
	}
	out.Thresholds = j.finish(ctx, rec, out.Status)
	err = rec.finish(ctx, end{status: out.Status, out: out, runErr: runErr,
		kept: keptSteps(ran), done: keptSteps(ran)})
	return out, gate(out.RunID, err, out.Thresholds)
}

// KneeTexts are the run's knee in the words every front end gives it
// (Knee.Text), or none without a sweep of rates (or a result). When the
// sweep held a rate above the maximum its probe found, a second text says
// so: the fractions were then of less than the server serves, as on a copy
// whose cache was cold when the probe ran.
func (r *TPCCResult) KneeTexts() []string {
	if r == nil || r.Knee == nil {
		return nil
	}
	out := []string{r.Knee.Text()}
	if p := r.RateProbe; p != nil && p.ClientTPM > 0 && r.Knee.OfferedTPM > float64(p.ClientTPM)*(1+stored.KneeFollowPct/100.0) {
		out = append(out, fmt.Sprintf("the sweep held %s TPM offered, %.0f%% of the %s TPM its probe found: the probe met a colder or busier "+
			"server than the sweep did, so its fractions are of less than the server serves; a longer ramp-up warms the server before the probe",
			units.Thousands(int64(math.Round(r.Knee.OfferedTPM))), 100*r.Knee.OfferedTPM/float64(p.ClientTPM), units.Thousands(p.ClientTPM)))
	}
	return out
}

// keptSteps says what a run stopped early kept: "2 finished steps", and
// "and the first 41.5 s of step 3" when Ctrl-C or the server's loss cut
// that one short.
func keptSteps(ran []*stored.TPCCStep) string {
	finished := len(ran)
	var cut *stored.TPCCStep
	if finished > 0 && ran[finished-1].Interrupted {
		cut = ran[finished-1]
		finished--
	}
	kept := units.Plural(finished, "finished step", "finished steps")
	if cut != nil {
		kept += fmt.Sprintf(" and the first %.1f s of step %d", cut.Seconds, cut.Index+1)
	}
	return kept
}

// repName is how a step is named in verdicts: "4 VUs", "12,000 TPM
// offered", or either with ", repetition 2".
func repName(s *stored.TPCCStep) string {
	name := vusName(s.VUs)
	if s.OpenLoop != nil {
		name = units.Thousands(int64(s.OfferedTPM)) + " TPM offered"
	}
	if s.Repetition == 0 {
		return name
	}
	return fmt.Sprintf("%s, repetition %d", name, s.Repetition)
}

// openOnly is v in an open loop's parameters, and nothing in a closed
// loop's.
func openOnly[V any](rates []float64, v V) V {
	var zero V
	if len(rates) == 0 {
		return zero
	}
	return v
}

// thinkText is a think time as a run's parameters keep it: "" for none.
func thinkText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// vusName is how a step is named in verdicts: "1 VU", "4 VUs".
func vusName(n int) string { return units.Plural(n, "VU", "VUs") }

// tpccStep is a TPC-C step as the store keeps it, with its histograms.
func tpccStep(s *stored.TPCCStep) (results.Step, error) {
	doc, err := json.Marshal(s)
	if err != nil {
		return results.Step{}, err
	}
	hists := map[string][]byte{}
	for k, h := range s.Histograms {
		data, err := h.Encode(hdr.V2CompressedEncodingCookieBase) // readable by every HdrHistogram library
		if err != nil {
			return results.Step{}, err
		}
		hists[tpcc.Kind(k).String()] = data
	}
	name := fmt.Sprintf("vus=%d", s.VUs)
	if s.OpenLoop != nil {
		name = fmt.Sprintf("rate=%g", s.OfferedTPM)
	}
	return results.Step{Index: s.Index, Name: name,
		StartedAt: s.StartedAt, MeasureStart: s.MeasureStart, MeasureEnd: s.MeasureEnd, Metrics: doc, Histograms: hists}, nil
}

// Open opens the database a DSN names. A DSN that does not parse, or names
// an engine tierbench does not drive, is bad input (ErrInvalid), found
// before any connection is tried.
func Open(ctx context.Context, dsn string) (engine.DB, error) {
	db, err := all.Open(ctx, dsn)
	if errors.Is(err, engine.ErrBadInput) && !errors.Is(err, engine.ErrNoSchema) {
		return nil, Invalid(err)
	}
	return db, err
}

// EnsureSchema reuses a TPC-C schema that is complete and of the asked
// size, and otherwise (re)builds and checks it. Dropping is safe on
// tierbench's own servers only, which is where this is meant for. The build
// result is nil when the schema was reused.
func EnsureSchema(ctx context.Context, db engine.DB, warehouses, buildVUs int, obs Observer) (*tpcc.BuildResult, error) {
	return ReuseSchema(ctx, db, warehouses, buildVUs, true, obs)
}

// ReuseSchema is EnsureSchema for a database that may not be tierbench's
// own: a schema of another size, or an incomplete one, is dropped only when
// drop is true, and otherwise refused as a build without --drop refuses it.
func ReuseSchema(ctx context.Context, db engine.DB, warehouses, buildVUs int, drop bool, obs Observer) (*tpcc.BuildResult, error) {
	existing, err := db.CheckTPCC(ctx, engine.CheckOptions{Seed: 1})
	switch {
	case err == nil && existing.Warehouses == warehouses:
		obs.Note(fmt.Sprintf("reusing the %d-warehouse TPC-C schema already built there", existing.Warehouses))
		return nil, nil
	case err != nil && !errors.Is(err, engine.ErrNoSchema):
		return nil, err
	}
	build, err := Build(ctx, db, engine.BuildOptions{Warehouses: warehouses, Workers: buildVUs, Drop: drop}, obs)
	if err != nil {
		if errors.Is(err, engine.ErrBadInput) {
			return nil, err
		}
		return nil, fmt.Errorf("building the TPC-C schema: %w", err)
	}
	c, err := db.CheckTPCC(ctx, engine.CheckOptions{Seed: 1})
	if err != nil {
		return build, err
	}
	if !c.OK {
		return build, fmt.Errorf("the freshly built schema fails its consistency check: %s", CheckFailures(c))
	}
	return build, nil
}

// Build builds a TPC-C schema, telling obs of its progress and result.
func Build(ctx context.Context, db engine.DB, o engine.BuildOptions, obs Observer) (*tpcc.BuildResult, error) {
	said := false
	o.Progress = func(p tpcc.BuildProgress) {
		if !said { // once the build has begun: a refused one says only why
			obs.Note(fmt.Sprintf("building %s with %s", units.Plural(o.Warehouses, "warehouse", "warehouses"), units.Plural(o.Workers, "loader connection", "loader connections")))
			said = true
		}
		obs.Progress(Progress{Build: &p})
	}
	o.Version = version.Version
	res, err := db.BuildTPCC(ctx, o)
	if err != nil {
		return nil, err
	}
	obs.Result(Result{Build: res})
	return res, nil
}

// CheckFailures lists what a failed consistency check found, e.g.
// "3.3.2.1 (2 violations), stock has 99 rows, want 100".
func CheckFailures(c *tpcc.CheckResult) string {
	var bad []string
	for _, x := range c.Conditions {
		if !x.OK {
			bad = append(bad, fmt.Sprintf("%s (%d violations)", x.ID, x.Violations))
		}
	}
	for _, x := range c.Cardinalities {
		if !x.OK {
			bad = append(bad, fmt.Sprintf("%s has %d rows, want %d", x.Table, x.Found, x.Expected))
		}
	}
	return strings.Join(bad, ", ")
}

// StoreCheck keeps a consistency check with the run it followed, for the
// report.
func StoreCheck(ctx context.Context, dir, runID string, c *tpcc.CheckResult) error {
	store, err := results.Open(dir)
	if err != nil {
		return fmt.Errorf("opening the results store: %w", err)
	}
	defer store.Close()
	return store.SetDocument(ctx, runID, results.DocCheck, c)
}
