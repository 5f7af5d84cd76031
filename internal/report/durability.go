package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/stats"
)

// durabilitySection shows durability tests: runs of kind "durability", a
// row per fault cycle, with the verdict of clause 3.5.4.
func durabilitySection(runs []*runData) *Section {
	s := &Section{ID: "durability", Title: "Durability"}
	var lost, cycles, failed int64
	var over int64             // cycles whose excess is outside its bound
	var maxExcess, bound int64 // the largest excess and its cycle's bound
	t := &Table{ID: "durability-cycles", Caption: "Fault cycles: acknowledged New-Orders and what recovery kept",
		Header:  []string{"run", "fault", "load", "cycle", "TPC-C s", "acknowledged", "committed", "found", "lost", "rolled back, found", "excess (bound)", "recovery s", "consistency", "verdict"},
		Numeric: []bool{false, false, false, true, true, true, true, true, true, true, true, true, false, false}}
	var labels []string                // in the order of their first cycle
	recovery := map[string][]float64{} // each label's recovery seconds
	for _, rd := range runs {
		var fault, load string
		if p := rd.Params.Durability; p != nil {
			fault, load = p.FaultText(), p.LoadText()
		}
		for _, c := range rd.Durability {
			cycles++
			if _, ok := recovery[rd.Label]; !ok {
				labels = append(labels, rd.Label)
			}
			recovery[rd.Label] = append(recovery[rd.Label], c.RecoverySeconds)
			lost += c.Lost
			if c.Excess < 0 || c.Excess > c.ExcessBound {
				over++
			}
			if cycles == 1 || c.Excess > maxExcess {
				maxExcess, bound = c.Excess, c.ExcessBound
			}
			verdict := "ok"
			if !c.OK {
				failed++
				verdict = "FAILED: " + strings.Join(c.Problems, "; ")
			}
			consistency := "hold"
			if !c.Consistency {
				consistency = "fail " + strings.Join(c.Failed, ", ")
			}
			t.Rows = append(t.Rows, []string{rd.Label, orUnknown(fault), orUnknown(load), strconv.Itoa(c.Cycle), num(c.RanSeconds),
				thousands(c.Acknowledged), thousands(c.Committed), thousands(c.Found), thousands(c.Lost), thousands(c.RolledBackFound),
				fmt.Sprintf("%d (%d)", c.Excess, c.ExcessBound), num(c.RecoverySeconds), consistency, verdict})
		}
	}
	if cycles == 0 {
		return s
	}
	s.text("Each cycle runs TPC-C (a closed loop, or with --rate an open loop at the rate offered, the load column says which), " +
		"logs every New-Order the database acknowledged, causes the fault while transactions are in flight, " +
		"recovers and verifies (TPC-C clause 3.5.4): every committed New-Order must have its order, no rolled-back one may, " +
		"sum(D_NEXT_O_ID) must have grown by at least the committed ones and by at most one more per virtual user " +
		"(orders committed but not yet acknowledged when the fault hit), and the consistency conditions must hold.")
	excess := "the excess (orders committed but not yet acknowledged when the fault hit) was "
	if over > 0 {
		excess += "outside its bound in " + plural(int(over), "cycle", "cycles")
	} else {
		excess += fmt.Sprintf("at most %d, within its bound of %d", maxExcess, bound)
	}
	if failed == 0 {
		all := fmt.Sprintf("All %d cycles", cycles)
		if cycles == 1 {
			all = "The one cycle"
		}
		s.finding(fmt.Sprintf("%s passed: no acknowledged New-Order was lost, and %s.", all, excess))
	} else {
		s.finding(fmt.Sprintf("%d of %d cycles FAILED: %d committed New-Orders were lost; %s.", failed, cycles, lost, excess))
	}
	if f := recoveryFinding(labels, recovery); f != "" {
		s.finding(f)
	}
	s.table(t)
	return s
}

// recoveryFinding compares the recovery times of the runs labelled other
// than the first with the first's (e.g. two tiers of a scenario): "" with
// one label.
func recoveryFinding(labels []string, recovery map[string][]float64) string {
	if len(labels) < 2 {
		return ""
	}
	base := labels[0]
	parts := make([]string, 0, len(labels)-1)
	for _, l := range labels[1:] {
		parts = append(parts, fmt.Sprintf("%s %s", l, stats.Compare(recovery[l], recovery[base]).Text()))
	}
	return fmt.Sprintf("Recovery from the fault took %s s on average on %s (%s); relative to it: %s.", num(stats.Of(recovery[base]).Mean), base,
		plural(len(recovery[base]), "cycle", "cycles"), strings.Join(parts, "; "))
}
