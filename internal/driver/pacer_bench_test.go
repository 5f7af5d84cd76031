package driver

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/metrics"
)

// BenchmarkPacer offers Poisson arrivals for one second to 8 VUs that do no
// work, on one scheduler thread: the schedule's own cost and error, with
// nothing else in the way. It reports how late arrivals began against
// their intended start (p99 and max, ms: timer wake-ups, and the queue
// when the one thread cannot keep up), the share of arrivals that began
// within 1 ms, and the client CPU per arrival, from which one core's
// reach follows (60 s / CPU per arrival, a minute). bench/rate.sh runs it.
func BenchmarkPacer(b *testing.B) {
	for _, rate := range []float64{60_000, 200_000, 600_000, 1_200_000, 3_000_000} {
		b.Run(fmt.Sprintf("tpm=%.0f", rate), func(b *testing.B) {
			prev := runtime.GOMAXPROCS(1)
			defer runtime.GOMAXPROCS(prev)
			const vus, span = 8, time.Second
			for range b.N {
				late := metrics.NewHistogram()
				var mu sync.Mutex
				var within, n int64
				cpu0 := cpuTime()
				t0 := time.Now()
				s := newSchedule(t0, rate, true, 1, vus)
				end := t0.Add(span)
				var wg sync.WaitGroup
				for i := range vus {
					wg.Add(1)
					go func() {
						defer wg.Done()
						wake := newWaker(context.Background())
						defer wake.close()
						for {
							at, _ := s.claim(i, time.Now())
							if at.After(end) {
								return
							}
							wake.until(context.Background(), at)
							d := time.Since(at)
							s.started(i)
							mu.Lock()
							metrics.Record(late, d)
							n++
							if d <= time.Millisecond {
								within++
							}
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				cpu := cpuTime() - cpu0
				b.ReportMetric(float64(late.ValueAtQuantile(99))/1000, "late-p99-ms")
				b.ReportMetric(float64(late.Max())/1000, "late-max-ms")
				b.ReportMetric(100*float64(within)/float64(n), "%-within-1ms")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(n)/1000, "cpu-us/arrival")
				b.ReportMetric(float64(n)/span.Minutes(), "arrivals/min")
			}
		})
	}
}
