package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/stored"
)

// noisyText explains a section's table of noisy repetitions.
const noisyText = "Measured while the hypervisor stole CPU time, or while other processes (neither tierbench, the servers it measures, " +
	"nor the kernel's threads) used the host's cores beyond the run's limits, these are flagged noisy: their figures say as much " +
	"about the neighbours as about the storage. A run with --discard-noisy (or a report with it) leaves them out of the means " +
	"and intervals, unless every repetition of theirs was noisy."

// noisyRow is one repetition flagged noisy: which run, what it measured
// (a VU count, a point, a phase), its repetition, why, its telemetry, and
// whether the means count it.
type noisyRow struct {
	run, what, rep, why string
	host                map[string]float64
	counted             bool
}

// noisyTableOf is the table of rows (nil when there are none); whatHeader
// names the second column.
func noisyTableOf(id, caption, whatHeader string, rows []noisyRow) *Table {
	if len(rows) == 0 {
		return nil
	}
	t := &Table{ID: id, Caption: caption,
		Header:  []string{"run", whatHeader, "repetition", "why", "steal % of cores", "other processes % of cores", "kernel % of cores", "in the means"},
		Numeric: []bool{false, whatHeader == "VUs", true, false, true, true, true, false}}
	for _, r := range rows {
		in := "yes"
		if !r.counted {
			in = "no (discarded)"
		}
		t.Rows = append(t.Rows, []string{r.run, r.what, r.rep, r.why, pct(get(r.host, "cpu_steal_pct")),
			pct(get(r.host, "foreign_cpu_pct")), pct(get(r.host, "kernel_cpu_pct")), in})
	}
	return t
}

// repText is a repetition's number, "–" for a step measured once.
func repText(r int) string {
	if r == 0 {
		return "–"
	}
	return strconv.Itoa(r)
}

// tpccNoisy are the runs' TPC-C repetitions (a step measured once is its
// own) flagged noisy, and how many repetitions there are in all.
func tpccNoisy(runs []*runData) (rows []noisyRow, all int) {
	for _, rd := range runs {
		for _, x := range rd.TPCC {
			reps := x.Repetitions
			if len(reps) == 0 {
				reps = []*stored.TPCCStep{&x.TPCCStep}
			}
			counted := x.Counted()
			for _, r := range reps {
				all++
				if r.Noisy != "" {
					rows = append(rows, noisyRow{rd.Label, strconv.Itoa(r.VUs), repText(r.Repetition), r.Noisy, r.Host, slices.Contains(counted, r)})
				}
			}
		}
	}
	return rows, all
}

// diskNoisy are the runs' disk points (or their repetitions) flagged
// noisy, and how many there are in all.
func diskNoisy(runs []*runData) (rows []noisyRow, all int) {
	for _, rd := range runs {
		for _, d := range rd.Disk {
			reps := d.Repetitions
			if len(reps) == 0 {
				reps = []stored.Point{d.Point}
			}
			counted := d.counted()
			for _, r := range reps {
				all++
				if r.Noisy != "" {
					in := slices.ContainsFunc(counted, func(c stored.Point) bool { return c.Repetition == r.Repetition })
					rows = append(rows, noisyRow{rd.Label, r.Name, repText(r.Repetition), r.Noisy, r.Host, in})
				}
			}
		}
	}
	return rows, all
}

// backupNoisy are the runs' backup and restore phases flagged noisy, and
// how many there are in all.
func backupNoisy(runs []*runData) (rows []noisyRow, all int) {
	for _, rd := range runs {
		counted := backupCounted(rd)
		for i := range rd.Backup {
			all++
			if b := &rd.Backup[i]; b.Noisy != "" {
				rows = append(rows, noisyRow{rd.Label, b.Phase.Phase, strconv.Itoa(b.Cycle), b.Noisy, b.Host, slices.Contains(counted, b)})
			}
		}
	}
	return rows, all
}

// noisyTable lists the TPC-C steps (or repetitions) flagged noisy, nil
// when none was.
func noisyTable(runs []*runData) *Table {
	rows, _ := tpccNoisy(runs)
	return noisyTableOf("tpcc-noisy", "Noisy steps: measured beside steal time or other processes' CPU", "VUs", rows)
}

// noisyPoints lists the disk points (or repetitions) flagged noisy.
func noisyPoints(runs []*runData) *Table {
	rows, _ := diskNoisy(runs)
	return noisyTableOf("storage-noisy", "Noisy points: measured beside steal time or other processes' CPU", "point", rows)
}

// noisyPhases lists the backup and restore phases flagged noisy.
func noisyPhases(runs []*runData) *Table {
	rows, _ := backupNoisy(runs)
	return noisyTableOf("backup-noisy", "Noisy phases: timed beside steal time or other processes' CPU", "phase", rows)
}

// backupCounted are the run's phases its figures are over (stored.CountedPhases).
func backupCounted(rd *runData) []*stored.PhaseResult {
	ps := make([]*stored.PhaseResult, len(rd.Backup))
	for i := range rd.Backup {
		ps[i] = &rd.Backup[i]
	}
	return stored.CountedPhases(ps, rd.discardNoisy)
}

// noisyFinding is the report's warning when any repetition it shows was
// measured on a noisy host ("" when none was): how many of each kind, the
// worst steal and other processes' shares, and how many the means still
// count, since every finding drawn from those means rests on them.
func noisyFinding(runs []*runData) string {
	var parts []string
	var worstSteal, worstOther float64
	noisy, counted := 0, 0
	for _, k := range []struct {
		kind string
		find func([]*runData) ([]noisyRow, int)
	}{{"TPC-C steps", tpccNoisy}, {"disk points", diskNoisy}, {"backup and restore phases", backupNoisy}} {
		rows, all := k.find(runs)
		if len(rows) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%d of %d %s", len(rows), all, k.kind))
		for _, r := range rows {
			noisy++
			if r.counted {
				counted++
			}
			worstSteal = max(worstSteal, get(r.host, "cpu_steal_pct"))
			worstOther = max(worstOther, get(r.host, "foreign_cpu_pct"))
		}
	}
	if noisy == 0 {
		return ""
	}
	var how []string
	if worstSteal > 0 {
		how = append(how, fmt.Sprintf("the hypervisor stole up to %.1f%% of all cores", worstSteal))
	}
	if worstOther > 0 {
		how = append(how, fmt.Sprintf("other processes took up to %.1f%%", worstOther))
	}
	s := fmt.Sprintf("%s were measured on a noisy host (%s).", strings.Join(parts, ", "), strings.Join(how, ", "))
	switch {
	case counted == noisy:
		s += " The means count them, so the findings below say as much about the neighbours as about the storage where they rest on them; " +
			"tierbench report --discard-noisy leaves them out wherever their step has quiet repetitions, and a rerun on a quiet host settles the rest."
	case counted > 0:
		s += fmt.Sprintf(" Left out of the means (--discard-noisy): %d; still counted, as the only measurements of their step: %d.", noisy-counted, counted)
	default:
		s += " All are left out of the means (--discard-noisy)."
	}
	return s
}
