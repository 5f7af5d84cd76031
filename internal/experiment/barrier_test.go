package experiment

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// Three runs of three steps: no run starts a step before every run still
// taking part has reached it, and a run that leaves early (one failed
// after its first step) holds nobody up.
func TestBarrierSteps(t *testing.T) {
	b := NewBarrier(3)
	var mu sync.Mutex
	reached := map[int]int{} // step -> runs that reached it
	started := map[int]int{} // step -> runs that started it
	var wg sync.WaitGroup
	for run := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer b.Leave()
			for step := range 3 {
				if run == 2 && step == 1 {
					return // failed after its first step
				}
				time.Sleep(time.Duration(run*3) * time.Millisecond) // each gets there at its own pace
				mu.Lock()
				reached[step]++
				mu.Unlock()
				if err := b.Wait(context.Background()); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				want := 3
				if step > 0 {
					want = 2
				}
				if reached[step] != want {
					t.Errorf("run %d started step %d when %d runs had reached it; want %d", run, step, reached[step], want)
				}
				started[step]++
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the runs never finished: the barrier held one up")
	}
	if started[0] != 3 || started[1] != 2 || started[2] != 2 {
		t.Errorf("steps started: %v", started)
	}
	select {
	case <-b.Started():
	default:
		t.Error("Started is not closed after the first release")
	}
	if b.StartedAt().IsZero() {
		t.Error("no first release time")
	}
}

// A waiting run whose context ends returns its error and stops counting
// as arrived: the next release still waits for every party.
func TestBarrierCancel(t *testing.T) {
	b := NewBarrier(2)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- b.Wait(ctx) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after cancel: %v", err)
	}
	released := make(chan struct{})
	go func() { _ = b.Wait(context.Background()); close(released) }()
	select {
	case <-released:
		t.Fatal("one arrival of two released the barrier: the cancelled one was still counted")
	case <-time.After(50 * time.Millisecond):
	}
	b.Leave() // the cancelled run ends
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("the last party was never released after the other left")
	}
	var nb *Barrier
	if err := nb.Wait(ctx); err != nil {
		t.Errorf("a nil barrier: %v", err)
	}
	nb.Leave()
}
