package driver

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// openLoop is what the VUs of an open-loop step (Config.Rates) share
// besides the step: the arrivals, the service times beside the latencies,
// and the counts of what waited.
type openLoop struct {
	sched     *schedule
	service   *metrics.Recorder // by kind: from the transaction's start to its end
	jitter    *metrics.Recorder // how late a waiting VU woke for its arrival
	lateAfter time.Duration
	before    int64        // arrivals intended before the measured interval
	started   atomic.Int64 // arrivals begun (before the interval's end)
	late      atomic.Int64 // of those begun in the interval, how many waited over lateAfter
	lateAll   atomic.Int64 // late, ramp-up included (the live ticks')
	maxQueue  atomic.Int64 // the most arrivals due and waiting for a VU, in the interval
	inFlight  atomic.Int64 // begun in the interval, still running at its end
}

// runOpen serves arrivals until ctx ends: it claims the next, waits for its
// intended start if that is to come, and runs it. Its latency is measured
// from the intended start, so a transaction that queued behind a stalled
// server carries the stall (no coordinated omission); its service time,
// from when it was sent, is recorded beside it.
func (v *vu) runOpen(ctx context.Context) {
	stop := context.AfterFunc(ctx, v.interrupt)
	defer stop()
	txnCtx := context.WithoutCancel(ctx)
	o := v.st.open
	wake := newWaker(ctx)
	defer wake.close()
	for ctx.Err() == nil {
		// The interval's start, where the driver holds its VUs while it
		// reads the database's counters, pauses the schedule: an arrival
		// claimed before it has moved on by the pause when its VU is
		// let go (measureStart is set then).
		edge := v.st.measureStart.Load()
		at, queued := o.sched.claim(v.id, time.Now())
		if !v.await(ctx, wake, at) {
			return
		}
		kind := v.deck.Draw(v.r)
		if !v.begin(ctx, kind) {
			return
		}
		for v.st.measureStart.Load() != edge {
			edge = v.st.measureStart.Load()
			if at, queued = o.sched.reclaim(v.id, time.Now()); time.Until(at) > 0 {
				v.st.leave()
				if !v.await(ctx, wake, at) || !v.st.enter(ctx) {
					return
				}
			}
		}
		start := time.Now()
		v.sent.Store(start.UnixNano())
		o.sched.started(v.id)
		o.started.Add(1)
		late := start.Sub(at) > o.lateAfter
		if late {
			o.lateAll.Add(1)
		}
		if v.st.inInterval(start) {
			if late {
				o.late.Add(1)
			}
			for q := int64(queued); ; {
				m := o.maxQueue.Load()
				if q <= m || o.maxQueue.CompareAndSwap(m, q) {
					break
				}
			}
		}
		rolledBack, err := v.execute(txnCtx, kind)
		end := time.Now()
		v.sent.Store(0)
		v.st.leave()
		if v.st.inInterval(start) && !v.st.beforeEnd(end) {
			o.inFlight.Add(1)
		}
		ok, goOn := v.settle(ctx, kind, start, end, rolledBack, err)
		if !goOn {
			return
		}
		if ok {
			measured := v.measured(start, end)
			v.hist.Record(int(kind), end.Sub(at), measured, rolledBack)
			o.service.Record(int(kind), end.Sub(start), measured, false)
		}
	}
}

// await waits for the intended start at, if it is still to come, and
// records how late the VU woke for it; false when ctx ended first.
func (v *vu) await(ctx context.Context, wake *waker, at time.Time) bool {
	if time.Until(at) <= 0 {
		return true
	}
	if !wake.until(ctx, at) {
		return false
	}
	if v.st.inInterval(at) && v.st.beforeEnd(at) {
		v.st.open.jitter.Record(0, time.Since(at), true, false)
	}
	return true
}

// ended is the open loop's counts at the interval's end, once its VUs
// stopped.
func (o *openLoop) ended(end time.Time) openTally {
	n := openTally{started: o.started.Load(), late: o.late.Load(), maxQueue: o.maxQueue.Load(), inFlight: o.inFlight.Load()}
	o.scheduled(&n, end)
	return n
}

// scheduled sets n's arrivals due by end and those still waiting then,
// which the schedule counts right for an end no earlier than the last
// claim: a tick's mark, or an interval's end once its VUs stopped.
func (o *openLoop) scheduled(n *openTally, end time.Time) {
	n.due = o.sched.by(end)
	n.waiting = o.sched.unstarted(end.Add(-o.lateAfter), end)
}

// finish adds the open loop's figures to the step, once its VUs stopped:
// n are its counts where the interval ended (ended, or a tick's mark).
func (o *openLoop) finish(res *stored.TPCCStep, rate float64, arrival string, n openTally) {
	if arrival == "" {
		arrival = ArrivalPoisson
	}
	unserved := max(n.due-n.started, 0)
	ol := &stored.OpenLoop{OfferedTPM: rate, Arrival: arrival, Arrivals: n.due - o.before, Late: n.late,
		Unserved: unserved, MaxQueue: n.maxQueue, InFlight: n.inFlight, TxnService: map[string]metrics.Summary{},
		WaitingAtEnd:   min(n.waiting, unserved),
		ScheduleJitter: metrics.Summarize(o.jitter.Step(0))}
	for k := range tpcc.NumKinds {
		ol.TxnService[k.String()] = metrics.Summarize(o.service.Step(int(k)))
	}
	res.OpenLoop = ol
}
