package driver

import (
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"time"
)

// Arrival processes of an open-loop step (Config.Rate).
const (
	ArrivalPoisson  = "poisson"  // exponential gaps of mean 1/rate, as BenchBase and k6 draw them
	ArrivalConstant = "constant" // one arrival every 1/rate exactly
)

// schedule hands a step's arrivals, in the order of their intended start,
// to the virtual users that serve them: a VU free for work claims the next
// one, waits for its time if that is still to come, and otherwise starts
// it at once, late. No goroutine paces anything: arrivals are drawn when
// claimed (or counted), so scheduling costs a lock and a draw per
// transaction, and a stalled server leaves a queue of arrivals behind
// that the free VUs then serve, each measured from its intended start.
type schedule struct {
	mu      sync.Mutex
	t0      time.Time
	gap     float64 // mean nanoseconds between arrivals
	poisson bool
	rng     *rand.Rand
	drawn   int64     // arrivals drawn so far
	last    float64   // the last drawn arrival's offset from t0 in ns
	pending []float64 // drawn and not claimed, ascending offsets
	claimed int64
	claimAt []float64 // each VU's claimed arrival, until it has started (NaN: none)
}

// newSchedule starts arrivals at t0, rate per minute, for vus virtual
// users.
func newSchedule(t0 time.Time, ratePerMin float64, poisson bool, seed uint64, vus int) *schedule {
	s := &schedule{t0: t0, gap: 60e9 / ratePerMin, poisson: poisson, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		claimAt: make([]float64, vus)}
	for i := range s.claimAt {
		s.claimAt[i] = math.NaN()
	}
	return s
}

// draw appends the next arrival to pending.
func (s *schedule) draw() {
	if s.poisson {
		s.last += s.rng.ExpFloat64() * s.gap
	} else {
		s.last = float64(s.drawn) * s.gap // from the count, so no error adds up
	}
	s.drawn++
	s.pending = append(s.pending, s.last)
}

// drawTo draws every arrival up to offset ns, and one beyond.
func (s *schedule) drawTo(ns float64) {
	for len(s.pending) == 0 || s.pending[len(s.pending)-1] <= ns {
		s.draw()
	}
}

// due draws every arrival up to offset ns and counts those drawn and not
// claimed that are due by then.
func (s *schedule) due(ns float64) int {
	s.drawTo(ns)
	return sort.SearchFloat64s(s.pending, math.Nextafter(ns, math.Inf(1)))
}

// claim gives VU vu the next arrival's intended start, and the arrivals
// due by now that wait for a VU, this one included (0 when it is still to
// come).
func (s *schedule) claim(vu int, now time.Time) (time.Time, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := float64(now.Sub(s.t0))
	queued := s.due(ns) // 0 when the next arrival is still to come
	at := s.pending[0]
	s.pending = s.pending[1:]
	if len(s.pending) == 0 {
		s.pending = s.pending[:0:0] // let a long backlog's array go
	}
	s.claimed++
	s.claimAt[vu] = at
	return s.t0.Add(time.Duration(at)), queued
}

// started marks VU vu's claimed arrival as begun.
func (s *schedule) started(vu int) {
	s.mu.Lock()
	s.claimAt[vu] = math.NaN()
	s.mu.Unlock()
}

// reclaim is claim again for a VU whose claimed arrival has not begun
// and may have moved since (pause): its intended start, and the queue as
// claim counts it.
func (s *schedule) reclaim(vu int, now time.Time) (time.Time, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ns := s.claimAt[vu], float64(now.Sub(s.t0))
	queued := 0
	if at <= ns {
		queued = s.due(ns) + 1
	}
	return s.t0.Add(time.Duration(at)), queued
}

// pause moves every arrival not yet begun, claimed or not, d later: the
// arrivals stood still while the driver held its VUs.
func (s *schedule) pause(d time.Duration) {
	s.mu.Lock()
	s.t0 = s.t0.Add(d)
	s.mu.Unlock()
}

// by counts the arrivals intended at or before t: those claimed, less
// those claimed for a later time (VUs waiting for them), and those due
// and not yet claimed.
func (s *schedule) by(t time.Time) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := float64(t.Sub(s.t0))
	if ns < 0 {
		return 0
	}
	n := s.claimed + int64(s.due(ns))
	for _, c := range s.claimAt {
		if c > ns { // NaN compares false
			n--
		}
	}
	return n
}

// unstarted counts the arrivals intended after from and at or before to
// that no VU has begun: those not claimed, and those claimed and not
// started. Once the VUs have stopped at a step's end, that is the queue
// the end left, by how long it had waited.
func (s *schedule) unstarted(from, to time.Time) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	lo, hi := float64(from.Sub(s.t0)), float64(to.Sub(s.t0))
	n := int64(s.due(hi) - s.due(lo))
	for _, c := range s.claimAt {
		if c > lo && c <= hi { // NaN compares false
			n++
		}
	}
	return n
}

// waiting counts the arrivals due by now that no VU has claimed.
func (s *schedule) waiting(now time.Time) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(s.due(float64(now.Sub(s.t0))))
}
