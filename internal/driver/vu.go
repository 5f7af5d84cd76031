package driver

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// Keying times and mean think times in seconds (5.2.5.7 and 5.2.5.4).
var (
	keyingTime = [tpcc.NumKinds]float64{18, 3, 2, 2, 2}
	thinkMean  = [tpcc.NumKinds]float64{12, 12, 10, 5, 5}
)

// vuCounters are written by one virtual user and read by the aggregator.
type vuCounters struct {
	done       [tpcc.NumKinds]atomic.Int64 // completed inside the measured interval
	rollbacks  atomic.Int64                // of those New-Orders, rolled back
	errors     [numErrKinds]atomic.Int64   // failed inside the measured interval
	reconnects atomic.Int64
	retries    atomic.Int64
	skipped    atomic.Int64 // Delivery districts skipped (2.7.4.2)
}

const numErrKinds = 5

var errKindNames = [numErrKinds]engine.ErrorKind{engine.ErrSerialization, engine.ErrDeadlock, engine.ErrLockTimeout, engine.ErrConnection, engine.ErrOther}

func errIndex(k engine.ErrorKind) int {
	for i, n := range errKindNames {
		if n == k {
			return i
		}
	}
	return numErrKinds - 1
}

// vu is one virtual user: a terminal with a home warehouse and district,
// one connection, and its own generators and histograms.
type vu struct {
	id      int // from 0, in its step
	w, d    int // home warehouse; district for Stock-Level (2.8.1.1)
	cfg     *Config
	st      *step
	mu      sync.Mutex // guards worker against interrupt
	worker  engine.Worker
	r       *tpcc.Rand
	gen     *tpcc.InputGen
	deck    *tpcc.Deck[tpcc.Kind]
	hist    *metrics.Recorder // a slot per kind
	counts  vuCounters
	auditAt [2]tpcc.Audit // inputs sent before the interval and by its last recorded transaction
	inMI    bool
	// sent is when the transaction in progress was sent (Unix ns), 0
	// between transactions: the end edge reads it (oldestInFlight).
	sent atomic.Int64

	no  tpcc.NewOrderInput
	pay tpcc.PaymentInput
	os  tpcc.OrderStatusInput
	del tpcc.DeliveryInput
	sl  tpcc.StockLevelInput
}

// run executes transactions until ctx ends. Transactions get a context that
// is never cancelled (a cancellable one costs the driver a watcher per
// query); when ctx ends, the connection is interrupted instead.
func (v *vu) run(ctx context.Context) {
	stop := context.AfterFunc(ctx, v.interrupt)
	defer stop()
	txnCtx := context.WithoutCancel(ctx)
	var wake *waker // times a think, to the microsecond
	if v.cfg.ThinkTime > 0 {
		wake = newWaker(ctx)
		defer wake.close()
	}
	for ctx.Err() == nil {
		kind := v.deck.Draw(v.r)
		if v.cfg.KeyingThinking && !sleep(ctx, time.Duration(keyingTime[kind]*float64(time.Second))) {
			return
		}
		if !v.begin(ctx, kind) {
			return
		}
		start := time.Now()
		v.sent.Store(start.UnixNano())
		rolledBack, err := v.execute(txnCtx, kind)
		end := time.Now()
		v.sent.Store(0)
		v.st.leave()
		ok, goOn := v.settle(ctx, kind, start, end, rolledBack, err)
		if !goOn {
			return
		}
		if !ok {
			continue
		}
		v.hist.Record(int(kind), end.Sub(start), v.measured(start, end), rolledBack)
		if v.cfg.KeyingThinking && !sleep(ctx, thinkDraw(v.r, time.Duration(thinkMean[kind]*float64(time.Second)))) {
			return
		}
		if wake != nil && !wake.until(ctx, end.Add(thinkDraw(v.r, v.cfg.ThinkTime))) {
			return
		}
	}
}

// thinkDraw is a think time of the given mean as 5.2.5.4 draws one:
// -ln(r) x mean, r uniform in (0, 1], truncated at 10 x mean.
func thinkDraw(r *tpcc.Rand, mean time.Duration) time.Duration {
	return time.Duration(min(-math.Log(1-r.Float64()), 10) * float64(mean))
}

// begin prepares a transaction of kind and waits until the VU may start
// it; false when the VU is to stop.
func (v *vu) begin(ctx context.Context, kind tpcc.Kind) bool {
	if !v.inMI && v.st.inInterval(time.Now()) {
		v.inMI = true
		v.auditAt[0] = v.gen.Audit // inputs sent before the interval
	}
	v.prepare(kind)
	return v.st.enter(ctx)
}

// oldestInFlight is how long the oldest transaction still running at now
// had been running, from when it was sent; 0 when none was.
func oldestInFlight(vus []*vu, now time.Time) time.Duration {
	var oldest time.Duration
	for _, v := range vus {
		if sent := v.sent.Load(); sent != 0 {
			oldest = max(oldest, now.Sub(time.Unix(0, sent)))
		}
	}
	return oldest
}

// measured says whether a transaction that started and ended then counts
// in the measured interval.
func (v *vu) measured(start, end time.Time) bool {
	return v.st.inInterval(start) && v.st.beforeEnd(end)
}

// settle counts a transaction that ran from start to end: ok when it
// succeeded (its latencies are the caller's to record), goOn false when the
// VU is to stop (the step ended, or its connection is lost for good).
func (v *vu) settle(ctx context.Context, kind tpcc.Kind, start, end time.Time, rolledBack bool, err error) (ok, goOn bool) {
	if ctx.Err() != nil {
		return false, false // a transaction cut off by the end of the step is not recorded
	}
	measured := v.measured(start, end)
	if err != nil {
		ek := engine.ErrOther
		var te *engine.TxnError
		if errors.As(err, &te) {
			ek = te.Kind
		}
		if measured {
			v.counts.errors[errIndex(ek)].Add(1)
		}
		v.hist.Fail(int(kind))
		return false, ek != engine.ErrConnection || v.reconnect(ctx)
	}
	if measured {
		v.counts.done[kind].Add(1)
		if rolledBack {
			v.counts.rollbacks.Add(1)
		}
		v.auditAt[1] = v.gen.Audit
	}
	return true, true
}

// home returns the warehouse a transaction runs for: the VU's own, or any
// with --all-warehouses.
func (v *vu) home() int {
	if v.cfg.AllWarehouses {
		return v.r.Range(1, v.st.warehouses)
	}
	return v.w
}

// prepare draws the input of the next transaction of kind.
func (v *vu) prepare(kind tpcc.Kind) {
	switch kind {
	case tpcc.NewOrder:
		v.gen.NewOrder(&v.no, v.home())
	case tpcc.Payment:
		v.gen.Payment(&v.pay, v.home())
	case tpcc.OrderStatus:
		v.gen.OrderStatus(&v.os, v.home())
	case tpcc.Delivery:
		v.gen.Delivery(&v.del, v.home())
	case tpcc.StockLevel:
		v.gen.StockLevel(&v.sl, v.w, v.d) // always the terminal's own (w, d)
	}
}

// execute runs the prepared transaction, retrying serialization failures,
// deadlocks and lock-wait timeouts up to cfg.Retry times. It reports whether a New-Order rolled
// back (its unused item, 2.4.2.3).
func (v *vu) execute(ctx context.Context, kind tpcc.Kind) (rolledBack bool, err error) {
	for attempt := 0; ; attempt++ {
		rolledBack, err = v.once(ctx, kind)
		if err == nil || attempt >= v.cfg.Retry || !retryable(err) {
			return rolledBack, err
		}
		v.counts.retries.Add(1)
	}
}

// retryable reports whether err is a failure a retry may cure. It is a
// function of its own so that only a failed transaction pays for the
// error target that escapes to errors.As.
func retryable(err error) bool {
	var te *engine.TxnError
	return errors.As(err, &te) && te.Kind.Retryable()
}

func (v *vu) once(ctx context.Context, kind tpcc.Kind) (bool, error) {
	switch kind {
	case tpcc.NewOrder:
		out, err := v.worker.NewOrder(ctx, &v.no)
		if err == nil && v.cfg.OnNewOrder != nil {
			v.cfg.OnNewOrder(&v.no, out)
		}
		return out.RolledBack, err
	case tpcc.Payment:
		_, err := v.worker.Payment(ctx, &v.pay)
		return false, err
	case tpcc.OrderStatus:
		_, err := v.worker.OrderStatus(ctx, &v.os)
		return false, err
	case tpcc.Delivery:
		out, err := v.worker.Delivery(ctx, &v.del)
		if err == nil && out.Skipped > 0 {
			v.counts.skipped.Add(int64(out.Skipped))
		}
		return false, err
	default:
		_, err := v.worker.StockLevel(ctx, &v.sl)
		return false, err
	}
}

// reconnect replaces a lost connection, backing off from 100 ms to 1 s,
// until it succeeds or ctx ends. The cap is short so that a VU is back
// within a second of the server, not up to 5 s later, which a step of
// tens of seconds would miss in its figures.
func (v *vu) reconnect(ctx context.Context) bool {
	v.swapWorker(nil).Close()
	backoff := 100 * time.Millisecond
	for {
		if !sleep(ctx, backoff) {
			return false
		}
		w, err := v.cfg.Runner.NewWorker(ctx, v.cfg.Mode)
		if err == nil {
			v.swapWorker(w)
			v.counts.reconnects.Add(1)
			if ctx.Err() != nil { // ended while connecting: interrupt missed it
				w.Interrupt()
				return false
			}
			return true
		}
		backoff = min(2*backoff, time.Second)
	}
}

// interrupt unblocks the VU's transaction in progress (from ctx's AfterFunc).
func (v *vu) interrupt() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.worker != nil {
		v.worker.Interrupt()
	}
}

// publishStats has the VU's connection publish its transaction counters
// (engine.Worker.PublishStats); the driver calls it at the edges of the
// measured interval, when the VU is held between transactions or stopped.
func (v *vu) publishStats(ctx context.Context) (bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.worker == nil {
		return false, nil
	}
	return v.worker.PublishStats(ctx)
}

// swapWorker replaces the worker under the lock interrupt takes, and
// returns the old one. Only the VU's own goroutine writes v.worker, so it
// reads it without the lock.
func (v *vu) swapWorker(w engine.Worker) engine.Worker {
	v.mu.Lock()
	defer v.mu.Unlock()
	old := v.worker
	v.worker = w
	return old
}

// sleep waits d or until ctx ends, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
