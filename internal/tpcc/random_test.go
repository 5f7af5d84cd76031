package tpcc

import (
	"strings"
	"testing"
)

func TestNURandRanges(t *testing.T) {
	r := NewRand(1)
	cases := []struct{ a, x, y int }{{NURandALast, 0, 999}, {NURandACID, 1, 3000}, {NURandAItem, 1, NumItems}}
	for _, tc := range cases {
		seenLo, seenHi := false, false
		for range 200000 {
			c := r.Range(0, tc.a)
			v := r.NURand(tc.a, c, tc.x, tc.y)
			if v < tc.x || v > tc.y {
				t.Fatalf("NURand(%d,%d,%d) = %d out of range", tc.a, tc.x, tc.y, v)
			}
			seenLo = seenLo || v == tc.x
			seenHi = seenHi || v == tc.y
		}
		if !seenLo || !seenHi {
			t.Errorf("NURand(%d,%d,%d) never reached an end (lo %v hi %v)", tc.a, tc.x, tc.y, seenLo, seenHi)
		}
	}
}

// NURand is non-uniform: with A=255 over 0..999 some names are drawn far more
// often than 1/1000 of the time.
func TestNURandIsSkewed(t *testing.T) {
	r := NewRand(7)
	counts := make([]int, 1000)
	const n = 1000000
	for range n {
		counts[r.NURand(NURandALast, 42, 0, 999)]++
	}
	maxc := 0
	for _, c := range counts {
		maxc = max(maxc, c)
	}
	if maxc < 3*n/1000 {
		t.Fatalf("most frequent name drawn %d times of %d: not skewed", maxc, n)
	}
}

func TestCRunRule(t *testing.T) {
	cases := []struct {
		load, run int
		ok        bool
	}{
		{100, 165, true}, {100, 164, false}, {100, 219, true}, {100, 220, false},
		{100, 196, false}, {100, 212, false}, {200, 135, true}, {200, 104, false},
		{200, 88, false}, {0, 65, true}, {0, 300, false}, {100, 100, false},
	}
	for _, tc := range cases {
		if got := ValidCRunLast(tc.load, tc.run); got != tc.ok {
			t.Errorf("ValidCRunLast(%d,%d) = %v, want %v", tc.load, tc.run, got, tc.ok)
		}
	}
	r := NewRand(3)
	for load := 0; load <= NURandALast; load++ {
		for range 20 {
			run, err := NewRunC(r, CValues{Last: load})
			if err != nil {
				t.Fatal(err)
			}
			if !ValidCRunLast(load, run.Last) {
				t.Fatalf("NewRunC gave C-Run %d for C-Load %d", run.Last, load)
			}
			if run.CID < 0 || run.CID > NURandACID || run.Item < 0 || run.Item > NURandAItem {
				t.Fatalf("NewRunC out of range: %+v", run)
			}
		}
	}
	c := NewLoadC(r)
	if c.Last < 0 || c.Last > 255 || c.CID < 0 || c.CID > 1023 || c.Item < 0 || c.Item > 8191 {
		t.Fatalf("NewLoadC out of range: %+v", c)
	}
}

func TestLastName(t *testing.T) {
	cases := map[int]string{371: "PRICALLYOUGHT", 40: "BARPRESBAR", 0: "BARBARBAR", 999: "EINGEINGEING"}
	for n, want := range cases {
		if got := LastName(n); got != want {
			t.Errorf("LastName(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestStrings(t *testing.T) {
	r := NewRand(9)
	seen := map[byte]bool{}
	lengths := map[int]bool{}
	for range 20000 {
		s := r.AppendAString(nil, 26, 50)
		if len(s) < 26 || len(s) > 50 {
			t.Fatalf("a-string length %d outside 26..50", len(s))
		}
		lengths[len(s)] = true
		for _, c := range s {
			if !strings.ContainsRune(alnum, rune(c)) {
				t.Fatalf("a-string has %q", c)
			}
			seen[c] = true
		}
		d := r.AppendNString(nil, 16, 16)
		if len(d) != 16 || strings.Trim(string(d), "0123456789") != "" {
			t.Fatalf("n-string %q", d)
		}
	}
	if len(seen) != len(alnum) {
		t.Errorf("a-strings used %d distinct characters, want all %d", len(seen), len(alnum))
	}
	if len(lengths) != 25 {
		t.Errorf("a-string lengths covered %d of 25 values", len(lengths))
	}
	for range 1000 {
		s := string(r.AppendData(nil, true))
		if len(s) < 26 || len(s) > 50 || !strings.Contains(s, "ORIGINAL") {
			t.Fatalf("data %q", s)
		}
	}
}

func TestPerm(t *testing.T) {
	r := NewRand(5)
	p := make([]int32, 3000)
	r.Perm(p)
	seen := make([]bool, 3001)
	inPlace := 0
	for i, v := range p {
		if v < 1 || v > 3000 || seen[v] {
			t.Fatalf("not a permutation: %d at %d", v, i)
		}
		seen[v] = true
		if int(v) == i+1 {
			inPlace++
		}
	}
	if inPlace > 20 { // a random permutation has ~1 fixed point
		t.Fatalf("%d fixed points: not shuffled", inPlace)
	}
}

func TestAppendFixed(t *testing.T) {
	cases := []struct {
		v     int64
		scale int
		want  string
	}{{-1000, 2, "-10.00"}, {30000000, 2, "300000.00"}, {5, 4, "0.0005"}, {2000, 4, "0.2000"}, {1, 2, "0.01"}, {7, 0, "7"}}
	for _, tc := range cases {
		if got := string(appendFixed(nil, tc.v, tc.scale)); got != tc.want {
			t.Errorf("appendFixed(%d,%d) = %q, want %q", tc.v, tc.scale, got, tc.want)
		}
	}
}

// Generators seeded seed and seed+γ share one stream shifted by a draw —
// the way virtual users were once seeded, sending the same orders a moment
// apart; Child's generators share nothing.
func TestChildStreamsIndependent(t *testing.T) {
	const n = 100000
	seen := func(r *Rand) map[uint64]bool {
		m := make(map[uint64]bool, n)
		for range n {
			m[r.Uint64()] = true
		}
		return m
	}
	overlap := func(m map[uint64]bool, r *Rand) int {
		k := 0
		for range n {
			if m[r.Uint64()] {
				k++
			}
		}
		return k
	}
	if k := overlap(seen(NewRand(42)), NewRand(42+0x9e3779b97f4a7c15)); k < n-1 {
		t.Fatalf("seeds one increment apart share %d of %d draws; the shifted-stream hazard Child avoids is gone?", k, n)
	}
	parent := NewRand(42)
	a := parent.Child()
	for i := range 8 {
		if k := overlap(seen(a), parent.Child()); k != 0 {
			t.Fatalf("child %d shares %d of %d draws with the first", i+2, k, n)
		}
	}
}
