package experiment_test

// Open-loop TPC-C (tpcc run --rate): the pacer holds its rate, and a
// stalled server shows in the latency measured from each transaction's
// intended start, where a closed loop hides it.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/driver"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/report"
	"github.com/tierbench/tierbench/internal/units"
)

// rateDoc is an open-loop run's document as `tpcc run --json` prints it.
type rateDoc struct {
	Status    string `json:"status"`
	NOPMAgree bool   `json:"nopm_agree"`
	Steps     []struct {
		VUs            int                        `json:"vus"`
		TPM            int64                      `json:"tpm"`
		ClientTPM      int64                      `json:"client_tpm"`
		Seconds        float64                    `json:"measured_seconds"`
		MeasureStart   time.Time                  `json:"measure_start"`
		MeasureEnd     time.Time                  `json:"measure_end"`
		OfferedTPM     float64                    `json:"offered_tpm"`
		Arrival        string                     `json:"arrival"`
		Arrivals       int64                      `json:"arrivals"`
		Late           int64                      `json:"late"`
		Unserved       int64                      `json:"unserved"`
		MaxQueue       int64                      `json:"max_queue"`
		InFlight       int64                      `json:"in_flight"`
		WaitingAtEnd   int64                      `json:"waiting_at_end"`
		Txn            map[string]metrics.Summary `json:"txn"`
		TxnService     map[string]metrics.Summary `json:"txn_service"`
		ScheduleJitter metrics.Summary            `json:"schedule_jitter"`
	} `json:"steps"`
}

// checkHeldRate wants an open-loop run at rate (constant arrivals, a
// server with capacity to spare) to have measured it: the database's TPM
// and the client's within 2% of the rate, the interval's arrivals those of
// the rate, nothing late or unserved, and every transaction's latency from
// its intended start at least its service time.
func checkHeldRate(t *testing.T, res *experiment.TPCCResult, rate float64) {
	t.Helper()
	var d rateDoc
	out := asDoc(t, res, &d)
	if d.Status != "complete" || len(d.Steps) != 1 || !d.NOPMAgree {
		t.Fatalf("run: %s", out)
	}
	s := d.Steps[0]
	if s.OfferedTPM != rate || s.Arrival != driver.ArrivalConstant {
		t.Errorf("offered %g TPM, arrival %q; want %g, constant", s.OfferedTPM, s.Arrival, rate)
	}
	// Nothing waits for a VU unless the server itself stalled: a shared
	// CI host once held a step's transactions for 1.8 s, and 43 arrivals
	// were rightly late; another held MariaDB's for 210 ms, leaving 2
	// unserved at the end. Then the stall is in the service times too.
	// Or unless the host held tierbench itself off its cores, which its
	// own wake-ups show: one whose pacer woke 51 ms late at p99 (it keeps
	// under 1 ms on a quiet one) left the step's last arrival unserved.
	const stalled = 100 // ms: TPC-C transactions here take a few
	const starved = 10  // ms of the schedule's jitter at p99
	var slowest float64
	for _, svc := range s.TxnService {
		slowest = max(slowest, svc.MaxMs)
	}
	// And the arrivals due just before the end are missed whenever their
	// VU's timer wakes after the end, by however little (a step here
	// missed one with the jitter's p99 at 3.1 ms; a loaded CI host's,
	// two, with it at 9 ms): none late, and no more unserved than arrive
	// in the schedule's longest wake-up delay (plus the one due at the
	// edge), all of them queued for under a second, is no stall.
	atEnd := math.Ceil(rate/60*s.ScheduleJitter.MaxMs/1000) + 1
	endOnly := s.Late == 0 && s.Unserved > 0 && float64(s.Unserved) <= atEnd
	if (s.Late != 0 || s.Unserved != 0) && !endOnly && slowest < stalled && s.ScheduleJitter.P99Ms < starved {
		t.Errorf("late %d, unserved %d below capacity, the slowest service time %.1f ms, the schedule's jitter p99 %.1f ms; want none",
			s.Late, s.Unserved, slowest, s.ScheduleJitter.P99Ms)
	} else if s.Late != 0 || s.Unserved != 0 {
		t.Logf("the server stalled or the client starved (slowest service time %.1f ms, schedule jitter p99 %.1f ms): %d late, %d unserved",
			slowest, s.ScheduleJitter.P99Ms, s.Late, s.Unserved)
	}
	// Where the server stalled, the arrivals it left unserved or in
	// flight at the end are missing from the count as well, and those a
	// stall in the ramp-up left waiting are served in the interval (a CI
	// run's MariaDB step counted 3.6% over the rate): the most that waited
	// at once bounds both. A stall in the ramp-up alone shows in the
	// interval only as arrivals that waited (a loaded host's MariaDB step
	// here counted 8% over, its New-Order p99 575 ms against 19 ms of
	// service): so the longest latency, measured from the intended start,
	// tells too.
	var waited float64
	for _, lat := range s.Txn {
		waited = max(waited, lat.MaxMs)
	}
	// Without a stall no arrival waits longer than for one VU to come
	// free and then its own service, plus its VU's wake-up and 50 ms for
	// a busy host: tierbench's own pause at the interval's start, while
	// it reads the database's counters (150 ms and more on MariaDB), is
	// not the server's and must not show as a wait.
	if bound := 2*slowest + s.ScheduleJitter.MaxMs + 50; waited > bound && slowest < stalled && s.ScheduleJitter.P99Ms < starved {
		t.Errorf("an arrival waited %.1f ms from its intended start to its end, with the slowest service %.1f ms and the schedule's latest wake-up %.1f ms: want at most %.1f",
			waited, slowest, s.ScheduleJitter.MaxMs, bound)
	}
	// A host that starved tierbench leaves arrivals unserved at the end
	// the same way (a CI run's: 29 of 300, its wake-ups 19.7 ms late at
	// p99, none late by a second).
	tolerance := 0.02 * rate
	if slowest >= stalled || waited >= stalled || s.ScheduleJitter.P99Ms >= starved {
		tolerance += float64(s.Unserved+int64(s.VUs)+s.MaxQueue) * 60 / s.Seconds
	}
	for name, got := range map[string]int64{"tpm": s.TPM, "client_tpm": s.ClientTPM} {
		if math.Abs(float64(got)-rate) > tolerance {
			t.Errorf("%s %d is not within %.0f of the offered %g", name, got, tolerance, rate)
		}
	}
	// Of the unserved, those queued for less than --late-after (1 s) at
	// the end: all of them, when only the last arrivals were missed.
	if s.WaitingAtEnd < 0 || s.WaitingAtEnd > s.Unserved || (endOnly && s.WaitingAtEnd != s.Unserved) {
		t.Errorf("%d waiting at the end, %d unserved; want 0 to %d, and all of them when only the last arrivals were missed", s.WaitingAtEnd, s.Unserved, s.Unserved)
	}
	// At most one a VU was still running when the interval ended.
	if s.InFlight < 0 || s.InFlight > int64(s.VUs) {
		t.Errorf("%d in flight at the end with %d VUs; want 0 to %d", s.InFlight, s.VUs, s.VUs)
	}
	if want := rate * s.Seconds / 60; math.Abs(float64(s.Arrivals)-want) > 1.5 {
		t.Errorf("%d arrivals in %.3f s at %g a minute; want %.1f", s.Arrivals, s.Seconds, rate, want)
	}
	for k, lat := range s.Txn {
		svc := s.TxnService[k]
		if lat.Count == 0 || svc.Count != lat.Count || lat.P50Ms < svc.P50Ms || lat.MaxMs < svc.MaxMs {
			t.Errorf("%s: latency %+v against service %+v; want the same count, and latency at least service", k, lat, svc)
		}
	}
	// A VU that never waited for an arrival measured no wake-up: so it is
	// when the server stalled from the interval's start, and every arrival
	// found its VUs behind.
	if s.ScheduleJitter.Count == 0 && s.Late+s.Unserved == 0 {
		t.Errorf("no wake-up measured for the schedule's jitter: %+v", s.ScheduleJitter)
	}
	t.Logf("offered %g: tpm %d, client %d, arrivals %d, New-Order p99 %.2f ms (service %.2f), schedule jitter p99 %.3f ms",
		rate, s.TPM, s.ClientTPM, s.Arrivals, s.Txn["new_order"].P99Ms, s.TxnService["new_order"].P99Ms, s.ScheduleJitter.P99Ms)
}

// checkDBTicks checks the database's per-second TPM through the measured
// interval of a one-step run at a held rate: none below a quarter or above
// 1.6 times the step's. PostgreSQL publishes each backend's commits a
// second or so late; the start edge has every backend publish at once, and
// a tick that compared a reading from before the edge with one right after
// it showed up to twice the rate, the next none. A server that stalled
// leaves seconds of none rightly: then this only logs.
func checkDBTicks(t *testing.T, dir string, res *experiment.TPCCResult) {
	t.Helper()
	ticks := stepSeries(t, dir, res.RunID, "tpm")["tpm"]
	s := res.Steps[0]
	var slowest float64
	for _, svc := range s.OpenLoop.TxnService {
		slowest = max(slowest, svc.MaxMs)
	}
	var seen []string
	bad := false
	for _, p := range ticks {
		if p.T.Before(s.MeasureStart) || p.T.After(s.MeasureEnd) {
			continue
		}
		seen = append(seen, fmt.Sprintf("%.0f", p.Value))
		bad = bad || p.Value < 0.25*float64(s.TPM) || p.Value > 1.6*float64(s.TPM)
	}
	switch {
	case len(seen) < 3:
		t.Errorf("%d ticks in the measured interval: %v", len(seen), seen)
	case bad && slowest < 100:
		t.Errorf("the database's TPM a second through the interval: %v; the step's is %d", seen, s.TPM)
	case bad:
		t.Logf("the server stalled (slowest transaction %.0f ms): TPM a second %v", slowest, seen)
	}
}

// A rate well below capacity on PostgreSQL is held (MariaDB's is in
// TestRunTPCCMariaDB, on its database).
func TestRunTPCCRate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := tpcctest.Database(t, 1)
	noAutovacuum(t, ctx, dsn)
	const rate = 3000
	dir := t.TempDir()
	res, err := runTPCC(t, ctx, dir, experiment.TPCCConfig{DSN: dsn, Mode: engine.ModeRoutines, VUs: []int{4},
		Rates: []float64{rate}, Arrival: driver.ArrivalConstant, LateAfter: time.Second, RampUp: time.Second, Duration: 6 * time.Second})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkHeldRate(t, res, rate)
	checkDBTicks(t, dir, res)
	// The report lists the step among the open-loop ones, with its rate.
	w := writeReport(t, dir, report.Options{Runs: []string{res.RunID}, Out: filepath.Join(dir, "report.html")})
	html, err := os.ReadFile(w.HTML)
	if err != nil {
		t.Fatal(err)
	}
	table := regexp.MustCompile(`(?s)<table[^>]*id="tpcc-open-loop".*?</table>`).FindString(string(html))
	if !strings.Contains(table, `<td class="num">3,000</td>`) || !strings.Contains(table, "constant") {
		t.Errorf("the report's open-loop table lacks the step at 3,000 TPM, constant:\n%s", table)
	}
	// TPC-C's response-time rule, judged on the latency from the intended
	// start: far below the limits at this rate.
	rt := regexp.MustCompile(`(?s)<table[^>]*id="tpcc-response-time".*?</table>`).FindString(string(html))
	if !strings.Contains(rt, "3,000 TPM offered") || strings.Contains(rt, "FAIL") || !strings.Contains(rt, "limit 20 s") {
		t.Errorf("the report's response-time table lacks the step, or fails it:\n%s", rt)
	}
	for _, c := range res.Steps[0].ResponseTime {
		if c.Verdict != "pass" || c.P90Ms != 0 && c.P90Ms > res.Steps[0].Txn[c.Type].P99Ms+0.01 {
			t.Errorf("%s: %+v", c.Type, c)
		}
	}
}

// Coordinated omission: the database's backends stopped (SIGSTOP) for 2 s
// in a constant-rate step put the stall into the New-Order p99 measured
// from the intended starts (at least 1.5 s) while the service time's p99
// stays far below it, and count the stalled arrivals as late. The same
// stall in a closed loop leaves its p99 near the service time, though its
// longest transaction shows the stall happened.
func TestRunTPCCRateStall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := tpcctest.Database(t, 1)
	noAutovacuum(t, ctx, dsn)
	const stall = 2 * time.Second
	// run runs cfg with the stall in it, again while the stall did not
	// lie in the measured interval: it starts at the interval's second
	// second, as the run's own ticks tell (a fixed delay from the test's
	// start once fell into a slow set-up's ramp-up), but on a loaded host
	// the stall itself can start seconds late, or after the step (a CI
	// run's closed-loop step saw no stall at all).
	run := func(cfg experiment.TPCCConfig) (doc rateDoc) {
		t.Helper()
		for try := 1; ; try++ {
			cfg.DSN, cfg.Mode, cfg.RampUp = dsn, engine.ModeRoutines, time.Second
			cfg.Record.Results = t.TempDir()
			cfg.Repeat, cfg.Record.Telemetry = 1, experiment.DefaultTelemetry
			res, from, to := runStalled(t, ctx, cfg, time.Second, stall)
			doc = rateDoc{}
			out := asDoc(t, res, &doc)
			if doc.Status != "complete" || len(doc.Steps) != 1 {
				t.Fatalf("run: %s", out)
			}
			s := doc.Steps[0]
			if !from.IsZero() && !from.Before(s.MeasureStart) && !to.After(s.MeasureEnd) {
				return doc
			}
			t.Logf("try %d: the stall (%s to %s) was not within the measured interval (%s to %s)", try,
				from.Format("15:04:05.000"), to.Format("15:04:05.000"), s.MeasureStart.Format("15:04:05.000"), s.MeasureEnd.Format("15:04:05.000"))
			if try == 3 {
				t.Fatal("three tries and no stall within the measured interval")
			}
		}
	}

	const rate = 12000 // 200 a second
	open := run(experiment.TPCCConfig{VUs: []int{4}, Rates: []float64{rate}, Arrival: driver.ArrivalConstant,
		LateAfter: 100 * time.Millisecond, RampUp: time.Second, Duration: 8 * time.Second}).Steps[0]
	no, svc := open.Txn["new_order"], open.TxnService["new_order"]
	if no.P99Ms < 1500 {
		t.Errorf("open loop: New-Order p99 %.1f ms from the intended starts across a %s stall; want at least 1,500", no.P99Ms, stall)
	}
	if svc.P99Ms > no.P99Ms/3 {
		t.Errorf("open loop: New-Order service p99 %.1f ms; want far below the latency's %.1f", svc.P99Ms, no.P99Ms)
	}
	stalled := int64(rate / 60 * stall.Seconds())
	if open.Late < stalled*3/4 || open.MaxQueue < stalled*3/4 {
		t.Errorf("open loop: %d late, a queue of %d at most; want at least %d of the %d arrivals in the stall", open.Late, open.MaxQueue, stalled*3/4, stalled)
	}
	t.Logf("open loop: New-Order p99 %.1f ms, service p99 %.1f ms, %d late, queue %d, %d unserved", no.P99Ms, svc.P99Ms, open.Late, open.MaxQueue, open.Unserved)

	// The stall holds the 4 transactions in flight, whatever their types:
	// the longest of any type shows it (New-Order's alone missed it when
	// none of the 4 was a New-Order). A loaded CI host once showed a
	// closed-loop step whose stall lay within its interval and in no
	// transaction's time (max 136 ms; not understood yet): such a step is
	// run again, up to three in all.
	var cno metrics.Summary
	var longest float64
	for try := 1; try <= 3; try++ {
		closed := run(experiment.TPCCConfig{VUs: []int{4}, RampUp: time.Second, Duration: 6 * time.Second}).Steps[0]
		cno, longest = closed.Txn["new_order"], 0
		for _, x := range closed.Txn {
			longest = max(longest, x.MaxMs)
		}
		if longest >= 1500 {
			break
		}
		t.Logf("closed loop, try %d: the longest transaction %.1f ms; the stall reached none", try, longest)
	}
	if longest < 1500 || cno.P99Ms > 1000 {
		t.Errorf("closed loop: New-Order p99 %.1f ms, the longest transaction %.1f ms; want the stall in the longest (1,500 or more) and not in the p99 (under 1,000)",
			cno.P99Ms, longest)
	}
	t.Logf("closed loop: New-Order p99 %.1f ms, the longest transaction %.1f ms", cno.P99Ms, longest)
}

// A stall that the measured interval's end cuts through: no latency
// records the transactions it holds, since they end after the interval, so
// the step gives the age of the oldest one still running at the end
// (oldest_in_flight_ms), and the report names the step. The closed loop is
// where this matters most: its VUs offer nothing while held, so nothing
// else shows the stall.
func TestRunTPCCStallAtEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := tpcctest.Database(t, 1)
	noAutovacuum(t, ctx, dsn)
	const stall = 3 * time.Second
	dir := t.TempDir()
	for try := 1; ; try++ {
		cfg := experiment.TPCCConfig{DSN: dsn, Mode: engine.ModeRoutines, VUs: []int{2}, RampUp: time.Second, Duration: 3 * time.Second,
			Repeat: 1, Record: experiment.Record{Results: dir, Telemetry: experiment.DefaultTelemetry}}
		res, from, to := runStalled(t, ctx, cfg, 500*time.Millisecond, stall)
		s := res.Steps[0]
		// The stall is to hold the VUs over a second before the end, so
		// that the step is called out, and to last past it.
		if from.IsZero() || !from.Before(s.MeasureEnd.Add(-1200*time.Millisecond)) || !to.After(s.MeasureEnd) {
			t.Logf("try %d: the stall (%s to %s) did not span the interval's last 1.2 s (its end %s)", try,
				from.Format("15:04:05.000"), to.Format("15:04:05.000"), s.MeasureEnd.Format("15:04:05.000"))
			if try == 3 {
				t.Fatal("three tries and no stall across the interval's last 1.2 s")
			}
			continue
		}
		// Every VU was held from the stall's start, give or take the few
		// milliseconds a transaction takes here.
		held := s.MeasureEnd.Sub(from)
		got := time.Duration(s.OldestInFlightMs * float64(time.Millisecond))
		if got < held-200*time.Millisecond || got > held+time.Second {
			t.Errorf("oldest in flight at the end %v; want about %v, from the stall's start to the end", got, held)
		}
		if s.Stalled() != got {
			t.Errorf("Stalled() %v; want %v", s.Stalled(), got)
		}
		w := writeReport(t, dir, report.Options{Runs: []string{res.RunID}, Out: filepath.Join(dir, "report.html")})
		html, err := os.ReadFile(w.HTML)
		if err != nil {
			t.Fatal(err)
		}
		if want := "step of 2 VUs: a transaction was still running when the measured interval ended"; !strings.Contains(string(html), want) {
			t.Errorf("the report does not say %q", want)
		}
		t.Logf("held %v at the end; oldest in flight %v", held, got)
		return
	}
}

// runStalled runs cfg with the backends of its database stopped for stall
// from the first tick at least at into the measured interval, and returns
// the run and when the stall began and ended (zero if it never began).
func runStalled(t *testing.T, ctx context.Context, cfg experiment.TPCCConfig, at, stall time.Duration) (res *experiment.TPCCResult, from, to time.Time) {
	t.Helper()
	var wg sync.WaitGroup
	obs := &stallAt{at: at, stall: func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			from, to = tpcctest.StallBackends(t, ctx, cfg.DSN, stall)
		}()
	}}
	res, err := experiment.RunTPCC(ctx, cfg, obs)
	wg.Wait()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res, from, to
}

// stallAt calls stall once, at the first tick at least at into a step's
// measured interval.
type stallAt struct {
	experiment.Nop
	at    time.Duration
	stall func()
	once  sync.Once
}

func (s *stallAt) Tick(x experiment.Tick) {
	if x.TPCC != nil && x.TPCC.Phase == "measure" && x.TPCC.Elapsed >= s.at {
		s.once.Do(s.stall)
	}
}

// A sweep given as fractions first measures the pool's maximum in a
// closed-loop step and says so; each fraction of it is a step; and the
// knee is the lower rate, since at five times the maximum the pool serves
// about a fifth of what arrives. (At twice it, a CI host whose other tests
// held the probe to half of what the pool later served saw both rates
// held. At five times, one held the probe to under a fifth: the pool then
// served the higher rate, and it failed on New-Order's p99 instead, which
// is as much a knee.)
func TestRunTPCCRateFractions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := tpcctest.Database(t, 1)
	noAutovacuum(t, ctx, dsn)
	cfg := experiment.NewTPCCConfig()
	cfg.DSN, cfg.VUs, cfg.RateFractions, cfg.Probe, cfg.RampUp, cfg.Duration = dsn, []int{4}, []float64{30, 500}, 3*time.Second, time.Second, 4*time.Second
	dir := t.TempDir()
	res, err := runTPCC(t, ctx, dir, cfg)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	p := res.RateProbe
	if p == nil || p.VUs != 4 || p.ClientTPM <= 0 || len(p.Rates) != 2 || p.Seconds < 2.9 {
		t.Fatalf("the probe: %+v; want 4 VUs' maximum over 3 s and two rates", p)
	}
	for i, f := range []float64{0.3, 5} {
		if want := math.Round(f * float64(p.ClientTPM)); p.Rates[i] != want || res.Steps[i].OfferedTPM != want {
			t.Errorf("step %d: rate %g, offered %g; want %g%% of %d = %g", i, p.Rates[i], res.Steps[i].OfferedTPM, f*100, p.ClientTPM, want)
		}
	}
	k := res.Knee
	if k == nil || k.OfferedTPM != p.Rates[0] || k.NextTPM != p.Rates[1] ||
		!strings.Contains(k.Why, "were served") && !strings.Contains(k.Why, "over the") {
		t.Errorf("the knee: %+v; want it at %g, with %g served short or over the p99 bound", k, p.Rates[0], p.Rates[1])
	} else if !strings.Contains(k.Why, "were served") {
		t.Logf("the probe found %d TPM, and the pool served five times that: %s", p.ClientTPM, k.Why)
	}
	doc, _ := json.Marshal(res)
	for _, key := range []string{`"rate_probe":{"vus":4`, `"knee":{"offered_tpm":`, `"fractions_pct":[30,500]`} {
		if !strings.Contains(string(doc), key) {
			t.Errorf("the run's document lacks %s:\n%s", key, doc)
		}
	}
	// The report finds the same knee in the stored steps.
	w := writeReport(t, dir, report.Options{Runs: []string{res.RunID}, Out: filepath.Join(dir, "report.html")})
	html, err := os.ReadFile(w.HTML)
	if err != nil {
		t.Fatal(err)
	}
	if want := "the knee is at " + units.Thousands(int64(p.Rates[0])) + " TPM offered"; !strings.Contains(string(html), want) {
		t.Errorf("the report does not say %q; it says %q; the run's knee: %s; its steps' documents:\n%s",
			want, regexp.MustCompile(`[^.>]*: (the knee is at|no knee)[^<]*`).FindAllString(string(html), -1), k.Text(), doc)
	}
	// and draws latency against the rate served, the knee labelled.
	svg, err := os.ReadFile(filepath.Join(dir, "report-data", "figure-tpcc-open-loop-latency.svg"))
	if err != nil || !strings.Contains(string(svg), "p99 from the intended start") || !strings.Contains(string(svg), ">knee<") {
		t.Errorf("the latency-against-rate chart: %v\n%.600s", err, svg)
	}
}

// Fractions without room to find the maximum they are of, out of range,
// beside rates, a negative knee bound and one without rates are refused
// before anything runs.
func TestRateFractionRules(t *testing.T) {
	cfg := experiment.NewTPCCConfig()
	cfg.DSN, cfg.VUs, cfg.RateFractions = "postgres://localhost/x", []int{4}, []float64{30, 200}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a valid sweep: %v", err)
	}
	for _, c := range []struct {
		mut  func(*experiment.TPCCConfig)
		want string
	}{
		{func(c *experiment.TPCCConfig) { c.Probe = 0 }, "probe 0s leaves no room to find the maximum that rate 30%,200% is a fraction of: a closed-loop step of probe measures it first; give 1s or more (10s by default)"},
		{func(c *experiment.TPCCConfig) { c.RateFractions = []float64{0} }, `rate "0%" is out of range`},
		{func(c *experiment.TPCCConfig) { c.Rates = []float64{1000} }, "rate has both rates and fractions"},
		{func(c *experiment.TPCCConfig) { c.KneeP99 = -time.Millisecond }, "knee_p99 -1ms is negative"},
		{func(c *experiment.TPCCConfig) { c.RateFractions, c.KneeP99 = nil, 50*time.Millisecond },
			"knee_p99 50ms bounds the knee of rates, and no rate is given; give rate too, or leave knee_p99 out"},
	} {
		bad := cfg
		c.mut(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v; want %q", err, c.want)
		}
	}
}
