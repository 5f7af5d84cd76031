package report

import (
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

// Block is one piece of a section: exactly one field is set.
type Block struct {
	Text    string   // a paragraph
	Table   *Table   //
	Figure  *Figure  //
	Details *Details // a collapsible group, e.g. one step's charts
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

func text(s string) Block           { return Block{Text: s} }
func tableBlock(t *Table) Block     { return Block{Table: t} }
func figureBlock(f *Figure) Block   { return Block{Figure: f} }
func detailsBlock(d *Details) Block { return Block{Details: d} }

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
