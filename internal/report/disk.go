package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tierbench/tierbench/internal/report/chart"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
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
	if repeatedPoints(runs) {
		s.text("A point run several times (--repeat) is shown once, with the means over its repetitions: its percentiles too are the means " +
			"of each repetition's own, which comes from that repetition's merged histograms. Error bars are 95% confidence intervals over " +
			"the repetitions; for a figure over both directions (IOPS and MB/s summed, the average latency) the interval is over each " +
			"repetition's own value of it, and the p99 bar is the worse direction's, with that direction's interval.")
	}
	s.figure(familyFigure(runs, "storage-iops-latency", "IOPS vs average latency, by queue depth (random access)", "IOPS",
		func(d diskStep) bool { return d.random() },
		func(d diskStep) string { return fmt.Sprintf("%s %s x%d jobs", d.BS, d.mixName(), d.Jobs) },
		func(d diskStep) float64 { return d.IOPS() },
		func(d diskStep) string { return "qd" + strconv.Itoa(d.IODepth) }))
	s.figure(familyFigure(runs, "storage-mbps-latency", "MB/s vs average latency, by block size (sequential)", "MB/s",
		func(d diskStep) bool { return !d.random() },
		func(d diskStep) string { return fmt.Sprintf("%s qd%d x%d jobs", d.mixName(), d.IODepth, d.Jobs) },
		func(d diskStep) float64 { return d.mbps() },
		func(d diskStep) string { return d.BS }))
	names := pointNames(runs)
	s.figure(pointBars(runs, names, "storage-iops", "IOPS per point", "I/O per second", "iops"))
	s.figure(pointBars(runs, names, "storage-mbps", "Throughput per point", "MB/s", "mbps"))
	s.figure(pointBars(runs, names, "storage-p99", "99th-percentile latency per point (the worse direction)", "latency (ms)", "p99_ms"))
	s.table(diskTable(runs))
	knees := make([][]stored.DiskKnee, len(runs))
	for i, rd := range runs {
		knees[i] = diskKnees(rd)
		for _, k := range knees[i] {
			s.finding(rd.Label + ": " + k.Text() + ".")
		}
	}
	for i, f := range rateFigures(runs, knees) {
		f.ID = fmt.Sprintf("storage-rate-latency-%d", i)
		s.figure(f)
	}
	if t := noisyPoints(runs); t != nil {
		s.text(noisyText)
		s.table(t)
	}
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
					pt := chart.Point{X: x(d), Y: y, Label: label(d)}
					pt.Low, pt.High = d.interval("mean_ms")
					s.Points = append(s.Points, pt)
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

// pointBars draws figure key (see diskStep.figure) of every point, a bar
// per run, with its interval over the point's repetitions.
func pointBars(runs []*runData, names []string, id, title, ylabel, key string) *Figure {
	c := chart.Chart{Title: title, XLabel: "point", YLabel: ylabel, Kind: chart.Bar, YFromZero: true, Categories: names}
	for _, rd := range runs {
		s := chart.Series{Name: rd.Label, Color: rd.Color}
		for i, name := range names {
			pt := chart.Point{X: float64(i), Y: math.NaN()}
			if d, ok := rd.point(name); ok {
				pt.Y = d.figure(key)
				pt.Low, pt.High = d.interval(key)
			}
			s.Points = append(s.Points, pt)
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
	repeated := repeatedPoints(runs)
	if repeated { // how many repetitions each row is the mean of
		t.Caption += "; a repeated point's figures are the means over its n repetitions (each percentile the mean of theirs)"
		t.Header = slices.Insert(t.Header, 2, "n")
		t.Numeric = slices.Insert(t.Numeric, 2, true)
	}
	dir := func(d *stored.DirStats) []string {
		if d == nil {
			return []string{"–", "–", "–", "–", "–"}
		}
		return []string{num(d.IOPS), num(d.MBps), num(d.MeanMs), num(d.P99Ms), num(d.P999Ms)}
	}
	for _, rd := range runs {
		for _, d := range rd.Disk {
			row := []string{rd.Label, d.Name}
			if repeated {
				row = append(row, strconv.Itoa(d.repetitions()))
			}
			row = append(row, dir(d.Read)...)
			row = append(row, dir(d.Write)...)
			row = append(row, fmt.Sprintf("%s / %s %%", num(d.UsrCPUPct), num(d.SysCPUPct)))
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

func diskRatios(runs []*runData, names []string) *Table {
	base := runs[0]
	t := &Table{ID: "storage-ratios", Caption: fmt.Sprintf("Ratios against the baseline %s (above 1: more throughput, or more latency), "+
		"with their 95%% confidence intervals over the repetitions and a verdict", base.Label),
		Header:  []string{"run", "point", "n", "IOPS ratio", "IOPS verdict", "MB/s ratio", "avg latency ratio", "p99 ratio", "p99 verdict"},
		Numeric: []bool{false, false, false, true, false, true, true, true, false}}
	for _, rd := range runs[1:] {
		for _, name := range names {
			b, ok1 := base.point(name)
			d, ok2 := rd.point(name)
			if !ok1 || !ok2 {
				continue
			}
			f := diskFigures(d, b) // iops, mbps, mean_ms, p99_ms
			n := strconv.Itoa(d.repetitions())
			if d.repetitions() != b.repetitions() {
				n += "/" + strconv.Itoa(b.repetitions())
			}
			t.Rows = append(t.Rows, []string{rd.Label, name, n, ratioCI(f[0].c), verdict(f[0].c), ratioCI(f[1].c),
				ratioCI(f[2].c), ratioCI(f[3].c), verdict(f[3].c)})
		}
	}
	return t
}

// values are a figure of the point (figure's keys) once per repetition
// its means count, or once for a point measured once.
func (d diskStep) values(key string) []float64 {
	if len(d.Repetitions) == 0 {
		return []float64{d.figure(key)}
	}
	var xs []float64
	for _, r := range d.counted() {
		xs = append(xs, diskStep{PointStep: stored.PointStep{Point: r}}.figure(key))
	}
	return xs
}

// diskTrace draws one per-second metric (read and write) of the point with
// this name in every run; a repeated point's repetitions each, from the
// start of its own measured interval.
func diskTrace(runs []*runData, name, id, title, ylabel, metric string) *Figure {
	c := chart.Chart{Title: title, XLabel: "time in the measured interval (s)", YLabel: ylabel, Kind: chart.Line, YFromZero: true}
	for _, rd := range runs {
		d, ok := rd.point(name)
		if !ok {
			continue
		}
		for ri, idx := range d.Indexes {
			t0 := rd.measureStart(idx)
			rep := ""
			if ri < len(d.Repetitions) && d.Repetitions[ri].Repetition > 0 {
				rep = fmt.Sprintf(", repetition %d", d.Repetitions[ri].Repetition)
			}
			for di, dir := range []string{"read", "write"} {
				pts := rd.points(dir+"."+metric, idx)
				if len(pts) == 0 {
					continue
				}
				s := chart.Series{Name: rd.Label + " " + dir + "s" + rep, Color: rd.Color, Dashed: di == 1}
				switch {
				case len(runs) == 1 && len(d.Indexes) > 1: // a colour per repetition
					s = chart.Series{Name: dir + "s" + rep, Color: ri, Dashed: di == 1}
				case len(runs) == 1:
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

// figure is what the charts plot of a point, by key: "iops" and "mbps"
// (reads and writes together), "mean_ms" (over both directions' I/Os),
// "p99_ms" (the worse direction's).
func (d diskStep) figure(key string) float64 {
	switch key {
	case "iops":
		return d.IOPS()
	case "mbps":
		return d.mbps()
	case "mean_ms":
		return d.meanMs()
	case "p99_ms":
		return d.p99Ms()
	}
	return math.NaN()
}

// interval is the 95% interval of figure key over the point's
// repetitions; NaN, NaN when there is none (a point measured once). The
// figure of a point with one direction is that direction's, whose
// interval Stats has (stored.GroupPoints's "read.iops", "write.p99_ms" …); the
// p99 of a point with both is the worse direction's, with its interval.
// A sum or mean over both directions has no figure in Stats: its interval
// is over each repetition's own (those that counted in the means).
func (d diskStep) interval(key string) (low, high float64) {
	var dirs []string
	if d.Read != nil {
		dirs = append(dirs, "read")
	}
	if d.Write != nil {
		dirs = append(dirs, "write")
	}
	var s stats.Summary
	switch {
	case len(dirs) == 0:
		return math.NaN(), math.NaN()
	case len(dirs) == 1:
		s = d.Stats[dirs[0]+"."+key]
	case key == "p99_ms":
		worse := "read"
		if dirStats(d.Write).P99Ms > dirStats(d.Read).P99Ms {
			worse = "write"
		}
		s = d.Stats[worse+".p99_ms"]
	default:
		s = stats.Of(d.values(key))
	}
	if !s.HasCI() {
		return math.NaN(), math.NaN()
	}
	return s.Low, s.High
}

// repeatedPoints says whether any of the runs repeated its points.
func repeatedPoints(runs []*runData) bool {
	for _, rd := range runs {
		for _, d := range rd.Disk {
			if len(d.Repetitions) > 0 {
				return true
			}
		}
	}
	return false
}

// counted are the repetitions the point's means are over: those that ran
// whole, or all when none did (as stored.GroupPoints counts them).
func (d diskStep) counted() []stored.Point { return d.Point.Counted() }

// repetitions is how many repetitions the point's figures are the means
// of (1 for a point measured once).
func (d diskStep) repetitions() int {
	return max(len(d.counted()), 1)
}

// diskKnees are the knees of a run's points offered at two or more rates
// (stored.FindDiskKnees), bounded as the run was.
func diskKnees(rd *runData) []stored.DiskKnee {
	var points []stored.Point
	for _, d := range rd.Disk {
		points = append(points, d.Point)
	}
	var bound string
	if p := rd.Params.Disk; p != nil {
		bound = p.KneeP99
	}
	return stored.FindDiskKnees(points, kneeBound(bound))
}

// rateFigures draw, for each shape of point run at fixed rates (all but
// the rate the same: stored.RatelessName), each run's p99 completion
// latency against the IOPS it did, its knee (of knees, the runs' own, as
// diskKnees found them) labelled. Points at one rate have no curve to
// draw.
func rateFigures(runs []*runData, knees [][]stored.DiskKnee) []*Figure {
	var shapes []string
	for _, rd := range runs {
		for _, d := range rd.Disk {
			if n := stored.RatelessName(d.Name); d.RateIOPS > 0 && !slices.Contains(shapes, n) {
				shapes = append(shapes, n)
			}
		}
	}
	var out []*Figure
	for _, shape := range shapes {
		c := chart.Chart{Title: "p99 completion latency against the rate done: " + shape + " (fixed rates, the worse direction)",
			XLabel: "I/O per second done", YLabel: "p99 completion latency (ms)", Kind: chart.Line, YFromZero: true}
		for i, rd := range runs {
			var knee float64
			for _, k := range knees[i] {
				if stored.RatelessName(k.Point) == shape {
					knee = k.OfferedIOPS
				}
			}
			var rated []diskStep
			for _, d := range rd.Disk {
				if d.RateIOPS > 0 && stored.RatelessName(d.Name) == shape {
					rated = append(rated, d)
				}
			}
			// In the order of the rates offered: past its knee a tier
			// can do fewer I/Os at a higher rate, and the line turns back.
			slices.SortFunc(rated, func(a, b diskStep) int { return cmp.Compare(a.RateIOPS, b.RateIOPS) })
			sr := chart.Series{Name: rd.legend(), Color: rd.Color}
			for _, d := range rated {
				p := chart.Point{X: d.IOPS(), Y: d.p99Ms()}
				if knee > 0 && d.OfferedIOPS() == knee {
					p.Label = "knee"
				}
				sr.Points = append(sr.Points, p)
			}
			if len(sr.Points) > 1 {
				c.Series = append(c.Series, sr)
			}
		}
		if len(c.Series) > 0 {
			out = append(out, &Figure{Chart: c})
		}
	}
	return out
}
