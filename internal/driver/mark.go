package driver

import (
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// tally is the VUs' counts of a step, summed.
type tally struct {
	done                                    [tpcc.NumKinds]int64
	errors                                  [numErrKinds]int64
	rollbacks, retries, reconnects, skipped int64
}

func tallyOf(vus []*vu) tally {
	var t tally
	for _, v := range vus {
		c := &v.counts
		for k := range t.done {
			t.done[k] += c.done[k].Load()
		}
		for i := range t.errors {
			t.errors[i] += c.errors[i].Load()
		}
		t.rollbacks += c.rollbacks.Load()
		t.retries += c.retries.Load()
		t.reconnects += c.reconnects.Load()
		t.skipped += c.skipped.Load()
	}
	return t
}

// openTally is an open loop's counts of what waited (openLoop), and of
// the arrivals due and still waiting at the interval's end (scheduled).
type openTally struct {
	started, late, maxQueue, inFlight int64
	due, waiting                      int64
}

// mark is the client's side of a step at a moment: where the measured
// interval ends (at), the VUs' counts then, the process's CPU time, the
// oldest transaction in flight, and an open loop's counts. The end edge
// takes one; so does every tick as its reading of the database's counters
// starts, for the step whose server is lost before the end (lostEnd).
type mark struct {
	at     time.Time
	t      tally
	cpu    time.Duration
	oldest time.Duration
	open   openTally
}

// markNow is the step's mark at now, its VUs still running: a transaction
// in flight counts in the open loop's inFlight when it began in the
// interval (measureStart, unix ns).
func markNow(vus []*vu, o *openLoop, now time.Time, measureStart int64) mark {
	m := mark{at: now, t: tallyOf(vus), cpu: cpuTime(), oldest: oldestInFlight(vus, now)}
	if o != nil {
		m.open = openTally{started: o.started.Load(), late: o.late.Load(), maxQueue: o.maxQueue.Load()}
		for _, v := range vus {
			if sent := v.sent.Load(); sent != 0 && sent >= measureStart {
				m.open.inFlight++
			}
		}
		o.scheduled(&m.open, now)
	}
	return m
}

// lastReading is the last tick's reading of the database's counters that
// came back inside the measured interval: c as counted on through resets
// (resets of them by then), and the client's mark as the reading began.
// A step whose end cannot be read ends there (lostEnd). The VUs ran on
// while the reading was on its way, so the database may count up to
// slack New-Orders more than the mark does: those completed between the
// mark and the reading's return.
type lastReading struct {
	mark   mark
	c      engine.Counters
	resets int
	slack  int64
}
