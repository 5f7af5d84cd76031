package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/report/chart"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
)

// tpchQuery is a stored TPC-H query with the time it began (Unix
// seconds), which its step keeps.
type tpchQuery struct {
	stored.TPCHQuery
	start float64
}

// tpchFigures are a TPC-H run's figures, computed from its stored queries.
type tpchFigures struct {
	// perQuery is each query's power-test seconds, the mean over the
	// power tests (NaN: it did not run or did not finish).
	perQuery [22]float64
	readMBps [22]float64
	geoMean  stats.Summary // over the power tests
	// throughputAtSize is 0 without a throughput test.
	throughputAtSize, throughputSec float64
	timedOut, wrong, failed         []string
}

func newTPCHFigures(rd *runData) tpchFigures {
	var f tpchFigures
	byRep := map[int][]float64{}
	var sums, reads [22]float64
	var counts [22]int
	streams := map[int]bool{}
	var first, last float64 = math.Inf(1), math.Inf(-1)
	for _, q := range rd.TPCH {
		switch q.Status {
		case stored.TPCHTimeout:
			f.timedOut = append(f.timedOut, q.Name())
		case stored.TPCHWrong:
			f.wrong = append(f.wrong, q.Name())
		case stored.TPCHFailed:
			f.failed = append(f.failed, q.Name())
		}
		if q.Test == stored.TPCHThroughput {
			if q.Query > 0 {
				streams[q.Stream] = true
			}
			first, last = min(first, q.start), max(last, q.start+q.Seconds)
			continue
		}
		if q.Query < 1 || q.Query > 22 {
			continue
		}
		byRep[q.Rep] = append(byRep[q.Rep], q.Seconds)
		sums[q.Query-1] += q.Seconds
		reads[q.Query-1] += q.ReadMBps
		counts[q.Query-1]++
	}
	for i := range f.perQuery {
		f.perQuery[i], f.readMBps[i] = nan(), nan()
		if counts[i] > 0 {
			f.perQuery[i], f.readMBps[i] = sums[i]/float64(counts[i]), reads[i]/float64(counts[i])
		}
	}
	var geo []float64
	for _, rep := range slices.Sorted(maps.Keys(byRep)) {
		if len(byRep[rep]) == 22 {
			geo = append(geo, stored.GeoMean(byRep[rep]))
		}
	}
	f.geoMean = stats.Of(geo)
	if len(streams) > 0 && last > first {
		f.throughputSec = last - first
		f.throughputAtSize = float64(len(streams)*22) * 3600 / f.throughputSec * rd.Params.TPCH.Scale
	}
	return f
}

// tpchSection shows TPC-H runs: each query's power-test time as bars per
// run (tier or engine), the geometric mean with its interval over the
// power tests, the throughput test's figure, and the queries that timed
// out, failed or answered wrongly.
func tpchSection(runs []*runData) *Section {
	s := &Section{ID: "tpch", Title: "Analytic workload (TPC-H-derived)"}
	var group []*runData
	for _, rd := range runs {
		if rd.Params.TPCH != nil && len(rd.TPCH) > 0 {
			group = append(group, rd)
		}
	}
	if len(group) == 0 {
		return s
	}
	s.text("Each query's time is the client's, from sending its first statement to reading its last row. The geometric mean " +
		"of the power test's 22 query times is the headline figure; with several power tests, its 95% interval is over them. " +
		"None of these is an audited TPC-H metric.")
	cats := make([]string, 22)
	for i := range cats {
		cats[i] = "Q" + strconv.Itoa(i+1)
	}
	c := chart.Chart{Title: "Power test: seconds per query", XLabel: "query", YLabel: "seconds", Kind: chart.Bar, YFromZero: true, Categories: cats}
	figs := make([]tpchFigures, len(group))
	for gi, rd := range group {
		figs[gi] = newTPCHFigures(rd)
		sr := chart.Series{Name: rd.legend(), Color: rd.Color}
		for i, v := range figs[gi].perQuery {
			sr.Points = append(sr.Points, chart.Point{X: float64(i), Y: v})
		}
		c.Series = append(c.Series, sr)
	}
	s.figure(&Figure{ID: "tpch-queries", Chart: c})

	t := &Table{ID: "tpch-runs", Caption: "TPC-H runs",
		Header:  []string{"run", "engine", "scale", "geometric mean (s)", "power tests", "throughput@size", "answers", "timed out", "failed"},
		Numeric: []bool{false, false, true, true, true, true, false, false, false}}
	for gi, rd := range group {
		f, p := figs[gi], rd.Params.TPCH
		answers := "not checked"
		switch {
		case len(f.wrong) > 0:
			answers = "WRONG: " + strings.Join(f.wrong, ", ")
		case p.Validate:
			answers = "checked"
		}
		tput := "–"
		if f.throughputAtSize > 0 {
			tput = fmt.Sprintf("%.1f (%d streams, %.1f s)", f.throughputAtSize, p.Streams, f.throughputSec)
		}
		t.Rows = append(t.Rows, []string{rd.Label, p.Engine, trimFloat(p.Scale), geoText(f.geoMean), strconv.Itoa(f.geoMean.N), tput, answers,
			noneOr(f.timedOut), noneOr(f.failed)})
		if len(f.wrong) > 0 {
			s.finding(fmt.Sprintf("%s: wrong answers for %s.", rd.Label, strings.Join(f.wrong, ", ")))
		}
	}
	s.table(t)
	tpchComparisons(s, group, figs)
	q := &Table{ID: "tpch-per-query", Caption: "Power test per query: seconds (read MB/s during it, with telemetry)",
		Header: append([]string{"query"}, labels(group)...), Numeric: append([]bool{false}, trues(len(group))...)}
	for i := range 22 {
		row := []string{cats[i]}
		for gi := range group {
			cell := "–"
			if v := figs[gi].perQuery[i]; !math.IsNaN(v) {
				cell = strconv.FormatFloat(v, 'f', 3, 64)
				if r := figs[gi].readMBps[i]; r > 0 {
					cell += fmt.Sprintf(" (%.0f MB/s)", r)
				}
			}
			row = append(row, cell)
		}
		q.Rows = append(q.Rows, row)
	}
	s.table(q)
	return s
}

// geoText is a geometric mean with its interval: "1.234 ± 0.056", or
// "1.234" from one power test.
func geoText(s stats.Summary) string {
	if s.N == 0 {
		return "–"
	}
	if !s.HasCI() {
		return strconv.FormatFloat(s.Mean, 'f', 3, 64)
	}
	return fmt.Sprintf("%.3f ± %.3f", s.Mean, (s.High-s.Low)/2)
}

// noneOr is a list of query names, or "none".
func noneOr(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func labels(runs []*runData) []string {
	out := make([]string, len(runs))
	for i, rd := range runs {
		out[i] = rd.Label
	}
	return out
}

func trues(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

// tpchLostMost is how many queries a comparison names as those that lost
// most.
const tpchLostMost = 3

// tpchComparisons sets runs side by side: on each engine, each run (a
// tier) against the engine's first, when an engine has several; else
// every run against the first (engines on one tier). Each comparison is
// the geometric mean's ratio with its interval and verdict, and the
// queries whose time grew most, with the read bandwidth each drove.
func tpchComparisons(s *Section, group []*runData, figs []tpchFigures) {
	var engines []string
	byEngine := map[string][]int{}
	for gi, rd := range group {
		e := rd.Params.TPCH.Engine
		if _, ok := byEngine[e]; !ok {
			engines = append(engines, e)
		}
		byEngine[e] = append(byEngine[e], gi)
	}
	var sets [][]int
	for _, e := range engines {
		if len(byEngine[e]) > 1 {
			sets = append(sets, byEngine[e])
		}
	}
	if len(sets) == 0 {
		all := make([]int, len(group))
		for i := range all {
			all[i] = i
		}
		sets = [][]int{all}
	}
	lost := &Table{ID: "tpch-lost", Caption: fmt.Sprintf("The %d queries that lost most against the first run of their engine", tpchLostMost),
		Header:  []string{"run", "against", "query", "ratio", "seconds", "against: seconds", "read MB/s", "against: read MB/s"},
		Numeric: []bool{false, false, false, true, true, true, true, true}}
	for _, set := range sets {
		base := set[0]
		for _, gi := range set[1:] {
			b, r := group[base], group[gi]
			if figs[base].geoMean.N > 0 && figs[gi].geoMean.N > 0 {
				c := stats.CompareSummaries(figs[gi].geoMean, figs[base].geoMean)
				s.finding(fmt.Sprintf("%s's geometric mean query time is %s %s's.", r.Label, ratioSentence(c), b.Label))
			}
			worst := tpchWorst(figs[gi], figs[base])
			var names []string
			for _, q := range worst {
				ratio := figs[gi].perQuery[q] / figs[base].perQuery[q]
				names = append(names, fmt.Sprintf("Q%d %.1fx (%s)", q+1, ratio, tpchReads(figs[gi].readMBps[q], figs[base].readMBps[q])))
				lost.Rows = append(lost.Rows, []string{r.Label, b.Label, "Q" + strconv.Itoa(q+1), fmt.Sprintf("%.2fx", ratio),
					strconv.FormatFloat(figs[gi].perQuery[q], 'f', 3, 64), strconv.FormatFloat(figs[base].perQuery[q], 'f', 3, 64),
					mbps(figs[gi].readMBps[q]), mbps(figs[base].readMBps[q])})
			}
			if len(names) > 0 {
				s.finding(fmt.Sprintf("Against %s, the queries that lost most on %s: %s.", b.Label, r.Label, strings.Join(names, ", ")))
			}
		}
	}
	if len(lost.Rows) > 0 {
		s.table(lost)
	}
}

// tpchWorst are the indexes of the (at most tpchLostMost) queries whose
// power-test time grew most from base to f, those that grew at all, the
// largest ratio first.
func tpchWorst(f, base tpchFigures) []int {
	var out []int
	ratio := func(i int) float64 { return f.perQuery[i] / base.perQuery[i] }
	for i := range f.perQuery {
		if r := ratio(i); !math.IsNaN(r) && !math.IsInf(r, 0) && r > 1 {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(ratio(b), ratio(a)) })
	return out[:min(len(out), tpchLostMost)]
}

// tpchReads says what a query read on both sides: "48 vs 190 MB/s read",
// or that telemetry did not sample it.
func tpchReads(r, base float64) string {
	if !(r > 0) && !(base > 0) {
		return "no reads sampled"
	}
	return fmt.Sprintf("%s vs %s MB/s read", mbps(r), mbps(base))
}

// mbps is a read rate for a table cell: "–" when none was sampled.
func mbps(v float64) string {
	if math.IsNaN(v) || v <= 0 {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
