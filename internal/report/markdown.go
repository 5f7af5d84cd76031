package report

import (
	"fmt"
	"io"
	"strings"
)

// writeMarkdown writes the document as Markdown: the same sections and
// tables, figures as images from the data directory.
func writeMarkdown(w io.Writer, doc *Document, dataDir string) {
	fmt.Fprintf(w, "%s\n# %s\n\n%s\n", mdMarker, doc.Title, doc.Subtitle)
	for _, s := range doc.Sections {
		fmt.Fprintf(w, "\n## %s\n", s.Title)
		mdBlocks(w, s.Blocks, dataDir)
	}
}

func mdBlocks(w io.Writer, blocks []Block, dataDir string) {
	for _, b := range blocks {
		switch {
		case b.Text != "":
			fmt.Fprintf(w, "\n%s\n", b.Text)
		case b.Table != nil:
			mdTable(w, b.Table)
		case b.Figure != nil:
			fmt.Fprintf(w, "\n![%s](%s/figure-%s.svg)\n", mdEscape(b.Figure.Chart.Title), dataDir, b.Figure.ID)
			if b.Figure.Caption != "" {
				fmt.Fprintf(w, "\n%s\n", b.Figure.Caption)
			}
		case b.List != nil:
			fmt.Fprintf(w, "\n**%s**\n\n", b.List.Title)
			for _, it := range b.List.Items {
				fmt.Fprintf(w, "- %s\n", it)
			}
		case b.Details != nil:
			fmt.Fprintf(w, "\n### %s\n", b.Details.Summary)
			mdBlocks(w, b.Details.Blocks, dataDir)
		}
	}
}

func mdTable(w io.Writer, t *Table) {
	fmt.Fprintf(w, "\n**%s**\n\n", t.Caption)
	cells := func(row []string) string {
		out := make([]string, len(row))
		for i, c := range row {
			out[i] = mdEscape(c)
		}
		return "| " + strings.Join(out, " | ") + " |"
	}
	fmt.Fprintln(w, cells(t.Header))
	sep := make([]string, len(t.Header))
	for i := range sep {
		sep[i] = "---"
		if i < len(t.Numeric) && t.Numeric[i] {
			sep[i] = "---:"
		}
	}
	fmt.Fprintln(w, "|"+strings.Join(sep, "|")+"|")
	for _, r := range t.Rows {
		fmt.Fprintln(w, cells(r))
	}
}

// mdEscape keeps a cell on one line and its pipes literal.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", "").Replace(s)
}
