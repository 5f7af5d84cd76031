package metrics

import (
	"math"
	"slices"
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
				r.Record(i%2, time.Duration(1+i%7)*time.Millisecond, i%3 == 0, false)
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

// Live counts: each latency lands in the first bucket whose bound is not
// below it, rollbacks and failures are counted per slot, and a Drain hands
// over what was counted since the last one and starts again.
func TestRecorderBuckets(t *testing.T) {
	bounds := []time.Duration{time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond}
	r := NewRecorder(2).WithBuckets(bounds)
	for _, d := range []time.Duration{500 * time.Microsecond, time.Millisecond, 1500 * time.Microsecond, 5 * time.Millisecond, time.Second} {
		r.Record(0, d, false, d == time.Second)
	}
	r.Record(1, 3*time.Millisecond, true, false)
	r.Fail(1)
	r.Fail(1)
	rolled, failed, b := make([]int64, 2), make([]int64, 2), make([]Buckets, 2)
	r.Drain(rolled, failed, b)
	if want := []int64{2, 1, 1, 1}; !slices.Equal(b[0].Counts, want) {
		t.Errorf("slot 0 buckets %v, want %v", b[0].Counts, want)
	}
	if want := []int64{0, 0, 1, 0}; !slices.Equal(b[1].Counts, want) {
		t.Errorf("slot 1 buckets %v, want %v", b[1].Counts, want)
	}
	if want := 500*time.Microsecond + time.Millisecond + 1500*time.Microsecond + 5*time.Millisecond + time.Second; b[0].Sum != want {
		t.Errorf("slot 0 sum %v, want %v", b[0].Sum, want)
	}
	if !slices.Equal(rolled, []int64{1, 0}) || !slices.Equal(failed, []int64{0, 2}) {
		t.Errorf("rolled back %v, failed %v; want [1 0], [0 2]", rolled, failed)
	}
	r.Record(0, time.Millisecond, false, false)
	r.Drain(rolled, failed, b)
	if want := []int64{1, 0, 0, 0}; !slices.Equal(b[0].Counts, want) || b[0].Sum != time.Millisecond {
		t.Errorf("after a second drain slot 0 has %v (sum %v), want %v (1ms)", b[0].Counts, b[0].Sum, want)
	}
	if !slices.Equal(rolled, []int64{0, 0}) || !slices.Equal(failed, []int64{0, 0}) {
		t.Errorf("after a second drain rolled back %v, failed %v; want zeros", rolled, failed)
	}

	plain := NewRecorder(1)
	plain.Fail(0)
	plain.Record(0, time.Millisecond, true, true)
	got := []Buckets{{Counts: []int64{7}}}
	plain.Drain(nil, nil, got)
	if got[0].Counts[0] != 7 {
		t.Errorf("a recorder without buckets changed what Drain was given: %v", got[0].Counts)
	}
}
