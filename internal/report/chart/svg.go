package chart

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

const (
	margin = 8 // points around the whole chart

	// maxMarkers is the most points a Line series may have and still get a marker on each; beyond it the
	// markers merge into a smear (a 300-second time series) and only labelled points keep one.
	maxMarkers = 60

	// maxBarValues is the most bars that get their value printed on top.
	maxBarValues = 40

	barGroupWidth = 0.8  // share of a category slot the bar group takes
	barFill       = 0.88 // share of its slot a bar fills: the small gap between bars of a group

	// fontFamily replaces the bare family name vgsvg writes. Liberation Sans is what the layout was measured
	// with; Arial and Helvetica share its metrics, so labels keep their place where it is not installed.
	fontFamily = `font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`
)

// SVG renders the chart. The output is a standalone <svg ...> element (no XML prolog, no DOCTYPE) for
// inlining into HTML: it has a viewBox, width="100%" and a max-width of its natural size, so it fills a
// ~900 px column and shrinks in narrower ones. Points with NaN or Inf X or Y are skipped (a Line is broken
// there rather than bridged). An Empty chart returns an error.
func (c Chart) SVG() (out []byte, err error) {
	if c.Empty() {
		return nil, fmt.Errorf("chart %q: nothing to draw", c.Title)
	}
	// gonum/plot reports bad input (an impossible axis range, a broken font) by panicking; one chart must
	// not take the whole report down with it.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("chart %q: render: %v", c.Title, r)
		}
	}()

	w, h := c.size()
	cv := vgsvg.NewWith(vgsvg.UseWH(vg.Points(w), vg.Points(h)))
	dc := draw.New(cv)
	dc.SetColor(white)
	dc.Fill(dc.Rectangle.Path())

	top := dc.Max.Y - margin
	top = drawTitle(dc, c.Title, top)
	top = c.drawLegend(dc, top)

	p := c.newPlot(w)
	p.Draw(draw.Crop(dc, margin, -margin, margin, top-4-dc.Max.Y))

	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart %q: write svg: %w", c.Title, err)
	}
	return inlineSVG(buf.Bytes(), w, h, c.Title)
}

// inlineSVG turns vgsvg's document into an element for HTML: its XML prolog and comment go, the root tag is
// rewritten with a viewBox and fluid width (and without the unused xlink namespace), a <title> names the
// chart for screen readers, and text gets a font-family list with fallbacks.
func inlineSVG(doc []byte, w, h float64, title string) ([]byte, error) {
	start := bytes.Index(doc, []byte("<svg"))
	if start < 0 {
		return nil, fmt.Errorf("chart %q: vgsvg output has no <svg> element", title)
	}
	end := bytes.IndexByte(doc[start:], '>')
	if end < 0 {
		return nil, fmt.Errorf("chart %q: vgsvg output has an unterminated <svg> tag", title)
	}
	body := doc[start+end+1:]
	body = bytes.ReplaceAll(body, []byte("font-family:Liberation Sans;"), []byte(fontFamily))
	body = bytes.ReplaceAll(body, []byte("font-variant:normal;"), nil)

	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	esc := html.EscapeString(title)
	var b bytes.Buffer
	b.Grow(len(body) + 300)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="100%%" `+
		`style="max-width:%spx;height:auto" role="img" aria-label="%s">`,
		num(w), num(h), num(math.Round(w*4/3)), esc)
	fmt.Fprintf(&b, "\n<title>%s</title>", esc)
	b.Write(body)
	return b.Bytes(), nil
}

// drawTitle writes the title centred under top and returns the y below it. A title too wide for the chart
// is set smaller rather than cut off.
func drawTitle(dc draw.Canvas, title string, top vg.Length) vg.Length {
	if title == "" {
		return top
	}
	avail := dc.Max.X - dc.Min.X - 2*margin
	sty := textStyle(titleSize, true, textBlack)
	if tw := sty.Width(title); tw > avail {
		sty.Font.Size = vg.Length(math.Max(8, float64(sty.Font.Size)*float64(avail/tw)))
	}
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: top}, title)
	return top - sty.Height(title) - 2
}

// The legend sits above the plot area, under the title, as one centred row, or as a grid when the entries do
// not fit in one row. Outside the plot it never hides data, which matters more here than the space it takes:
// the report is read on paper too, without hovering to find what a legend covers.
const (
	thumbGap  = 4
	entryGap  = 16
	rowHeight = 13
)

type legendEntry struct {
	name    string
	color   color.Color
	dashed  bool
	shape   int
	markers bool // Line: the series draws a marker on every point
	band    bool // Line: the series is drawn as an envelope
}

func (c Chart) legendEntries() []legendEntry {
	var es []legendEntry
	cols := math.MaxInt
	if c.Kind == Line {
		cols = c.columns()
	}
	for _, s := range c.Series {
		if s.Name == "" {
			continue
		}
		n := c.drawableCount(s)
		name := s.Name
		if n == 0 {
			name += " (no data)"
		}
		es = append(es, legendEntry{
			name:    name,
			color:   paletteColor(s.Color),
			dashed:  s.Dashed,
			shape:   shapeFor(s.Color),
			markers: n <= maxMarkers && n <= cols,
			band:    n > cols,
		})
	}
	return es
}

// drawLegend draws the legend under top and returns the y below it.
func (c Chart) drawLegend(dc draw.Canvas, top vg.Length) vg.Length {
	es := c.legendEntries()
	if len(es) == 0 {
		return top
	}
	sty := textStyle(legendSize, false, textBlack)
	sty.YAlign = draw.YCenter
	thumbWidth := c.thumbWidth()
	avail := dc.Max.X - dc.Min.X - 2*margin

	widths := make([]vg.Length, len(es))
	var total, widest vg.Length
	for i, e := range es {
		widths[i] = thumbWidth + thumbGap + sty.Width(e.name)
		total += widths[i]
		widest = max(widest, widths[i])
	}
	total += entryGap * vg.Length(len(es)-1)

	// One row when everything fits, else columns of equal width so the names line up.
	cols, colW := len(es), vg.Length(0)
	if total > avail {
		colW = widest + entryGap
		cols = max(1, int((avail+entryGap)/colW))
	}
	rows := (len(es) + cols - 1) / cols

	top -= 3
	for r := range rows {
		row := es[r*cols : min(len(es), (r+1)*cols)]
		var rowW vg.Length
		if colW == 0 {
			rowW = total
		} else {
			rowW = colW*vg.Length(cols) - entryGap
		}
		x := (dc.Min.X+dc.Max.X)/2 - rowW/2
		y := top - rowHeight*vg.Length(r) - rowHeight/2
		for i, e := range row {
			c.drawThumb(dc, e, vg.Point{X: x, Y: y})
			dc.FillText(sty, vg.Point{X: x + thumbWidth + thumbGap, Y: y}, e.name)
			if colW == 0 {
				x += widths[r*cols+i] + entryGap
			} else {
				x += colW
			}
		}
	}
	return top - rowHeight*vg.Length(rows)
}

// thumbWidth is the width of a legend sample: a stretch of line, or just a marker or swatch.
func (c Chart) thumbWidth() vg.Length {
	if c.Kind == Line {
		return 22
	}
	return 10
}

// drawThumb draws the legend sample of one entry; left is the middle of its left edge.
func (c Chart) drawThumb(dc draw.Canvas, e legendEntry, left vg.Point) {
	thumbWidth := c.thumbWidth()
	mid := vg.Point{X: left.X + thumbWidth/2, Y: left.Y}
	switch c.Kind {
	case Bar:
		s := vg.Length(5)
		sq := []vg.Point{{X: mid.X - s, Y: mid.Y - s}, {X: mid.X + s, Y: mid.Y - s}, {X: mid.X + s, Y: mid.Y + s}, {X: mid.X - s, Y: mid.Y + s}}
		if e.dashed {
			dc.FillPolygon(tint(e.color, 0.6), sq)
			dc.StrokeLines(draw.LineStyle{Color: e.color, Width: vg.Points(1.2)}, append(sq, sq[0]))
		} else {
			dc.FillPolygon(e.color, sq)
		}
	case Scatter:
		drawMarker(dc, e.shape, mid, 3.2, e.color, e.dashed)
	default:
		if e.band {
			h := vg.Length(4)
			dc.FillPolygon(bandColor(e.color), []vg.Point{{X: left.X, Y: left.Y - h}, {X: left.X + thumbWidth, Y: left.Y - h},
				{X: left.X + thumbWidth, Y: left.Y + h}, {X: left.X, Y: left.Y + h}})
		}
		dc.StrokeLine2(lineStyle(e.color, e.dashed), left.X, left.Y, left.X+thumbWidth, left.Y)
		if e.markers {
			drawMarker(dc, e.shape, mid, 2.6, e.color, e.dashed)
		}
	}
}

// newPlot builds the plot area: axes with fixed ranges and ticks, the grid, the marks and the data.
// w is the canvas width, used to estimate the data area's width for tick density, label collisions and
// the columns long series are reduced to.
func (c Chart) newPlot(w float64) *plot.Plot {
	p, dataW := c.axes(w)

	grid := plotter.NewGrid()
	grid.Horizontal = draw.LineStyle{Color: gridGrey, Width: vg.Points(0.5)}
	grid.Vertical = draw.LineStyle{Color: gridGrey, Width: vg.Points(0.5)}
	p.Add(grid)

	if c.Kind == Bar {
		grid.Vertical.Color = nil
		if len(c.Marks) > 0 { // between groups, e.g. at 2.5
			p.Add(newMarkPlot(c.Marks, false))
		}
		c.addBars(p, dataW)
		return p
	}

	xlo, xhi, xdata := c.xRange()
	var xs []float64
	if c.LogX {
		p.X.Scale = plot.LogScale{}
		xs = logTicks(xlo, xhi, xdata)
	} else {
		step := niceStep(xhi-xlo, min(8, max(3, int(dataW/80))))
		if c.XInteger {
			step = max(1, math.Ceil(step))
		}
		// Widen to whole ticks when that costs little, so both ends of the axis are labelled.
		if lo, hi := math.Floor(xlo/step+1e-9)*step, math.Ceil(xhi/step-1e-9)*step; (xlo-lo)+(hi-xhi) <= 0.1*(xhi-xlo) {
			xlo, xhi = lo, hi
		}
		xs = linearTicks(xlo, xhi, step)
	}
	p.X.Min, p.X.Max = xlo, xhi
	xTicks := ticksFor(xs)
	thinLabels(xTicks, p.X.Tick.Label, dataW, func(v float64) float64 { return p.X.Norm(v) })
	p.X.Tick.Marker = plot.ConstantTicks(xTicks)

	if len(c.Marks) > 0 {
		p.Add(newMarkPlot(c.Marks, c.LogX))
	}
	labels := &labelPlot{style: textStyle(pointLabelSize, false, textBlack)}
	var sps []*seriesPlot
	for _, s := range c.Series {
		if sp := c.seriesPlot(s, int(dataW), p.X.Norm); sp != nil {
			sps = append(sps, sp)
			labels.series = append(labels.series, sp)
		}
	}
	// Every band goes under every line, so no series' band veils another's mean.
	for _, sp := range sps {
		if sp.bands != nil {
			p.Add(bandPlot{sp})
		}
	}
	for _, sp := range sps {
		p.Add(sp)
	}
	p.Add(labels)
	return p
}

// axes starts the plot: both axes styled and labelled, the y axis's range and ticks set. Y comes first
// because its labels' width decides how much room the data has; axes returns that estimated width of the
// data area, in the SVG's units.
func (c Chart) axes(w float64) (*plot.Plot, vg.Length) {
	p := plot.New()
	p.BackgroundColor = nil // the whole canvas is already white
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, axisLabelSize)
		ax.Label.TextStyle.Color = textBlack
		ax.Tick.Label.Font = font.From(sans, tickLabelSize)
		ax.Tick.Label.Color = textBlack
		ax.Tick.Length = 4
		ax.Color = textBlack
		ax.Tick.Color = textBlack
	}
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.X.Label.Padding = 3
	p.Y.Label.Padding = 4

	ylo, yhi := c.yRange()
	ylo, yhi, ystep := niceRange(ylo, yhi, 5)
	yTicks := ticksFor(linearTicks(ylo, yhi, ystep))
	p.Y.Min, p.Y.Max = ylo, yhi
	p.Y.Tick.Marker = plot.ConstantTicks(yTicks)
	var yLabelW vg.Length
	for _, t := range yTicks {
		yLabelW = max(yLabelW, p.Y.Tick.Label.Width(t.Label))
	}
	dataW := vg.Length(w) - 2*margin - yLabelW - p.Y.Tick.Length - p.Y.Label.TextStyle.Height("M") - 20
	return p, max(dataW, 50)
}

// columns is how many pixel columns the data area has: one per unit of the SVG's viewBox, which the page
// shows at one to 4/3 CSS pixels (640 units wide, at most 853 px). A Line series with more drawable points
// than this is drawn as an envelope.
func (c Chart) columns() int {
	w, _ := c.size()
	_, dataW := c.axes(w)
	return int(dataW)
}

// Enveloped reports whether SVG draws some series of the chart as an envelope (see envelope) rather than
// point by point.
func (c Chart) Enveloped() bool {
	if c.Kind != Line || c.Empty() {
		return false
	}
	cols := c.columns()
	for _, s := range c.Series {
		if c.drawableCount(s) > cols {
			return true
		}
	}
	return false
}

// drawableCount is how many of the series' points the chart can place.
func (c Chart) drawableCount(s Series) int {
	n := 0
	for _, p := range s.Points {
		if c.drawable(p) {
			n++
		}
	}
	return n
}

// yRange returns the data's y range, with 0 in it for bars and YFromZero, never of zero width.
func (c Chart) yRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			if c.drawable(p) {
				lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
				if p.HasBar() {
					lo, hi = math.Min(lo, p.Low), math.Max(hi, p.High)
				}
			}
		}
	}
	if c.YFromZero || c.Kind == Bar {
		lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	}
	if hi == lo {
		return spread(lo)
	}
	return lo, hi
}

// spread gives a single value a range: from zero to twice the value, so it sits mid-axis and the axis still
// says how big it is.
func spread(v float64) (float64, float64) {
	switch {
	case v > 0:
		return 0, 2 * v
	case v < 0:
		return 2 * v, 0
	}
	return 0, 1
}

// xRange returns the x range of the points and marks, never of zero width, and the points' x values.
func (c Chart) xRange() (lo, hi float64, data []float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			if c.drawable(p) {
				lo, hi = math.Min(lo, p.X), math.Max(hi, p.X)
				data = append(data, p.X)
			}
		}
	}
	for _, m := range c.Marks {
		if finite(m.X) && (!c.LogX || m.X > 0) {
			lo, hi = math.Min(lo, m.X), math.Max(hi, m.X)
		}
	}
	if hi == lo {
		if c.LogX {
			return lo / 2, hi * 2, data
		}
		lo, hi = spread(lo)
		return lo, hi, data
	}
	return lo, hi, data
}

func ticksFor(vs []float64) []plot.Tick {
	labels := formatTicks(vs)
	ts := make([]plot.Tick, len(vs))
	for i, v := range vs {
		ts[i] = plot.Tick{Value: v, Label: labels[i]}
	}
	return ts
}

// thinLabels blanks tick labels (leaving a minor tick) until neighbours no longer overlap, keeping every
// k-th one so the spacing stays regular. norm maps a value to 0..1 along the axis, span is its length.
func thinLabels(ts []plot.Tick, sty text.Style, span vg.Length, norm func(float64) float64) {
	const gap = 6
	pos := make([]vg.Length, len(ts))
	wid := make([]vg.Length, len(ts))
	for i, t := range ts {
		pos[i] = vg.Length(norm(t.Value)) * span
		wid[i] = sty.Width(t.Label)
	}
	for k := 1; k <= len(ts); k++ {
		ok, last := true, -1
		for i := 0; i < len(ts); i += k {
			if last >= 0 && pos[i]-pos[last] < (wid[i]+wid[last])/2+gap {
				ok = false
				break
			}
			last = i
		}
		if ok {
			for i := range ts {
				if i%k != 0 {
					ts[i].Label = ""
				}
			}
			return
		}
	}
}

// seriesPlot prepares one Line or Scatter series; nil when it has nothing to draw. A Line series with more
// points than cols is reduced to an envelope of cols columns across the x axis, norm mapping an x to 0..1.
func (c Chart) seriesPlot(s Series, cols int, norm func(float64) float64) *seriesPlot {
	var segs [][]Point
	var cur []Point
	n := 0
	for _, p := range s.Points {
		if !c.drawable(p) {
			if len(cur) > 0 {
				segs = append(segs, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, p)
		n++
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	if n == 0 {
		return nil
	}
	sp := &seriesPlot{
		segments:   segs,
		line:       c.Kind == Line,
		allMarkers: c.Kind == Scatter || n <= maxMarkers,
		color:      paletteColor(s.Color),
		dashed:     s.Dashed,
		shape:      shapeFor(s.Color),
		radius:     2.6,
		labelStyle: textStyle(pointLabelSize, false, textBlack),
	}
	if c.Kind == Scatter {
		sp.radius = 3.2
	}
	if c.Kind == Line && n > cols {
		sp.allMarkers = false
		for _, seg := range segs {
			sp.bands = append(sp.bands, envelope(seg, cols, norm))
		}
	}
	return sp
}

// addBars sets up the category axis and one barPlot per series with data.
func (c Chart) addBars(p *plot.Plot, dataW vg.Length) {
	n := len(c.Categories)
	if n == 0 { // no names given: number the categories by index
		for _, s := range c.Series {
			for _, pt := range s.Points {
				if c.drawable(pt) {
					n = max(n, int(pt.X)+1)
				}
			}
		}
	}
	names := make([]string, n)
	ticks := make([]plot.Tick, n)
	for i := range n {
		names[i] = strconv.Itoa(i)
		if i < len(c.Categories) {
			names[i] = c.Categories[i]
		}
		ticks[i] = plot.Tick{Value: float64(i), Label: names[i]}
	}
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Width = 0 // no tick marks, but keep their length as room between axis and names
	p.X.Tick.Length = 6
	p.X.Padding = 0
	p.Y.Padding = 0

	slot := dataW / vg.Length(n)
	var widest vg.Length
	for _, s := range names {
		widest = max(widest, p.X.Tick.Label.Width(s))
	}
	if widest > slot-4 { // long names: slant them instead of overlapping
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}

	var bars []*barPlot
	for _, s := range c.Series {
		vals := make([]float64, n)
		var ivals [][2]float64 // each bar's interval, when one has any
		for i := range vals {
			vals[i] = math.NaN()
		}
		has := false
		for _, pt := range s.Points {
			if c.drawable(pt) {
				vals[int(pt.X)] = pt.Y
				has = true
				if pt.HasBar() {
					if ivals == nil {
						ivals = make([][2]float64, n)
					}
					ivals[int(pt.X)] = [2]float64{pt.Low, pt.High}
				}
			}
		}
		if !has {
			continue
		}
		bars = append(bars, &barPlot{values: vals, intervals: ivals, color: paletteColor(s.Color), dashed: s.Dashed})
	}
	bw := barGroupWidth / float64(len(bars))
	show := len(bars)*n <= maxBarValues
	valueStyle := textStyle(barValueSize, false, textBlack)
	barPx := slot * vg.Length(bw*barFill)
	for k, b := range bars {
		b.offset = -barGroupWidth/2 + bw*(float64(k)+0.5)
		b.width = bw * barFill
		b.valueStyle = valueStyle
		for _, v := range b.values {
			if !math.IsNaN(v) && valueStyle.Width(formatValue(v)) > barPx+4 {
				show = false
			}
		}
	}
	for _, b := range bars {
		b.showValues = show
		p.Add(b)
	}
	if p.Y.Min < 0 { // the bars hang from zero, not from the axis at the bottom
		p.Add(zeroLine{})
	}
}
