package scenario

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is one problem in a scenario, at the line and column that caused it.
// Line and Col are 1-based; 0 means the problem has no place in the file (a
// --set or --scale from the command line, an unreadable file).
type Error struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	Msg  string `json:"message"`
}

// Error formats the problem as FILE:LINE:COL: msg, the form editors jump to.
func (e Error) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	default:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
}

// Errors is every problem found in a scenario, in file order, so a user fixes
// the file in one pass.
type Errors []Error

// Error prints one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// sorted orders the problems by place (command-line ones first) and drops
// exact repeats.
func (es Errors) sorted() Errors {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Col < es[j].Col
	})
	out := es[:0]
	for i, e := range es {
		if i > 0 && e == es[i-1] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// maxQuoted is how many characters of a value a problem quotes: enough to
// recognise it, not a whole file read by mistake (/etc/passwd read as a
// scenario is one long plain value).
const maxQuoted = 60

// capQuoted shortens every Go-quoted string in msg (as %q writes a value)
// to its first maxQuoted characters, followed by "…" and the value's length
// outside the quotes. Every problem's message goes through it (parser.add),
// so no value is quoted whole wherever it was formatted, in the parser, in
// the units or in an error it wraps.
func capQuoted(msg string) string {
	var b strings.Builder
	for i := 0; i < len(msg); {
		if msg[i] == '"' {
			if q, err := strconv.QuotedPrefix(msg[i:]); err == nil {
				if s, err := strconv.Unquote(q); err == nil && utf8.RuneCountInString(s) > maxQuoted {
					n := utf8.RuneCountInString(s)
					cut := 0
					for range maxQuoted {
						_, size := utf8.DecodeRuneInString(s[cut:])
						cut += size
					}
					fmt.Fprintf(&b, "%s… (%d characters)", strconv.Quote(s[:cut]), n)
				} else {
					b.WriteString(q)
				}
				i += len(q)
				continue
			}
		}
		b.WriteByte(msg[i])
		i++
	}
	return b.String()
}
