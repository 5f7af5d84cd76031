// Package tpchtest checks a database's TPC-H tables against tierbench's
// generator, for the engines' tests.
package tpchtest

import (
	"bufio"
	"bytes"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/tpch"
)

// CheckTables compares every table of a build at scale sc with the rows
// the generator makes for it. dump returns a table's rows in any order,
// each as its fields' text joined by '|' (money with two decimals, dates
// as YYYY-MM-DD); a field's trailing blanks and a decimal's trailing zeros
// are ignored on both sides (see trimFields).
func CheckTables(t *testing.T, sc tpch.Scale, dump func(table string) ([]string, error)) {
	t.Helper()
	for _, table := range tpch.Tables {
		var want []string
		for _, task := range tpch.LoadTasks(sc, 1) {
			if task.Table != table {
				continue
			}
			sc := bufio.NewScanner(task.Reader(sc))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				want = append(want, trimFields(sc.Text()))
			}
		}
		got, err := dump(table)
		if err != nil {
			t.Fatalf("reading %s back: %v", table, err)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d rows; want the generator's %d", table, len(got), len(want))
			continue
		}
		for i := range got {
			got[i] = trimFields(got[i])
		}
		// PARTSUPP's file is not in key order: compare the rows as sets.
		slices.Sort(got)
		slices.Sort(want)
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: the rows differ from the generator's; in sorted order, row %d is\n  %s\nwant\n  %s", table, i+1, got[i], want[i])
				break
			}
		}
	}
}

// trimFields drops the trailing blanks of each '|'-separated field, and a
// decimal's trailing zeros: dbgen writes a quantity as 23, a numeric(15,2)
// column gives it back as 23.00.
func trimFields(row string) string {
	fs := strings.Split(row, "|")
	for i, f := range fs {
		f = strings.TrimRight(f, " ")
		if decimal.MatchString(f) {
			f = strings.TrimRight(strings.TrimRight(f, "0"), ".")
		}
		fs[i] = f
	}
	return strings.Join(fs, "|")
}

var decimal = regexp.MustCompile(`^-?[0-9]+\.[0-9]+$`)

// Lines splits text into its lines, without the last newline.
func Lines(r io.Reader) ([]string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	if len(b) == 0 {
		return nil, nil
	}
	return strings.Split(string(b), "\n"), nil
}
