package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/report/chart"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
)

// backupSection shows backup and restore cycles: runs of kind "backup",
// one step per phase of each cycle (stored.PhaseResult). Their devices'
// per-second telemetry is in the telemetry section.
func backupSection(runs []*runData) *Section {
	s := &Section{ID: "backup", Title: "Backup and restore"}
	var group []*runData
	for _, rd := range runs {
		if len(rd.Backup) > 0 {
			group = append(group, rd)
		}
	}
	if len(group) == 0 {
		return s
	}
	s.text("Each cycle backs the database up and restores it; duration is wall-clock time of the phase, MB/s is bytes copied over that time.")
	var cats []string
	seen := map[string]bool{}
	for _, rd := range group {
		for _, b := range rd.Backup {
			c := fmt.Sprintf("%s %d", b.Phase.Phase, b.Cycle)
			if !seen[c] {
				seen[c] = true
				cats = append(cats, c)
			}
		}
	}
	bars := func(id, title, ylabel string, v func(stored.PhaseResult) float64) *Figure {
		c := chart.Chart{Title: title, XLabel: "phase and cycle", YLabel: ylabel, Kind: chart.Bar, YFromZero: true, Categories: cats}
		for _, rd := range group {
			sr := chart.Series{Name: rd.Label, Color: rd.Color}
			for i, cat := range cats {
				y := nan()
				for _, b := range rd.Backup {
					if fmt.Sprintf("%s %d", b.Phase.Phase, b.Cycle) == cat {
						y = v(b)
					}
				}
				sr.Points = append(sr.Points, chart.Point{X: float64(i), Y: y})
			}
			c.Series = append(c.Series, sr)
		}
		return &Figure{ID: id, Chart: c}
	}
	s.figure(bars("backup-seconds", "Backup and restore times", "duration (s)", func(b stored.PhaseResult) float64 { return b.Seconds }))
	s.figure(bars("backup-mbps", "Backup and restore throughput", "MB/s", func(b stored.PhaseResult) float64 { return b.MBps }))
	t := &Table{ID: "backup-cycles", Caption: "Cycles", Header: []string{"run", "cycle", "phase", "method", "duration s", "size", "MB/s"},
		Numeric: []bool{false, true, false, false, true, true, true}}
	for _, rd := range group {
		for _, b := range rd.Backup {
			t.Rows = append(t.Rows, []string{rd.Label, strconv.Itoa(b.Cycle), b.Phase.Phase, orUnknown(b.Method), num(b.Seconds),
				bytesText(b.Bytes), num(b.MBps)})
		}
	}
	s.table(t)
	if t := noisyPhases(group); t != nil {
		s.text(noisyText)
		s.table(t)
	}
	s.Blocks = append(s.Blocks, backupComparison(poolBackups(group))...)
	return s
}

// poolBackups merges the backup runs of one scenario instance (a repeated
// neighbours step runs its backups once per repetition) into one, its
// cycles numbered on, so that a comparison counts each cycle once. Runs of
// no instance stay as they are.
func poolBackups(group []*runData) []*runData {
	var out []*runData
	by := map[string]*runData{}
	for _, rd := range group {
		in := rd.Place.Instance
		m, ok := by[in]
		if in == "" || !ok {
			c := *rd
			c.Backup = slices.Clone(rd.Backup)
			out = append(out, &c)
			if in != "" {
				by[in] = &c
			}
			continue
		}
		last := 0
		for _, b := range m.Backup {
			last = max(last, b.Cycle)
		}
		for _, b := range rd.Backup {
			b.Cycle += last
			m.Backup = append(m.Backup, b)
		}
	}
	return out
}

// backupComparison says, for every run after the first, how long its
// backups and its restores took against the first run's: means over cycles,
// with the interval of their ratio over the cycles (each cycle a repetition).
func backupComparison(group []*runData) []Block {
	base := group[0]
	var blocks []Block
	for _, rd := range group[1:] {
		var parts []string
		for _, phase := range []string{stored.PhaseBackup, stored.PhaseRestore} {
			bs, xs := phaseSeconds(base, phase), phaseSeconds(rd, phase)
			if len(bs) == 0 || len(xs) == 0 {
				continue
			}
			c := stats.Compare(xs, bs)
			parts = append(parts, fmt.Sprintf("%ss took %s as long (%s s against %s s; %s)", phase, times(c.Ratio), num(mean(xs)), num(mean(bs)), ciVerdict(c)))
		}
		if len(parts) > 0 {
			blocks = append(blocks, finding(fmt.Sprintf("%s against %s, means over cycles: %s.", rd.Label, base.Label, strings.Join(parts, "; "))))
		}
	}
	return blocks
}

// phaseSeconds are the durations of a backup run's phases of this name
// ("backup" or "restore"), one per cycle.
func phaseSeconds(rd *runData, phase string) []float64 {
	var xs []float64
	for _, b := range backupCounted(rd) {
		if b.Phase.Phase == phase && b.Seconds > 0 {
			xs = append(xs, b.Seconds)
		}
	}
	return xs
}

// neighboursSection compares TPC-C runs of several instances that ran at
// the same time: runs whose parameters name an "instance" and its "role"
// (a scenario sets the role only when instances run side by side; the
// servers of paper-1, run one after the other, have none). Their "phase"
// (e.g. "baseline", then "beside backups") makes the bar groups, so the same
// instance lines up across phases; their "scenario_target" is the tier the
// instance runs on. Each instance that ran a baseline is then compared with
// it, and each tier summed up in a sentence.
func neighboursSection(runs, backups []*runData) *Section {
	s := &Section{ID: "neighbours", Title: "Instances side by side"}
	var group []*runData
	for _, rd := range runs {
		if rd.Kind == stored.KindTPCC && rd.Place.Instance != "" && rd.Place.Role != "" {
			group = append(group, rd)
		}
	}
	if len(group) < 2 {
		return s
	}
	overlap := map[*runData]float64{}
	for _, rd := range group {
		overlap[rd] = backupOverlap(rd, backups)
	}
	group = poolRepetitions(group, overlap)
	s.text("TPC-C on several database instances at once; each instance's numbers are its own largest step. A step repeated is pooled: " +
		"its figures are the means over the repetitions, with their intervals. Backup seconds overlapping is how many seconds of backup " +
		"or restore ran during the instance's measured interval (summed over the backup instances; a mean over the repetitions): " +
		"instances of one phase compare fairly when it is the same for each.")
	var cats, groups []string
	seenC, seenG := map[string]bool{}, map[string]bool{}
	for _, rd := range group {
		if in := rd.Place.Instance; !seenC[in] {
			seenC[in] = true
			cats = append(cats, in)
		}
		if p := phaseOf(rd); !seenG[p] {
			seenG[p] = true
			groups = append(groups, p)
		}
	}
	c := chart.Chart{Title: "NOPM per instance", XLabel: "instance", YLabel: "NOPM", Kind: chart.Bar, YFromZero: true, Categories: cats}
	t := &Table{ID: "neighbours-instances", Caption: "Per instance", Header: []string{"phase", "instance", "target", "role", "VUs", "n", "TPM", "NOPM",
		"NO p95 ms", "backup seconds overlapping"},
		Numeric: []bool{false, false, false, false, true, false, true, true, true, true}}
	for gi, g := range groups {
		sr := chart.Series{Name: g, Color: gi}
		for i, in := range cats {
			y := nan()
			for _, rd := range group {
				if phaseOf(rd) != g || rd.Place.Instance != in {
					continue
				}
				if last, ok := lastStep(rd); ok {
					y = last.nopm()
					t.Rows = append(t.Rows, []string{g, in, targetOf(rd), orUnknown(rd.Place.Role), strconv.Itoa(last.VUs),
						strconv.Itoa(last.Stats["nopm"].N), num(last.tpm()), num(last.nopm()), num(last.Txn["new_order"].P95Ms), num(overlap[rd])})
				}
			}
			sr.Points = append(sr.Points, chart.Point{X: float64(i), Y: y})
		}
		c.Series = append(c.Series, sr)
	}
	s.figure(&Figure{ID: "neighbours-nopm", Chart: c})
	s.table(t)
	s.Blocks = append(s.Blocks, neighboursRatios(group)...)
	return s
}

// backupOverlap is how many seconds of backup and restore phases, of any
// of the backup runs, fell inside a TPC-C run's measured interval (its
// largest step's).
func backupOverlap(rd *runData, backups []*runData) float64 {
	last, ok := lastStep(rd)
	if !ok {
		return nan()
	}
	start, end := last.MeasureStart, last.MeasureEnd
	for _, st := range rd.Steps { // the stored step's edges, where its document lacks them
		if start.IsZero() && st.Index == last.Index {
			start, end = st.MeasureStart, st.MeasureEnd
		}
	}
	var sum float64
	for _, b := range backups {
		for _, st := range b.Steps {
			from, to := maxTime(st.MeasureStart, start), minTime(st.MeasureEnd, end)
			if to.After(from) {
				sum += to.Sub(from).Seconds()
			}
		}
	}
	return sum
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// poolRepetitions merges the runs of one instance in one phase (a
// neighbours step repeated runs each instance once per repetition) into
// one, whose largest step is the mean of theirs, with Stats over them
// (stored.GroupTPCC), and whose backup overlap is the mean of theirs. A lone
// run stays as it is.
func poolRepetitions(group []*runData, overlap map[*runData]float64) []*runData {
	type key struct{ phase, instance string }
	var order []key
	by := map[key][]*runData{}
	for _, rd := range group {
		k := key{phaseOf(rd), rd.Place.Instance}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], rd)
	}
	var out []*runData
	for _, k := range order {
		rs := by[k]
		if len(rs) == 1 {
			out = append(out, rs[0])
			continue
		}
		var reps []*stored.TPCCStep
		var ov []float64
		for i, rd := range rs {
			if last, ok := lastStep(rd); ok {
				s := last.TPCCStep
				s.Index, s.Repetition, s.Stats, s.Repetitions, s.TxnPooled = i, i+1, nil, nil, nil
				reps = append(reps, &s)
				ov = append(ov, overlap[rd])
			}
		}
		if len(reps) == 0 {
			out = append(out, rs[0])
			continue
		}
		merged := *rs[0]
		merged.TPCC = nil
		for _, g := range stored.GroupTPCC(reps, []stored.StepKey{reps[0].Key()}) {
			merged.TPCC = append(merged.TPCC, tpccStep{*g})
		}
		overlap[&merged] = mean(ov)
		out = append(out, &merged)
	}
	return out
}

// phaseBaseline is the phase of a neighbours step without backups, which
// the other phases are compared with.
const phaseBaseline = "baseline"

// neighboursRatios compares each TPC-C instance's largest step in every
// other phase with its largest step in the baseline: a table of the NOPM
// and New-Order p95 ratios, and per target and phase a sentence with the
// mean of its instances' ratios (each instance counts once, whatever its
// throughput), plus which target kept the most.
func neighboursRatios(group []*runData) []Block {
	base := map[string]tpccStep{}
	baseCount := map[string]int{} // TPC-C instances of the baseline, per target
	for _, rd := range group {
		if phaseOf(rd) == phaseBaseline {
			if last, ok := lastStep(rd); ok {
				base[rd.Place.Instance] = last
				baseCount[rd.Place.Target]++
			}
		}
	}
	if len(base) == 0 {
		return nil
	}
	t := &Table{ID: "neighbours-ratios", Caption: "Each TPC-C instance against its own baseline, at its largest steps (NOPM below 1: less throughput; p95 above 1: slower New-Orders)",
		Header: []string{"phase", "target", "instance", "VUs", "n", "baseline NOPM", "NOPM", "NOPM ratio", "NOPM verdict",
			"baseline NO p95 ms", "NO p95 ms", "NO p95 ratio", "NO p95 verdict"},
		Numeric: []bool{false, false, false, true, false, true, true, true, false, true, true, true, false}}
	var tallies []*tally
	find := func(phase, target string) *tally {
		for _, x := range tallies {
			if x.phase == phase && x.target == target {
				return x
			}
		}
		x := &tally{phase: phase, target: target}
		tallies = append(tallies, x)
		return x
	}
	for _, rd := range group {
		phase, in := phaseOf(rd), rd.Place.Instance
		b, ok := base[in]
		if phase == phaseBaseline || !ok {
			continue
		}
		x, ok := lastStep(rd)
		if !ok {
			continue
		}
		bp95, p95 := b.Txn["new_order"].P95Ms, x.Txn["new_order"].P95Ms
		cn, cp := figure{c: compareStat(x, b, "nopm"), said: heldRate(x, b)}, compareStat(x, b, "new_order.p95_ms")
		t.Rows = append(t.Rows, []string{phase, targetOf(rd), in, strconv.Itoa(x.VUs), repsText(x, b), num(b.nopm()), num(x.nopm()),
			ratioCI(cn.c), cn.verdictText(), num(bp95), num(p95), ratioCI(cp), verdict(cp)})
		tl := find(phase, rd.Place.Target)
		if x.OpenLoop != nil {
			tl.offered = max(tl.offered, x.OfferedTPM)
		}
		if b.NOPM > 0 {
			tl.nopm = append(tl.nopm, x.nopm()/b.nopm())
		}
		if bp95 > 0 && p95 > 0 {
			tl.p95 = append(tl.p95, p95/bp95)
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	var blocks []Block
	kept := map[string][]*tally{} // phase -> its targets' tallies, for the comparison
	var phases []string
	for _, tl := range tallies {
		if len(tl.nopm) == 0 {
			continue
		}
		where := ""
		if tl.target != "" {
			where = "On " + tl.target + ": "
		}
		p95 := ""
		if len(tl.p95) > 0 {
			p95 = fmt.Sprintf("; New-Order p95 %s", meanRatioText(tl.p95))
		}
		blocks = append(blocks, finding(fmt.Sprintf("%sTPC-C instances %s kept %s their baseline NOPM%s (means of the per-instance ratios of %s, each at its largest step; "+
			"the intervals are over the instances).", where, tl.phase, meanRatioText(tl.nopm), p95, plural(len(tl.nopm), "instance", "instances"))))
		if tl.offered > 0 {
			blocks = append(blocks, text(fmt.Sprintf("They ran open-loop, offered %s TPM each: the rate sets their NOPM, which stays near 1x "+
				"while they keep up, so their New-Order latency, measured from each transaction's intended start, is what the backups cost them.",
				num(tl.offered))))
		}
		if n := baseCount[tl.target]; n > len(tl.nopm) {
			blocks = append(blocks, text(fmt.Sprintf("The baseline ran TPC-C on %d instances there, this phase on %d: as in the reference method, "+
				"the ratios compare the other instances backing up with the same instances running TPC-C. Where their TPC-C loaded the storage "+
				"or the CPUs more than their backups do, an instance does better beside backups (a ratio above 1).", n, len(tl.nopm))))
		}
		if tl.target != "" {
			if len(kept[tl.phase]) == 0 {
				phases = append(phases, tl.phase)
			}
			kept[tl.phase] = append(kept[tl.phase], tl)
		}
	}
	for _, phase := range phases {
		ts := kept[phase]
		if len(ts) < 2 {
			continue
		}
		blocks = append(blocks, orderFinding(phase, "of its baseline NOPM", "kept", ts, func(tl *tally) []float64 { return tl.nopm })...)
		blocks = append(blocks, orderFinding(phase, "New-Order p95 against its baseline", "had", ts, func(tl *tally) []float64 { return tl.p95 })...)
	}
	return append(blocks, tableBlock(t))
}

// verdictCount sums up the verdicts of a run's comparisons, count by count:
// "lower at all 3 counts, at 95% confidence", "lower at 2 of 3 counts at
// 95% confidence, not distinguishable at the other", "not distinguishable
// at n=1", "both held the rate at both counts". A mix names each verdict
// with its number of counts, those at 95% confidence first.
func verdictCount(vs []string) string {
	if len(vs) == 0 {
		return "no verdict"
	}
	// "not distinguishable at n=2" and "… at n=3" are one verdict here, as
	// are "no interval at n=1" and "… at n=1 and 2".
	kind := func(v string) string {
		k, _, _ := strings.Cut(v, " at n=")
		return k
	}
	by := map[string]int{}
	var kinds []string
	for _, v := range vs {
		if by[kind(v)] == 0 {
			kinds = append(kinds, kind(v))
		}
		by[kind(v)]++
	}
	confident := func(v string) bool { return v == stats.Lower || v == stats.Higher }
	if len(kinds) == 1 {
		switch v := kinds[0]; {
		case confident(v) && len(vs) == 1:
			return v + ", at 95% confidence"
		case confident(v):
			return fmt.Sprintf("%s at %s, at 95%% confidence", v, allCounts(len(vs)))
		case v == bothHeld && len(vs) > 1:
			return v + " at " + allCounts(len(vs))
		case !slices.ContainsFunc(vs, func(o string) bool { return o != vs[0] }):
			return vs[0]
		}
		return kinds[0] + " at any count"
	}
	slices.SortStableFunc(kinds, func(a, b string) int {
		switch {
		case confident(a) && !confident(b):
			return -1
		case confident(b) && !confident(a):
			return 1
		}
		return 0
	})
	parts := make([]string, len(kinds))
	for i, v := range kinds {
		at := strconv.Itoa(by[v])
		switch {
		case i == 0:
			at = fmt.Sprintf("%d of %d counts", by[v], len(vs))
		case len(kinds) == 2 && by[v] == 1:
			at = "the other"
		case len(kinds) == 2:
			at = "the others"
		}
		if confident(v) {
			at += " at 95% confidence"
		}
		parts[i] = v + " at " + at
	}
	return strings.Join(parts, ", ")
}

// allCounts is "both counts" or "all N counts".
func allCounts(n int) string {
	if n == 2 {
		return "both counts"
	}
	return fmt.Sprintf("all %d counts", n)
}

// tally is a phase's per-instance ratios on one target.
type tally struct {
	phase, target string
	nopm, p95     []float64 // per-instance ratios against the baseline
	offered       float64   // the rate the instances ran open-loop at, TPM (0: a closed loop)
}

// meanRatioText is the mean of per-instance ratios with its 95% interval
// over the instances: "0.78x (95% CI 0.61–0.95, n=4)", "0.78x (n=1)".
func meanRatioText(xs []float64) string {
	s := stats.Of(xs)
	if !s.HasCI() {
		return fmt.Sprintf("%s (n=%d)", times(s.Mean), s.N)
	}
	return fmt.Sprintf("%s (95%% CI %s, n=%d)", times(s.Mean), interval(s.Low, s.High), s.N)
}

// orderFinding orders a phase's targets by the mean of a per-instance
// ratio and says whether the order is real: the highest target's ratios
// against the lowest's, by Fieller's interval over the instances. "TPC-C
// beside backups kept the most of its baseline NOPM on slow (0.78x) and the
// least on fast (0.74x)" is said only when that interval excludes 1;
// otherwise the sentence says the order is not distinguishable from noise.
func orderFinding(phase, what, verb string, ts []*tally, get func(*tally) []float64) []Block {
	var have []*tally
	for _, tl := range ts {
		if len(get(tl)) > 0 {
			have = append(have, tl)
		}
	}
	if len(have) < 2 {
		return nil
	}
	hi, lo := have[0], have[0]
	for _, tl := range have[1:] {
		if mean(get(tl)) > mean(get(hi)) {
			hi = tl
		}
		if mean(get(tl)) < mean(get(lo)) {
			lo = tl
		}
	}
	if hi == lo {
		return nil
	}
	c := stats.Compare(get(hi), get(lo))
	if c.Significant() {
		return []Block{finding(fmt.Sprintf("TPC-C %s %s the most %s on %s (%s) and the least on %s (%s): %s against %s is %s.",
			phase, verb, what, hi.target, times(mean(get(hi))), lo.target, times(mean(get(lo))), hi.target, lo.target, ratioSentence(c)))}
	}
	return []Block{finding(fmt.Sprintf("TPC-C %s %s %s %s on %s and %s on %s, an order %s: %s against %s is %s.",
		phase, verb, times(mean(get(hi))), what, hi.target, times(mean(get(lo))), lo.target, untold(c), hi.target, lo.target, ratioSentence(c)))}
}

// targetOf is the scenario target a run's instance ran on, "–" when the run
// does not say (runs stored before tierbench recorded it).
func targetOf(rd *runData) string {
	if t := rd.Place.Target; t != "" {
		return t
	}
	return "–"
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return nan()
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// times formats a ratio: 0.62x, and from 100 up in whole numbers, 2,903x.
func times(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return ratioNum(v) + "x"
}

// ratioNum is a ratio's number: two decimals, or from 100 up a whole
// number with thousands marked (a slow tier's queue: 2,903, not 2903.05).
func ratioNum(v float64) string {
	if math.Abs(v) >= 100 {
		return thousands(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// interval is a ratio's 95% interval as the report shows it: "0.61–0.88",
// its lower bound at least 0 (atLeast0).
func interval(low, high float64) string {
	return ratioNum(atLeast0(low)) + "–" + ratioNum(high)
}

// phaseOf is the phase a side-by-side run belongs to ("" when unnamed).
func phaseOf(rd *runData) string {
	if p := rd.Place.Phase; p != "" {
		return p
	}
	return orUnknown(rd.Group)
}

// memoryComparison compares, on each target, the TPC-C runs of servers
// given less memory with the run of the server of the same engine given the
// most: runs whose parameters carry the scenario's server_memory_bytes. Per
// virtual-user count both ran, a row of ratios; per target (and engine), a
// sentence with the mean NOPM ratio of its least-memory run; and, over
// targets, which lost the most. Paper-1 at two tiers is what it is for:
// whether less memory costs a slow tier more than a fast one. Engines are
// never divided by one another here (enginesSection does that).
func memoryComparison(runs []*runData) []Block {
	type entry struct {
		rd  *runData
		mem int64
	}
	type place struct{ target, engine string }
	byTarget := map[place][]entry{}
	var targets []place
	for _, rd := range runs {
		mem := rd.Place.Memory
		if rd.Kind != stored.KindTPCC || mem <= 0 || len(rd.TPCC) == 0 {
			continue
		}
		pl := place{rd.Place.Target, engineOf(rd)}
		if _, ok := byTarget[pl]; !ok {
			targets = append(targets, pl)
		}
		byTarget[pl] = append(byTarget[pl], entry{rd, mem})
	}
	several := len(engines(runs)) > 1
	t := &Table{ID: "tpcc-memory", Caption: "Less memory, per target: each run against the run with the most memory on the same target (NOPM below 1: less throughput)",
		Header: []string{"target", "run", "memory", "against", "VUs", "n", "NOPM", "NOPM with most memory", "NOPM ratio", "NOPM verdict", "NO p95 ratio",
			"device reads/s ratio", "DB read ratio"},
		Numeric: []bool{false, false, true, false, true, false, true, true, true, false, true, true, true}}
	type loss struct {
		target string
		ratios []float64 // the NOPM ratios of the target's least-memory run, per VU count
	}
	var blocks []Block
	losses := map[string][]loss{} // per engine
	var lossEngines []string
	for _, pl := range targets {
		tg, es := pl.target, byTarget[pl]
		base, least := es[0], es[0]
		for _, e := range es[1:] {
			if e.mem > base.mem {
				base = e
			}
			if e.mem < least.mem {
				least = e
			}
		}
		if least.mem == base.mem {
			continue
		}
		b := byVUs(base.rd)
		for _, e := range es {
			if e.mem == base.mem {
				continue
			}
			var ratios []float64
			var verdicts []string
			for _, x := range e.rd.TPCC {
				bx, ok := b[x.VUs]
				if !ok {
					continue
				}
				cn := figure{c: compareStat(x, bx, "nopm"), said: heldRate(x, bx)}
				t.Rows = append(t.Rows, []string{orUnknown(tg), e.rd.Label, bytesText(e.mem), base.rd.Label, strconv.Itoa(x.VUs), repsText(x, bx),
					num(x.nopm()), num(bx.nopm()), ratioCI(cn.c), cn.verdictText(), ratioCI(compareStat(x, bx, "new_order.p95_ms")),
					ratioCI(compareStat(x, bx, "device.r_iops")), ratioCI(compareStat(x, bx, "db.read_latency_ms"))})
				if bx.NOPM > 0 {
					ratios = append(ratios, x.nopm()/bx.nopm())
					verdicts = append(verdicts, cn.verdictText())
				}
			}
			if e != least || len(ratios) == 0 {
				continue
			}
			where := "With"
			if tg != "" {
				where = "On " + tg + ", with"
			}
			eng := ""
			if several {
				eng = engineDisplay(pl.engine) + " "
			}
			blocks = append(blocks, finding(fmt.Sprintf("%s %s of memory instead of %s, %s%s kept %s the NOPM of %s (mean over %s; %s).",
				where, bytesText(e.mem), bytesText(base.mem), eng, e.rd.Label, times(mean(ratios)), base.rd.Label,
				plural(len(ratios), "virtual-user count", "virtual-user counts"), verdictCount(verdicts))))
			if tg != "" {
				if len(losses[pl.engine]) == 0 {
					lossEngines = append(lossEngines, pl.engine)
				}
				losses[pl.engine] = append(losses[pl.engine], loss{tg, ratios})
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	for _, eng := range lossEngines {
		ls := losses[eng]
		if len(ls) < 2 {
			continue
		}
		most, least := ls[0], ls[0]
		for _, l := range ls[1:] {
			if mean(l.ratios) < mean(most.ratios) {
				most = l
			}
			if mean(l.ratios) > mean(least.ratios) {
				least = l
			}
		}
		who := ""
		if several {
			who = " " + engineDisplay(eng)
		}
		if most.target == least.target {
			continue
		}
		// The targets' per-count ratios against each other: an order stated
		// only when its interval excludes 1.
		c := stats.Compare(least.ratios, most.ratios)
		if c.Significant() {
			blocks = append(blocks, finding(fmt.Sprintf("Less memory cost%s the most throughput on %s (%s the NOPM) and the least on %s (%s): %s against %s is %s.",
				who, most.target, times(mean(most.ratios)), least.target, times(mean(least.ratios)), least.target, most.target, ratioSentence(c))))
		} else {
			blocks = append(blocks, finding(fmt.Sprintf("Less memory left%s %s the NOPM on %s and %s on %s, an order %s: %s against %s is %s.",
				who, times(mean(most.ratios)), most.target, times(mean(least.ratios)), least.target, untold(c), least.target, most.target, ratioSentence(c))))
		}
	}
	return append(blocks, tableBlock(t))
}
