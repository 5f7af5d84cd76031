package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/report/chart"
)

// maxOpenTraces is how many points' per-second traces are shown unfolded;
// with more, each point's traces are folded under its name.
const maxOpenTraces = 4

// diskSection is the storage profiles: IOPS against latency by queue depth
// (random access), MB/s against latency by block size (sequential), bars
// per point, per-second traces, the points table and ratios.
func diskSection(runs []*runData) *Section {
	s := &Section{ID: "storage", Title: "Storage profiles"}
	s.text("Measured with fio, one job file per point. Latency is completion latency (clat); percentiles come from the jobs' merged " +
		"latency histograms, never from averaged percentiles. IOPS and MB/s count reads and writes together; MB is 10^6 bytes.")
	s.figure(familyFigure(runs, "storage-iops-latency", "IOPS vs average latency, by queue depth (random access)", "IOPS",
		func(d diskStep) bool { return d.random() },
		func(d diskStep) string { return fmt.Sprintf("%s %s x%d jobs", d.BS, d.mixName(), d.Jobs) },
		func(d diskStep) float64 { return d.iops() },
		func(d diskStep) string { return "qd" + strconv.Itoa(d.IODepth) }))
	s.figure(familyFigure(runs, "storage-mbps-latency", "MB/s vs average latency, by block size (sequential)", "MB/s",
		func(d diskStep) bool { return !d.random() },
		func(d diskStep) string { return fmt.Sprintf("%s qd%d x%d jobs", d.mixName(), d.IODepth, d.Jobs) },
		func(d diskStep) float64 { return d.mbps() },
		func(d diskStep) string { return d.BS }))
	names := pointNames(runs)
	s.figure(pointBars(runs, names, "storage-iops", "IOPS per point", "I/O per second", diskStep.iops))
	s.figure(pointBars(runs, names, "storage-mbps", "Throughput per point", "MB/s", diskStep.mbps))
	s.figure(pointBars(runs, names, "storage-p99", "99th-percentile latency per point (the worse direction)", "latency (ms)", diskStep.p99Ms))
	s.table(diskTable(runs))
	if len(runs) > 1 {
		s.table(diskRatios(runs, names))
	}
	// Per-second traces, per point.
	var traces []Block
	for i, name := range names {
		iops := diskTrace(runs, name, fmt.Sprintf("storage-trace-%d-iops", i), "IOPS per second: "+name, "I/O per second", "iops")
		lat := diskTrace(runs, name, fmt.Sprintf("storage-trace-%d-lat", i), "Average latency per second: "+name, "latency (ms)", "clat_ms")
		var blocks []Block
		for _, f := range []*Figure{iops, lat} {
			if !f.Chart.Empty() {
				blocks = append(blocks, figureBlock(f))
			}
		}
		if len(blocks) == 0 {
			continue
		}
		if len(names) > maxOpenTraces {
			traces = append(traces, detailsBlock(&Details{Summary: "per-second traces of " + name, Blocks: blocks}))
		} else {
			traces = append(traces, blocks...)
		}
	}
	if len(traces) > 0 {
		s.text("Per-second traces of each point (fio's one-second logs), from the start of its measured interval.")
		s.Blocks = append(s.Blocks, traces...)
	}
	return s
}

// familyFigure draws points of the same family (everything equal but the
// swept parameter) as a line, each point labelled with the swept value.
func familyFigure(runs []*runData, id, title, xlabel string, keep func(diskStep) bool, family func(diskStep) string,
	x func(diskStep) float64, label func(diskStep) string) *Figure {
	c := chart.Chart{Title: title, XLabel: xlabel, YLabel: "average latency (ms)", Kind: chart.Line, YFromZero: true}
	fam := 0
	for _, rd := range runs {
		var order []string
		by := map[string][]diskStep{}
		for _, d := range rd.Disk {
			if !keep(d) {
				continue
			}
			f := family(d)
			if _, ok := by[f]; !ok {
				order = append(order, f)
			}
			by[f] = append(by[f], d)
		}
		for fi, f := range order {
			s := chart.Series{Name: rd.Label + " " + f, Color: rd.Color, Dashed: fi%2 == 1}
			if len(runs) == 1 {
				s = chart.Series{Name: f, Color: fam}
			}
			fam++
			for _, d := range by[f] {
				if y := d.meanMs(); !math.IsNaN(y) {
					s.Points = append(s.Points, chart.Point{X: x(d), Y: y, Label: label(d)})
				}
			}
			c.Series = append(c.Series, s)
		}
	}
	return &Figure{ID: id, Chart: c}
}

// pointNames is the union of the runs' point names, in the order they ran.
func pointNames(runs []*runData) []string {
	var names []string
	seen := map[string]bool{}
	for _, rd := range runs {
		for _, d := range rd.Disk {
			if !seen[d.Name] {
				seen[d.Name] = true
				names = append(names, d.Name)
			}
		}
	}
	return names
}

func pointBars(runs []*runData, names []string, id, title, ylabel string, v func(diskStep) float64) *Figure {
	c := chart.Chart{Title: title, XLabel: "point", YLabel: ylabel, Kind: chart.Bar, YFromZero: true, Categories: names}
	for _, rd := range runs {
		s := chart.Series{Name: rd.Label, Color: rd.Color}
		for i, name := range names {
			y := math.NaN()
			if d, ok := rd.point(name); ok {
				y = v(d)
			}
			s.Points = append(s.Points, chart.Point{X: float64(i), Y: y})
		}
		c.Series = append(c.Series, s)
	}
	return &Figure{ID: id, Chart: c}
}

func diskTable(runs []*runData) *Table {
	t := &Table{ID: "storage-points", Caption: "Points: per direction IOPS, MB/s and completion latency (ms)",
		Header: []string{"run", "point", "read IOPS", "read MB/s", "read avg", "read p99", "read p99.9",
			"write IOPS", "write MB/s", "write avg", "write p99", "write p99.9", "fio CPU usr/sys"},
		Numeric: []bool{false, false, true, true, true, true, true, true, true, true, true, true, true}}
	dir := func(d *fio.DirStats) []string {
		if d == nil {
			return []string{"–", "–", "–", "–", "–"}
		}
		return []string{num(d.IOPS), num(d.MBps), num(d.MeanMs), num(d.P99Ms), num(d.P999Ms)}
	}
	for _, rd := range runs {
		for _, d := range rd.Disk {
			row := append([]string{rd.Label, d.Name}, dir(d.Read)...)
			row = append(row, dir(d.Write)...)
			row = append(row, fmt.Sprintf("%s / %s %%", num(d.UsrCPUPct), num(d.SysCPUPct)))
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

func diskRatios(runs []*runData, names []string) *Table {
	base := runs[0]
	t := &Table{ID: "storage-ratios", Caption: fmt.Sprintf("Ratios against the baseline %s (above 1: more throughput, or more latency)", base.Label),
		Header:  []string{"run", "point", "IOPS ratio", "MB/s ratio", "avg latency ratio", "p99 ratio"},
		Numeric: []bool{false, false, true, true, true, true}}
	for _, rd := range runs[1:] {
		for _, name := range names {
			b, ok1 := base.point(name)
			d, ok2 := rd.point(name)
			if !ok1 || !ok2 {
				continue
			}
			t.Rows = append(t.Rows, []string{rd.Label, name, ratio(b.iops(), d.iops()), ratio(b.mbps(), d.mbps()),
				ratio(b.meanMs(), d.meanMs()), ratio(b.p99Ms(), d.p99Ms())})
		}
	}
	return t
}

// diskTrace draws one per-second metric (read and write) of the point with
// this name in every run.
func diskTrace(runs []*runData, name, id, title, ylabel, metric string) *Figure {
	c := chart.Chart{Title: title, XLabel: "time in the measured interval (s)", YLabel: ylabel, Kind: chart.Line, YFromZero: true}
	for _, rd := range runs {
		if d, ok := rd.point(name); ok {
			t0 := rd.measureStart(d.Index)
			for di, dir := range []string{"read", "write"} {
				pts := rd.points(dir+"."+metric, d.Index)
				if len(pts) == 0 {
					continue
				}
				s := chart.Series{Name: rd.Label + " " + dir + "s", Color: rd.Color, Dashed: di == 1}
				if len(runs) == 1 {
					s = chart.Series{Name: dir + "s", Color: di}
				}
				for _, p := range pts {
					s.Points = append(s.Points, chart.Point{X: p.T.Sub(t0).Seconds(), Y: p.Value})
				}
				c.Series = append(c.Series, s)
			}
		}
	}
	return &Figure{ID: id, Chart: c}
}
