// Package driver runs the TPC-C workload: virtual users in steps (a
// sequence of VU counts), each with a ramp-up and a measured interval, TPM
// and NOPM from the database's own counters, latency percentiles from HDR
// histograms of the measured interval only, and the input audit.
package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/repeat"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// Config describes a run.
type Config struct {
	Runner engine.Runner
	Mode   string // engine.ModeRoutines or engine.ModeStatements
	Steps  []int  // virtual users per step, e.g. 1,2,4
	// Rates, when set, makes the steps open-loop: step i offers Rates[i]
	// transactions a minute (all types, in the mix's proportions), which
	// its Steps[i] virtual users serve as a pool. A transaction's latency
	// is then measured from its intended start. Same length as Steps.
	Rates []float64
	// Arrival is ArrivalPoisson ("" too) or ArrivalConstant.
	Arrival string
	// LateAfter is how long an arrival may wait for a VU before it counts
	// as late (0: 1 s).
	LateAfter time.Duration
	// Repeat runs each step that many times (0 means 1), each repetition a
	// whole ramp-up and measured interval; interleaved (1,2,4,1,2,4) unless
	// BackToBack (1,1,2,2,4,4). See internal/repeat.
	Repeat         int
	BackToBack     bool
	RampUp         time.Duration
	Duration       time.Duration
	AllWarehouses  bool // every transaction draws its warehouse (HammerDB's "use all warehouses")
	KeyingThinking bool // keying and think times of 5.2.5
	// ThinkTime, in a closed loop, is the mean of a think time each VU
	// waits after each transaction, drawn as 5.2.5.4 draws the spec's
	// (negative exponential, truncated at 10 x the mean): N VUs then
	// emulate N users of that think time, not N at full speed. 0: none.
	ThinkTime time.Duration
	Mix       tpcc.Mix
	Retry     int    // retries of serialization failures, deadlocks and lock-wait timeouts
	Seed      uint64 // 0: random
	Tick      time.Duration
	// LatencyBuckets, when set, are the ascending upper bounds of the
	// fixed-bucket latency counts each Tick carries (live metrics).
	LatencyBuckets []time.Duration

	// BeforeStep, when set, is called once a step's virtual users are
	// connected, just before the step starts (its ramp-up and StartedAt):
	// runs side by side wait there for each other. An error ends the run.
	// index counts the repetitions run so far, every step's.
	BeforeStep func(ctx context.Context, index int) error
	// OnTick is called once per tick with the last second's numbers.
	OnTick func(Tick)
	// OnStep is called when a step's measured interval is complete, or,
	// with KeepInterrupted, cut short.
	OnStep func(*stored.TPCCStep)
	// EdgeLimit bounds how long the end of a step's measured interval
	// waits for a server that does not answer (0: DefaultEdgeLimit): the
	// step is then kept as its server's loss (stored.TPCCStep.ServerLost).
	EdgeLimit time.Duration
	// KeepInterrupted makes the end of ctx during a measured interval end
	// that interval where it is, as its deadline would have: the step
	// (Interrupted set) is returned with the finished ones, when it
	// completed a transaction. Without it, that step is dropped, and its
	// VUs' transactions are interrupted at once.
	KeepInterrupted bool
	// OnNewOrder, when set, is called by each virtual user's goroutine
	// (concurrently) for every New-Order the database acknowledged,
	// committed or rolled back, in or outside the measured interval: the
	// success log of the durability test (3.5.4).
	OnNewOrder func(in *tpcc.NewOrderInput, out tpcc.NewOrderOutput)
}

// Tick is one second of a step, for the live line and the per-second series.
type Tick struct {
	Step, Steps int // this step's place in the run, from 1, of all (repetitions included)
	Rep, Repeat int // its repetition, from 1, of how many
	VUs         int
	Phase       string // "rampup" or "measure"
	T           time.Time
	Elapsed     time.Duration // in this phase
	TPM, NOPM   float64       // from the database, this second x 60
	ClientTPM   float64
	// P95Ms etc. are this second's New-Order percentiles (0 when none).
	NewOrderP50Ms, NewOrderP95Ms, NewOrderP99Ms float64
	TxnPerSec                                   [tpcc.NumKinds]int64
	// Transactions and NewOrders are the database's counters' growth this
	// second (commits + rollbacks; sum(d_next_o_id)), from which TPM and NOPM
	// are computed.
	Transactions, NewOrders int64
	// NoTPM: the transaction counter was not taken this second (TPM and
	// Transactions are 0), since PostgreSQL had yet to publish the commits
	// since the start edge; the next tick's cover this second too.
	NoTPM bool
	// With Config.LatencyBuckets: this second's rolled-back and failed
	// transactions by type and the latencies of its completions in the
	// configured buckets (ramp-up included; Latency[k].Counts nil without).
	RolledBack, Failed [tpcc.NumKinds]int64
	Latency            [tpcc.NumKinds]metrics.Buckets
	// An open-loop step's: the offered transactions a minute, the arrivals
	// that began this second after waiting longer than LateAfter (ramp-up
	// included), and those due and waiting for a VU at the tick.
	OfferedTPM  float64
	Late, Queue int64
}

// ErrInterrupted is returned (wrapped) when the run's context ended before
// every step finished; the finished steps are still returned (and with
// Config.KeepInterrupted the one cut short).
var ErrInterrupted = errors.New("run interrupted")

// step is what the virtual users of one step share.
//
// The measured interval's edges are made quiet so that the database's
// counters and the driver's counts cover the same transactions: at the
// start, VUs are held between transactions while the counters are read and
// the start is published; at the end, VUs stop starting transactions, those
// in flight finish, and then the counters are read. The only difference left
// is the transactions in flight at the end (at most one per VU), which the
// database counts and the driver, whose interval has closed, does not.
type step struct {
	warehouses   int
	measureStart atomic.Int64 // unix ns; 0 until the interval starts
	measureEnd   atomic.Int64 // unix ns; 0 until the interval ends
	holding      atomic.Bool  // VUs wait before their next transaction
	inTxn        atomic.Int64 // VUs inside a transaction
	released     chan struct{}
	open         *openLoop // nil in a closed loop
}

func (s *step) inInterval(t time.Time) bool {
	ms := s.measureStart.Load()
	return ms != 0 && t.UnixNano() >= ms
}

func (s *step) beforeEnd(t time.Time) bool {
	me := s.measureEnd.Load()
	return me == 0 || t.UnixNano() <= me
}

// enter is called by a VU before a transaction. It waits while the VUs are
// held and reports false once the interval has ended (the VU stops).
func (s *step) enter(ctx context.Context) bool {
	for {
		s.inTxn.Add(1)
		if s.measureEnd.Load() != 0 {
			s.inTxn.Add(-1)
			return false
		}
		if !s.holding.Load() {
			return true
		}
		s.inTxn.Add(-1)
		select {
		case <-s.released:
		case <-ctx.Done():
			return false
		}
	}
}

func (s *step) leave() { s.inTxn.Add(-1) }

// quiesce waits until no VU is inside a transaction, or limit passes.
func (s *step) quiesce(ctx context.Context, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for s.inTxn.Load() > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(50 * time.Microsecond)
	}
}

// drainLimit bounds how long an edge waits for transactions in flight (a
// hung server must not hang the run).
const drainLimit = 5 * time.Second

// DefaultEdgeLimit bounds the end edge of a measured interval, its drain
// and its readings of the counters together, when Config.EdgeLimit does
// not: a server that holds it longer is taken as lost. A loaded server
// answers in seconds (the drain alone may take drainLimit); a frozen one,
// its storage hung, never does, and the run would wait for Ctrl-C.
const DefaultEdgeLimit = time.Minute

// edgeCounters reads the database's counters at an edge of the measured
// interval, the VUs held or stopped. A database may publish a connection's
// transactions late: a PostgreSQL 15 backend adds its commits to the shared
// counters at most once a second while busy and up to 10 s after it goes
// idle, so a reading right after the VUs stop missed 2-3% of a 10-second
// step. Every VU's connection is first asked to publish; asked counts the
// connections that were, whose transactions the caller takes off at the
// end edge, so that the interval counts only the workload's. Where the
// database cannot be asked, the counters are read until two readings
// settleGap apart agree, for at most settleLimit.
func edgeCounters(ctx context.Context, r engine.Runner, vus []*vu) (c engine.Counters, asked int64, err error) {
	all := true
	for _, v := range vus {
		ran, err := v.publishStats(ctx)
		if ran {
			asked++
		}
		all = all && ran && err == nil
	}
	c, err = r.Counters(ctx)
	for deadline := time.Now().Add(settleLimit); !all && err == nil && time.Now().Before(deadline); {
		if !sleep(ctx, settleGap) {
			return c, asked, ctx.Err()
		}
		next, nerr := r.Counters(ctx)
		if nerr != nil {
			return c, asked, nerr
		}
		settled := next.Transactions <= c.Transactions+1 && next.SumNextOID == c.SumNextOID // +1: the reading's own
		c = next
		if settled {
			break
		}
	}
	return c, asked, err
}

// counterTrack carries a step's count of database transactions across a
// reset of the server's counters: a PostgreSQL server discards them in
// its recovery from a crash, and pg_stat_reset() zeroes a database's; a
// MariaDB server's start from zero. Without it, a step whose server
// restarted took a count from before the reset away from one after it,
// and reported a negative TPM (-969,117 at 2 VUs, one backend killed).
//
// A reading more than resetDrop below the last is taken as a reset: the
// transactions between the last reading before it and the first after it
// are then not counted, since neither says how many there were. Smaller
// dips are not resets: a PostgreSQL reading can fall a little behind the
// last, by the readings' own transactions that the counters' connection
// has yet to publish. The count then stays where it was, so that no second
// shows a negative TPM (-120 was the one after a reset), and the next
// reading's growth covers the dip.
type counterTrack struct {
	last, offset int64 // the last reading as read, and what resets took off
	counted      int64 // the last count returned
	seen         bool
	resets       int
}

// resetDrop is how far below the last reading a reset puts one.
const resetDrop = 100

// see returns c with its transactions counted on from the readings seen
// before it, through any reset.
func (t *counterTrack) see(c engine.Counters) engine.Counters {
	if t.seen && c.Transactions < t.last-resetDrop {
		t.offset += t.last - c.Transactions
		t.resets++
	}
	t.last = c.Transactions
	c.Transactions += t.offset
	if t.seen && c.Transactions < t.counted {
		c.Transactions = t.counted
	}
	t.counted, t.seen = c.Transactions, true
	return c
}

const (
	settleGap   = 150 * time.Millisecond
	settleLimit = 1500 * time.Millisecond

	// publishedLag is how long after the start edge asked the VUs'
	// connections to publish their counters the ticks take no TPM: a
	// PostgreSQL backend publishes again no sooner than a second after it
	// last did (PGSTAT_MIN_INTERVAL), and at its next idle moment after
	// that. The last ramp-up reading, a second or so behind like every
	// tick's, and a reading right after the edge, behind by nothing, made
	// one tick of about twice the rate and the next of none or less.
	publishedLag = 1250 * time.Millisecond
	// publishEvery is PGSTAT_MIN_INTERVAL.
	publishEvery = time.Second
)

// Run runs every step in turn and returns their results. When ctx ends it
// stops at once and returns the finished steps with ErrInterrupted.
func Run(ctx context.Context, cfg Config) ([]*stored.TPCCStep, error) {
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.LateAfter <= 0 {
		cfg.LateAfter = time.Second
	}
	if cfg.EdgeLimit <= 0 {
		cfg.EdgeLimit = DefaultEdgeLimit
	}
	if len(cfg.Rates) > 0 && len(cfg.Rates) != len(cfg.Steps) {
		return nil, fmt.Errorf("driver: %d rates for %d steps", len(cfg.Rates), len(cfg.Steps))
	}
	schema, err := cfg.Runner.Schema(ctx)
	if err != nil {
		return nil, err
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	r := tpcc.NewRand(seed)
	crun, err := tpcc.NewRunC(r, schema.CLoad)
	if err != nil {
		return nil, err
	}
	procs := newSchedProcs(runtime.NumCPU())
	defer procs.restore()
	var results []*stored.TPCCStep
	reps := max(cfg.Repeat, 1)
	plan := repeat.Plan(len(cfg.Steps), reps, cfg.BackToBack)
	_, err = repeat.Run(ctx, plan, func(ctx context.Context, sl repeat.Slot) error {
		n := cfg.Steps[sl.Step]
		var rate float64
		if len(cfg.Rates) > 0 {
			rate = cfg.Rates[sl.Step]
		}
		res, err := runStep(ctx, &cfg, procs, sl, len(plan), n, rate, schema.Warehouses, crun, r.Uint64())
		if res != nil {
			if reps > 1 {
				res.Repetition = sl.Rep
			}
			results = append(results, res)
			if cfg.OnStep != nil {
				cfg.OnStep(res)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%w during step %d of %d (%d VUs)", ErrInterrupted, sl.Index+1, len(plan), n)
			}
			return err
		}
		return nil
	})
	if err != nil && ctx.Err() != nil && !errors.Is(err, ErrInterrupted) {
		err = fmt.Errorf("%w after %d of %d steps", ErrInterrupted, len(results), len(plan))
	}
	return results, err
}

// schedProcs sets how many scheduler threads (Go's Ps) run the VUs,
// unless the user set GOMAXPROCS: one at first, and one more, up to the
// host's CPUs, after each second in which the driver kept its Ps more than
// half busy. A VU waits for the server nearly all the time, and every
// extra P lets the runtime hand a woken goroutine to another thread: on
// the 2-core reference machine, 4 VUs on one P cost 10-20% less client CPU
// per transaction than on two, and 34 VUs 66/53/48 µs on two against
// 47/38/48 on one in alternating pairs. What a P can drive depends on the
// transactions' rate, not on the VUs' number: one P at ~40 µs a
// transaction drives some 25,000 a second, and a 2-core host's server runs
// about 3,000 however many VUs ask. A count only grows during a run.
type schedProcs struct {
	on     bool
	n, max int
	cpu    time.Duration // the process's CPU time at the window's start
	at     time.Time
}

func newSchedProcs(cpus int) *schedProcs {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		return &schedProcs{}
	}
	runtime.GOMAXPROCS(1)
	return &schedProcs{on: true, n: 1, max: cpus}
}

// mark starts a window, once a step's VUs have connected: logging in
// (SCRAM's key derivation) is not what the Ps are sized for.
func (p *schedProcs) mark() {
	if p.on {
		p.cpu, p.at = cpuTime(), time.Now()
	}
}

// adapt ends the window, adds a P if it was busy, and starts the next.
func (p *schedProcs) adapt() {
	if !p.on {
		return
	}
	cpu, now := cpuTime(), time.Now()
	if n := moreProcs(p.n, p.max, cpu-p.cpu, now.Sub(p.at)); n != p.n {
		p.n = n
		runtime.GOMAXPROCS(n)
	}
	p.cpu, p.at = cpu, now
}

func (p *schedProcs) restore() {
	if p.on {
		runtime.SetDefaultGOMAXPROCS()
	}
}

// busyShare is the share of its Ps' time above which the driver gets
// another: a VU woken while every P is busy waits for one.
const busyShare = 0.5

// moreProcs is the P count after a window of wall in which the process,
// on n Ps, used cpu: n+1 (at most max) when the Ps were more than
// busyShare busy. Windows under a tenth of a second are too short to tell.
func moreProcs(n, max int, cpu, wall time.Duration) int {
	if n < max && wall >= 100*time.Millisecond && float64(cpu) > busyShare*float64(n)*float64(wall) {
		return n + 1
	}
	return n
}

func runStep(ctx context.Context, cfg *Config, procs *schedProcs, sl repeat.Slot, slots, nvu int, rate float64, warehouses int, crun tpcc.CValues, seed uint64) (*stored.TPCCStep, error) {
	index := sl.Index
	place := Tick{Step: index + 1, Steps: slots, Rep: sl.Rep, Repeat: max(cfg.Repeat, 1), VUs: nvu, OfferedTPM: rate}
	st := &step{warehouses: warehouses, released: make(chan struct{})}
	vus := make([]*vu, nvu)
	defer func() {
		for _, v := range vus {
			if v != nil && v.worker != nil {
				v.worker.Close()
			}
		}
	}()
	seeds := tpcc.NewRand(seed)
	// One recorder for all the step's VUs: a completion holds its lock for
	// a few tens of nanoseconds, and the aggregator reads one a second
	// instead of one per VU (which cost ~6 µs a transaction at 4 VUs). Only
	// New-Order keeps per-second percentiles (the live line's and the
	// series').
	hist := metrics.NewRecorder(int(tpcc.NumKinds), int(tpcc.NewOrder)).WithBuckets(cfg.LatencyBuckets)
	if rate > 0 {
		// Service times beside the latencies, and the wake-ups' lateness.
		st.open = &openLoop{service: metrics.NewRecorder(int(tpcc.NumKinds)), jitter: metrics.NewRecorder(1), lateAfter: cfg.LateAfter}
	}
	for i := range vus {
		w, err := cfg.Runner.NewWorker(ctx, cfg.Mode)
		if err != nil {
			return nil, fmt.Errorf("connecting virtual user %d: %w", i+1, err)
		}
		r := seeds.Child()
		vus[i] = &vu{
			cfg: cfg, st: st, worker: w, r: r,
			// A VU per warehouse first, as terminals are (10 per warehouse),
			// each with its own district for Stock-Level.
			id:   i,
			w:    i%warehouses + 1,
			d:    (i/warehouses)%tpcc.DistrictsPerWarehouse + 1,
			gen:  tpcc.NewInputGen(r, crun, warehouses),
			deck: tpcc.NewMixDeck(cfg.Mix),
			hist: hist,
		}
	}
	if cfg.BeforeStep != nil {
		if err := cfg.BeforeStep(ctx, index); err != nil {
			return nil, err
		}
	}
	// The database counters are read on a connection of their own.
	c0, err := cfg.Runner.Counters(ctx)
	if err != nil {
		return nil, err
	}
	var track counterTrack
	c0 = track.see(c0)
	var resetsBefore int // the resets seen before the measured interval

	// Kept when interrupted, the measured interval ends as at its
	// deadline: the VUs finish the transactions they are in, and their
	// connections publish the counters, before they are stopped.
	vuParent := ctx
	if cfg.KeepInterrupted {
		vuParent = context.WithoutCancel(ctx)
	}
	vuCtx, stopVUs := context.WithCancel(vuParent)
	defer stopVUs()
	var wg sync.WaitGroup
	started := time.Now()
	if st.open != nil {
		st.open.sched = newSchedule(started, rate, cfg.Arrival != ArrivalConstant, seeds.Uint64(), nvu)
	}
	procs.mark()
	for _, v := range vus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st.open != nil {
				v.runOpen(vuCtx)
			} else {
				v.run(vuCtx)
			}
		}()
	}

	res := &stored.TPCCStep{Index: index, VUs: nvu, StartedAt: started, ErrorsByKind: map[string]int64{}, Txn: map[string]metrics.Summary{}}
	prev := c0
	var startCounters engine.Counters
	var cpuStart time.Duration
	phase := "rampup"
	phaseStart := started
	if cfg.RampUp == 0 {
		phase = "measure"
	}
	deadline := started.Add(cfg.RampUp)
	tick := time.NewTicker(cfg.Tick)
	defer tick.Stop()
	lastTick := started
	txPrev, txAt := c0.Transactions, started // the last reading TPM was taken from (quietUntil)
	var lateSeen int64
	// A tick's counters are read off this loop, so that a server that
	// stalls the reading does not hold the phase boundaries back: the
	// measured interval ends when it was to, and what the stall holds at
	// its end shows as in flight (oldest_in_flight_ms) rather than as an
	// interval longer than asked. A tick whose last reading has not
	// returned starts none; a boundary, and a step's end by ctx, wait for
	// it (the counters' connection takes one reading at a time) and drop
	// it.
	readings := make(chan reading, 1)
	pending := false
	// A tick's reading ends with ctx, or when an edge gives up on it.
	readCtx, cancelReads := context.WithCancel(ctx)
	defer cancelReads()
	var quietUntil time.Time // no TPM a tick before it (publishedLag)
	var txSpan time.Duration // when set, the next TPM's span (publishEvery)
	awaitReading := func() {
		if pending {
			<-readings
			pending = false
		}
	}
	var last *lastReading // the last tick's reading in the interval
	// closeAt computes the step over the interval that ended at m, with
	// the database's counters c1 there.
	closeAt := func(m mark, c1 engine.Counters, resets int) *stored.TPCCStep {
		res.MeasureEnd = m.at
		res.OldestInFlightMs = float64(m.oldest.Microseconds()) / 1000
		res.CountersReset = resets - resetsBefore
		finishStep(res, vus, hist, m.t, startCounters, c1, warehouses, cfg.KeyingThinking)
		if st.open != nil {
			st.open.finish(res, rate, cfg.Arrival, m.open)
		}
		if n := res.Completed(); n > 0 {
			res.ClientCPUPerTxnUs = float64((m.cpu - cpuStart).Microseconds()) / float64(n)
		}
		return res
	}
	// end closes the measured interval at now: no VU starts another
	// transaction, those in flight finish (for at most drainLimit), and the
	// counters are read once every connection has published its own. When
	// they cannot be, the server is lost, and the step ends at the last
	// reading that came back (lostEnd).
	end := func(ctx context.Context, now time.Time) (*stored.TPCCStep, error) {
		st.measureEnd.Store(now.UnixNano())
		m := mark{at: now, cpu: cpuTime(), oldest: oldestInFlight(vus, now)}
		defer context.AfterFunc(ctx, cancelReads)()
		awaitReading()
		st.quiesce(ctx, drainLimit)
		endCounters, asked, err := edgeCounters(ctx, cfg.Runner, vus)
		stopVUs()
		wg.Wait()
		if err != nil {
			return lostEnd(closeAt, last), err
		}
		endCounters = track.see(endCounters)
		endCounters.Transactions -= asked
		m.t = tallyOf(vus)
		if st.open != nil {
			m.open = st.open.ended(now)
		}
		return closeAt(m, endCounters, track.resets), nil
	}

	for {
		// Wake at the next tick or at the phase boundary, whichever is first.
		var boundary <-chan time.Time
		if phase == "rampup" || phase == "measure" {
			d := time.Until(deadline)
			if phase == "measure" && st.measureStart.Load() == 0 {
				d = 0
			}
			boundary = time.After(max(d, 0))
		}
		select {
		case <-ctx.Done():
			if cfg.KeepInterrupted && st.measureStart.Load() != 0 {
				if res := endInterrupted(ctx, end); res != nil {
					return res, ctx.Err()
				}
			}
			stopVUs()
			wg.Wait()
			awaitReading() // ended by ctx too: the caller may close the runner next
			return nil, ctx.Err()
		case <-tick.C:
			procs.adapt()
			if !pending {
				pending = true
				m := markNow(vus, st.open, time.Now(), st.measureStart.Load())
				go func() {
					c, err := cfg.Runner.Counters(readCtx)
					readings <- reading{at: time.Now(), c: c, err: err, mark: m, newOrders: tallyOf(vus).done[tpcc.NewOrder]}
				}()
			}
		case r := <-readings:
			pending = false
			if now, c := r.at, r.c; r.err == nil {
				c = track.see(c)
				if ms := st.measureStart.Load(); ms != 0 && r.mark.at.UnixNano() > ms {
					last = &lastReading{mark: r.mark, c: c, resets: track.resets, slack: r.newOrders - r.mark.t.done[tpcc.NewOrder]}
				}
				if st.open != nil {
					late := st.open.lateAll.Load()
					place.Late, place.Queue, lateSeen = late-lateSeen, st.open.sched.waiting(now), late
				}
				var tx tpmSpan
				if !now.Before(quietUntil) { // before it no TPM: the next one covers this second too
					tx = tpmSpan{c.Transactions - txPrev, now.Sub(txAt)}
					if txSpan > 0 {
						tx.d, txSpan = txSpan, 0
					}
					txPrev, txAt = c.Transactions, now
				}
				emitTick(cfg, place, phase, now, max(now.Sub(phaseStart), 0), now.Sub(lastTick), prev, c, tx, hist)
				prev, lastTick = c, now
			}
		case <-boundary:
			now := time.Now()
			switch {
			case st.measureStart.Load() == 0:
				st.holding.Store(true)
				awaitReading()
				st.quiesce(ctx, drainLimit)
				var asked int64
				if startCounters, asked, err = edgeCounters(ctx, cfg.Runner, vus); err != nil {
					return nil, err
				}
				startCounters, resetsBefore = track.see(startCounters), track.resets
				published := asked > 0
				// The interval starts when the VUs are let go. An open
				// loop's arrivals stand still while they are held: the
				// hold is tierbench's, not the server's, so no arrival
				// waits for it (on MariaDB it takes 150 ms and more,
				// enough to set a low rate's New-Order p99), and none
				// due in it adds to the interval's count.
				held := now
				now = time.Now()
				if st.open != nil {
					st.open.sched.pause(now.Sub(held))
					st.open.before = st.open.sched.by(now.Add(-time.Nanosecond))
				}
				st.measureStart.Store(now.UnixNano())
				st.holding.Store(false)
				close(st.released)
				cpuStart = cpuTime()
				res.MeasureStart = now
				phase, phaseStart, deadline = "measure", now, now.Add(cfg.Duration)
				// A measured interval too short for a tick after the
				// lag keeps its ticks as they come: better a lump than
				// no per-second figure at all.
				if published && cfg.Duration >= publishedLag+cfg.Tick*3/2 {
					// The first TPM after the lag is taken from the
					// counters just published, behind by nothing, to
					// a reading that holds the commits up to the
					// backends' next publishing: publishEvery is its
					// span, whenever it is read.
					quietUntil = now.Add(publishedLag)
					txPrev, txSpan = startCounters.Transactions, publishEvery
				}
			default:
				ectx, cancel := context.WithTimeout(ctx, cfg.EdgeLimit)
				res, err := end(ectx, now)
				if err != nil && ctx.Err() == nil && ectx.Err() != nil {
					err = fmt.Errorf("the server did not answer the end of the step's measured interval within %s: %w", cfg.EdgeLimit, err)
				}
				cancel()
				return res, err
			}
		}
	}
}

// endInterrupted ends, with end, a measured interval that ctx cut short,
// and returns its step marked Interrupted; nil when it completed no
// transaction, or its edge could not be read within interruptedEdge and
// no tick's reading in it came back either (lostEnd).
func endInterrupted(ctx context.Context, end func(context.Context, time.Time) (*stored.TPCCStep, error)) *stored.TPCCStep {
	now := time.Now()
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), interruptedEdge)
	defer cancel()
	res, _ := end(ectx, now)
	if res == nil || res.Completed() == 0 {
		return nil
	}
	res.Interrupted = true
	return res
}

// interruptedEdge bounds the end edge of an interval cut short, the drain
// and the counters' readings together: Ctrl-C on a hung server ends the
// step after it at the last reading that came back (lostEnd), where the
// deadline's edge would wait drainLimit and then for the counters. (A
// second Ctrl-C exits at once.)
const interruptedEdge = drainLimit

// reading is a tick's counters, read when at says, the client's mark as
// the reading began, and the New-Orders its VUs had completed when it came
// back.
type reading struct {
	at        time.Time
	c         engine.Counters
	err       error
	mark      mark
	newOrders int64
}

// lostEnd is the step whose end edge could not read the database's
// counters, the server lost: closed with closeAt at the last reading in
// its interval that came back, and marked Interrupted and ServerLost; nil
// when there was none, or the step had completed no transaction by then.
// Its VUs have stopped.
func lostEnd(closeAt func(mark, engine.Counters, int) *stored.TPCCStep, last *lastReading) *stored.TPCCStep {
	if last == nil {
		return nil
	}
	res := closeAt(last.mark, last.c, last.resets)
	if res.Completed() == 0 {
		return nil
	}
	res.Interrupted, res.ServerLost = true, true
	// The database's count was read after the mark: it may hold the
	// New-Orders completed meanwhile, and none the mark lacks beyond them.
	ck := res.NOPMCheck
	res.NOPMCheck = nopmCheck(ck.Database, ck.Client, ck.Bound+last.slack)
	return res
}

// nopmCheck compares the New-Orders the database counted with those the
// client completed: they agree when they differ by at most bound (one a
// VU, the transactions that may commit while the counters are read).
func nopmCheck(database, client, bound int64) stored.NOPMCheck {
	diff := database - client
	return stored.NOPMCheck{Database: database, Client: client, Bound: bound, OK: diff <= bound && -diff <= bound}
}

// tpmSpan is the database's transactions over the time since the last
// tick that took TPM (zero: this one takes none).
type tpmSpan struct {
	n int64
	d time.Duration
}

// emitTick reports the last second (dt since the last tick): database
// TPM (over tx) and NOPM from the counters' growth, client rates, and
// New-Order percentiles of all completions. place is the tick's step:
// Step, Steps, Rep, Repeat and VUs.
func emitTick(cfg *Config, place Tick, phase string, now time.Time, elapsed, dt time.Duration,
	prev, cur engine.Counters, tx tpmSpan, hist *metrics.Recorder) {
	perMin := 60 / dt.Seconds()
	t := place
	t.Phase, t.T, t.Elapsed = phase, now, elapsed
	t.NewOrders = cur.SumNextOID - prev.SumNextOID
	t.NOPM = float64(t.NewOrders) * perMin
	if t.NoTPM = tx.d <= 0; !t.NoTPM {
		t.Transactions, t.TPM = tx.n, float64(tx.n)*60/tx.d.Seconds()
	}
	hist.Drain(t.RolledBack[:], t.Failed[:], t.Latency[:])
	hist.Second(t.TxnPerSec[:], func(_ int, no *hdr.Histogram) {
		p := no.ValueAtPercentilesSlice(tickPercentiles[:])
		t.NewOrderP50Ms, t.NewOrderP95Ms, t.NewOrderP99Ms = float64(p[0])/1000, float64(p[1])/1000, float64(p[2])/1000
	})
	var all int64
	for _, n := range t.TxnPerSec {
		all += n
	}
	t.ClientTPM = float64(all) * perMin
	if cfg.OnTick != nil {
		cfg.OnTick(t)
	}
}

// tickPercentiles are the New-Order percentiles of each second.
var tickPercentiles = [...]float64{50, 95, 99}

// finishStep computes the step's numbers once its virtual users have stopped.
// A step paced by keying and think times gets its efficiency.
func finishStep(res *stored.TPCCStep, vus []*vu, hist *metrics.Recorder, t tally, c0, c1 engine.Counters, warehouses int, paced bool) {
	res.Seconds = res.MeasureEnd.Sub(res.MeasureStart).Seconds()
	minutes := res.Seconds / 60
	var audit tpcc.Audit
	done := t.done
	for k := range res.Histograms {
		res.Histograms[k] = hist.Step(k)
	}
	for i, n := range errKindNames {
		if e := t.errors[i]; e > 0 {
			res.ErrorsByKind[string(n)] += e
			res.Errors += e
		}
	}
	res.Rollbacks, res.Retries, res.Reconnects, res.Skipped = t.rollbacks, t.retries, t.reconnects, t.skipped
	for _, v := range vus {
		if v.inMI {
			audit.Add(v.auditAt[1].Sub(v.auditAt[0]))
		}
	}
	var total int64
	for k, n := range done {
		total += n
		res.Txn[tpcc.Kind(k).String()] = metrics.Summarize(res.Histograms[k])
	}
	perMinute := func(n int64) int64 {
		if minutes <= 0 {
			return 0
		}
		return int64(float64(n) / minutes) // truncated, as tpmC is (5.4.2)
	}
	res.TPM = perMinute(c1.Transactions - c0.Transactions)
	res.NOPM = perMinute(c1.SumNextOID - c0.SumNextOID)
	res.ClientTPM = perMinute(total)
	res.ClientNOPM = perMinute(done[tpcc.NewOrder])
	res.NOPMCheck = nopmCheck(c1.SumNextOID-c0.SumNextOID, done[tpcc.NewOrder]-res.Rollbacks, int64(len(vus)))
	res.Audit = audit.Judge(warehouses)
	res.ResponseTime = stored.ResponseTimes(res.Histograms)
	if paced && minutes > 0 {
		active, _ := tpcc.PacedWarehouses(len(vus), warehouses)
		// tpmC: the New-Orders completed in the interval, rollbacks
		// included; not truncated here, as a whole tpmC would move a
		// warehouse's efficiency in steps of 8%.
		pct := tpcc.EfficiencyPct(float64(done[tpcc.NewOrder])/minutes, active)
		res.EfficiencyPct, res.EfficiencyVerdict = &pct, tpcc.EfficiencyVerdict(pct)
	}
}
