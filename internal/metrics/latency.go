// Package metrics holds latency histograms (HDR) and their summaries.
// Workers record into a Recorder; an aggregator takes its counts and
// per-second histograms once a second without holding up a recording.
package metrics

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histograms record microseconds from 1 µs to 10 minutes at 3 significant
// digits (0.1% resolution).
const (
	lowestUs  = 1
	highestUs = 10 * 60 * 1000 * 1000
	sigDigits = 3
)

// NewHistogram returns an empty latency histogram in microseconds.
func NewHistogram() *hdr.Histogram { return hdr.New(lowestUs, highestUs, sigDigits) }

// Record adds one latency to h, clamped to the histogram's range.
func Record(h *hdr.Histogram, d time.Duration) {
	us := d.Microseconds()
	us = max(lowestUs, min(us, highestUs))
	_ = h.RecordValue(us)
}

// Summary is a histogram's count and percentiles in milliseconds.
type Summary struct {
	Count  int64   `json:"count"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// Summarize returns h's summary (zeros for an empty histogram).
func Summarize(h *hdr.Histogram) Summary {
	if h.TotalCount() == 0 {
		return Summary{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Summary{
		Count:  h.TotalCount(),
		MeanMs: h.Mean() / 1000,
		P50Ms:  ms(h.ValueAtQuantile(50)),
		P95Ms:  ms(h.ValueAtQuantile(95)),
		P99Ms:  ms(h.ValueAtQuantile(99)),
		P999Ms: ms(h.ValueAtQuantile(99.9)),
		MaxMs:  ms(h.Max()),
	}
}

// Recorder keeps the latencies that a step's workers record. Per slot
// (e.g. per transaction type) it holds a histogram of the measured interval,
// recorded in place and read once the workers have stopped, and a count of
// every completion since the last Second. Slots named at creation also keep
// a histogram of the current second, double-buffered so that the
// aggregator's reading never holds up a recording. A completion holds the
// lock for one or two RecordValue calls; the aggregator's second costs a
// swap, one pass over each per-second histogram and its reset, instead of a
// merge of every slot (hdrhistogram-go's Merge walks each bucket up to the
// largest value).
type Recorder struct {
	mu     sync.Mutex
	step   []*hdr.Histogram
	sec    []*hdr.Histogram // nil for slots without per-second histograms
	spare  []*hdr.Histogram
	counts []int64
}

// NewRecorder returns a recorder of n slots, of which perSecond also keep
// this second's histogram.
func NewRecorder(n int, perSecond ...int) *Recorder {
	r := &Recorder{step: make([]*hdr.Histogram, n), sec: make([]*hdr.Histogram, n),
		spare: make([]*hdr.Histogram, n), counts: make([]int64, n)}
	for i := range n {
		r.step[i] = NewHistogram()
	}
	for _, i := range perSecond {
		r.sec[i], r.spare[i] = NewHistogram(), NewHistogram()
	}
	return r
}

// Record counts a completion in slot i and adds its latency to the slot's
// per-second histogram and, when measured, to its histogram of the interval.
func (r *Recorder) Record(i int, d time.Duration, measured bool) {
	r.mu.Lock()
	r.counts[i]++
	if measured {
		Record(r.step[i], d)
	}
	if h := r.sec[i]; h != nil {
		Record(h, d)
	}
	r.mu.Unlock()
}

// Second moves the completions counted since the last call into counts
// (one per slot), calls each with every per-second histogram that recorded
// something, then clears it.
func (r *Recorder) Second(counts []int64, each func(i int, h *hdr.Histogram)) {
	r.mu.Lock()
	r.sec, r.spare = r.spare, r.sec
	copy(counts, r.counts)
	clear(r.counts)
	r.mu.Unlock()
	for i, h := range r.spare {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		each(i, h)
		h.Reset()
	}
}

// Step returns slot i's histogram of the measured interval. The caller
// reads it once no worker records any more.
func (r *Recorder) Step(i int) *hdr.Histogram { return r.step[i] }
