package driver

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// TestWakerEndsNoEarlier has one waker wait many times, each for its own
// short span: no wait may end before its time. The timer's expiries are
// never read, so a readiness left over from the last wait that woke this
// one early, or an expiry lost between setting the timer and parking (a
// wait that never ends), would fail it.
func TestWakerEndsNoEarlier(t *testing.T) {
	ctx := context.Background()
	w := newWaker(ctx)
	defer w.close()
	if w.file == nil {
		t.Skip("no timerfd here: a Go timer waits")
	}
	r := rand.New(rand.NewPCG(1, 2))
	var late time.Duration
	for i := range 2000 {
		var at time.Time
		switch i % 4 {
		case 0:
			at = time.Now().Add(-time.Millisecond) // already past: no wait
		case 1:
			time.Sleep(50 * time.Microsecond) // the last expiry's readiness sits unread
			fallthrough
		default:
			at = time.Now().Add(time.Duration(r.IntN(300)+1) * time.Microsecond)
		}
		if !w.until(ctx, at) {
			t.Fatalf("wait %d ended as interrupted, with its context alive", i)
		}
		now := time.Now()
		if now.Before(at) {
			t.Fatalf("wait %d ended %v before its time", i, at.Sub(now))
		}
		late = max(late, now.Sub(at))
	}
	t.Logf("latest wake-up: %v", late)
}

// TestWakerInterrupted ends a long wait by its context.
func TestWakerInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := newWaker(ctx)
	defer w.close()
	time.AfterFunc(20*time.Millisecond, cancel)
	if w.until(ctx, time.Now().Add(time.Hour)) {
		t.Fatal("an interrupted wait reported that its time had come")
	}
	if w.until(ctx, time.Now().Add(time.Millisecond)) {
		t.Fatal("a wait after the context ended reported that its time had come")
	}
}
