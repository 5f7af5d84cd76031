package results

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// maxBuffered bounds a SeriesWriter's buffer while the store refuses writes
// (a full disk, a lock held elsewhere): past it the oldest points go, and
// Flush and Close say how many.
const maxBuffered = 1 << 20

// SeriesWriter buffers points of one run and writes them on a ticker, so the
// workload that emits them never waits for the disk.
type SeriesWriter struct {
	s     *Store
	runID string

	mu      sync.Mutex
	buf     []Point
	dropped int

	flushMu sync.Mutex       // one flush at a time
	sids    map[string]int64 // the run's series ids by name, under flushMu

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// NewSeriesWriter starts a writer that flushes every flushEvery (default
// one second). Close it to stop the ticker and write what is left.
func (s *Store) NewSeriesWriter(runID string, flushEvery time.Duration) *SeriesWriter {
	if flushEvery <= 0 {
		flushEvery = time.Second
	}
	w := &SeriesWriter{s: s, runID: runID, sids: map[string]int64{}, stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop(flushEvery)
	return w
}

func (w *SeriesWriter) loop(every time.Duration) {
	defer close(w.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			// A failed flush keeps its points; the next one, or Close,
			// tries again and reports.
			_ = w.Flush(context.Background())
		}
	}
}

// Add buffers a point; it never waits for the store.
func (w *SeriesWriter) Add(p Point) {
	w.mu.Lock()
	w.buf = append(w.buf, p)
	w.mu.Unlock()
}

// Flush writes the buffered points now. Points a failed write could not
// store stay buffered for the next flush.
func (w *SeriesWriter) Flush(ctx context.Context) error {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	pts := w.buf
	w.buf = nil
	w.mu.Unlock()
	err := w.s.addPointsKnown(ctx, w.runID, pts, w.sids)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		// Put them back in front of what arrived meanwhile, keeping the
		// newest maxBuffered.
		w.buf = append(pts, w.buf...)
		if over := len(w.buf) - maxBuffered; over > 0 {
			w.dropped += over
			w.buf = append([]Point(nil), w.buf[over:]...)
		}
	}
	if err == nil && w.dropped > 0 {
		err = fmt.Errorf("results: series of run %s: %d points dropped while the store refused writes", w.runID, w.dropped)
	}
	return err
}

// Close stops the background flushes and writes what is left. Points added
// after Close are only written by an explicit Flush.
func (w *SeriesWriter) Close(ctx context.Context) error {
	w.closeOnce.Do(func() { close(w.stop) })
	<-w.done
	return w.Flush(ctx)
}
