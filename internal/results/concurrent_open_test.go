package results

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// Runs of one scenario step open the store at once, as others close it
// (the last to close checkpoints the WAL and removes it): none may fail
// with SQLITE_BUSY, whatever the timing.
func TestStoreConcurrentOpenClose(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	const workers, rounds = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, 3*workers*rounds)
	for range workers / 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				s, err := OpenReadOnly(dir)
				if errors.Is(err, ErrNoStore) {
					continue // not there yet
				}
				if err != nil {
					errs <- err
					continue
				}
				if _, err := s.Runs(ctx); err != nil {
					errs <- err
				}
				s.Close()
			}
		}()
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				s, err := Open(dir)
				if err != nil {
					errs <- err
					continue
				}
				if _, err := s.CreateRun(ctx, "tpcc", "", map[string]any{"vus": []int{1}}); err != nil {
					errs <- err
				}
				if err := s.Close(); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 3 {
			t.Error(err)
		}
	}
	if n > 3 {
		t.Errorf("and %d more", n-3)
	}
}
