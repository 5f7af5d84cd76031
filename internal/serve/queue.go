package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/results"
)

// QueueFile is the queue's file in the results directory. It holds the
// queued requests, DSNs included, so it is readable by its owner only; an
// entry's request leaves it when the entry starts.
const QueueFile = "serve-queue.json"

// Entry states.
const (
	stateQueued  = "queued"
	stateRunning = "running"
)

// entry is one experiment or scenario in the queue.
type entry struct {
	ID        string     `json:"id"`   // the run's id, or the scenario's results group
	Kind      string     `json:"kind"` // a run kind, or "scenario"
	State     string     `json:"state"`
	Submitted time.Time  `json:"submitted"`
	Started   *time.Time `json:"started,omitempty"`
	// Request is what was posted; the queue file keeps it until the entry
	// starts, and the API never shows it (it may hold a password).
	Request json.RawMessage `json:"request,omitempty"`
}

// queue runs its entries one at a time, first in first out, so that
// measurements on one controller never overlap.
type queue struct {
	s        *Server
	path     string
	lockFile *os.File

	mu      sync.Mutex
	entries []*entry
	cancel  context.CancelFunc // the running entry's
	wake    chan struct{}      // a new entry (buffered: one pending wake is enough)
}

// openQueue reads the queue file of a results directory. An entry that
// was running when the serve before this one stopped (killed, or the host
// went down) is recorded as interrupted and leaves the queue; the queued
// ones stay, in their order.
func openQueue(dir string, s *Server) (*queue, error) {
	q := &queue{s: s, path: filepath.Join(dir, QueueFile), wake: make(chan struct{}, 1)}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the results directory: %w", err)
	}
	if err := q.lock(); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(q.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return q, nil
	case err != nil:
		return nil, fmt.Errorf("reading the queue: %w", err)
	}
	if err := json.Unmarshal(data, &q.entries); err != nil {
		return nil, fmt.Errorf("reading the queue %s: %w; move it away to start with an empty queue", q.path, err)
	}
	var kept []*entry
	for _, e := range q.entries {
		if e.State == stateRunning {
			q.interrupted(e)
			continue
		}
		kept = append(kept, e)
	}
	q.entries = kept
	return q, q.save()
}

// lock makes the queue this process's alone: two serves on one results
// directory would run its entries side by side. The kernel releases the
// lock when the process ends, however it ends.
func (q *queue) lock() error {
	f, err := os.OpenFile(q.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("locking the queue: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return &experiment.Problem{Field: "results", Value: experiment.Quote(filepath.Dir(q.path)),
			Msg: "is another serve's, which runs its queue; stop that serve, or give this one its own results directory"}
	}
	q.lockFile = f // held open, and locked, for the process's life
	return nil
}

// interrupted records an entry that was running when its serve stopped:
// its runs still marked running are interrupted, with what they stored.
func (q *queue) interrupted(e *entry) {
	store, ctx := q.s.store, context.Background()
	runs, _ := store.Runs(ctx)
	var ids []string
	for _, r := range runs {
		mine := r.ID == e.ID || e.Kind == kindScenario && r.Group == e.ID
		if mine && (r.Status == results.StatusRunning || r.Status == results.StatusIncomplete) {
			if err := store.FinishRun(ctx, r.ID, results.StatusInterrupted, nil); err == nil {
				ids = append(ids, r.ID)
			}
		}
	}
	q.s.logf("queue: %s was running when serve stopped; recorded as interrupted (%d runs)", e.ID, len(ids))
	q.s.log(e.ID).add("done", doneDoc{Status: results.StatusInterrupted, Outcome: experiment.InterruptedRun.String(),
		Error: "serve stopped while it ran", Runs: ids, At: time.Now()})
}

// save writes the queue file, replacing it whole.
func (q *queue) save() error {
	data, err := json.MarshalIndent(q.entries, "", "  ")
	if err != nil {
		return err
	}
	tmp := q.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("writing the queue: %w", err)
	}
	if err := os.Rename(tmp, q.path); err != nil {
		return fmt.Errorf("writing the queue: %w", err)
	}
	return nil
}

// add queues an entry.
func (q *queue) add(e *entry) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	e.State = stateQueued
	q.entries = append(q.entries, e)
	if err := q.save(); err != nil {
		q.entries = q.entries[:len(q.entries)-1]
		return err
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

// list returns a copy of the entries, the running one first, without
// their requests.
func (q *queue) list() []entry {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]entry, len(q.entries))
	for i, e := range q.entries {
		out[i] = *e
		out[i].Request = nil
	}
	return out
}

// find returns a copy of an entry (without its request).
func (q *queue) find(id string) (entry, bool) {
	for _, e := range q.list() {
		if e.ID == id {
			return e, true
		}
	}
	return entry{}, false
}

// cancelEntry interrupts the running entry or removes a queued one; it
// returns the entry's state before, and false when no entry has the id.
func (q *queue) cancelEntry(id string) (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.IndexFunc(q.entries, func(e *entry) bool { return e.ID == id })
	if i < 0 {
		return "", false
	}
	e := q.entries[i]
	if e.State == stateRunning {
		if q.cancel != nil {
			q.cancel()
		}
		return stateRunning, true
	}
	q.entries = slices.Delete(q.entries, i, i+1)
	if err := q.save(); err != nil {
		q.s.logf("queue: %v", err)
	}
	q.s.logf("queue: %s removed before it started", id)
	q.s.log(id).add("done", doneDoc{Status: "removed", Outcome: "removed", At: time.Now()})
	return stateQueued, true
}

// next marks the first queued entry running and returns it with its
// request and the context it runs under; nil when the queue is empty.
func (q *queue) next(ctx context.Context) (*entry, json.RawMessage, context.Context) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range q.entries {
		if e.State == stateQueued {
			now := time.Now()
			e.State, e.Started = stateRunning, &now
			req := e.Request
			e.Request = nil // the file keeps no DSN of a started entry
			if err := q.save(); err != nil {
				q.s.logf("queue: %v", err)
			}
			jobCtx, cancel := context.WithCancel(ctx)
			q.cancel = cancel
			return e, req, jobCtx
		}
	}
	return nil, nil, nil
}

// finished removes the entry that ran.
func (q *queue) finished(e *entry) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cancel != nil {
		q.cancel()
		q.cancel = nil
	}
	q.entries = slices.DeleteFunc(q.entries, func(x *entry) bool { return x == e })
	if err := q.save(); err != nil {
		q.s.logf("queue: %v", err)
	}
}

// work runs the queue's entries one after another until ctx ends. An entry
// running then is interrupted and keeps what it measured; the queued ones
// stay in the file for the next serve.
func (q *queue) work(ctx context.Context) {
	for {
		e, req, jobCtx := q.next(ctx)
		if e == nil {
			select {
			case <-ctx.Done():
				return
			case <-q.wake:
				continue
			}
		}
		q.s.execute(jobCtx, e, req)
		q.finished(e)
		if ctx.Err() != nil {
			return
		}
	}
}
