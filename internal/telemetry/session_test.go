package telemetry

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/stored"
)

// A step's device percentiles come from the merged histograms of its
// seconds, not from the mean of each second's percentiles.
func TestSummarizeMergesLatency(t *testing.T) {
	busy := newLatencyHistogram() // 990 fast requests
	busy.RecordValues(100, 990)
	quiet := newLatencyHistogram() // 10 slow ones
	quiet.RecordValues(20000, 10)
	dev := func(r, rAwait float64) *stored.DeviceRates {
		return &stored.DeviceRates{Name: "total", RIOPS: r, RAwaitMs: rAwait, UtilPct: 50}
	}
	lb, lq := tracerLatency(busy), tracerLatency(quiet)
	samples := []Sample{
		{CPU: CPU{IdlePct: 80, IOWaitPct: 10}, ServerCPUPct: -1, Total: dev(990, 0.1), Latency: &lb, latencyHist: sparse(busy)},
		{CPU: CPU{IdlePct: 40, IOWaitPct: 30}, ServerCPUPct: 50, Total: dev(10, 20), Latency: &lq, latencyHist: sparse(quiet)},
	}
	a := Summarize(samples)
	if a.Host["cpu_idle_pct"] != 60 || a.Host["cpu_iowait_pct"] != 20 || a.Host["server_cpu_pct"] != 50 {
		t.Errorf("host %v", a.Host)
	}
	// Await weighted by I/Os: (990 x 0.1 + 10 x 20) / 1000.
	if got := a.Device["r_await_ms"]; math.Abs(got-0.299) > 1e-9 || a.Device["r_iops"] != 500 {
		t.Errorf("device r_await %.4f r_iops %.0f", got, a.Device["r_iops"])
	}
	// 99% of the step's 1000 requests took 0.1 ms; averaging the seconds'
	// p99s (0.1 and 20 ms) would say 10 ms.
	if p99 := a.Device["p99_ms"]; p99 < 0.09 || p99 > 0.11 || a.Device["traced_ios"] != 1000 {
		t.Errorf("merged p99 %.3f ms over %v requests, want 0.1 ms over 1000", p99, a.Device["traced_ios"])
	}
}

func TestDBRates(t *testing.T) {
	prev := map[string]float64{"commits": 100, "blocks_read": 10, "blocks_hit": 90}
	st := engine.Stats{Counters: map[string]float64{"commits": 300, "blocks_read": 30, "blocks_hit": 270},
		Gauges: map[string]float64{"active.CPU": 3}}
	r := dbRates(prev, st, 2)
	if r["commits_per_s"] != 100 || r["cache_hit_pct"] != 90 || r["active.CPU"] != 3 {
		t.Errorf("rates %v", r)
	}
	if r := dbRates(nil, st, 2); len(r) != 1 {
		t.Errorf("first reading gives rates: %v", r)
	}
	if _, ok := r["read_latency_ms"]; ok {
		t.Errorf("a server that does not time I/O gets a read latency: %v", r)
	}
	// Timed I/O: 20 block reads took 50 ms, 40 WAL syncs 10 ms.
	prev["block_read_ms"], prev["wal_sync_ms"], prev["wal_syncs"] = 1000, 500, 100
	st.Counters["block_read_ms"], st.Counters["wal_sync_ms"], st.Counters["wal_syncs"] = 1050, 510, 140
	r = dbRates(prev, st, 2)
	if r["read_latency_ms"] != 2.5 || r["wal_sync_latency_ms"] != 0.25 {
		t.Errorf("read latency %v ms (want 2.5), WAL sync %v ms (want 0.25)", r["read_latency_ms"], r["wal_sync_latency_ms"])
	}
}

// A live session on this host: samples arrive each interval with CPU
// shares that add up, and Samples selects by time.
func TestSessionLive(t *testing.T) {
	s, err := Start(t.Context(), Config{Interval: 100 * time.Millisecond, Target: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	time.Sleep(550 * time.Millisecond)
	s.Stop()
	xs := s.Samples(start, time.Now())
	if len(xs) < 3 {
		t.Fatalf("%d samples in 550 ms at 100 ms", len(xs))
	}
	for _, x := range xs {
		sum := x.CPU.UserPct + x.CPU.SystemPct + x.CPU.IOWaitPct + x.CPU.IdlePct + x.CPU.StealPct
		if sum < 99 || sum > 101 || x.Total == nil || x.Memory.UsedBytes <= 0 {
			t.Errorf("sample %+v: CPU shares add to %.1f", x, sum)
		}
	}
	if got := s.Samples(start.Add(-time.Hour), start.Add(-time.Minute)); len(got) != 0 {
		t.Errorf("%d samples from before the session", len(got))
	}
}

func TestSamplingFor(t *testing.T) {
	cases := []struct {
		rate      float64
		cur, want int
	}{
		{100, 1, 1}, {2500, 1, 8}, {20000, 1, 64}, {20000, 8, 64},
		{1500, 8, 8}, // hysteresis: not yet half of 2000
		{900, 8, 1}, {10000, 64, 64}, {7000, 64, 8}, {500, 64, 1},
	}
	for _, c := range cases {
		if got := samplingFor(c.rate, c.cur); got != c.want {
			t.Errorf("samplingFor(%.0f, %d) = %d, want %d", c.rate, c.cur, got, c.want)
		}
	}
}

// flakyStats counts 100 commits between readings and fails every other
// reading after the first, as a loaded server past the interval does.
type flakyStats struct{ calls int }

func (f *flakyStats) Stats(context.Context) (engine.Stats, error) {
	f.calls++
	if f.calls%2 == 0 {
		return engine.Stats{}, errors.New("timeout")
	}
	return engine.Stats{Counters: map[string]float64{"commits": float64(100 * f.calls)}}, nil
}

func (f *flakyStats) ServerInfo(context.Context) (string, int, error) { return "", 0, nil }

// A database reading that fails keeps the one before it: the next good
// reading has its rate, over the time since that one (here 200 commits in
// two intervals), rather than none.
func TestDBReadingFailedKeepsTheLastGood(t *testing.T) {
	s, err := Start(context.Background(), Config{Interval: 50 * time.Millisecond, DB: &flakyStats{}, Warn: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	s.Stop()
	var rated, good int
	for _, x := range s.Samples(time.Time{}, time.Now()) {
		if x.DB == nil {
			continue // a failed reading
		}
		good++
		if r, ok := x.DB["commits_per_s"]; ok {
			rated++
			// 200 commits over about two intervals (a late tick makes it
			// longer, never shorter than the one interval since the
			// failed reading).
			if r <= 0 || r > 200/0.05 {
				t.Errorf("commits_per_s %g; want 200 over the time since the last good reading", r)
			}
		}
	}
	if good < 2 || rated != good {
		t.Errorf("%d good readings after the first, %d with a rate; want every one rated", good, rated)
	}
}
