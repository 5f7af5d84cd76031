package report

import (
	"fmt"
	"strconv"

	"github.com/tierbench/tierbench/internal/report/chart"
)

// backupSection shows backup and restore cycles: runs of kind "backup",
// one step per phase of each cycle (see backupStep). Their devices'
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
			c := fmt.Sprintf("%s %d", b.Phase, b.Cycle)
			if !seen[c] {
				seen[c] = true
				cats = append(cats, c)
			}
		}
	}
	bars := func(id, title, ylabel string, v func(backupStep) float64) *Figure {
		c := chart.Chart{Title: title, XLabel: "phase and cycle", YLabel: ylabel, Kind: chart.Bar, YFromZero: true, Categories: cats}
		for _, rd := range group {
			sr := chart.Series{Name: rd.Label, Color: rd.Color}
			for i, cat := range cats {
				y := nan()
				for _, b := range rd.Backup {
					if fmt.Sprintf("%s %d", b.Phase, b.Cycle) == cat {
						y = v(b)
					}
				}
				sr.Points = append(sr.Points, chart.Point{X: float64(i), Y: y})
			}
			c.Series = append(c.Series, sr)
		}
		return &Figure{ID: id, Chart: c}
	}
	s.figure(bars("backup-seconds", "Backup and restore times", "duration (s)", func(b backupStep) float64 { return b.Seconds }))
	s.figure(bars("backup-mbps", "Backup and restore throughput", "MB/s", func(b backupStep) float64 { return b.MBps }))
	t := &Table{ID: "backup-cycles", Caption: "Cycles", Header: []string{"run", "cycle", "phase", "method", "duration s", "size", "MB/s"},
		Numeric: []bool{false, true, false, false, true, true, true}}
	for _, rd := range group {
		for _, b := range rd.Backup {
			t.Rows = append(t.Rows, []string{rd.Label, strconv.Itoa(b.Cycle), b.Phase, orUnknown(b.Method), num(b.Seconds),
				bytesText(int64(b.Bytes)), num(b.MBps)})
		}
	}
	s.table(t)
	return s
}

// neighboursSection compares TPC-C runs of several instances that ran at
// the same time: runs whose parameters name an "instance". Their "phase"
// (e.g. "baseline", then "beside backups") makes the bar groups, so the same
// instance lines up across phases.
func neighboursSection(runs []*runData) *Section {
	s := &Section{ID: "neighbours", Title: "Instances side by side"}
	var group []*runData
	for _, rd := range runs {
		if rd.Kind == "tpcc" && rd.paramString("instance") != "" {
			group = append(group, rd)
		}
	}
	if len(group) < 2 {
		return s
	}
	s.text("TPC-C on several database instances at once; each instance's numbers are its own largest step.")
	var cats, groups []string
	seenC, seenG := map[string]bool{}, map[string]bool{}
	for _, rd := range group {
		if in := rd.paramString("instance"); !seenC[in] {
			seenC[in] = true
			cats = append(cats, in)
		}
		if p := phaseOf(rd); !seenG[p] {
			seenG[p] = true
			groups = append(groups, p)
		}
	}
	c := chart.Chart{Title: "NOPM per instance", XLabel: "instance", YLabel: "NOPM", Kind: chart.Bar, YFromZero: true, Categories: cats}
	t := &Table{ID: "neighbours-instances", Caption: "Per instance", Header: []string{"phase", "instance", "role", "VUs", "TPM", "NOPM", "NO p95 ms"},
		Numeric: []bool{false, false, false, true, true, true, true}}
	for gi, g := range groups {
		sr := chart.Series{Name: g, Color: gi}
		for i, in := range cats {
			y := nan()
			for _, rd := range group {
				if phaseOf(rd) != g || rd.paramString("instance") != in {
					continue
				}
				if last, ok := lastStep(rd); ok {
					y = last.NOPM
					t.Rows = append(t.Rows, []string{g, in, orUnknown(rd.paramString("role")), strconv.Itoa(last.VUs), num(last.TPM),
						num(last.NOPM), num(last.Txn["new_order"].P95Ms)})
				}
			}
			sr.Points = append(sr.Points, chart.Point{X: float64(i), Y: y})
		}
		c.Series = append(c.Series, sr)
	}
	s.figure(&Figure{ID: "neighbours-nopm", Chart: c})
	s.table(t)
	return s
}

// phaseOf is the phase a side-by-side run belongs to ("" when unnamed).
func phaseOf(rd *runData) string {
	if p := rd.paramString("phase"); p != "" {
		return p
	}
	return orUnknown(rd.Group)
}
