package report

import (
	"strings"

	"github.com/tierbench/tierbench/internal/report/chart"
)

// Document is a report before it is written: sections of text, tables and
// figures that the HTML and Markdown writers both render, so the two never
// disagree.
type Document struct {
	Title    string
	Subtitle string
	Runs     []RunRef
	Sections []*Section
}

// RunRef names a run the report shows.
type RunRef struct {
	ID, Label, Kind, Status string
	Started, Finished       string
	Color                   string // its colour in the charts
}

// Section is a part of the report with a stable anchor id.
type Section struct {
	ID     string
	Title  string
	Blocks []Block
}

// Block is one piece of a section: exactly one of Text, Table, Figure,
// Details and List is set.
type Block struct {
	Text string // a paragraph
	// Finding marks a Text as one of the report's findings: the summary at
	// the top repeats it, so a section computes each finding once.
	Finding bool
	Table   *Table   //
	Figure  *Figure  //
	Details *Details // a collapsible group, e.g. one step's charts
	List    *List    // a titled list of sentences (the summary's)
}

// Table is a table of formatted cells. Its CSV is written beside the report.
type Table struct {
	ID      string
	Caption string
	Header  []string
	Rows    [][]string
	// Numeric says which columns hold numbers (right-aligned).
	Numeric []bool
}

// Figure is a chart with its caption.
type Figure struct {
	ID      string
	Chart   chart.Chart
	Caption string
}

// Details is a titled group of blocks shown folded.
type Details struct {
	Summary string
	Blocks  []Block
}

// List is a bulleted list of sentences under a title that links to the
// section they come from.
type List struct {
	Title  string
	Anchor string // the id of the section the title links to
	Items  []string
}

func text(s string) Block           { return Block{Text: s} }
func finding(s string) Block        { return Block{Text: s, Finding: true} }
func tableBlock(t *Table) Block     { return Block{Table: t} }
func detailsBlock(d *Details) Block { return Block{Details: d} }

// figureBlock wraps a figure. A chart that draws long series as envelopes
// says so in its caption, since a reader would otherwise take the band for
// noise or the mean line for every second.
func figureBlock(f *Figure) Block {
	if f.Chart.Enveloped() {
		f.Caption = strings.TrimSpace(f.Caption + " " + envelopeNote)
	}
	if hasBars(f.Chart) && !strings.Contains(f.Caption, errorBarNote) {
		f.Caption = strings.TrimSpace(f.Caption + " " + errorBarNote)
	}
	return Block{Figure: f}
}

// errorBarNote explains a chart's error bars.
const errorBarNote = "Error bars span the 95% confidence interval of the mean over the repetitions (Student's t); " +
	"a point without one was measured once."

// hasBars reports whether any point of the chart carries an interval.
func hasBars(c chart.Chart) bool {
	for _, s := range c.Series {
		for _, p := range s.Points {
			if p.HasBar() {
				return true
			}
		}
	}
	return false
}

// envelopeNote explains a chart's envelopes.
const envelopeNote = "Series longer than the chart is wide are drawn per pixel column: the shaded band spans the lowest to the highest value " +
	"of the column, the line is their mean. The CSV files beside the report hold every point."

// add appends a figure when its chart has something to draw.
func (s *Section) figure(f *Figure) {
	if f != nil && !f.Chart.Empty() {
		s.Blocks = append(s.Blocks, figureBlock(f))
	}
}

// table appends a table when it has rows.
func (s *Section) table(t *Table) {
	if t != nil && len(t.Rows) > 0 {
		s.Blocks = append(s.Blocks, tableBlock(t))
	}
}

func (s *Section) text(p string) { s.Blocks = append(s.Blocks, text(p)) }

// finding appends a paragraph that the summary repeats.
func (s *Section) finding(p string) { s.Blocks = append(s.Blocks, finding(p)) }

// findings are the section's findings, in order, folded parts included.
func (s *Section) findings() []string {
	var out []string
	walk(s.Blocks, func(b Block) {
		if b.Finding && b.Text != "" {
			out = append(out, b.Text)
		}
	})
	return out
}

// empty says whether the section has anything but text.
func (s *Section) empty() bool {
	for _, b := range s.Blocks {
		if b.Text == "" {
			return false
		}
	}
	return true
}

// walk calls f for every table and figure of the blocks, inside details too.
func walk(blocks []Block, f func(Block)) {
	for _, b := range blocks {
		if b.Details != nil {
			walk(b.Details.Blocks, f)
			continue
		}
		f(b)
	}
}
