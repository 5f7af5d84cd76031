package tpch

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The parameters are qgen's for several seeds and scale factors, and its
// defaults (qgen -d) are the validation parameters.
func TestSubstitutionsMatchQgen(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "qgen", "*.txt"))
	if len(files) < 7 {
		t.Fatalf("%d recorded qgen outputs; want 7", len(files))
	}
	name := regexp.MustCompile(`^(seed(\d+)|default)-sf([0-9.]+)\.txt$`)
	for _, f := range files {
		m := name.FindStringSubmatch(filepath.Base(f))
		if m == nil {
			t.Fatalf("%s: not a recorded output's name", f)
		}
		sf, _ := strconv.ParseFloat(m[3], 64)
		var got [22][]string
		if m[1] == "default" {
			got = ValidationSubstitutions(sf)
		} else {
			seed, _ := strconv.ParseInt(m[2], 10, 64)
			got = Substitutions(seed, sf)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(line, "P") {
				continue
			}
			fields := strings.Split(line, "|")
			q, _ := strconv.Atoi(fields[0][1:])
			n++
			if want := strings.Join(fields[1:], "|"); strings.Join(got[q-1], "|") != want {
				t.Errorf("%s: Q%d's parameters %q; qgen's %q", filepath.Base(f), q, got[q-1], want)
			}
		}
		if n != 22 {
			t.Errorf("%s: %d queries", f, n)
		}
	}
}

// Streams 0, 1, 2 and 40 run the queries in qgen's orders; 41 is 0 again.
func TestStreamOrder(t *testing.T) {
	for s, want := range map[int]string{
		0:  "14 2 9 20 6 17 18 8 21 13 3 22 16 4 11 15 1 10 19 5 7 12",
		1:  "21 3 18 5 11 7 6 20 17 12 16 15 13 10 2 8 14 19 9 22 1 4",
		2:  "6 17 14 16 19 10 9 2 15 8 5 22 12 7 13 18 1 4 20 3 11 21",
		40: "13 15 17 1 22 11 3 4 7 20 14 21 9 8 2 18 16 6 10 12 5 19",
		41: "14 2 9 20 6 17 18 8 21 13 3 22 16 4 11 15 1 10 19 5 7 12",
	} {
		var got []string
		seen := map[int]bool{}
		for _, n := range StreamOrder(s) {
			got = append(got, strconv.Itoa(n))
			seen[n] = true
		}
		if strings.Join(got, " ") != want || len(seen) != 22 {
			t.Errorf("stream %d: %v; want %s", s, got, want)
		}
	}
}

// Every query in both dialects holds each of its parameters and no
// placeholder; intervals are each dialect's; Q15's view is named for its
// stream and dropped after.
func TestStatements(t *testing.T) {
	subs := Substitutions(4242, 1)
	left := regexp.MustCompile(`:[0-9s]|\{`)
	for _, d := range []Dialect{Postgres, MariaDB} {
		for n := 1; n <= 22; n++ {
			q, err := Statements(d, n, subs[n-1], 3)
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(append(append(q.Setup, q.Answer), q.Teardown...), ";\n")
			for _, p := range subs[n-1] {
				if !strings.Contains(all, p) {
					t.Errorf("%s Q%d lacks its parameter %q:\n%s", d, n, p, all)
				}
			}
			if left.MatchString(all) {
				t.Errorf("%s Q%d keeps a placeholder:\n%s", d, n, all)
			}
		}
		q1, _ := Statements(d, 1, []string{"90"}, 0)
		want := map[Dialect]string{Postgres: "interval '90 day'", MariaDB: "interval 90 day"}[d]
		if !strings.Contains(q1.Answer, want) {
			t.Errorf("%s Q1: %s; want %s", d, q1.Answer, want)
		}
	}
	q15, _ := Statements(Postgres, 15, []string{"1996-01-01"}, 3)
	if len(q15.Setup) != 1 || !strings.HasPrefix(q15.Setup[0], "create view revenue3 ") || q15.Teardown[0] != "drop view revenue3" ||
		!strings.Contains(q15.Answer, "from supplier, revenue3") {
		t.Errorf("Q15 of stream 3: %+v", q15)
	}
	if _, err := Statements(Postgres, 23, nil, 0); err == nil {
		t.Error("query 23 was written")
	}
}
