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
//
// A recorder made WithBuckets also counts, per slot and since the last
// Drain, rolled-back completions, failures and every latency in fixed
// buckets: what a live exporter adds up into its histograms. Without it
// those cost nothing.
type Recorder struct {
	mu     sync.Mutex
	step   []*hdr.Histogram
	sec    []*hdr.Histogram // nil for slots without per-second histograms
	spare  []*hdr.Histogram
	counts []int64
	// live counts, since the last Drain (nil bounds: not kept)
	bounds     []time.Duration
	rolledBack []int64
	failed     []int64
	buckets    []Buckets
}

// Buckets is one slot's latencies counted in fixed buckets: Counts[i] holds
// those in (bounds[i-1], bounds[i]], the last entry those above every bound.
type Buckets struct {
	Counts []int64
	Sum    time.Duration
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

// WithBuckets makes r keep live counts with these ascending upper bounds
// (none: r is unchanged). Call it before any recording.
func (r *Recorder) WithBuckets(bounds []time.Duration) *Recorder {
	if len(bounds) == 0 {
		return r
	}
	n := len(r.step)
	r.bounds = bounds
	r.rolledBack, r.failed, r.buckets = make([]int64, n), make([]int64, n), make([]Buckets, n)
	for i := range r.buckets {
		r.buckets[i].Counts = make([]int64, len(bounds)+1)
	}
	return r
}

// Record counts a completion in slot i and adds its latency to the slot's
// per-second histogram and, when measured, to its histogram of the interval.
// rolledBack says the completion was a rollback the workload asked for
// (counted only by a recorder WithBuckets).
func (r *Recorder) Record(i int, d time.Duration, measured, rolledBack bool) {
	r.mu.Lock()
	r.counts[i]++
	if measured {
		Record(r.step[i], d)
	}
	if h := r.sec[i]; h != nil {
		Record(h, d)
	}
	if r.bounds != nil {
		b := &r.buckets[i]
		b.Counts[bucketOf(r.bounds, d)]++
		b.Sum += d
		if rolledBack {
			r.rolledBack[i]++
		}
	}
	r.mu.Unlock()
}

// bucketOf is the index of the first bound not below d (len(bounds): none).
func bucketOf(bounds []time.Duration, d time.Duration) int {
	lo, hi := 0, len(bounds)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bounds[m] < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Fail counts a failure in slot i (only in a recorder WithBuckets).
func (r *Recorder) Fail(i int) {
	if r.bounds == nil {
		return
	}
	r.mu.Lock()
	r.failed[i]++
	r.mu.Unlock()
}

// Drain moves the live counts since the last call into rolledBack, failed
// and buckets (one entry per slot; buckets' entries are replaced) and
// starts them again. It does nothing in a recorder without buckets.
func (r *Recorder) Drain(rolledBack, failed []int64, buckets []Buckets) {
	if r.bounds == nil {
		return
	}
	fresh := make([]Buckets, len(r.buckets))
	for i := range fresh {
		fresh[i].Counts = make([]int64, len(r.bounds)+1)
	}
	r.mu.Lock()
	copy(rolledBack, r.rolledBack)
	copy(failed, r.failed)
	clear(r.rolledBack)
	clear(r.failed)
	copy(buckets, r.buckets)
	r.buckets = fresh
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
