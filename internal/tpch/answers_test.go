package tpch

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every query has a reference answer at SF 0.01, with the row counts the
// queries' shapes give (Q1: the four return-flag and line-status pairs).
func TestAnswers(t *testing.T) {
	if !HasAnswers(0.01) || HasAnswers(0.02) {
		t.Fatalf("answers at SF 0.01: %v, at 0.02: %v; want only the first", HasAnswers(0.01), HasAnswers(0.02))
	}
	for n := 1; n <= 22; n++ {
		rows, ok := Answer(0.01, n)
		if !ok || len(rows) == 0 && n != 20 {
			t.Errorf("Q%d: %d rows (%v)", n, len(rows), ok)
		}
		for _, r := range rows {
			if len(r) != len(strings.Fields(columnKinds[n-1])) {
				t.Fatalf("Q%d: row %v does not have its %d columns", n, r, len(strings.Fields(columnKinds[n-1])))
			}
		}
	}
	if rows, _ := Answer(0.01, 1); len(rows) != 4 || rows[0][0] != "A" || rows[0][1] != "F" {
		t.Errorf("Q1: %v", rows)
	}
}

// An answer is accepted within each column's tolerance and refused beyond
// it; the error names the query and the row.
func TestCheckAnswer(t *testing.T) {
	want, _ := Answer(0.01, 1) // str str sum sum sum sum avg avg avg cnt
	clone := func() [][]string {
		out := make([][]string, len(want))
		for i, r := range want {
			out[i] = slices.Clone(r)
		}
		return out
	}
	if err := CheckAnswer(0.01, 1, clone()); err != nil {
		t.Fatalf("the reference itself: %v", err)
	}
	for _, c := range []struct {
		name string
		mut  func([][]string) [][]string
		ok   bool
		msg  string
	}{
		{"padded and wider", func(g [][]string) [][]string { g[0][0] += "  "; g[0][2] += "00"; return g }, true, ""},
		{"a sum $50 off", func(g [][]string) [][]string { g[1][3] = addTo(g[1][3], 50); return g }, true, ""},
		{"a sum $150 off", func(g [][]string) [][]string { g[1][3] = addTo(g[1][3], 150); return g }, false, "Q1: row 2 is"},
		{"an average 0.5% off", func(g [][]string) [][]string { g[2][6] = scale(g[2][6], 1.005); return g }, true, ""},
		{"an average 3% off", func(g [][]string) [][]string { g[2][6] = scale(g[2][6], 1.03); return g }, false, "Q1: row 3 is"},
		{"a count 1 off", func(g [][]string) [][]string { g[3][9] = addTo(g[3][9], 1); return g }, false, "compared as cnt"},
		{"another flag", func(g [][]string) [][]string { g[0][0] = "B"; return g }, false, "row 1 is B|"},
		{"a row missing", func(g [][]string) [][]string { return g[:3] }, false, "Q1: 3 rows; the reference has 4"},
		{"a row more", func(g [][]string) [][]string { return append(g, g[0]) }, false, "Q1: 5 rows; the reference has 4"},
		{"a column missing", func(g [][]string) [][]string { g[0] = g[0][:9]; return g }, false, "row 1 has 9 columns"},
	} {
		err := CheckAnswer(0.01, 1, c.mut(clone()))
		if c.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v; want ok %v, %q", c.name, err, c.ok, c.msg)
		}
	}
}

func addTo(v string, d float64) string { return formatF(parseF(v) + d) }
func scale(v string, f float64) string { return formatF(parseF(v) * f) }

func parseF(s string) float64 {
	f, _ := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f
}

func formatF(f float64) string { return strconv.FormatFloat(f, 'f', 4, 64) }
