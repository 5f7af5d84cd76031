package experiment_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/stored"
)

// A closed loop with a think time runs at its users' pace: each of 3 VUs
// thinks 30 ms on average after each transaction, so the step completes
// about 3 x 60 s / (30 ms + its mean service time) transactions a minute
// rather than the server's maximum. The count of cycles in the interval
// varies as a renewal count of near-exponential cycles does, sqrt of its
// mean; the test allows 4 of those and a cycle per VU at each edge above
// it. Below, a busy host can only lengthen cycles (a VU woken late by its
// timer), so the bound there is 60%: a think time taken twice (51%) or in
// the wrong unit misses it, a VU woken 20 ms late each cycle would too. The
// parameters keep the think time.
func TestRunTPCCThinkTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := tpcctest.Database(t, 1)
	const vus, think = 3, 30 * time.Millisecond
	dir := t.TempDir()
	res, err := runTPCC(t, ctx, dir, experiment.TPCCConfig{DSN: dsn, Mode: engine.ModeRoutines, VUs: []int{vus},
		ThinkTime: think, RampUp: time.Second, Duration: 4 * time.Second})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	s := res.Steps[0]
	var n int64
	var serviceMs float64
	for _, h := range s.Txn {
		n += h.Count
		serviceMs += float64(h.Count) * h.MeanMs
	}
	if n == 0 {
		t.Fatal("no transaction completed")
	}
	serviceMs /= float64(n)
	cycles := float64(vus) * s.Seconds * 1000 / (float64(think.Milliseconds()) + serviceMs)
	if most := cycles + 4*math.Sqrt(cycles) + 2*vus; float64(n) > most {
		t.Errorf("%d transactions in %.1f s; %d VUs thinking %s after each (service %.2f ms on average) complete about %.0f, at most %.0f",
			n, s.Seconds, vus, think, serviceMs, cycles, most)
	}
	if float64(n) < 0.6*cycles {
		t.Errorf("%d transactions in %.1f s; %d VUs thinking %s complete about %.0f", n, s.Seconds, vus, think, cycles)
	}
	if s.OpenLoop != nil || s.EfficiencyPct != nil {
		t.Errorf("a closed loop with a think time has an open loop's figures (%+v) or an efficiency (%v)", s.OpenLoop, s.EfficiencyPct)
	}
	run, _ := storedRun(t, dir, res.RunID)
	var p stored.TPCCParams
	if err := json.Unmarshal(run.Params, &p); err != nil || p.ThinkTime != "30ms" || p.KeyingThinking {
		t.Errorf("stored params %s (%v); want think_time 30ms", run.Params, err)
	}
	t.Logf("%d transactions in %.1f s against %.0f expected (service %.2f ms)", n, s.Seconds, cycles, serviceMs)
}

// A think time is refused out of range and beside the spec's keying and
// think times or a rate, each naming the other field.
func TestThinkTimeRules(t *testing.T) {
	cfg := experiment.NewTPCCConfig()
	cfg.DSN, cfg.ThinkTime = "postgres://localhost/x", 2*time.Millisecond
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a valid think time: %v", err)
	}
	for _, c := range []struct {
		mut  func(*experiment.TPCCConfig)
		want string
	}{
		{func(c *experiment.TPCCConfig) { c.ThinkTime = -time.Millisecond }, "think_time -1ms is out of range; give a mean think time from 0s (none) to 10m"},
		{func(c *experiment.TPCCConfig) { c.ThinkTime = 11 * time.Minute }, "think_time 11m0s is out of range"},
		{func(c *experiment.TPCCConfig) { c.KeyingThinking = true }, "think_time 2ms cannot be combined with keying_thinking"},
		{func(c *experiment.TPCCConfig) { c.Rates = []float64{6000} }, "think_time 2ms paces each VU of a closed loop and cannot be combined with rate"},
		{func(c *experiment.TPCCConfig) { c.RateFractions = []float64{50} }, "cannot be combined with rate"},
	} {
		bad := cfg
		c.mut(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v; want %q", err, c.want)
		}
	}
}
