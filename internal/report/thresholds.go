package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/threshold"
)

// thresholdsSection shows the pass/fail thresholds each run was given, as
// the run judged and stored them (threshold.Verdict, one per threshold and
// step or point): per run, a sentence saying which were breached where,
// and a table of every verdict.
func thresholdsSection(runs []*runData) *Section {
	s := &Section{ID: "thresholds", Title: "Thresholds"}
	for _, rd := range runs {
		if len(rd.Thresholds) == 0 {
			continue
		}
		if len(s.Blocks) == 0 {
			s.text("Each threshold given to a run (e.g. nopm>=50000, new_order.p99<=10ms) is judged on every TPC-C step or disk point, " +
				"against the figure the step or point stored; limits are in that figure's unit.")
		}
		s.finding(thresholdSentence(rd))
		s.table(thresholdTable(rd))
	}
	return s
}

// thresholdUnit is what a run's thresholds are judged on: TPC-C steps or
// disk points.
func thresholdUnit(rd *runData) string {
	if rd.Kind == stored.KindDisk {
		return "point"
	}
	return "step"
}

// verdictStep names the step or point a verdict was judged on: "2 (4
// VUs)", counting from 1 as the report's steps do; "" for a threshold that
// matched no step.
func verdictStep(rd *runData, v threshold.Verdict) string {
	if v.Step < 0 {
		return ""
	}
	name := v.Name
	if name == "" {
		for _, st := range rd.Steps {
			if st.Index == v.Step {
				name = stepLabel(rd, st)
			}
		}
	}
	n := strconv.Itoa(v.Step + 1)
	if name == "" {
		return n
	}
	return n + " (" + name + ")"
}

// thresholdSentence says how a run's thresholds fared, e.g. "nvme: 1 of 2
// thresholds breached: nopm>=50000 at steps 1 (1 VU) and 2 (2 VUs)." or
// "nvme: all 2 thresholds held at every step." A threshold that matched no
// step is breached, with its note.
func thresholdSentence(rd *runData) string {
	var exprs []string
	steps := map[string][]string{} // where a threshold was breached
	notes := map[string][]string{} // why a threshold that matched no step failed
	for _, v := range rd.Thresholds {
		if !slices.Contains(exprs, v.Threshold) {
			exprs = append(exprs, v.Threshold)
		}
		switch step := verdictStep(rd, v); {
		case v.Pass:
		case step != "":
			steps[v.Threshold] = append(steps[v.Threshold], step)
		default:
			notes[v.Threshold] = append(notes[v.Threshold], orUnknown(v.Note))
		}
	}
	unit := thresholdUnit(rd)
	var breached []string
	for _, e := range exprs {
		var how []string
		switch st := steps[e]; len(st) {
		case 0:
		case 1:
			how = append(how, "at "+unit+" "+st[0])
		default:
			how = append(how, "at "+unit+"s "+joinAnd(st))
		}
		if n := notes[e]; len(n) > 0 {
			how = append(how, "("+strings.Join(n, "; ")+")")
		}
		if len(how) > 0 {
			breached = append(breached, e+" "+strings.Join(how, " "))
		}
	}
	switch {
	case len(breached) > 0 && len(exprs) == 1:
		return fmt.Sprintf("%s: its threshold was breached: %s.", rd.Label, breached[0])
	case len(breached) > 0:
		return fmt.Sprintf("%s: %d of %d thresholds breached: %s.", rd.Label, len(breached), len(exprs), strings.Join(breached, "; "))
	case len(exprs) == 1:
		return fmt.Sprintf("%s: its threshold %s held at every %s.", rd.Label, exprs[0], unit)
	}
	return fmt.Sprintf("%s: all %d thresholds held at every %s.", rd.Label, len(exprs), unit)
}

// thresholdTable lists a run's verdicts as stored.
func thresholdTable(rd *runData) *Table {
	unit := thresholdUnit(rd)
	t := &Table{ID: "thresholds-" + rd.ID, Caption: fmt.Sprintf("Thresholds of %s, judged per %s", rd.Label, unit),
		Header:  []string{"threshold", unit, "figure", "value", "limit", "verdict"},
		Numeric: []bool{false, false, false, true, true, false}}
	for _, v := range rd.Thresholds {
		step, value := verdictStep(rd, v), num(v.Value)
		if step == "" {
			step, value = "none", "–"
		}
		verdict := "pass"
		if !v.Pass {
			verdict = "FAIL"
		}
		if v.Note != "" {
			verdict += ": " + v.Note
		}
		t.Rows = append(t.Rows, []string{v.Threshold, step, orDash(v.Key), value, num(v.Limit), verdict})
	}
	return t
}
