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

// Records from several workers merged by swapping lose nothing.
func TestSetMergeLosesNothing(t *testing.T) {
	const workers, each = 4, 5000
	sets := make([]*Set, workers)
	for i := range sets {
		sets[i] = NewSet(2)
	}
	total := []*hdr.Histogram{NewHistogram(), NewHistogram()}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	merged := make(chan struct{})
	go func() { // the aggregator, merging while workers record
		defer close(merged)
		for {
			select {
			case <-stop:
				for _, s := range sets {
					s.MergeInto(total)
				}
				return
			default:
				for _, s := range sets {
					s.MergeInto(total)
				}
			}
		}
	}()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				sets[w].Record(i%2, time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-merged
	if got := total[0].TotalCount() + total[1].TotalCount(); got != workers*each {
		t.Fatalf("merged %d recordings, want %d", got, workers*each)
	}
}
