// Package metrics holds latency histograms (HDR) and their summaries.
// Workers record into a double-buffered Set; an aggregator swaps it out once
// a second and merges it, so a recording never waits for the merge.
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

// Set is a group of histograms, one per slot (e.g. per transaction type),
// double-buffered: workers record into the current set under a lock held
// for one RecordValue, and MergeInto hands the filled set to the aggregator
// in exchange for an empty one.
type Set struct {
	mu    sync.Mutex
	cur   []*hdr.Histogram
	spare []*hdr.Histogram
}

// NewSet returns a set of n histograms.
func NewSet(n int) *Set {
	s := &Set{cur: make([]*hdr.Histogram, n), spare: make([]*hdr.Histogram, n)}
	for i := range n {
		s.cur[i], s.spare[i] = NewHistogram(), NewHistogram()
	}
	return s
}

// Record adds a latency to slot i.
func (s *Set) Record(i int, d time.Duration) {
	s.mu.Lock()
	Record(s.cur[i], d)
	s.mu.Unlock()
}

// MergeInto adds every slot's recordings since the last call to dst[i] (and
// to each of more[j][i]), then clears them.
func (s *Set) MergeInto(dst []*hdr.Histogram, more ...[]*hdr.Histogram) {
	s.mu.Lock()
	s.cur, s.spare = s.spare, s.cur
	s.mu.Unlock()
	for i, h := range s.spare {
		if h.TotalCount() == 0 {
			continue
		}
		dst[i].Merge(h)
		for _, m := range more {
			m[i].Merge(h)
		}
		h.Reset()
	}
}
