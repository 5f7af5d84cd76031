package stored

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
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
	g := GroupTPCC(steps, []StepKey{{VUs: 1}, {VUs: 2}, {VUs: 4}, {VUs: 8}, {VUs: 1}}) // 1 listed twice: still one group
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

// A repetition cut short by Ctrl-C stays among the repetitions but counts
// in the figures only when none of its VU count ran whole; noisy ones
// discarded are counted apart from it.
func TestGroupTPCCInterrupted(t *testing.T) {
	ms := time.Millisecond
	cut := func(s *TPCCStep) *TPCCStep { s.Interrupted, s.Seconds = true, 2; return s }
	noisy := tpccRep(2, 1, 130, 5*ms)
	noisy.Noisy = "steal"
	steps := []*TPCCStep{tpccRep(0, 1, 100, 1*ms), tpccRep(1, 2, 300, 2*ms), noisy, cut(tpccRep(3, 1, 10, 900*ms)), cut(tpccRep(4, 4, 50, 3*ms))}
	g := GroupTPCCDiscarding(steps, []StepKey{{VUs: 1}, {VUs: 2}, {VUs: 4}}, true)
	one := g[0]
	if one.Interrupted || one.NOPM != 100 || one.Stats["nopm"].N != 1 || len(one.Repetitions) != 3 || one.Discarded != 1 || len(one.Counted()) != 1 {
		t.Errorf("1 VU: interrupted %v, NOPM %d over %d, %d repetitions, %d discarded, %d counted; want the whole quiet one's 100",
			one.Interrupted, one.NOPM, one.Stats["nopm"].N, len(one.Repetitions), one.Discarded, len(one.Counted()))
	}
	if p := one.TxnPooled[tpcc.NewOrder.String()]; p.Count != 1 || p.MaxMs > 2 {
		t.Errorf("1 VU pooled %+v; want the whole repetition's one latency", p)
	}
	if four := g[2]; !four.Interrupted || four.NOPM != 50 || four.Seconds != 2 {
		t.Errorf("4 VUs, only cut short: %+v; want it, marked", four)
	}
	g = GroupTPCCDiscarding(steps, []StepKey{{VUs: 1}}, false)
	if one := g[0]; one.NOPM != 115 || one.Discarded != 0 || len(one.Counted()) != 2 {
		t.Errorf("1 VU not discarding: NOPM %d, %d discarded, %d counted; want the two whole ones'", one.NOPM, one.Discarded, len(one.Counted()))
	}
}

// Open-loop steps group by their offered rate, the pool of VUs being the
// same: each rate's repetitions sum their arrivals, late and unserved
// counts, keep their largest queue, and average their service times, whose
// figures Stats covers as service.TYPE.
func TestGroupTPCCOpenLoop(t *testing.T) {
	ms := time.Millisecond
	open := func(s *TPCCStep, rate float64, late, unserved, queue int64, serviceP99 float64) *TPCCStep {
		s.OpenLoop = &OpenLoop{OfferedTPM: rate, Arrival: "poisson", Arrivals: 100, Late: late, Unserved: unserved, MaxQueue: queue,
			TxnService: map[string]metrics.Summary{"new_order": {Count: 40, P99Ms: serviceP99}}}
		return s
	}
	steps := []*TPCCStep{
		open(tpccRep(0, 8, 100, 5*ms), 6000, 1, 0, 3, 2), open(tpccRep(1, 8, 200, 9*ms), 12000, 5, 2, 9, 4),
		open(tpccRep(2, 8, 110, 6*ms), 6000, 2, 1, 4, 3), open(tpccRep(3, 8, 190, 8*ms), 12000, 7, 0, 12, 6),
	}
	keys := KeysOf(steps)
	if len(keys) != 2 || keys[0] != (StepKey{VUs: 8, OfferedTPM: 6000}) || keys[1] != (StepKey{VUs: 8, OfferedTPM: 12000}) {
		t.Fatalf("keys %+v", keys)
	}
	g := GroupTPCC(steps, keys)
	if len(g) != 2 || g[0].OfferedTPM != 6000 || g[1].OfferedTPM != 12000 || len(g[0].Repetitions) != 2 {
		t.Fatalf("groups %+v", g)
	}
	hi := g[1]
	if hi.Arrivals != 200 || hi.Late != 12 || hi.Unserved != 2 || hi.MaxQueue != 12 {
		t.Errorf("12000 TPM: arrivals %d late %d unserved %d max queue %d; want 200, 12, 2, 12", hi.Arrivals, hi.Late, hi.Unserved, hi.MaxQueue)
	}
	if p := hi.TxnService["new_order"].P99Ms; p != 5 {
		t.Errorf("12000 TPM: New-Order service p99 %g; want the mean 5", p)
	}
	if st := hi.Stats["service.new_order.p99_ms"]; st.N != 2 || st.Mean != 5 {
		t.Errorf("12000 TPM: service p99 stats %+v; want n 2, mean 5", st)
	}
	if st := hi.Stats["late"]; st.Mean != 6 {
		t.Errorf("12000 TPM: late stats %+v; want mean 6", st)
	}
	// A closed-loop step's document has none of the open loop's keys.
	doc, err := json.Marshal(tpccRep(0, 1, 100, ms))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"offered_tpm", "late", "unserved", "max_queue", "txn_service"} {
		if strings.Contains(string(doc), `"`+k+`"`) {
			t.Errorf("a closed-loop step's JSON has %q: %s", k, doc)
		}
	}
}

// Repetitions' response times are judged on their merged histograms while
// they are at hand, and on the slowest repetition's 90th percentile once
// read back without them; their efficiencies are averaged and judged.
func TestGroupTPCCResponseTimeAndEfficiency(t *testing.T) {
	ms := time.Millisecond
	var fast, slow []time.Duration
	for i := range 10 {
		fast = append(fast, ms)
		slow = append(slow, ms)
		if i >= 5 {
			slow[i] = 6 * time.Second
		}
	}
	steps := []*TPCCStep{tpccRep(0, 10, 12, fast...), tpccRep(1, 10, 11, slow...)}
	for i, pct := range []float64{95, 80} {
		steps[i].ResponseTime = ResponseTimes(steps[i].Histograms)
		steps[i].EfficiencyPct = &pct
	}
	if v := steps[1].ResponseTime[tpcc.NewOrder]; v.Verdict != "fail" || v.P90Ms < 5000 {
		t.Fatalf("the slow repetition's New-Order: %+v; want a p90 over 5 s, failed", v)
	}
	g := GroupTPCC(steps, []StepKey{{VUs: 10}})[0]
	if v := g.ResponseTime[tpcc.NewOrder]; v.Count != 20 || v.Verdict != "fail" || v.P90Ms < 5000 {
		t.Errorf("merged New-Order: %+v; want 20 counted and failed (5 of the 20 took 6 s)", v)
	}
	if g.EfficiencyPct == nil || *g.EfficiencyPct != 87.5 || g.EfficiencyVerdict != "pass" {
		t.Errorf("efficiency %v %q; want the mean 87.5, pass", g.EfficiencyPct, g.EfficiencyVerdict)
	}
	// Read back from the store: no histograms.
	for _, s := range steps {
		s.Histograms = [tpcc.NumKinds]*hdr.Histogram{}
	}
	g = GroupTPCC(steps, []StepKey{{VUs: 10}})[0]
	if v := g.ResponseTime[tpcc.NewOrder]; v.Count != 20 || v.Verdict != "fail" || v.P90Ms != steps[1].ResponseTime[tpcc.NewOrder].P90Ms {
		t.Errorf("New-Order from the stored repetitions: %+v; want the slow one's p90, failed", v)
	}
	if v := g.ResponseTime[tpcc.Payment]; v.Verdict != "not-judged" {
		t.Errorf("Payment, which never ran: %+v", v)
	}
}

// A step's notes are the open loop's offer, a counters reset, a lost
// server and a stalled transaction, in that order; a plain closed-loop
// step has none.
func TestTPCCStepNotes(t *testing.T) {
	t.Parallel()
	if n := (&TPCCStep{VUs: 4}).Notes(); len(n) != 0 {
		t.Errorf("a closed-loop step's notes: %q; want none", n)
	}
	s := &TPCCStep{VUs: 4, CountersReset: 2, ServerLost: true, OldestInFlightMs: 2500,
		OpenLoop: &OpenLoop{OfferedTPM: 12000, Arrival: "poisson", Arrivals: 2004, Late: 1234, MaxQueue: 3,
			ScheduleJitter: metrics.Summary{Count: 10, P99Ms: 0.18}}}
	n := s.Notes()
	want := []string{
		"offered 12,000 TPM (poisson arrivals, 2,004 in the interval): 1,234 late, 0 unserved, at most 3 waiting; schedule jitter p99 0.180 ms",
		ResetsText(2), LostText,
		"a transaction was still running when the interval ended, 2.5 s after it was sent: the server held its VU, and no latency records it",
	}
	if !slices.Equal(n, want) {
		t.Errorf("notes:\n%q\nwant\n%q", n, want)
	}
	s.OpenLoop.ScheduleJitter = metrics.Summary{}
	if got := s.OpenLoop.Text(); !strings.HasSuffix(got, "; no VU waited for an arrival") {
		t.Errorf("an open loop whose VUs never waited: %q", got)
	}
}
