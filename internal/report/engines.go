package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/report/chart"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
)

// engineDisplays are the engines' names in prose, spelled as
// internal/engine/all's table spells them (Engine.Display). The report reads
// the store only and imports no engine; a test keeps the two in step. An
// engine missing here is shown by its stored name.
var engineDisplays = map[string]string{
	"postgres": "PostgreSQL",
	"mariadb":  "MariaDB",
}

// engineCacheSettings name, per engine, the setting that sizes the
// server's own cache of data pages: the memory figure to read across
// engines. PostgreSQL's shared_buffers is a part of what it caches (it also
// reads through the page cache); InnoDB's buffer pool, which bypasses the
// page cache, is nearly all of it.
var engineCacheSettings = map[string]string{
	"postgres": "shared_buffers",
	"mariadb":  "innodb_buffer_pool_size",
}

// engineDisplay is an engine's name in prose: "PostgreSQL" for "postgres".
func engineDisplay(name string) string {
	if d, ok := engineDisplays[name]; ok {
		return d
	}
	return orUnknown(name)
}

// engineOf is the database engine a run drove: its parameters' engine
// (stored.TPCCParams and the like), else the engine its environment captured; ""
// when neither says.
func engineOf(rd *runData) string {
	if e := rd.Params.Engine(); e != "" {
		return e
	}
	if rd.Env != nil && rd.Env.Database != nil {
		return rd.Env.Database.Engine
	}
	return ""
}

// engines lists the distinct known engines of runs with TPC-C steps, in
// the order of their first run.
func engines(runs []*runData) []string {
	var out []string
	for _, rd := range runs {
		if e := engineOf(rd); rd.Kind == stored.KindTPCC && len(rd.TPCC) > 0 && e != "" && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// engineLegend names a run in charts where engines meet: its engine, its
// target, and its label when the label says more than the engine's name,
// e.g. "MariaDB on storage" or "PostgreSQL on nvme: pg-small".
func engineLegend(rd *runData) string {
	eng := engineOf(rd)
	name := engineDisplay(eng)
	if t := rd.Place.Target; t != "" {
		name += " on " + t
	}
	if l := rd.Label; !strings.EqualFold(l, eng) && !strings.EqualFold(l, engineDisplay(eng)) {
		name += ": " + l
	}
	return name
}

// nameEngines gives the TPC-C runs legends that name their engines when
// the runs drove more than one, so every TPC-C chart says which line is
// which engine. Tables keep the runs' labels, beside an engine column
// where engines are compared.
func nameEngines(runs []*runData) {
	if len(engines(runs)) < 2 {
		return
	}
	for _, rd := range runs {
		if rd.Kind == stored.KindTPCC && engineOf(rd) != "" {
			rd.Legend = engineLegend(rd)
		}
	}
}

// engineCache is the run's cache-sizing setting as "name = value" (a
// byte count also in binary units), "none" without a database, unknown
// when the engine has no known cache setting or the run did not record it.
func engineCache(rd *runData) string {
	if rd.Env == nil {
		return unknown
	}
	if rd.Env.Database == nil {
		return "none"
	}
	eng := rd.Env.Database.Engine
	if eng == "" {
		eng = engineOf(rd)
	}
	key, ok := engineCacheSettings[eng]
	if !ok {
		return unknown
	}
	for _, st := range rd.Env.Database.Settings {
		if st.Name != key {
			continue
		}
		v := st.Value
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 1<<20 {
			v += " (" + bytesText(n) + ")"
		}
		return key + " = " + v
	}
	return key + " " + unknown
}

// enginesSection compares the TPC-C runs of different database engines
// (stored.TPCCParams' Engine), drawn on the same axes: NOPM and TPM,
// then New-Order p95 and p99 latency, by virtual users, a line per run.
// Each run of another engine is divided, step by step, by the run of the
// first engine (that of the report's first TPC-C run) on the same target;
// a sentence per pair says which engine kept more throughput and which had
// the lower latency. It is empty unless TPC-C runs of two engines are
// present.
func enginesSection(runs []*runData) *Section {
	s := &Section{ID: "engines", Title: "Engines compared"}
	engs := engines(runs)
	if len(engs) < 2 {
		return s
	}
	var group []*runData
	for _, rd := range runs {
		if rd.Kind == stored.KindTPCC && len(rd.TPCC) > 0 && engineOf(rd) != "" {
			group = append(group, rd)
		}
	}
	names := make([]string, len(engs))
	for i, e := range engs {
		names[i] = engineDisplay(e)
	}
	base := names[0]
	s.text(fmt.Sprintf("TPC-C on %s. Each line is one run, named by its engine and its target. Ratios divide each other engine's numbers "+
		"by %s's (the engine of the first TPC-C run) on the same target, at the same virtual-user count (n/a where only one ran it): "+
		"NOPM and TPM below 1 mean less throughput than %s, New-Order latency above 1 slower New-Orders. "+
		"Each sentence takes the means of these ratios over the counts both ran.", joinAnd(names), base, base))
	s.table(enginesRunsTable(group))
	vus := func(id, title, ylabel string, ms []metric) *Figure {
		return &Figure{ID: id, Chart: chart.Chart{Title: title, XLabel: "virtual users", YLabel: ylabel,
			Kind: chart.Line, YFromZero: true, XInteger: true, Series: vusSeries(group, ms, engineLegend)}}
	}
	s.figure(vus("engines-throughput", "TPM and NOPM by virtual users, per engine", "transactions per minute", []metric{
		{"TPM", false, func(x tpccStep) float64 { return x.tpm() }, "tpm"},
		{"NOPM", true, func(x tpccStep) float64 { return x.nopm() }, "nopm"},
	}))
	s.figure(vus("engines-latency", "New-Order p95 and p99 latency by virtual users, per engine", "latency (ms)", []metric{
		{"p95", false, func(x tpccStep) float64 { return newOrder(x, func(m metrics.Summary) float64 { return m.P95Ms }) }, "new_order.p95_ms"},
		{"p99", true, func(x tpccStep) float64 { return newOrder(x, func(m metrics.Summary) float64 { return m.P99Ms }) }, "new_order.p99_ms"},
	}))
	s.Blocks = append(s.Blocks, engineRatios(group, engs[0])...)
	return s
}

// newOrder is a number of the step's New-Order latency, NaN when the step
// has none or it is not positive (a latency of 0 ms was not measured).
func newOrder(x tpccStep, f func(metrics.Summary) float64) float64 {
	if v := txnStat(x, "new_order", f); v > 0 {
		return v
	}
	return math.NaN()
}

// enginesRunsTable says what each engine's run had: version, target, the
// memory it was given and the cache that memory sized.
func enginesRunsTable(group []*runData) *Table {
	t := &Table{ID: "engines-runs", Caption: "The runs compared: each engine's version, target, memory and the cache sized from it",
		Header:  []string{"run", "engine", "version", "target", "server memory", "cache setting", "warehouses", "VUs"},
		Numeric: []bool{false, false, false, false, true, false, true, false}}
	for _, rd := range group {
		version := unknown
		if rd.Env != nil && rd.Env.Database != nil {
			version = orUnknown(rd.Env.Database.Version)
		}
		mem := "–"
		if m := rd.Place.Memory; m > 0 {
			mem = bytesText(m)
		}
		var vus []string
		for _, x := range rd.TPCC {
			vus = append(vus, strconv.Itoa(x.VUs))
		}
		t.Rows = append(t.Rows, []string{rd.Label, engineDisplay(engineOf(rd)), version, targetOf(rd), mem, engineCache(rd),
			orDash(warehousesOf(rd)), strings.Join(vus, ", ")})
	}
	return t
}

// warehousesOf is a TPC-C run's warehouses, "" when its parameters do not
// say.
func warehousesOf(rd *runData) string {
	if p := rd.Params.TPCC; p != nil {
		return strconv.Itoa(p.Warehouses)
	}
	return ""
}

// enginePair is a run of another engine and the run of the first engine it
// is divided by.
type enginePair struct {
	target      string // scenario_target; "" when the runs do not say
	base, other *runData
}

// pairEngines pairs every run of another engine than base with a run of
// base on the same target: the one given the same server memory if there
// is one, else the first. Runs with no such partner are returned apart.
func pairEngines(group []*runData, base string) (pairs []enginePair, alone []*runData) {
	for _, rd := range group {
		if engineOf(rd) == base {
			continue
		}
		tg := rd.Place.Target
		mem := rd.Place.Memory
		var partner *runData
		for _, b := range group {
			if engineOf(b) != base || b.Place.Target != tg {
				continue
			}
			sameMem := mem != 0 && b.Place.Memory == mem
			if partner == nil || (sameMem && partner.Place.Memory != mem) {
				partner = b
			}
		}
		if partner == nil {
			alone = append(alone, rd)
			continue
		}
		pairs = append(pairs, enginePair{target: tg, base: partner, other: rd})
	}
	return pairs, alone
}

// engineRatios is the ratio table of each pair, per virtual-user count
// either ran ("n/a" where one did not, or the ratio is undefined), and a
// sentence per pair from the means of the ratios over the counts both ran.
func engineRatios(group []*runData, base string) []Block {
	pairs, alone := pairEngines(group, base)
	var blocks []Block
	for _, rd := range alone {
		where := "with no target recorded"
		if tg := rd.Place.Target; tg != "" {
			where = "on " + tg
		}
		blocks = append(blocks, text(fmt.Sprintf("%s ran %s with no %s run there to compare with: its ratios are n/a.",
			rd.Label, where, engineDisplay(base))))
	}
	t := &Table{ID: "engines-ratios", Caption: fmt.Sprintf("Each engine against %s on the same target, per virtual-user count "+
		"(NOPM and TPM ratios below 1: less throughput; New-Order latency ratios above 1: slower New-Orders)", engineDisplay(base)),
		Header: []string{"target", "VUs", "run", "engine", "against", "NOPM", "NOPM against", "NOPM ratio", "TPM ratio",
			"NO p95 ms", "NO p95 ms against", "NO p95 ratio", "NO p99 ratio"},
		Numeric: []bool{false, true, false, false, false, true, true, true, true, true, true, true, true}}
	for _, p := range pairs {
		b, o := byVUs(p.base), byVUs(p.other)
		var counts []int
		for v := range b {
			counts = append(counts, v)
		}
		for v := range o {
			if _, ok := b[v]; !ok {
				counts = append(counts, v)
			}
		}
		slices.Sort(counts)
		var sum engineSum
		for _, v := range counts {
			bx, bok := b[v]
			x, ok := o[v]
			nopm, tpm, p95, p99 := nan(), nan(), nan(), nan()
			bnopm, btpm, bp95, bp99 := nan(), nan(), nan(), nan()
			if ok {
				nopm, tpm = x.nopm(), x.tpm()
				p95 = newOrder(x, func(m metrics.Summary) float64 { return m.P95Ms })
				p99 = newOrder(x, func(m metrics.Summary) float64 { return m.P99Ms })
			}
			if bok {
				bnopm, btpm = bx.nopm(), bx.tpm()
				bp95 = newOrder(bx, func(m metrics.Summary) float64 { return m.P95Ms })
				bp99 = newOrder(bx, func(m metrics.Summary) float64 { return m.P99Ms })
			}
			nopmRatio, tpmRatio, p95Ratio, p99Ratio := ratioNA(bnopm, nopm), ratioNA(btpm, tpm), ratioNA(bp95, p95), ratioNA(bp99, p99)
			switch {
			case ok && bok:
				sum.common = append(sum.common, v)
				sum.reps = repsPhrase(x, bx)
				cn, cp := compareStat(x, bx, "nopm"), compareStat(x, bx, "new_order.p95_ms")
				if r := divide(bnopm, nopm); !math.IsNaN(r) {
					sum.nopm = append(sum.nopm, r)
					sum.nopmVerdicts = append(sum.nopmVerdicts, cn.Verdict)
					nopmRatio = ratioCI(cn)
				}
				if r := divide(bp95, p95); !math.IsNaN(r) {
					sum.p95 = append(sum.p95, r)
					sum.p95Verdicts = append(sum.p95Verdicts, cp.Verdict)
					p95Ratio = ratioCI(cp)
				}
				tpmRatio = ratioCI(compareStat(x, bx, "tpm"))
				if !math.IsNaN(divide(bp99, p99)) {
					p99Ratio = ratioCI(compareStat(x, bx, "new_order.p99_ms"))
				}
			case bok:
				sum.onlyBase = append(sum.onlyBase, v)
			default:
				sum.onlyOther = append(sum.onlyOther, v)
			}
			t.Rows = append(t.Rows, []string{targetOf(p.other), strconv.Itoa(v), p.other.Label, engineDisplay(engineOf(p.other)), p.base.Label,
				num(nopm), num(bnopm), nopmRatio, tpmRatio, num(p95), num(bp95), p95Ratio, p99Ratio})
		}
		blocks = append(blocks, finding(engineSentence(p, sum)))
	}
	if len(t.Rows) > 0 {
		blocks = append(blocks, tableBlock(t))
	}
	return blocks
}

// allAre reports whether there are verdicts and every one is v.
func allAre(verdicts []string, v string) bool {
	for _, x := range verdicts {
		if x != v {
			return false
		}
	}
	return len(verdicts) > 0
}

// repsPhrase says how many repetitions stand behind a comparison: "each
// measured once", "3 repetitions each", "3 and 2 repetitions".
func repsPhrase(x, base tpccStep) string {
	a, b := x.Stats["nopm"].N, base.Stats["nopm"].N
	switch {
	case a == 1 && b == 1:
		return "each measured once"
	case a == b:
		return fmt.Sprintf("%d repetitions each", a)
	}
	return fmt.Sprintf("%d and %d repetitions", a, b)
}

// engineSum is what a pair's sentence is made of: the ratios (other over
// base) at the virtual-user counts both ran, and the counts only one ran.
type engineSum struct {
	nopm, p95 []float64
	// The verdicts of the ratios above, count by count: an engine leads
	// only where every count's interval says so.
	nopmVerdicts, p95Verdicts []string
	common                    []int
	onlyBase, onlyOther       []int
	reps                      string // "n=3 repetitions each", "n=1 (measured once)"
}

// divide is b/a, NaN when either is unknown, a is not positive or b is
// negative.
func divide(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || a <= 0 || b < 0 {
		return math.NaN()
	}
	return b / a
}

// ratioNA formats b/a as "0.62x", "n/a" when it is undefined (a step one
// engine did not run, a zero denominator).
func ratioNA(a, b float64) string {
	r := divide(a, b)
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "n/a"
	}
	return times(r)
}

// engineSentence says, for one pair, how much NOPM the other engine kept
// against the base engine and how its New-Order p95 latency compared (means
// of the per-step ratios), which engine kept more throughput and which had
// the lower latency, over which virtual-user counts; e.g. "On storage,
// MariaDB kept 0.62x PostgreSQL's NOPM and had 1.80x its New-Order p95
// latency: PostgreSQL kept more throughput and lower latency (means over 3
// virtual-user counts both ran)."
func engineSentence(p enginePair, sum engineSum) string {
	a, b := engineDisplay(engineOf(p.base)), engineDisplay(engineOf(p.other))
	where := ""
	if p.target != "" {
		where = "On " + p.target + ", "
	}
	if len(sum.common) == 0 {
		return capitalize(fmt.Sprintf("%s%s (%s) and %s (%s) ran no virtual-user count in common: their ratios are n/a.",
			where, b, p.other.Label, a, p.base.Label))
	}
	var what string
	if len(sum.nopm) > 0 {
		what = fmt.Sprintf("%s kept %s %s's NOPM", b, times(mean(sum.nopm)), a)
	} else {
		what = fmt.Sprintf("%s's NOPM against %s's is n/a", b, a)
	}
	if len(sum.p95) > 0 {
		what += fmt.Sprintf(" and had %s its New-Order p95 latency", times(mean(sum.p95)))
	} else {
		what += " (New-Order p95 latency n/a)"
	}
	// Who leads: more NOPM is better, lower latency is better; an engine
	// leads only when the ratio's interval excludes 1 at every count both
	// ran, in the same direction. Otherwise the two are not told apart.
	winner := func(r []float64, verdicts []string, higherBetter bool) string {
		if len(r) == 0 {
			return "?"
		}
		l := 0
		switch {
		case allAre(verdicts, stats.Higher):
			l = 1
		case allAre(verdicts, stats.Lower):
			l = -1
		}
		if !higherBetter {
			l = -l
		}
		switch l {
		case 1:
			return b
		case -1:
			return a
		}
		return ""
	}
	tput, lat := winner(sum.nopm, sum.nopmVerdicts, true), winner(sum.p95, sum.p95Verdicts, false)
	same := "not distinguishable at the 95% level"
	var verdict string
	switch {
	case tput == "?" && lat == "?":
	case tput == "?" && lat == "":
		verdict = "their New-Order latencies were " + same
	case tput == "?":
		verdict = lat + " had lower latency"
	case tput == "" && lat == "?":
		verdict = "their throughputs were " + same
	case tput == "" && lat == "":
		verdict = "neither their throughputs nor their latencies were distinguishable at the 95% level"
	case tput == "":
		verdict = "their throughputs were " + same + ", " + lat + " had lower latency"
	case lat == "?":
		verdict = tput + " kept more throughput"
	case lat == "":
		verdict = tput + " kept more throughput; their latencies were " + same
	case tput == lat:
		verdict = tput + " kept more throughput and lower latency"
	default:
		verdict = tput + " kept more throughput, " + lat + " lower latency"
	}
	if verdict != "" {
		verdict = ": " + verdict
	}
	over := fmt.Sprintf("means over %s both ran, %s", plural(len(sum.common), "virtual-user count", "virtual-user counts"), sum.reps)
	if n := len(sum.p95); n > 0 && n < len(sum.common) {
		over += fmt.Sprintf(", the latency's over %d of them (the others lack New-Order latency on one side)", n)
	}
	if len(sum.onlyBase) > 0 {
		over += fmt.Sprintf("; only %s ran %s", a, vuList(sum.onlyBase))
	}
	if len(sum.onlyOther) > 0 {
		over += fmt.Sprintf("; only %s ran %s", b, vuList(sum.onlyOther))
	}
	over += "; an engine leads only where every count's 95% interval says so"
	return capitalize(fmt.Sprintf("%s%s%s (%s).", where, what, verdict, over))
}

// vuList names virtual-user counts: "4 VUs", "4 and 8 VUs", "1, 4 and 8 VUs".
func vuList(vs []int) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.Itoa(v)
	}
	if len(vs) == 1 && vs[0] == 1 {
		return "1 VU"
	}
	return joinAnd(parts) + " VUs"
}

// joinAnd joins words as prose: "a", "a and b", "a, b and c".
func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// capitalize upper-cases a sentence's first letter.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// orDash returns s, or "–" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
