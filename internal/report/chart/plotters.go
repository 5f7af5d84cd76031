package chart

import (
	"image/color"
	"math"
	"sort"
	"strconv"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Compile-time checks: the plot calls these through its Plotter and GlyphBoxer interfaces.
var (
	_ plot.Plotter    = (*seriesPlot)(nil)
	_ plot.GlyphBoxer = (*seriesPlot)(nil)
	_ plot.Plotter    = (*barPlot)(nil)
	_ plot.GlyphBoxer = (*barPlot)(nil)
	_ plot.Plotter    = (*markPlot)(nil)
	_ plot.Plotter    = (*labelPlot)(nil)
	_ plot.Plotter    = zeroLine{}
)

// Text sizes in points. The canvas is 640 pt wide by default and scales to a ~900 px column, so 9 pt tick
// labels end up around 12-13 px on screen.
const (
	titleSize      = 12.5
	axisLabelSize  = 10
	tickLabelSize  = 9
	legendSize     = 9
	pointLabelSize = 8
	markLabelSize  = 8
	barValueSize   = 7.5
)

var (
	sans      = font.Font{Typeface: "Liberation", Variant: "Sans"}
	markGrey  = color.RGBA{R: 0x70, G: 0x70, B: 0x70, A: 0xff}
	gridGrey  = color.RGBA{R: 0xe3, G: 0xe3, B: 0xe3, A: 0xff}
	textBlack = color.RGBA{R: 0x1a, G: 0x1a, B: 0x1a, A: 0xff}
	white     = color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
)

func textStyle(size float64, bold bool, clr color.Color) text.Style {
	f := sans
	if bold {
		f.Weight = xfont.WeightBold
	}
	return text.Style{Color: clr, Font: font.From(f, vg.Points(size)), Handler: plot.DefaultTextHandler}
}

// paletteColor returns Palette[i], wrapping; anything unparsable draws black rather than failing the report.
func paletteColor(i int) color.Color {
	if len(Palette) == 0 {
		return color.Black
	}
	n := len(Palette)
	s := Palette[((i%n)+n)%n]
	if len(s) != 7 || s[0] != '#' {
		return color.Black
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return color.Black
	}
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// tint mixes c with white; dashed bars use it so a run's second metric shares its hue but reads as secondary.
func tint(c color.Color, f float64) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(float64(v>>8)*(1-f) + 255*f) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xff}
}

// Marker shapes go with the colour index, so a run keeps colour and shape across charts and the charts still
// separate runs when printed in grey.
const (
	shapeCircle = iota
	shapeSquare
	shapeTriangleUp
	shapeDiamond
	shapeTriangleDown
	shapeCross
	shapePlus
	shapeStar
	numShapes
)

func shapeFor(colorIndex int) int { return ((colorIndex % numShapes) + numShapes) % numShapes }

// drawMarker draws one marker of radius r at pt. Hollow markers (dashed series) are outlined on white.
func drawMarker(c draw.Canvas, shape int, pt vg.Point, r vg.Length, clr color.Color, hollow bool) {
	var poly []vg.Point
	switch shape {
	case shapeCircle:
		var p vg.Path
		p.Move(vg.Point{X: pt.X + r, Y: pt.Y})
		p.Arc(pt, r, 0, 2*math.Pi)
		p.Close()
		fillOrOutline(c, p, clr, hollow)
		return
	case shapeSquare:
		s := r * 0.9
		poly = []vg.Point{{X: pt.X - s, Y: pt.Y - s}, {X: pt.X + s, Y: pt.Y - s}, {X: pt.X + s, Y: pt.Y + s}, {X: pt.X - s, Y: pt.Y + s}}
	case shapeTriangleUp, shapeTriangleDown:
		s := r * 1.2
		d := vg.Length(1)
		if shape == shapeTriangleDown {
			d = -1
		}
		poly = []vg.Point{
			{X: pt.X, Y: pt.Y + d*s},
			{X: pt.X - s*0.866, Y: pt.Y - d*s*0.5},
			{X: pt.X + s*0.866, Y: pt.Y - d*s*0.5},
		}
	case shapeDiamond:
		s := r * 1.25
		poly = []vg.Point{{X: pt.X, Y: pt.Y + s}, {X: pt.X + s, Y: pt.Y}, {X: pt.X, Y: pt.Y - s}, {X: pt.X - s, Y: pt.Y}}
	default: // cross, plus and star are strokes; hollow makes no difference to them
		sty := draw.LineStyle{Color: clr, Width: vg.Points(1.3)}
		s := r * 1.1
		if shape == shapeCross || shape == shapeStar {
			d := s * 0.8
			c.StrokeLine2(sty, pt.X-d, pt.Y-d, pt.X+d, pt.Y+d)
			c.StrokeLine2(sty, pt.X-d, pt.Y+d, pt.X+d, pt.Y-d)
		}
		if shape == shapePlus || shape == shapeStar {
			c.StrokeLine2(sty, pt.X-s, pt.Y, pt.X+s, pt.Y)
			c.StrokeLine2(sty, pt.X, pt.Y-s, pt.X, pt.Y+s)
		}
		return
	}
	var p vg.Path
	p.Move(poly[0])
	for _, q := range poly[1:] {
		p.Line(q)
	}
	p.Close()
	fillOrOutline(c, p, clr, hollow)
}

func fillOrOutline(c draw.Canvas, p vg.Path, clr color.Color, hollow bool) {
	if hollow {
		c.SetColor(white)
		c.Fill(p)
		c.SetLineStyle(draw.LineStyle{Color: clr, Width: vg.Points(1.2)})
		c.Stroke(p)
		return
	}
	c.SetColor(clr)
	c.Fill(p)
}

func lineStyle(clr color.Color, dashed bool) draw.LineStyle {
	sty := draw.LineStyle{Color: clr, Width: vg.Points(1.6)}
	if dashed {
		sty.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	return sty
}

// seriesPlot draws one Line or Scatter series.
type seriesPlot struct {
	segments [][]Point // runs of drawable points; a NaN or Inf point breaks the line instead of bridging it
	// bands, when set, is the envelope of each segment (see envelope): the line joins their means, and a
	// bandPlot fills them.
	bands      [][]bucket
	line       bool
	allMarkers bool // otherwise only labelled points get a marker (dense time series)
	color      color.Color
	dashed     bool
	shape      int
	radius     vg.Length
	labelStyle text.Style
}

var labelOffset = vg.Point{X: 4, Y: 3}

func (s *seriesPlot) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	if s.line {
		var lines [][]vg.Point
		join := func(n int, at func(i int) vg.Point) {
			if n < 2 {
				return
			}
			l := make([]vg.Point, n)
			for i := range l {
				l[i] = at(i)
			}
			lines = append(lines, l)
		}
		if s.bands != nil {
			for _, band := range s.bands {
				join(len(band), func(i int) vg.Point { return vg.Point{X: trX(band[i].X), Y: trY(band[i].Mean)} })
			}
		} else {
			for _, seg := range s.segments {
				join(len(seg), func(i int) vg.Point { return vg.Point{X: trX(seg[i].X), Y: trY(seg[i].Y)} })
			}
		}
		if len(lines) > 0 {
			c.StrokeLines(lineStyle(s.color, s.dashed), c.ClipLinesXY(lines...)...)
		}
	}
	for _, seg := range s.segments {
		for _, pt := range seg {
			if pt.HasBar() {
				drawErrorBar(c, s.color, trX(pt.X), trY(pt.Low), trY(pt.High))
			}
		}
	}
	for _, seg := range s.segments {
		for _, pt := range seg {
			v := vg.Point{X: trX(pt.X), Y: trY(pt.Y)}
			if !c.Contains(v) {
				continue
			}
			if s.markerDrawn(pt, len(seg)) {
				drawMarker(c, s.shape, v, s.radius, s.color, s.dashed)
			}
		}
	}
}

// drawErrorBar draws an interval at x from y0 to y1 in clr: a vertical
// line with a cap at each end.
func drawErrorBar(c draw.Canvas, clr color.Color, x, y0, y1 vg.Length) {
	const capHalf = 3
	sty := draw.LineStyle{Color: clr, Width: vg.Points(1)}
	c.StrokeLines(sty, c.ClipLinesXY(
		[]vg.Point{{X: x, Y: y0}, {X: x, Y: y1}},
		[]vg.Point{{X: x - capHalf, Y: y0}, {X: x + capHalf, Y: y0}},
		[]vg.Point{{X: x - capHalf, Y: y1}, {X: x + capHalf, Y: y1}})...)
}

// GlyphBoxes keeps markers and labels at the plot's edges from being cut off.
func (s *seriesPlot) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	var bs []plot.GlyphBox
	r := s.radius + 1
	for _, seg := range s.segments {
		for _, pt := range seg {
			x, y := p.X.Norm(pt.X), p.Y.Norm(pt.Y)
			if s.markerDrawn(pt, len(seg)) {
				bs = append(bs, plot.GlyphBox{X: x, Y: y, Rectangle: vg.Rectangle{Min: vg.Point{X: -r, Y: -r}, Max: vg.Point{X: r, Y: r}}})
			}
			if pt.Label != "" {
				bs = append(bs, plot.GlyphBox{X: x, Y: y, Rectangle: s.labelStyle.Rectangle(pt.Label).Add(labelOffset)})
			}
		}
	}
	return bs
}

// markerDrawn reports whether pt of a segment of length n gets a marker. A lone point of a line has nothing
// joined to it, so it always gets one.
func (s *seriesPlot) markerDrawn(pt Point, n int) bool {
	return s.allMarkers || pt.Label != "" || n == 1
}

// labelPlot draws the point labels of all series, after all of them, so that each label can be placed where
// it overprints neither an earlier label nor a marker: right-above the marker by default, else one of seven
// other places around it. When every place is taken it takes the least crowded: a label is data, it is
// never dropped.
type labelPlot struct {
	series []*seriesPlot
	style  text.Style
}

func (l *labelPlot) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var obstacles []vg.Rectangle
	for _, s := range l.series {
		r := s.radius
		for _, seg := range s.segments {
			for _, pt := range seg {
				if s.markerDrawn(pt, len(seg)) {
					v := vg.Point{X: trX(pt.X), Y: trY(pt.Y)}
					obstacles = append(obstacles, vg.Rectangle{Min: vg.Point{X: v.X - r, Y: v.Y - r}, Max: vg.Point{X: v.X + r, Y: v.Y + r}})
				}
			}
		}
	}
	markers := len(obstacles)
	for _, s := range l.series {
		for _, seg := range s.segments {
			for _, pt := range seg {
				v := vg.Point{X: trX(pt.X), Y: trY(pt.Y)}
				if pt.Label == "" || !c.Contains(v) {
					continue
				}
				box := l.style.Rectangle(pt.Label) // at the origin, left-aligned on the baseline
				w, h := box.Size().X, box.Size().Y
				dx, dy := labelOffset.X, labelOffset.Y
				cands := []vg.Point{
					{X: v.X + dx, Y: v.Y + dy},
					{X: v.X + dx, Y: v.Y - dy - h},
					{X: v.X - dx - w, Y: v.Y + dy},
					{X: v.X - dx - w, Y: v.Y - dy - h},
					{X: v.X - w/2, Y: v.Y + dy + 1},
					{X: v.X - w/2, Y: v.Y - dy - h - 1},
					{X: v.X + dx + 2, Y: v.Y - h/2},
					{X: v.X - dx - 2 - w, Y: v.Y - h/2},
				}
				// The first place that is free wins; if none is, the one overprinting the least area.
				best, bestCost := cands[0], math.Inf(1)
				for i, at := range cands {
					r := box.Add(at)
					if i > 0 && (r.Min.X < c.Min.X || r.Max.X > c.Max.X || r.Min.Y < c.Min.Y || r.Max.Y > c.Max.Y) {
						continue // only the default place was given room beyond the plot (GlyphBoxes)
					}
					cost := 0.0
					for j, o := range obstacles {
						if j < markers && (o.Min.X+o.Max.X)/2 == v.X && (o.Min.Y+o.Max.Y)/2 == v.Y {
							continue // the label's own marker
						}
						cost += overlapArea(r, o)
					}
					if cost < bestCost {
						best, bestCost = at, cost
					}
					if cost == 0 {
						break
					}
				}
				obstacles = append(obstacles, box.Add(best))
				c.FillText(l.style, best, pt.Label)
			}
		}
	}
}

func overlapArea(a, b vg.Rectangle) float64 {
	w := min(a.Max.X, b.Max.X) - max(a.Min.X, b.Min.X)
	h := min(a.Max.Y, b.Max.Y) - max(a.Min.Y, b.Min.Y)
	if w <= 0 || h <= 0 {
		return 0
	}
	return float64(w * h)
}

// barPlot draws the bars of one series; values[i] is category i, NaN where the series has no value.
type barPlot struct {
	values     []float64
	intervals  [][2]float64 // per category, low and high of an error bar (none when equal); nil: none at all
	offset     float64      // bar centre relative to the category centre, in category units
	width      float64      // in category units
	color      color.Color
	dashed     bool
	showValues bool
	valueStyle text.Style
}

const barValueGap = 2

func (b *barPlot) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, v := range b.values {
		if math.IsNaN(v) {
			continue
		}
		x0, x1 := trX(float64(i)+b.offset-b.width/2), trX(float64(i)+b.offset+b.width/2)
		y0, y1 := trY(0), trY(v)
		poly := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		clipped := c.ClipPolygonXY(poly)
		if b.dashed {
			c.FillPolygon(tint(b.color, 0.6), clipped)
			c.StrokeLines(draw.LineStyle{Color: b.color, Width: vg.Points(1.2)}, c.ClipLinesXY(append(poly, poly[0]))...)
		} else {
			c.FillPolygon(b.color, clipped)
		}
		if b.intervals != nil && b.intervals[i][0] < b.intervals[i][1] {
			x := (x0 + x1) / 2
			drawErrorBar(c, textBlack, x, trY(b.intervals[i][0]), trY(b.intervals[i][1])) // over a bar of its own colour, black shows
		}
		if b.showValues {
			sty := b.valueStyle
			sty.XAlign = draw.XCenter
			pt := vg.Point{X: (x0 + x1) / 2, Y: y1 + barValueGap}
			if v < 0 {
				sty.YAlign = draw.YTop
				pt.Y = y1 - barValueGap
			}
			c.FillText(sty, pt, formatValue(v))
		}
	}
}

// GlyphBoxes makes room for the value labels above the tallest bars.
func (b *barPlot) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	if !b.showValues {
		return nil
	}
	var bs []plot.GlyphBox
	for i, v := range b.values {
		if math.IsNaN(v) {
			continue
		}
		sty := b.valueStyle
		sty.XAlign = draw.XCenter
		r := sty.Rectangle(formatValue(v)).Add(vg.Point{Y: barValueGap})
		if v < 0 {
			sty.YAlign = draw.YTop
			r = sty.Rectangle(formatValue(v)).Add(vg.Point{Y: -barValueGap})
		}
		bs = append(bs, plot.GlyphBox{X: p.X.Norm(float64(i) + b.offset), Y: p.Y.Norm(v), Rectangle: r})
	}
	return bs
}

// markPlot draws the vertical marks with their labels written upwards along the line, at its top.
type markPlot struct {
	marks      []Mark // sorted by X
	labelStyle text.Style
}

func newMarkPlot(marks []Mark, logX bool) *markPlot {
	var ms []Mark
	for _, m := range marks {
		if finite(m.X) && (!logX || m.X > 0) {
			ms = append(ms, m)
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].X < ms[j].X })
	sty := textStyle(markLabelSize, false, markGrey)
	sty.Rotation = math.Pi / 2
	sty.XAlign = draw.XRight
	sty.YAlign = draw.YTop
	return &markPlot{marks: ms, labelStyle: sty}
}

func (m *markPlot) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	line := draw.LineStyle{Color: markGrey, Width: vg.Points(0.75), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	// Rotated labels are one line of text wide; a label closer than that to the last one drawn is left out
	// rather than printed over it (its line is still drawn).
	h := m.labelStyle.FontExtents().Height
	lastLabel := vg.Length(math.Inf(-1))
	for _, mk := range m.marks {
		x := trX(mk.X)
		if !c.ContainsX(x) {
			continue
		}
		c.StrokeLine2(line, x, c.Min.Y, x, c.Max.Y)
		if mk.Label == "" || x-lastLabel < h+1 {
			continue
		}
		c.FillText(m.labelStyle, vg.Point{X: x + 1.5, Y: c.Max.Y - 2}, mk.Label)
		lastLabel = x
	}
}

// zeroLine draws the y = 0 baseline across the plot, for bars with negative values.
type zeroLine struct{}

func (zeroLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(0)
	c.StrokeLine2(draw.LineStyle{Color: textBlack, Width: vg.Points(0.75)}, c.Min.X, y, c.Max.X, y)
}
