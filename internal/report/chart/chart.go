// Package chart renders the report's charts as standalone inline SVG, server side, with gonum.org/v1/plot.
//
// The report is one HTML file that must open offline and be readable without hovering, so every chart carries
// its title, labelled axes and a legend, references nothing external and does not embed fonts: text asks for
// Liberation Sans (the font the layout was measured with) and falls back to the metric-compatible Arial and
// then any sans-serif.
package chart

import (
	"fmt"
	"math"
)

// Kind selects how a chart draws its series.
type Kind int

const (
	Line    Kind = iota // x numeric, points joined, with point markers
	Scatter             // markers only, each point may carry a text label drawn beside it (e.g. "qd8", "64k")
	Bar                 // grouped bars: X is the category index 0..len(Categories)-1, one bar per series in each group
)

// String names the kind for error messages.
func (k Kind) String() string {
	switch k {
	case Line:
		return "line"
	case Scatter:
		return "scatter"
	case Bar:
		return "bar"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Point is one data point.
type Point struct {
	X, Y  float64
	Label string // drawn beside the marker (Line and Scatter); "" none
	// Low and High, when Low < High, are an interval around Y (a 95%
	// confidence interval over repetitions), drawn as an error bar with
	// caps (Line and Scatter).
	Low, High float64
}

// HasBar reports whether p carries an interval to draw.
func (p Point) HasBar() bool { return finite(p.Low) && finite(p.High) && p.Low < p.High }

// Series is one legend entry and its points.
type Series struct {
	Name   string // legend entry
	Points []Point
	Color  int  // index into Palette (wraps); runs compared get different colours
	Dashed bool // a second metric of the same run, e.g. NOPM dashed beside TPM solid
}

// Mark is a vertical line across the plot at X with a short label at its top, e.g. a step boundary "8 VUs".
type Mark struct {
	X     float64
	Label string
}

// Chart describes one chart. The zero Width and Height mean 640 x 320 points.
type Chart struct {
	Title         string
	XLabel        string // with unit, e.g. "virtual users", "time (s)", "IOPS"
	YLabel        string // with unit, e.g. "NOPM", "latency (ms)"
	Kind          Kind
	Series        []Series
	Categories    []string // Bar only
	Marks         []Mark
	YFromZero     bool    // y axis starts at 0 (throughputs); otherwise fitted
	LogX          bool    // e.g. block sizes 4k..256k on a log scale (X values must be > 0)
	XInteger      bool    // x values are counts (e.g. virtual users): ticks at whole numbers only
	Width, Height float64 // in points; 0 means 640 x 320
}

// Palette is the Okabe-Ito set (Okabe & Ito 2008, "Color Universal Design"), which stays distinguishable for
// the common colour-vision deficiencies. Reordered so the colours that read best as thin lines on white come
// first; the pale yellow is last because it is the weakest on white.
var Palette = []string{
	"#0072B2", // blue
	"#D55E00", // vermillion
	"#009E73", // bluish green
	"#CC79A7", // reddish purple
	"#E69F00", // orange
	"#56B4E9", // sky blue
	"#000000", // black
	"#F0E442", // yellow
}

const (
	defaultWidth  = 640
	defaultHeight = 320
)

// Empty says whether the chart has nothing to draw (no series with a finite point).
//
// A point also counts as nothing to draw where the chart could not place it: X <= 0 on a LogX axis, and for
// Bar an X that is not a category index.
func (c Chart) Empty() bool {
	for _, s := range c.Series {
		for _, p := range s.Points {
			if c.drawable(p) {
				return false
			}
		}
	}
	return true
}

// drawable reports whether p can be placed on this chart.
func (c Chart) drawable(p Point) bool {
	if !finite(p.X) || !finite(p.Y) {
		return false
	}
	if c.Kind == Bar {
		if p.X < 0 || p.X != math.Trunc(p.X) {
			return false
		}
		return len(c.Categories) == 0 || int(p.X) < len(c.Categories)
	}
	return !c.LogX || p.X > 0
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// size returns the canvas size in points.
func (c Chart) size() (w, h float64) {
	w, h = c.Width, c.Height
	if !(w > 0) || math.IsInf(w, 0) {
		w = defaultWidth
	}
	if !(h > 0) || math.IsInf(h, 0) {
		h = defaultHeight
	}
	return w, h
}
