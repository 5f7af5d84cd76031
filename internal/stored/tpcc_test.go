package stored

import (
	"math"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// rep is a repetition with the given NOPM and New-Order latencies.
func tpccRep(index, vus int, nopm int64, lat ...time.Duration) *TPCCStep {
	s := &TPCCStep{Index: index, VUs: vus, NOPM: nopm, TPM: 2 * nopm, Seconds: 10, Host: map[string]float64{"cpu_steal_pct": float64(index)},
		NOPMCheck: NOPMCheck{Database: nopm, Client: nopm, Bound: int64(vus), OK: true}, Txn: map[string]metrics.Summary{}}
	h := metrics.NewHistogram()
	for _, d := range lat {
		metrics.Record(h, d)
	}
	s.Histograms[tpcc.NewOrder] = h
	s.Txn[tpcc.NewOrder.String()] = metrics.Summarize(h)
	return s
}

func TestGroupTPCC(t *testing.T) {
	ms := time.Millisecond
	// 1 and 4 VUs, three repetitions interleaved; 2 VUs once.
	steps := []*TPCCStep{
		tpccRep(0, 1, 100, 1*ms, 2*ms), tpccRep(1, 4, 300, 10*ms), tpccRep(2, 1, 110, 3*ms),
		tpccRep(3, 4, 330, 20*ms, 30*ms), tpccRep(4, 1, 120, 4*ms), tpccRep(5, 4, 360, 40*ms), tpccRep(6, 2, 200, 5*ms),
	}
	g := GroupTPCC(steps, []int{1, 2, 4, 8})
	if len(g) != 3 || g[0].VUs != 1 || g[1].VUs != 2 || g[2].VUs != 4 || g[0].Index != 0 || g[1].Index != 1 || g[2].Index != 2 {
		t.Fatalf("groups %+v", g)
	}
	one := g[0]
	if one.NOPM != 110 || one.TPM != 220 || len(one.Repetitions) != 3 || one.Repetitions[2].Index != 4 {
		t.Errorf("1 VU: nopm %d tpm %d, %d repetitions", one.NOPM, one.TPM, len(one.Repetitions))
	}
	s := one.Stats["nopm"]
	if s.N != 3 || s.Mean != 110 || math.Abs(s.Stddev-10) > 1e-9 || !(s.Low < 110 && s.High > 110) {
		t.Errorf("1 VU nopm stats %+v", s)
	}
	if h := one.Stats["host.cpu_steal_pct"]; h.N != 3 || h.Mean != 2 || one.Host["cpu_steal_pct"] != 2 {
		t.Errorf("telemetry: %+v, host %v", h, one.Host)
	}
	if c := one.NOPMCheck; c.Database != 330 || c.Bound != 3 || !c.OK {
		t.Errorf("NOPM check %+v", c)
	}
	// The mean of the repetitions' p50s against the pooled p50 of all four
	// latencies (1, 2, 3, 4 ms): the pooled one comes from the merged
	// histogram, the mean from each repetition's own.
	no := tpcc.NewOrder.String()
	perRep := (one.Repetitions[0].Txn[no].P50Ms + one.Repetitions[1].Txn[no].P50Ms + one.Repetitions[2].Txn[no].P50Ms) / 3
	if math.Abs(one.Txn[no].P50Ms-perRep) > 1e-9 || one.Stats[no+".p50_ms"].N != 3 {
		t.Errorf("mean p50 %v, want %v", one.Txn[no].P50Ms, perRep)
	}
	if p := one.TxnPooled[no]; p.Count != 4 || math.Abs(p.P50Ms-2) > 0.01 || math.Abs(p.MaxMs-4) > 0.01 {
		t.Errorf("pooled %+v; want 4 latencies, median 2 ms, max 4 ms", p)
	}
	// Run once: the step as it ran, with n = 1 and no interval.
	two := g[1]
	if two.NOPM != 200 || two.Repetitions != nil || two.TxnPooled != nil || two.Stats["nopm"].N != 1 || two.Stats["nopm"].HasCI() {
		t.Errorf("2 VUs: %+v", two)
	}
	if g[2].NOPM != 330 || g[2].MeasureStart != steps[1].MeasureStart || g[2].MeasureEnd != steps[5].MeasureEnd {
		t.Errorf("4 VUs: %+v", g[2])
	}
}
