package stored

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/metrics"
)

// openStep is a step at rate that completed done of arrivals transactions
// in a minute, its New-Order p99 p99 ms.
func openStep(rate float64, arrivals, done int64, p99 float64) *TPCCStep {
	return &TPCCStep{Seconds: 60, Txn: map[string]metrics.Summary{"new_order": {Count: done, P99Ms: p99}},
		OpenLoop: &OpenLoop{OfferedTPM: rate, Arrivals: arrivals}}
}

func TestFindKnee(t *testing.T) {
	// Given out of order: the knee walks the rates upwards.
	steps := []*TPCCStep{openStep(3000, 3000, 2990, 40), openStep(1000, 1000, 1000, 2), openStep(2000, 2010, 2000, 15), openStep(4000, 4000, 3000, 900)}
	k := FindKnee(steps, 0)
	if k.OfferedTPM != 2000 || k.NextTPM != 3000 || k.P99BoundMs != 20 || !strings.Contains(k.Why, "40.00 ms, over the 20.00 ms bound") {
		t.Errorf("default bound: %+v; want the knee at 2000, 3000 over 10 x 2 ms", k)
	}
	k = FindKnee(steps, 50*time.Millisecond)
	if k.OfferedTPM != 3000 || k.NextTPM != 4000 || !strings.Contains(k.Why, "75.0% of the 4,000 transactions that arrived were served (3,000: completed") {
		t.Errorf("a 50 ms bound: %+v; want the knee at 3000, 4000 served short", k)
	}
	k = FindKnee(steps[:3], time.Second)
	if k.OfferedTPM != 3000 || k.NextTPM != 0 || !strings.Contains(k.Why, "every rate held") {
		t.Errorf("every rate held: %+v", k)
	}
	if k := FindKnee([]*TPCCStep{openStep(1000, 1000, 900, 1)}, 0); k.OfferedTPM != 0 || k.NextTPM != 1000 {
		t.Errorf("the lowest rate not held: %+v; want no knee, 1000 next", k)
	}
	if FindKnee([]*TPCCStep{{VUs: 4}}, 0) != nil {
		t.Error("a closed loop has a knee")
	}
	// Those still running at the end were served: 174 completed and 4
	// running of 180 is 98.9%; without the 4, 96.7%, short.
	held := openStep(2000, 180, 174, 1)
	held.InFlight = 4
	if k := FindKnee([]*TPCCStep{held, openStep(4000, 360, 300, 1)}, 0); k.OfferedTPM != 2000 || !strings.Contains(k.Why, "at 4,000 TPM offered") {
		t.Errorf("4 of 180 still running at the end: %+v; want 2000 held", k)
	}
	held.InFlight = 0
	if k := FindKnee([]*TPCCStep{held}, 0); k.OfferedTPM != 0 || !strings.Contains(k.Why, "96.7% of the 180 transactions that arrived were served (174:") {
		t.Errorf("none running at the end: %+v; want 2000 not held", k)
	}
	// So were those queued at the end and not yet late: 174 completed,
	// 2 running and 3 waiting of 180 is 99.4%.
	held.InFlight, held.WaitingAtEnd = 2, 3
	if k := FindKnee([]*TPCCStep{held}, 0); k.OfferedTPM != 2000 {
		t.Errorf("2 running and 3 waiting at the end: %+v; want 2000 held", k)
	}
	// A lowest rate with no New-Order sets no bound of 0: the next rate's
	// p99 sets it.
	if k := FindKnee([]*TPCCStep{openStep(50, 2, 2, 0), openStep(100, 4, 4, 3), openStep(200, 8, 8, 40)}, 0); k.OfferedTPM != 100 || k.P99BoundMs != 30 {
		t.Errorf("no New-Order at the lowest rate: %+v; want the bound 10 x 3 ms, the knee at 100", k)
	}
	// Repetitions are judged together.
	g := openStep(5000, 0, 0, 3)
	g.Repetitions = []*TPCCStep{openStep(5000, 5000, 5000, 3), openStep(5000, 5000, 4700, 3)}
	if k := FindKnee([]*TPCCStep{openStep(1000, 1000, 1000, 1), g}, 0); k.OfferedTPM != 1000 || !strings.Contains(k.Why, "97.0% of the 10,000") {
		t.Errorf("repetitions at 5000: %+v; want 97%% of 10000 served, not held", k)
	}
	// A repetition cut short by Ctrl-C is not judged beside a whole one,
	// and a rate only cut short is not judged at all.
	cut := openStep(5000, 5000, 100, 3)
	cut.Interrupted = true
	g.Repetitions = []*TPCCStep{openStep(5000, 5000, 5000, 3), cut}
	if k := FindKnee([]*TPCCStep{openStep(1000, 1000, 1000, 1), g}, 0); k.OfferedTPM != 5000 {
		t.Errorf("a whole repetition at 5000 beside one cut short: %+v; want 5000 held", k)
	}
	if k := FindKnee([]*TPCCStep{openStep(1000, 1000, 1000, 1), cut}, 0); k.OfferedTPM != 1000 || k.NextTPM != 0 {
		t.Errorf("5000 only cut short: %+v; want the knee at 1000, every judged rate held", k)
	}
}

// A disk point's rates, fastest given first: the knee is the highest rate
// done within 2% or chance (3 standard deviations of a Poisson count),
// with its p99 within the bound; other shapes and uncapped points apart.
func TestFindDiskKnees(t *testing.T) {
	pt := func(rate, jobs int, iops, p99 float64) Point {
		return Point{Name: fmt.Sprintf("4k-randread-qd1x%d-rate%d", jobs, rate), BSBytes: 4096, RW: "randread", IODepth: 1, Jobs: jobs,
			RateIOPS: rate, Seconds: 10, Read: &DirStats{IOPS: iops, P99Ms: p99}}
	}
	points := []Point{pt(0, 2, 5000, 3), pt(2000, 2, 3100, 9), pt(250, 2, 490, 0.2), pt(1000, 2, 1985, 0.9), pt(100, 1, 100, 1)}
	k := FindDiskKnees(points, 0)
	if len(k) != 1 {
		t.Fatalf("knees %+v; want one: the 2-job point has three rates, the 1-job one a single rate", k)
	}
	// 490 of 500 is 2% short, within chance (3 x sqrt(5000)/10 = 21 a
	// second); 1985 of 2000 too; 3100 of 4000 is not.
	if k[0].OfferedIOPS != 2000 || k[0].NextIOPS != 4000 || k[0].P99BoundMs != 2 || !strings.Contains(k[0].Why, "3,100 were done") {
		t.Errorf("knee %+v; want 2000 IOPS, 4000 not held", k[0])
	}
	if k := FindDiskKnees(points, 500*time.Microsecond); k[0].OfferedIOPS != 500 || !strings.Contains(k[0].Why, "p99 completion latency was 0.900 ms") {
		t.Errorf("a 0.5 ms bound: %+v; want the knee at 500, 2000's p99 over it", k[0])
	}
	// On two fio hosts (and one more that only node_exporter watched) a
	// point offers its rate on each: 2 x 2 x 1000 against the 3,000 the
	// two did, short.
	onHosts := func(rate int, iops float64) Point {
		p := pt(rate, 2, iops, 0.5)
		p.Hosts = []HostPoint{{Host: "h1", Read: &DirStats{IOPS: iops / 2}}, {Host: "h2", Read: &DirStats{IOPS: iops / 2}},
			{Host: "monitor", NodeStats: &NodeStats{}}}
		return p
	}
	if p := onHosts(1000, 3000); p.FioHosts() != 2 || p.OfferedIOPS() != 4000 {
		t.Errorf("a point on two fio hosts: %d hosts, %g IOPS offered; want 2 and 4000", p.FioHosts(), p.OfferedIOPS())
	}
	if p, want := onHosts(1000, 3000), "offered 4,000 IOPS (1,000 a second on each of 2 jobs on each of 2 hosts): 75.0% done"; p.OfferedText() != want {
		t.Errorf("OfferedText on two hosts: %q; want %q", p.OfferedText(), want)
	}
	if k := FindDiskKnees([]Point{onHosts(500, 2000), onHosts(1000, 3000)}, 0); len(k) != 1 || k[0].OfferedIOPS != 2000 || k[0].NextIOPS != 4000 {
		t.Errorf("knees on two hosts %+v; want 2000 held, 4000 not", k)
	}
	if got := diskShortfall(800, 2); math.Abs(got-3*math.Sqrt(1600)/2) > 1e-9 {
		t.Errorf("shortfall at 800 a second over 2 s: %g; want 3 standard deviations, 60", got)
	}
}

// A knee in words, as `tpcc run`, `disk run` and the console give it: the
// rate with what holding it meant, or none, and why the next did not hold.
func TestKneeText(t *testing.T) {
	k := &Knee{OfferedTPM: 12000, P99BoundMs: 44.7, NextTPM: 24000, Why: "at 24,000 TPM offered, …"}
	if got, want := k.Text(), "knee: 12,000 TPM offered (served within 2% of the arrivals, New-Order p99 within 44.70 ms); at 24,000 TPM offered, …"; got != want {
		t.Errorf("%q;\nwant %q", got, want)
	}
	if got := (&Knee{NextTPM: 1000, Why: "why"}).Text(); got != "knee: none: not even the lowest rate held; why" {
		t.Errorf("no knee: %q", got)
	}
	d := DiskKnee{Point: "4k-randread-qd1x1-rate250", OfferedIOPS: 2000, P99BoundMs: 0.5, Why: "why"}
	if got, want := d.Text(), "knee of 4k-randread-qd1x1: 2,000 IOPS offered (done within 2% of the rate, p99 within 0.500 ms); why"; got != want {
		t.Errorf("%q;\nwant %q", got, want)
	}
	for name, want := range map[string]string{"4k-randread-qd1x1-rate250": "4k-randread-qd1x1", "mine": "mine", "rate-rate": "rate-rate", "a-rate1-b": "a-rate1-b"} {
		if got := RatelessName(name); got != want {
			t.Errorf("RatelessName(%q) = %q; want %q", name, got, want)
		}
	}
}
