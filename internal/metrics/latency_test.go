package metrics

import (
	"math"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

func TestSummaryPercentiles(t *testing.T) {
	h := NewHistogram()
	for i := 1; i <= 1000; i++ {
		Record(h, time.Duration(i)*time.Millisecond)
	}
	s := Summarize(h)
	near := func(got, want float64) bool { return math.Abs(got-want) <= want*0.002 }
	if s.Count != 1000 || !near(s.P50Ms, 500) || !near(s.P95Ms, 950) || !near(s.P99Ms, 990) || !near(s.MaxMs, 1000) {
		t.Fatalf("summary %+v", s)
	}
	if Summarize(NewHistogram()) != (Summary{}) {
		t.Fatal("empty histogram has a non-zero summary")
	}
}

// Recordings from several workers, taken a second at a time while they
// record, lose nothing: every completion is counted once, the per-second
// histograms see every one of their slot's, the step's only the measured.
func TestRecorderLosesNothing(t *testing.T) {
	const workers, each = 4, 5000
	r := NewRecorder(2, 0)
	var counts [2]int64
	var perSecond int64
	take := func() {
		var c [2]int64
		r.Second(c[:], func(i int, h *hdr.Histogram) {
			if i != 0 {
				t.Errorf("slot %d has a per-second histogram", i)
			}
			perSecond += h.TotalCount()
		})
		counts[0] += c[0]
		counts[1] += c[1]
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	taken := make(chan struct{})
	go func() { // the aggregator, taking seconds while workers record
		defer close(taken)
		for {
			select {
			case <-stop:
				take()
				return
			default:
				take()
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r.Record(i%2, time.Duration(1+i%7)*time.Millisecond, i%3 == 0)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-taken
	if counts[0] != workers*each/2 || counts[1] != workers*each/2 {
		t.Errorf("counted %v, want %d in each slot", counts, workers*each/2)
	}
	if perSecond != counts[0] {
		t.Errorf("per-second histograms saw %d recordings of slot 0, want %d", perSecond, counts[0])
	}
	// i%3 == 0 of each worker's 5,000: 1,667, of which 834 even (slot 0).
	if got0, got1 := r.Step(0).TotalCount(), r.Step(1).TotalCount(); got0 != workers*834 || got1 != workers*833 {
		t.Errorf("step histograms hold %d and %d, want %d and %d", got0, got1, workers*834, workers*833)
	}
	if max := r.Step(0).Max(); max < 7000 || max > 7010 {
		t.Errorf("step maximum %d µs, want 7 ms", max)
	}
}
