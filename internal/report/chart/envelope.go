package chart

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A Line series with more points than its chart has pixel columns cannot show them one by one: a 12,000-second
// run on a plot some 570 columns wide puts twenty seconds in each column, its line zigzags into a smear, and
// the SVG carries every point, so a report grows with the length of its runs. Such a series is drawn as an
// envelope instead: per column, a band from the lowest to the highest value of the points that fall in it,
// and a line through their means. A one-second spike still reaches the top of its column's band; the CSV
// files keep every point.

// bucket is the points of a series that fall in one pixel column.
type bucket struct {
	X        float64 // the mean x of the points: where the column's values are drawn
	Min, Max float64
	Mean     float64
	N        int
}

// envelope reduces pts, which must all be finite, to one bucket per non-empty column of cols equal columns
// across the x axis, in column order. norm maps an x to its place on the axis, 0 at the left end and 1 at
// the right (plot.Axis.Norm, so a log axis gets columns of equal width on screen); points beyond the ends
// go to the first or last column.
func envelope(pts []Point, cols int, norm func(float64) float64) []bucket {
	cols = max(cols, 1)
	acc := make([]bucket, cols)
	for _, p := range pts {
		i := int(math.Floor(norm(p.X) * float64(cols)))
		b := &acc[min(max(i, 0), cols-1)]
		if b.N == 0 || p.Y < b.Min {
			b.Min = p.Y
		}
		if b.N == 0 || p.Y > b.Max {
			b.Max = p.Y
		}
		b.X += p.X
		b.Mean += p.Y
		b.N++
	}
	out := acc[:0] // compacts in place: the i-th non-empty bucket is at or after index i
	for _, b := range acc {
		if b.N == 0 {
			continue
		}
		b.X /= float64(b.N)
		b.Mean /= float64(b.N)
		out = append(out, b)
	}
	return out
}

// bandAlpha is the opacity of an envelope's band: light enough that the lines of other series show through.
const bandAlpha = 0x48

// bandColor is the band of a series of colour c.
func bandColor(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: bandAlpha}
}

// bandPlot draws the bands of one enveloped series; its seriesPlot draws the mean line over them.
type bandPlot struct{ s *seriesPlot }

func (b bandPlot) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	fill := bandColor(b.s.color)
	for _, band := range b.s.bands {
		if len(band) == 1 {
			// A run of points within one column has no width to fill: its range is a vertical stroke.
			x := trX(band[0].X)
			c.StrokeLines(lineStyle(b.s.color, false), c.ClipLinesXY([]vg.Point{{X: x, Y: trY(band[0].Min)}, {X: x, Y: trY(band[0].Max)}})...)
			continue
		}
		poly := make([]vg.Point, 0, 2*len(band))
		for _, k := range band {
			poly = append(poly, vg.Point{X: trX(k.X), Y: trY(k.Max)})
		}
		for i := len(band) - 1; i >= 0; i-- {
			poly = append(poly, vg.Point{X: trX(band[i].X), Y: trY(band[i].Min)})
		}
		c.FillPolygon(fill, c.ClipPolygonXY(poly))
	}
}
