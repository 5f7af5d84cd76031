package driver

import (
	"math"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/metrics"
)

// TestForeignCPU: on 2 cores, a host 60% busy (1.2 cores) with the server
// on 0.8 of a core and tierbench on 0.1 (50 µs × 2,000 transactions a
// second) leaves 0.3 cores, 15% of all, to other processes.
func TestForeignCPU(t *testing.T) {
	s := &StepResult{Seconds: 10, ClientCPUPerTxnUs: 50, Txn: map[string]metrics.Summary{"new_order": {Count: 9000}, "payment": {Count: 11000}},
		Host: map[string]float64{"cpu_user_pct": 45, "cpu_system_pct": 15, "server_cpu_pct": 80, "cpu_steal_pct": 1}}
	if f, ok := ForeignCPU(s, 2); !ok || math.Abs(f-15) > 1e-9 {
		t.Errorf("ForeignCPU = %v, %v; want 15", f, ok)
	}
	JudgeNoisy(s, 2, DefaultNoisy)
	if s.Noisy != "other processes 15.0% of all cores > 10%" || s.Host["foreign_cpu_pct"] != 15 {
		t.Errorf("noisy %q, host %v", s.Noisy, s.Host)
	}
	s.Host["cpu_steal_pct"] = 7.5
	JudgeNoisy(s, 2, NoisyLimits{StealPct: 5, ForeignPct: -1})
	if s.Noisy != "steal 7.5% of all cores > 5%" {
		t.Errorf("steal: %q", s.Noisy)
	}
	JudgeNoisy(s, 2, NoisyLimits{StealPct: -1, ForeignPct: -1})
	if s.Noisy != "" {
		t.Errorf("no checks: %q", s.Noisy)
	}
	// A server whose processes this host cannot see: steal only.
	delete(s.Host, "server_cpu_pct")
	if _, ok := ForeignCPU(s, 2); ok {
		t.Error("foreign CPU without the server's")
	}
	JudgeNoisy(s, 2, DefaultNoisy)
	if !strings.HasPrefix(s.Noisy, "steal 7.5%") || strings.Contains(s.Noisy, "other") {
		t.Errorf("remote server: %q", s.Noisy)
	}
}

// TestGroupDiscarding: the noisy repetition is listed but left out of the
// means with --discard-noisy, and counted; every one noisy keeps them all.
func TestGroupDiscarding(t *testing.T) {
	steps := []*StepResult{rep(0, 1, 100), rep(1, 1, 40), rep(2, 1, 110)}
	steps[1].Noisy = "other processes 50.0% of all cores > 10%"
	g := GroupDiscarding(steps, []int{1}, true)[0]
	if g.NOPM != 105 || g.Discarded != 1 || g.Stats["nopm"].N != 2 || len(g.Repetitions) != 3 {
		t.Errorf("discarding: nopm %d, discarded %d, n %d, %d repetitions", g.NOPM, g.Discarded, g.Stats["nopm"].N, len(g.Repetitions))
	}
	if g := GroupDiscarding(steps, []int{1}, false)[0]; g.NOPM != 83 || g.Discarded != 0 || g.Stats["nopm"].N != 3 {
		t.Errorf("keeping: nopm %d, discarded %d", g.NOPM, g.Discarded)
	}
	for _, s := range steps {
		s.Noisy = "steal"
	}
	if g := GroupDiscarding(steps, []int{1}, true)[0]; g.Discarded != 0 || g.Stats["nopm"].N != 3 {
		t.Errorf("all noisy: discarded %d, n %d", g.Discarded, g.Stats["nopm"].N)
	}
}
