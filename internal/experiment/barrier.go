package experiment

import (
	"context"
	"sync"
	"time"
)

// Barrier lines up the steps of runs that run side by side (a scenario's
// instances, on this host or spread over a cluster): each run waits at it
// before each step, once its virtual users are connected, and all of them
// start the step together when the last arrives. A run that ends, by
// finishing or failing, leaves, so that the others never wait for it.
// Connecting and capturing the environment take each run a different time;
// without it the same step of two instances could start seconds apart.
type Barrier struct {
	mu      sync.Mutex
	parties int           // runs still taking part
	arrived int           // of them, waiting now
	gen     chan struct{} // closed when the waiting ones are released
	first   chan struct{} // closed at the first release
	at      time.Time     // the first release
}

// NewBarrier is a barrier for n runs.
func NewBarrier(n int) *Barrier {
	return &Barrier{parties: n, gen: make(chan struct{}), first: make(chan struct{})}
}

// Wait returns when every run still taking part has arrived (or left), or
// with ctx's error when ctx ends first; a nil Barrier returns at once.
func (b *Barrier) Wait(ctx context.Context) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	b.arrived++
	gen := b.gen
	b.releaseLocked()
	b.mu.Unlock()
	select {
	case <-gen:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		if b.gen == gen { // not released meanwhile: no longer waiting
			b.arrived--
		}
		b.mu.Unlock()
		return ctx.Err()
	}
}

// Leave says a run takes no further part; the others no longer wait for
// it. Calling it more than once per run takes others out too: call it once.
func (b *Barrier) Leave() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.parties--
	b.releaseLocked()
}

// releaseLocked releases the waiting runs once every party has arrived.
func (b *Barrier) releaseLocked() {
	if b.arrived == 0 || b.arrived < b.parties {
		return
	}
	if b.at.IsZero() {
		b.at = time.Now()
		close(b.first)
	}
	close(b.gen)
	b.gen, b.arrived = make(chan struct{}), 0
}

// Started is closed when the runs are first released: their first step
// starts then.
func (b *Barrier) Started() <-chan struct{} { return b.first }

// StartedAt is when the runs were first released (zero before).
func (b *Barrier) StartedAt() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.at
}
