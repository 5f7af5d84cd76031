package stored_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/stored"
)

// meanSD is the mean and sample standard deviation (n − 1), worked out
// here rather than by gonum, which stats.Of uses.
func meanSD(xs ...float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

func phase(cycle int, kind string, seconds float64, bytes int64, host, device map[string]float64) *stored.PhaseResult {
	return &stored.PhaseResult{Phase: stored.Phase{Cycle: cycle, Phase: kind, Seconds: seconds, Bytes: bytes,
		MBps: float64(bytes) / 1e6 / seconds}, Host: host, Device: device}
}

// TestBackupStats: synthetic phases of three cycles, interleaved as a run
// takes them, and a kind of phase the cycles do not have yet. Each figure
// is summarised over its own kind's phases only; bytes only where they
// vary; a telemetry figure one phase lacks is over the others.
func TestBackupStats(t *testing.T) {
	const gb = 1_000_000_000
	phases := []*stored.PhaseResult{
		phase(1, stored.PhaseBackup, 10, gb, map[string]float64{"cpu_user_pct": 20}, map[string]float64{"util_pct": 90}),
		phase(1, stored.PhaseRestore, 20, 2*gb, map[string]float64{"cpu_user_pct": 40}, nil),
		phase(2, stored.PhaseBackup, 12, gb, map[string]float64{"cpu_user_pct": 26}, nil), // its device went away
		phase(2, stored.PhaseRestore, 25, 2*gb+500, map[string]float64{"cpu_user_pct": 44}, nil),
		phase(3, stored.PhaseBackup, 17, gb, map[string]float64{"cpu_user_pct": 23}, map[string]float64{"util_pct": 70}),
		phase(3, "verify", 4, 0, nil, nil),
	}
	st, _ := stored.SummarizePhases(phases, false)
	if len(st) != 3 {
		t.Fatalf("kinds: %v; want backup, restore and verify", st)
	}
	for _, c := range []struct {
		kind, figure string
		want         []float64
	}{
		{"backup", "seconds", []float64{10, 12, 17}},
		{"backup", "mbps", []float64{100, 1000.0 / 12, 1000.0 / 17}},
		{"backup", "host.cpu_user_pct", []float64{20, 26, 23}},
		{"backup", "device.util_pct", []float64{90, 70}},
		{"restore", "seconds", []float64{20, 25}},
		{"restore", "bytes", []float64{2 * gb, 2*gb + 500}},
		{"restore", "mbps", []float64{100, (2*gb + 500) / 1e6 / 25}},
		{"restore", "host.cpu_user_pct", []float64{40, 44}},
	} {
		s, ok := st[c.kind][c.figure]
		mean, sd := meanSD(c.want...)
		if !ok || s.N != len(c.want) || math.Abs(s.Mean-mean) > 1e-9*math.Abs(mean) || math.Abs(s.Stddev-sd) > 1e-9*math.Max(sd, 1) ||
			!s.HasCI() || !(s.Low < s.Mean && s.Mean < s.High) {
			t.Errorf("%s %s = %+v (found %v); want n %d, mean %v, stddev %v, an interval around the mean", c.kind, c.figure, s, ok, len(c.want), mean, sd)
		}
	}
	if s, ok := st["backup"]["bytes"]; ok {
		t.Errorf("backup bytes, the same in every cycle: %+v; want none", s)
	}
	if _, ok := st["restore"]["device.util_pct"]; ok {
		t.Error("restore has a device figure no restore had")
	}
	if v := st["verify"]["seconds"]; v.N != 1 || v.Mean != 4 || v.Stddev != 0 || v.HasCI() {
		t.Errorf("verify seconds (one phase): %+v; want 4, n 1, no interval", v)
	}
	b, err := json.Marshal(st["verify"])
	if err != nil || !strings.Contains(string(b), `"seconds":{"mean":4,"stddev":0,"n":1,"ci95_low":null,"ci95_high":null}`) {
		t.Errorf("verify JSON %s (%v)", b, err)
	}
	if st, _ := stored.SummarizePhases(nil, false); st == nil || len(st) != 0 {
		t.Errorf("no phases: %#v; want an empty object", st)
	}
}
