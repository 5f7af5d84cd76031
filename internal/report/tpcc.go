package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/report/chart"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// metric is one number of a TPC-C step, drawn as a series per run.
type metric struct {
	name   string
	dashed bool
	get    func(tpccStep) float64
	// stat names the figure in the step's Stats (stored.GroupTPCC) whose 95%
	// interval is drawn as an error bar; "" for none (a derived figure).
	stat string
}

// vusSeries builds the series of a by-virtual-users chart. With one run,
// metrics get the colours; with several, runs do, each named by name, and a
// second metric is dashed. Steps without the number are left out.
func vusSeries(runs []*runData, ms []metric, name func(*runData) string) []chart.Series {
	var out []chart.Series
	for _, rd := range runs {
		for mi, m := range ms {
			s := chart.Series{Name: name(rd), Color: rd.Color, Dashed: m.dashed}
			if len(ms) > 1 {
				s.Name += " " + m.name
			}
			if len(runs) == 1 {
				s.Name, s.Color, s.Dashed = m.name, mi, false
			}
			for _, st := range rd.TPCC {
				if y := m.get(st); !math.IsNaN(y) {
					pt := chart.Point{X: float64(st.VUs), Y: y}
					if ci, ok := st.Stats[m.stat]; ok && m.stat != "" && ci.HasCI() {
						pt.Low, pt.High = ci.Low, ci.High
					}
					s.Points = append(s.Points, pt)
				}
			}
			if len(s.Points) > 0 {
				out = append(out, s)
			}
		}
	}
	return out
}

// deviceAwait is the step's device wait per I/O, reads and writes together.
func deviceAwait(dev map[string]float64) float64 {
	r, w := get(dev, "r_iops"), get(dev, "w_iops")
	if math.IsNaN(r) || r+w == 0 {
		return math.NaN()
	}
	return (get(dev, "r_await_ms")*r + get(dev, "w_await_ms")*w) / (r + w)
}

// tpccSection is the TPC-C part: throughput, per-user, CPU and latency by
// virtual users, the per-second timeline, percentiles per transaction type,
// the input audit and the consistency checks.
func tpccSection(runs []*runData) *Section {
	s := &Section{ID: "tpcc", Title: "TPC-C"}
	s.text("TPM is the database's commits and rollbacks per minute (comparable with HammerDB's TPM); NOPM is New-Orders per minute from the growth of sum(d_next_o_id). " +
		"Every number is taken over each step's measured interval; ramp-up is excluded.")
	for _, rd := range runs {
		// Instances side by side are summed up in their own section, a
		// sentence per tier rather than one per instance and repetition.
		if len(rd.TPCC) > 0 && rd.Place.Role == "" {
			s.finding(peakSentence(rd))
		}
	}
	vus := func(title, ylabel string, ms []metric) *Figure {
		return &Figure{ID: slug("tpcc", title), Chart: chart.Chart{Title: title, XLabel: "virtual users", YLabel: ylabel,
			Kind: chart.Line, YFromZero: true, XInteger: true, Series: vusSeries(runs, ms, (*runData).legend)}}
	}
	s.figure(vus("TPM and NOPM by virtual users", "transactions per minute", []metric{
		{"TPM", false, func(x tpccStep) float64 { return x.tpm() }, "tpm"},
		{"NOPM", true, func(x tpccStep) float64 { return x.nopm() }, "nopm"},
	}))
	s.figure(vus("TPM per virtual user", "TPM per user", []metric{
		{"TPM per user", false, func(x tpccStep) float64 { return x.tpm() / float64(max(x.VUs, 1)) }, ""},
	}))
	s.figure(vus("CPU idle and iowait by virtual users", "% of all cores", []metric{
		{"idle", false, func(x tpccStep) float64 { return get(x.Host, "cpu_idle_pct") }, "host.cpu_idle_pct"},
		{"iowait", true, func(x tpccStep) float64 { return get(x.Host, "cpu_iowait_pct") }, "host.cpu_iowait_pct"},
	}))
	s.figure(vus("New-Order latency by virtual users", "latency (ms)", []metric{
		{"average", false, func(x tpccStep) float64 {
			return txnStat(x, "new_order", func(m metrics.Summary) float64 { return m.MeanMs })
		}, "new_order.mean_ms"},
		{"p99", true, func(x tpccStep) float64 {
			return txnStat(x, "new_order", func(m metrics.Summary) float64 { return m.P99Ms })
		}, "new_order.p99_ms"},
	}))
	s.figure(vus("Device latency by virtual users", "latency (ms)", []metric{
		{"average (await)", false, func(x tpccStep) float64 { return deviceAwait(x.Device) }, ""},
		{"p99", true, func(x tpccStep) float64 { return get(x.Device, "p99_ms") }, "device.p99_ms"},
	}))
	if f := vus("I/O latency the database saw, by virtual users", "latency (ms)", []metric{
		{"data block read", false, func(x tpccStep) float64 { return get(x.DB, "read_latency_ms") }, "db.read_latency_ms"},
		{"WAL sync", true, func(x tpccStep) float64 { return get(x.DB, "wal_sync_latency_ms") }, "db.wal_sync_latency_ms"},
	}); !f.Chart.Empty() {
		s.text("The database's own I/O times, where its engine times its I/O, count every wait of a data block read or a WAL sync, " +
			"including the block-I/O throttle of an emulated tier, which holds requests before they reach the device's queue and so never shows in device await.")
		s.figure(f)
	}
	s.figure(vus("Device IOPS by virtual users", "I/O per second", []metric{
		{"reads", false, func(x tpccStep) float64 { return get(x.Device, "r_iops") }, "device.r_iops"},
		{"writes", true, func(x tpccStep) float64 { return get(x.Device, "w_iops") }, "device.w_iops"},
	}))
	s.figure(timeline(runs, "tpcc-timeline", "TPM and NOPM per second, with step boundaries", "transactions per minute",
		[]seriesRef{{"tpm", "TPM", false}, {"nopm", "NOPM", true}}, results.AllSteps))
	s.table(tpccStepsTable(runs))
	for _, f := range stallSentences(runs) {
		s.finding(f)
	}
	if t := openLoopTable(runs); t != nil {
		s.text("Open-loop steps (tpcc run --rate) offered transactions at a fixed rate to a pool of VUs. Their latency is measured " +
			"from each transaction's intended start, so time queued behind a slow or stalled server counts; the service time, from " +
			"when it was sent, is beside it. Late arrivals waited for a VU longer than --late-after; unserved ones were due and never began.")
		s.table(t)
		s.figure(openLoopFigure(runs))
		for _, rd := range runs {
			if k := runKnee(rd); k != nil {
				s.finding(kneeSentence(rd.Label, k))
			}
		}
	}
	if t := noisyTable(runs); t != nil {
		s.text(noisyText)
		s.table(t)
	}
	s.figure(txnPercentileFigure(runs))
	s.table(txnPercentileTable(runs))
	// Instances that ran side by side are compared with their own baselines
	// in the neighbours section, not each with the first run here.
	var apart []*runData
	for _, rd := range runs {
		if rd.Place.Role == "" {
			apart = append(apart, rd)
		}
	}
	if len(apart) > 1 {
		s.Blocks = append(s.Blocks, tpccComparison(apart)...)
	}
	if len(runs) > 1 {
		s.Blocks = append(s.Blocks, memoryComparison(runs)...)
	}
	s.table(auditTable(runs))
	if t := responseTimeTable(runs); t != nil {
		s.table(t)
	}
	for _, rd := range runs {
		if rd.Check != nil {
			s.finding(checkSentence(rd))
		}
	}
	s.table(checkTable(runs))
	return s
}

// peakSentence says where a run's NOPM peaked and, when it ran more
// virtual users than that, what its largest step kept of the peak: e.g.
// "nvme: NOPM peaked at 52,800 with 4 virtual users; its largest step, 8
// virtual users, fell to 48,000, 0.91x (95% CI 0.88–0.94: lower)."
func peakSentence(rd *runData) string {
	peak := rd.TPCC[0]
	for _, x := range rd.TPCC[1:] {
		if x.NOPM > peak.NOPM {
			peak = x
		}
	}
	users := func(x tpccStep) string { return plural(x.VUs, "virtual user", "virtual users") }
	// An open loop's steps differ in the rate offered, not in VUs.
	open := peak.OpenLoop != nil
	with := func(x tpccStep) string {
		if open {
			return fmt.Sprintf("at %s TPM offered (a pool of %s)", num(offeredTPM(x)), plural(x.VUs, "VU", "VUs"))
		}
		return "with " + users(x)
	}
	if len(rd.TPCC) == 1 {
		return fmt.Sprintf("%s: %s NOPM %s, its only step.", rd.Label, num(peak.nopm()), with(peak))
	}
	s := fmt.Sprintf("%s: NOPM peaked at %s %s", rd.Label, num(peak.nopm()), with(peak))
	last, _ := lastStep(rd)
	larger, what := last.VUs > peak.VUs, "its largest step, "+users(last)
	if open {
		last = slices.MaxFunc(rd.TPCC, func(a, b tpccStep) int { return cmp.Compare(offeredTPM(a), offeredTPM(b)) })
		larger, what = offeredTPM(last) > offeredTPM(peak), "its highest rate, "+num(offeredTPM(last))+" TPM offered"
	}
	if larger {
		s += fmt.Sprintf("; %s, fell to %s, %s", what, num(last.nopm()), ratioSentence(compareStat(last, peak, "nopm")))
	}
	return s + "."
}

// offeredTPM is an open-loop step's offered rate; 0 in a closed loop.
func offeredTPM(x tpccStep) float64 {
	if x.OpenLoop == nil {
		return 0
	}
	return x.OpenLoop.OfferedTPM
}

// checkSentence is the verdict of the consistency check after a run: every
// applicable condition of clause 3.3.2 held, or which did not (and which
// tables' row counts were off).
func checkSentence(rd *runData) string {
	applicable := 0
	var violated, off []string
	for _, c := range rd.Check.Conditions {
		switch conditionResult(c) {
		case conditionNA:
			continue
		case conditionFailed:
			violated = append(violated, c.ID)
		}
		applicable++
	}
	for _, c := range rd.Check.Cardinalities {
		if !c.OK {
			off = append(off, c.Table)
		}
	}
	if len(violated) == 0 && len(off) == 0 {
		all := fmt.Sprintf("all %d applicable conditions", applicable)
		if applicable == 1 {
			all = "its one applicable condition"
		}
		return fmt.Sprintf("%s: the consistency check after the run passed: %s of clause 3.3.2 held.", rd.Label, all)
	}
	var what []string
	if len(violated) > 0 {
		what = append(what, fmt.Sprintf("%d of %d applicable conditions violated (%s)", len(violated), applicable, strings.Join(violated, ", ")))
	}
	if len(off) > 0 {
		what = append(what, "row counts off in "+joinAnd(off))
	}
	return fmt.Sprintf("%s: the consistency check after the run FAILED: %s.", rd.Label, strings.Join(what, "; "))
}

// txnStat returns a number of a transaction type's latency summary, NaN
// when the step has no such transaction.
func txnStat(s tpccStep, kind string, f func(metrics.Summary) float64) float64 {
	t, ok := s.Txn[kind]
	if !ok || t.Count == 0 {
		return math.NaN()
	}
	return f(t)
}

func tpccStepsTable(runs []*runData) *Table {
	t := &Table{ID: "tpcc-steps", Caption: "Steps: throughput, New-Order latency and what the host and device did",
		Header: []string{"run", "VUs", "TPM", "NOPM", "client TPM", "client NOPM", "TPM per VU", "NO avg ms", "NO p95 ms", "NO p99 ms",
			"errors", "CPU idle", "CPU iowait", "device IOPS", "device MB/s", "device await ms", "device p99 ms", "DB read ms", "WAL sync ms", "cache hit"},
		Numeric: []bool{false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true}}
	for _, rd := range runs {
		for _, x := range rd.TPCC {
			no := x.Txn["new_order"]
			t.Rows = append(t.Rows, []string{rd.Label, strconv.Itoa(x.VUs), num(x.tpm()), num(x.nopm()), num(float64(x.ClientTPM)), num(float64(x.ClientNOPM)),
				num(x.tpm() / float64(max(x.VUs, 1))), num(no.MeanMs), num(no.P95Ms), num(no.P99Ms), thousands(x.Errors),
				pct(get(x.Host, "cpu_idle_pct")), pct(get(x.Host, "cpu_iowait_pct")),
				num(get(x.Device, "r_iops") + get(x.Device, "w_iops")), num(get(x.Device, "r_mbps") + get(x.Device, "w_mbps")),
				num(deviceAwait(x.Device)), num(get(x.Device, "p99_ms")), num(get(x.DB, "read_latency_ms")), num(get(x.DB, "wal_sync_latency_ms")),
				pct(get(x.DB, "cache_hit_pct"))})
		}
	}
	return t
}

// stallSentences name each step that ended with a transaction held for
// stored.StallAfter or longer: no latency records it, so only this shows
// that the server held a VU (in a closed loop, the coordinated omission
// its percentiles cannot show); and each whose database counters were
// reset, or whose server was lost before its end.
func stallSentences(runs []*runData) []string {
	var out []string
	for _, rd := range runs {
		for _, x := range rd.TPCC {
			if d := x.Stalled(); d > 0 {
				out = append(out, fmt.Sprintf("Run %s, step of %s: a transaction was still running when the measured interval ended, "+
					"%.1f s after it was sent. The server held its VU; no latency records that transaction, and in a closed loop "+
					"the VU offered nothing else meanwhile.", rd.Label, x.name(), d.Seconds()))
			}
			if n := x.CountersReset; n > 0 {
				out = append(out, fmt.Sprintf("Run %s, step of %s: %s.", rd.Label, x.name(), stored.ResetsText(n)))
			}
			if x.ServerLost {
				out = append(out, fmt.Sprintf("Run %s, step of %s: %s.", rd.Label, x.name(), stored.LostText))
			}
		}
	}
	return out
}

// name is how a sentence names the step: "4 VUs", or "4 VUs at 12,000
// TPM offered".
func (x *tpccStep) name() string {
	step := plural(x.VUs, "VU", "VUs")
	if x.OpenLoop != nil {
		step += " at " + thousands(int64(x.OfferedTPM)) + " TPM offered"
	}
	return step
}

// cutShort is what the finding of a run that stopped early adds for the
// step Ctrl-C or the server's loss cut short, if one was kept: ", and the
// first 2.4 s of its step of 4 VUs, which Ctrl-C cut short".
func cutShort(rd *runData) string {
	for i := range rd.TPCC {
		if x := &rd.TPCC[i]; x.Interrupted {
			return fmt.Sprintf(", and the first %.1f s of its step of %s, which %s cut short", x.Seconds, x.name(), x.CutBy())
		}
	}
	return ""
}

// openLoopTable lists the open-loop steps, or is nil when there are none.
func openLoopTable(runs []*runData) *Table {
	t := &Table{ID: "tpcc-open-loop", Caption: "Open-loop steps: offered and measured rate, New-Order latency from the intended start and service time, late and unserved arrivals",
		Header:  []string{"run", "offered TPM", "arrival", "VUs", "TPM", "client TPM", "NO p99 ms", "NO service p99 ms", "late", "unserved", "max queue", "schedule jitter p99 ms"},
		Numeric: []bool{false, true, false, true, true, true, true, true, true, true, true, true}}
	for _, rd := range runs {
		for _, x := range rd.TPCC {
			o := x.OpenLoop
			if o == nil {
				continue
			}
			jitter := "–" // no VU waited: every arrival was due when claimed
			if o.ScheduleJitter.Count > 0 {
				jitter = num(o.ScheduleJitter.P99Ms)
			}
			t.Rows = append(t.Rows, []string{rd.Label, num(o.OfferedTPM), o.Arrival, strconv.Itoa(x.VUs), num(x.tpm()), num(float64(x.ClientTPM)),
				num(x.Txn["new_order"].P99Ms), num(o.TxnService["new_order"].P99Ms), thousands(o.Late), thousands(o.Unserved),
				thousands(o.MaxQueue), jitter})
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// openLoopFigure draws each run's open-loop steps as New-Order latency
// against the rate it served: the p99 from the intended start (solid) and
// the service time's p99 (dashed), a knee labelled where the run had one.
// Nil without open-loop steps.
func openLoopFigure(runs []*runData) *Figure {
	c := chart.Chart{Title: "New-Order p99 against the rate served (open loop)", XLabel: "transactions a minute served (client)",
		YLabel: "New-Order p99 (ms)", Kind: chart.Line, YFromZero: true}
	no := tpcc.NewOrder.String()
	for _, rd := range runs {
		var steps []tpccStep
		for _, x := range rd.TPCC {
			if x.OpenLoop != nil {
				steps = append(steps, x)
			}
		}
		if len(steps) == 0 {
			continue
		}
		slices.SortFunc(steps, func(a, b tpccStep) int { return cmp.Compare(a.OfferedTPM, b.OfferedTPM) })
		var knee float64
		if k := runKnee(rd); k != nil {
			knee = k.OfferedTPM
		}
		latency := chart.Series{Name: rd.legend() + " p99 from the intended start", Color: rd.Color}
		service := chart.Series{Name: rd.legend() + " service-time p99", Color: rd.Color, Dashed: true}
		for _, x := range steps {
			p := chart.Point{X: float64(x.ClientTPM), Y: x.Txn[no].P99Ms}
			if knee > 0 && x.OfferedTPM == knee {
				p.Label = "knee"
			}
			latency.Points = append(latency.Points, p)
			service.Points = append(service.Points, chart.Point{X: float64(x.ClientTPM), Y: x.TxnService[no].P99Ms})
		}
		c.Series = append(c.Series, latency, service)
	}
	if len(c.Series) == 0 {
		return nil
	}
	return &Figure{ID: "tpcc-open-loop-latency", Chart: c}
}

// runKnee is the knee of a run's rate sweep (its steps, which load grouped
// by rate, bounded as the run was), or nil when it offered fewer than two
// rates.
func runKnee(rd *runData) *stored.Knee {
	var steps []*stored.TPCCStep
	for i := range rd.TPCC {
		if rd.TPCC[i].OpenLoop != nil {
			steps = append(steps, &rd.TPCC[i].TPCCStep)
		}
	}
	if len(steps) < 2 {
		return nil
	}
	var bound string
	if p := rd.Params.TPCC; p != nil {
		bound = p.KneeP99
	}
	return stored.FindKnee(steps, kneeBound(bound))
}

// kneeBound is a run's knee_p99 parameter as a duration: 0, the lowest
// rate's p99 times stored.KneeP99Factor, when the run set none.
func kneeBound(param string) time.Duration {
	d, _ := time.ParseDuration(param)
	return d
}

// kneeSentence says where a run's sweep stopped keeping up, and why.
func kneeSentence(label string, k *stored.Knee) string {
	if k.OfferedTPM == 0 {
		return fmt.Sprintf("%s: no knee, not even the lowest rate kept up; %s.", label, k.Why)
	}
	return fmt.Sprintf("%s: the knee is at %s TPM offered (served within %d%% of the arrivals, New-Order p99 within %s ms); %s.",
		label, thousands(int64(k.OfferedTPM)), stored.KneeFollowPct, num(k.P99BoundMs), k.Why)
}

// lastStep is the run's step with the most virtual users.
func lastStep(rd *runData) (tpccStep, bool) {
	if len(rd.TPCC) == 0 {
		return tpccStep{}, false
	}
	return slices.MaxFunc(rd.TPCC, func(a, b tpccStep) int { return a.VUs - b.VUs }), true
}

// txnPercentileFigure draws latency percentiles per transaction type at each
// run's largest step: p50/p95/p99 for one run, p99 per run for several.
func txnPercentileFigure(runs []*runData) *Figure {
	c := chart.Chart{Title: "Latency percentiles per transaction type, at the largest step", XLabel: "transaction type",
		YLabel: "latency (ms)", Kind: chart.Bar, YFromZero: true, Categories: tpcc.KindNames[:]}
	type pick struct {
		name string
		get  func(s tpccStep, k string) float64
	}
	picks := []pick{{"p99", func(s tpccStep, k string) float64 { return s.Txn[k].P99Ms }}}
	if len(runs) == 1 {
		picks = []pick{
			{"p50", func(s tpccStep, k string) float64 { return s.Txn[k].P50Ms }},
			{"p95", func(s tpccStep, k string) float64 { return s.Txn[k].P95Ms }},
			{"p99", func(s tpccStep, k string) float64 { return s.Txn[k].P99Ms }},
		}
	}
	for _, rd := range runs {
		last, ok := lastStep(rd)
		if !ok {
			continue
		}
		for pi, p := range picks {
			sr := chart.Series{Name: fmt.Sprintf("%s p99 (%s)", rd.legend(), plural(last.VUs, "VU", "VUs")), Color: rd.Color}
			if len(runs) == 1 {
				sr = chart.Series{Name: fmt.Sprintf("%s (%s)", p.name, plural(last.VUs, "VU", "VUs")), Color: pi}
			}
			for i, k := range tpcc.KindNames {
				sr.Points = append(sr.Points, chart.Point{X: float64(i), Y: p.get(last, k)})
			}
			c.Series = append(c.Series, sr)
		}
	}
	return &Figure{ID: "tpcc-txn-percentiles", Chart: c}
}

func txnPercentileTable(runs []*runData) *Table {
	t := &Table{ID: "tpcc-latency", Caption: "Latency per transaction type and step (ms, measured interval only)",
		Header:  []string{"run", "VUs", "transaction", "count", "average", "p50", "p95", "p99", "p99.9", "max"},
		Numeric: []bool{false, true, false, true, true, true, true, true, true, true}}
	for _, rd := range runs {
		for _, x := range rd.TPCC {
			for _, k := range tpcc.KindNames {
				m := x.Txn[k]
				t.Rows = append(t.Rows, []string{rd.Label, strconv.Itoa(x.VUs), k, thousands(m.Count), num(m.MeanMs), num(m.P50Ms),
					num(m.P95Ms), num(m.P99Ms), num(m.P999Ms), num(m.MaxMs)})
			}
		}
	}
	return t
}

// byVUs is a run's TPC-C steps by their virtual-user count.
func byVUs(rd *runData) map[int]tpccStep {
	m := map[int]tpccStep{}
	for _, x := range rd.TPCC {
		m[x.VUs] = x
	}
	return m
}

// tpccComparison is the ratio table of every run against the first, per
// step both ran (a virtual-user count, or in an open loop a pool at an
// offered rate), and a sentence for the largest such count and for the
// highest such rate: at a rate, what a buyer asks is the latency.
func tpccComparison(runs []*runData) []Block {
	base := runs[0]
	if len(base.TPCC) == 0 {
		return nil
	}
	t := &Table{ID: "tpcc-ratios", Caption: fmt.Sprintf("Ratios against the baseline %s (above 1: more throughput, or more latency), "+
		"with their 95%% confidence intervals over the repetitions and a verdict; an open-loop step is compared with the baseline's at the same offered rate, "+
		"its New-Order latency from the intended start, and where both served what arrived their NOPM is the rate's, whatever the storage: %q", base.Label, bothHeld),
		Header: []string{"run", "VUs", "n", "TPM", "NOPM", "TPM ratio", "NOPM ratio", "NOPM verdict", "NO p95 ratio", "NO p95 verdict",
			"CPU iowait ratio", "device await ratio", "DB read ratio", "WAL sync ratio", "NO p99 ratio", "NO p99 verdict"},
		Numeric: []bool{false, true, false, true, true, true, true, false, true, false, true, true, true, true, true, false}}
	var blocks []Block
	b := byKey(base)
	for _, rd := range runs[1:] {
		top, rate := -1, -1.0
		for _, x := range rd.TPCC {
			k := x.Key()
			bx, ok := b[k]
			if !ok {
				continue
			}
			if x.OpenLoop != nil {
				rate = max(rate, x.OfferedTPM)
			} else {
				top = max(top, x.VUs)
			}
			f := tpccFigures(x, bx) // tpm, nopm, new_order.p95_ms, iowait, await, DB read, WAL sync
			p99 := compareStat(x, bx, "new_order.p99_ms")
			t.Rows = append(t.Rows, []string{rd.Label, stepName(k), repsText(x, bx), num(x.tpm()), num(x.nopm()),
				ratioCI(f[0].c), ratioCI(f[1].c), f[1].verdictText(), ratioCI(f[2].c), f[2].verdictText(),
				ratioCI(f[3].c), ratioCI(f[4].c), ratioCI(f[5].c), ratioCI(f[6].c), ratioCI(p99), verdict(p99)})
		}
		if top >= 0 {
			k := stored.StepKey{VUs: top}
			x, bx := byKey(rd)[k], b[k]
			blocks = append(blocks, finding(fmt.Sprintf("%s: %s the NOPM of %s at %s (%s against %s NOPM).",
				rd.Label, ratioSentence(compareStat(x, bx, "nopm")), base.Label, plural(top, "virtual user", "virtual users"),
				num(x.nopm()), num(bx.nopm()))))
		}
		if rate >= 0 {
			var x, bx tpccStep
			for k, s := range byKey(rd) {
				if k.OfferedTPM == rate {
					x, bx = s, b[k]
				}
			}
			no := tpcc.NewOrder.String()
			blocks = append(blocks, finding(fmt.Sprintf("%s: at %s TPM offered, %s the New-Order p99 of %s, from the intended start (%s against %s ms).",
				rd.Label, thousands(int64(rate)), ratioSentence(compareStat(x, bx, no+".p99_ms")), base.Label,
				num(x.Txn[no].P99Ms), num(bx.Txn[no].P99Ms))))
		}
		if top < 0 && rate < 0 {
			blocks = append(blocks, text(fmt.Sprintf("%s ran no step that %s ran; nothing to compare step by step.", rd.Label, base.Label)))
		}
	}
	if len(t.Rows) > 0 {
		blocks = append(blocks, tableBlock(t))
	}
	return blocks
}

// byKey is a run's steps by their key: VU count, and offered rate.
func byKey(rd *runData) map[stored.StepKey]tpccStep {
	m := map[stored.StepKey]tpccStep{}
	for _, x := range rd.TPCC {
		m[x.Key()] = x
	}
	return m
}

// stepName is a step key as the ratio table shows it: "4", or "4 at
// 3,000 TPM".
func stepName(k stored.StepKey) string {
	if k.OfferedTPM == 0 {
		return strconv.Itoa(k.VUs)
	}
	return fmt.Sprintf("%d at %s TPM", k.VUs, thousands(int64(k.OfferedTPM)))
}

// repsText is the repetitions behind a comparison: "3", or "3/2" when the
// two sides differ.
func repsText(x, base tpccStep) string {
	a, b := x.Stats["nopm"].N, base.Stats["nopm"].N
	if a == b {
		return strconv.Itoa(a)
	}
	return fmt.Sprintf("%d/%d", a, b)
}

func auditTable(runs []*runData) *Table {
	t := &Table{ID: "tpcc-audit", Caption: "Input audit (clause 5.5.1.5), over all measured intervals: what the driver actually sent",
		Header: []string{"run", "check", "value", "bounds", "samples", "verdict"}, Numeric: []bool{false, false, true, false, true, false}}
	for _, rd := range runs {
		var steps [][]tpcc.AuditItem
		for _, x := range rd.TPCC {
			steps = append(steps, x.Audit)
		}
		for _, it := range tpcc.CombineAudit(steps) {
			t.Rows = append(t.Rows, []string{rd.Label, it.Name, num(it.Value), num(it.Min) + " – " + num(it.Max), thousands(it.Samples), it.Verdict})
		}
	}
	return t
}

// responseTimeTable gives each step's 90th-percentile response time per
// type against TPC-C's limits and, where a step was paced by keying and
// think times, its efficiency; nil when no step was judged.
func responseTimeTable(runs []*runData) *Table {
	header := []string{"run", "step"}
	numeric := []bool{false, false}
	for k := range tpcc.NumKinds {
		header = append(header, fmt.Sprintf("%s p90 (limit %g s)", k, tpcc.ResponseTimeLimit[k].Seconds()))
		numeric = append(numeric, true)
	}
	paced := false
	for _, rd := range runs {
		for _, x := range rd.TPCC {
			paced = paced || x.EfficiencyPct != nil
		}
	}
	caption := "TPC-C's response-time rule (clause 5.2.5.7): each type's 90th percentile in ms against its limit, from the intended start in an open loop"
	if paced {
		header, numeric = append(header, "efficiency"), append(numeric, true)
		caption += "; and, with keying and think times, the efficiency against 12.86 tpmC a warehouse (at least 85%)"
	}
	t := &Table{ID: "tpcc-response-time", Caption: caption, Header: header, Numeric: numeric}
	for _, rd := range runs {
		for _, x := range rd.TPCC {
			if len(x.ResponseTime) == 0 {
				continue
			}
			step := plural(x.VUs, "VU", "VUs")
			if x.OpenLoop != nil {
				step = thousands(int64(x.OfferedTPM)) + " TPM offered"
			}
			row := []string{rd.Label, step}
			for _, c := range x.ResponseTime {
				cell := num(c.P90Ms)
				if c.Verdict != "pass" {
					cell += " " + strings.ToUpper(c.Verdict)
				}
				row = append(row, cell)
			}
			if paced {
				eff := ""
				if x.EfficiencyPct != nil {
					eff = pct(*x.EfficiencyPct)
					if x.EfficiencyVerdict != "pass" {
						eff += " FAIL"
					}
				}
				row = append(row, eff)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// What a consistency condition's check came to.
const (
	conditionOK     = "ok"
	conditionNA     = "not applicable" // a load-only condition, after transactions ran
	conditionFailed = "FAILED"
)

// conditionResult is a condition's verdict, as the table shows it.
func conditionResult(c tpcc.Condition) string {
	switch {
	case c.Scope == "not-applicable":
		return conditionNA
	case !c.OK:
		return conditionFailed
	}
	return conditionOK
}

func checkTable(runs []*runData) *Table {
	t := &Table{ID: "tpcc-consistency", Caption: "Consistency conditions (clause 3.3.2), checked after the run",
		Header: []string{"run", "condition", "what", "scope", "violations", "result"}, Numeric: []bool{false, false, false, false, true, false}}
	for _, rd := range runs {
		if rd.Check == nil {
			continue
		}
		for _, c := range rd.Check.Conditions {
			t.Rows = append(t.Rows, []string{rd.Label, c.ID, c.Title, c.Scope, thousands(c.Violations), conditionResult(c)})
		}
	}
	return t
}

// seriesRef names a stored series and how to draw it.
type seriesRef struct {
	name, legend string
	dashed       bool
}

// timeline draws stored per-second series of every run over time: for
// results.AllSteps since each run's start, with the first run's step
// boundaries marked; for one step, since that step's start.
func timeline(runs []*runData, id, title, ylabel string, refs []seriesRef, step int) *Figure {
	c := chart.Chart{Title: title, XLabel: "time since the run started (s)", YLabel: ylabel, Kind: chart.Line, YFromZero: true}
	if step != results.AllSteps {
		c.XLabel = "time since the step started (s)"
	}
	for _, rd := range runs {
		t0 := rd.origin()
		if step != results.AllSteps {
			t0 = rd.stepStart(step)
		}
		for ri, ref := range refs {
			pts := rd.points(ref.name, step)
			if len(pts) == 0 {
				continue
			}
			s := chart.Series{Name: rd.legend() + " " + ref.legend, Color: rd.Color, Dashed: ref.dashed}
			if len(runs) == 1 {
				s = chart.Series{Name: ref.legend, Color: ri}
			}
			s.Points = chartPoints(pts, t0)
			c.Series = append(c.Series, s)
		}
	}
	if step == results.AllSteps && len(runs) > 0 && len(c.Series) > 0 {
		rd := runs[0]
		t0 := rd.origin()
		for _, st := range rd.Steps {
			c.Marks = append(c.Marks, chart.Mark{X: st.StartedAt.Sub(t0).Seconds(), Label: stepLabel(rd, st)})
		}
	}
	return &Figure{ID: id, Chart: c}
}

// chartPoints places points over time, in seconds since t0. A NaN value
// stays NaN, which breaks the line there (a gap).
func chartPoints(pts []results.Point, t0 time.Time) []chart.Point {
	out := make([]chart.Point, len(pts))
	for i, p := range pts {
		out[i] = chart.Point{X: p.T.Sub(t0).Seconds(), Y: p.Value}
	}
	return out
}

// line is a list of points to draw over time that no run stores as a
// series of its own: one merged over runs, or derived from several.
type line struct {
	legend string
	dashed bool
	pts    []results.Point
}

// pointsTimeline is timeline for lines that are not a run's stored series:
// each line in its own colour, in seconds since t0, with the marks given.
func pointsTimeline(id, title, xlabel, ylabel string, t0 time.Time, lines []line, marks []chart.Mark) *Figure {
	c := chart.Chart{Title: title, XLabel: xlabel, YLabel: ylabel, Kind: chart.Line, YFromZero: true}
	for i, l := range lines {
		if len(l.pts) > 0 {
			c.Series = append(c.Series, chart.Series{Name: l.legend, Color: i, Dashed: l.dashed, Points: chartPoints(l.pts, t0)})
		}
	}
	if len(c.Series) > 0 {
		c.Marks = marks
	}
	return &Figure{ID: id, Chart: c}
}

// stepLabel is a step's short name for chart marks: "8 VUs" for TPC-C.
func stepLabel(rd *runData, st results.Step) string {
	if rd.Kind == stored.KindTPCC {
		for _, x := range rd.TPCC {
			if x.Index == st.Index {
				return plural(x.VUs, "VU", "VUs")
			}
		}
	}
	return st.Name
}
