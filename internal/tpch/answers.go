package tpch

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
)

// The reference answers of the 22 queries with the validation parameters,
// at SF 0.01, 0.1 and 1 (internal/tpch/answers/README says how they were
// made), and the comparison of an answer with them within the
// specification's rounding tolerances.

//go:embed answers
var answerFiles embed.FS

// columnKinds are how each query's columns compare, as TPC's answer
// checker (dbgen's check_answers: colprecision.txt and cmpq.pl) has them:
// str and int and cnt exactly; num to the cent; sum within $100 after
// rounding to cents; avg and rat within 1% (or the cent they round to).
var columnKinds = [22]string{
	"str str sum sum sum sum avg avg avg cnt",
	"num str str int str str str str",
	"int sum str int",
	"str cnt",
	"str sum",
	"sum",
	"str str int sum",
	"int rat",
	"str int sum",
	"int str sum num str str str str",
	"int sum",
	"str sum sum",
	"cnt cnt",
	"rat",
	"int str str str sum",
	"str str num cnt",
	"avg",
	"str int int str num sum",
	"sum",
	"str str",
	"str cnt",
	"num cnt sum",
}

var answers struct {
	once sync.Once
	bySF map[string][22][][]string
	err  error
}

func sfKey(sf float64) string { return strconv.FormatFloat(sf, 'g', -1, 64) }

// loadAnswers reads every embedded answer file once.
func loadAnswers() (map[string][22][][]string, error) {
	answers.once.Do(func() {
		answers.bySF = map[string][22][][]string{}
		ents, err := answerFiles.ReadDir("answers")
		if err != nil {
			answers.err = err
			return
		}
		for _, e := range ents {
			sf, ok := strings.CutSuffix(strings.TrimPrefix(e.Name(), "sf"), ".txt.gz")
			if !ok {
				continue
			}
			b, err := answerFiles.ReadFile("answers/" + e.Name())
			if err == nil {
				var zr *gzip.Reader
				if zr, err = gzip.NewReader(bytes.NewReader(b)); err == nil {
					b, err = io.ReadAll(zr)
				}
			}
			if err != nil {
				answers.err = fmt.Errorf("reading the reference answers %s: %w", e.Name(), err)
				return
			}
			var qs [22][][]string
			q := 0
			for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
				if n, err := strconv.Atoi(strings.TrimPrefix(line, "Q")); err == nil && strings.HasPrefix(line, "Q") && n >= 1 && n <= 22 {
					q = n
					qs[q-1] = [][]string{}
					continue
				}
				if q > 0 {
					qs[q-1] = append(qs[q-1], strings.Split(line, "|"))
				}
			}
			answers.bySF[sf] = qs
		}
	})
	return answers.bySF, answers.err
}

// HasAnswers says whether there are reference answers at scale factor sf.
func HasAnswers(sf float64) bool {
	all, err := loadAnswers()
	_, ok := all[sfKey(sf)]
	return err == nil && ok
}

// Answer returns query n's reference answer at scale factor sf: its rows,
// each value as text.
func Answer(sf float64, n int) ([][]string, bool) {
	all, err := loadAnswers()
	qs, ok := all[sfKey(sf)]
	if err != nil || !ok || n < 1 || n > 22 {
		return nil, false
	}
	return qs[n-1], true
}

// CheckAnswer compares query n's rows at scale factor sf (each value as
// the database returned it as text) with the reference answer, in order,
// each column within its tolerance. The error names the query and the
// first row that differs, or says how many rows there are.
func CheckAnswer(sf float64, n int, got [][]string) error {
	want, ok := Answer(sf, n)
	if !ok {
		return fmt.Errorf("Q%d: no reference answer at scale factor %g", n, sf)
	}
	kinds := strings.Fields(columnKinds[n-1])
	for i := range min(len(got), len(want)) {
		if len(got[i]) != len(kinds) {
			return fmt.Errorf("Q%d: row %d has %d columns; the reference has %d", n, i+1, len(got[i]), len(kinds))
		}
		for c, kind := range kinds {
			if !sameValue(kind, got[i][c], want[i][c]) {
				return fmt.Errorf("Q%d: row %d is %s; the reference's is %s (column %d, compared as %s)",
					n, i+1, strings.Join(trimAll(got[i]), "|"), strings.Join(want[i], "|"), c+1, kind)
			}
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("Q%d: %d rows; the reference has %d", n, len(got), len(want))
	}
	return nil
}

func trimAll(row []string) []string {
	out := make([]string, len(row))
	for i, v := range row {
		out[i] = strings.TrimSpace(v)
	}
	return out
}

// sameValue compares a value with the reference's as kind says.
func sameValue(kind, got, want string) bool {
	got, want = strings.TrimSpace(got), strings.TrimSpace(want)
	if kind == "str" {
		return got == want
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	if err1 != nil || err2 != nil {
		return got == want
	}
	cents := func(v float64) float64 { return math.Round(v*100) / 100 }
	switch kind {
	case "int", "cnt":
		return g == w
	case "num":
		return cents(g) == cents(w)
	case "sum":
		return math.Abs(cents(g)-cents(w)) <= 100
	default: // avg, rat
		d := math.Abs(g - w)
		return d <= 0.01*math.Abs(w) || math.Abs(cents(g)-cents(w)) <= 0.01+1e-9
	}
}
