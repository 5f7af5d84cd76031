package tpch

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestNewScale(t *testing.T) {
	for _, tc := range []struct {
		sf                       float64
		parts, supps, cust, ords int64
	}{
		{0.01, 2000, 100, 1500, 15000},
		{0.1, 20000, 1000, 15000, 150000},
		{1, 200000, 10000, 150000, 1500000},
		{30, 6000000, 300000, 4500000, 45000000},
		// Below 1, dbgen takes (int)(1000·SF) thousandths of each table.
		{0.3, 60000, 3000, 45000, 450000},
		{0.009, 1800, 90, 1350, 13500},
		{0.001, 200, 10, 150, 1500},
	} {
		sc, err := NewScale(tc.sf)
		if err != nil {
			t.Errorf("NewScale(%g): %v", tc.sf, err)
			continue
		}
		if sc.Parts != tc.parts || sc.Suppliers != tc.supps || sc.Customers != tc.cust || sc.Orders != tc.ords ||
			sc.Rows(PartSupp) != 4*tc.parts || sc.Rows(Nation) != 25 || sc.Rows(Region) != 5 {
			t.Errorf("NewScale(%g) = %+v", tc.sf, sc)
		}
	}
	for sf, want := range map[float64]string{
		0:       "not above 0",
		-1:      "not above 0",
		1.5:     "not a whole number",
		0.0005:  "not a multiple of 0.001",
		0.0125:  "not a multiple of 0.001",
		40000:   "above 30,000",
		30000.5: "above 30,000",
	} {
		if _, err := NewScale(sf); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewScale(%g): %v; want %q", sf, err, want)
		}
	}
}

// julian and the dates: dbgen's day numbers against the calendar.
func TestDates(t *testing.T) {
	for date, want := range map[int64]int64{
		startDate: 92001, startDate + 365: 92366, startDate + 366: 93001, // 1992 is a leap year
		startDate + 366 + 365 + 365 + 365: 96001, startDate + totalDays - 1: 98365,
	} {
		if got := julian(date); got != want {
			t.Errorf("julian(%d) = %d, want %d", date, got, want)
		}
	}
	if dates[0] != "1992-01-01" || dates[59] != "1992-02-29" || dates[totalDays-1] != "1998-12-31" {
		t.Errorf("dates: %s %s %s", dates[0], dates[59], dates[totalDays-1])
	}
	if julian(startDate+1263) != 95168 || dates[1263] != "1995-06-17" || lastCurrentDay != startDate+1263 {
		t.Errorf("the current date: julian %d, %s, last day %d; want 95168, 1995-06-17, %d", julian(startDate+1263), dates[1263], lastCurrentDay, startDate+1263)
	}
	// Of each 32 order keys the first 8 are the loaded orders', the next 8
	// the refresh function's.
	for i, want := range map[int64]int64{1: 1, 7: 7, 8: 32, 9: 33, 15: 39, 16: 64} {
		if got := orderKey(i, 0); got != want || orderKey(i, 1) != want+8 {
			t.Errorf("orderKey(%d) = %d, %d for seq 1; want %d, %d", i, got, orderKey(i, 1), want, want+8)
		}
	}
}

// skip lands where as many draws do.
func TestSkip(t *testing.T) {
	a, b := newStreams(), newStreams()
	for range 1000 {
		a.unif(1, 100, sLineQty)
	}
	b.skip(sLineQty, 1000)
	if a.value[sLineQty] != b.value[sLineQty] {
		t.Fatalf("after 1000 draws %d, after skipping 1000 %d", a.value[sLineQty], b.value[sLineQty])
	}
}

// scaled's integer quotient is dbgen's double-precision one wherever it
// is taken: draws near both ends of the stream and at random for the
// ranges the rows use, and for wide ranges those nearest a whole number.
func TestScaledIsDbgens(t *testing.T) {
	byDoubles := func(v, low, high int64) int64 {
		return low + int64(float64(v)/float64(rngModulus)*float64(high-low+1))
	}
	check := func(v, low, high int64) bool {
		if got, want := scaled(v, low, high), byDoubles(v, low, high); got != want {
			t.Errorf("scaled(%d, %d, %d) = %d; in double precision %d", v, low, high, got, want)
			return false
		}
		return true
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, r := range []int64{1, 2, 7, 50, 92, 121, 456, 9999, 99901, 1099999, 1<<20 - 1} {
		for v := int64(1); v < 1<<16; v++ {
			if !check(v, 0, r-1) || !check(rngModulus-v, 1, r) {
				return
			}
		}
		for range 1 << 16 {
			if !check(rng.Int64N(rngModulus-1)+1, -5, r-6) {
				return
			}
		}
	}
	// Beyond 2^20, draws at random and those whose v·r/M lies nearest a
	// whole number, from below and from above, where the doubles decide.
	for _, r := range []int64{1 << 20, textPoolSize - 7*27*16/10 + 1, textPoolSize - 124*16/10 + 1, 1<<31 - 2} {
		for range 1 << 16 {
			if !check(rng.Int64N(rngModulus-1)+1, 0, r-1) {
				return
			}
		}
		// v·r ≡ ±t (mod M): v = ±t·r⁻¹, the inverse r^(M−2) (M is prime).
		inv := int64(1)
		for e, sq := int64(rngModulus-2), r%rngModulus; e > 0; e /= 2 {
			if e%2 == 1 {
				inv = mulMod(inv, sq)
			}
			sq = mulMod(sq, sq)
		}
		for t := int64(1); t < 1<<12; t++ {
			if !check(mulMod(t, inv), 0, r-1) || !check(mulMod(rngModulus-t, inv), 0, r-1) {
				return
			}
		}
	}
	// dbgen's wrapped range.
	for _, v := range []int64{1, 12345, rngModulus - 1} {
		if got, want := scaled(v, 0, maxLong), int64(float64(v)/float64(rngModulus)*-2147483648); got != want {
			t.Errorf("scaled(%d, 0, maxLong) = %d; want %d", v, got, want)
		}
	}
}

// The digits written in place are strconv's, at every length.
func TestAppendDigits(t *testing.T) {
	for _, v := range []int64{0, 1, 9, 10, 99, 100, 101, 999, 1000, 9999, 10000, 6000000, 99999999, 100000000, -1, -99999, 1e18 - 1, 1e18, 1<<63 - 1} {
		if got, want := string(appendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10)+"|"; got != want {
			t.Errorf("appendInt(%d) = %q; want %q", v, got, want)
		}
		if v < 1<<53 {
			if got, want := string(appendMoney(nil, v)), fmt.Sprintf("%.2f|", float64(v)/100); got != want {
				t.Errorf("appendMoney(%d) = %q; want %q", v, got, want)
			}
		}
	}
}

// appendSmall and appendCents write what appendInt and appendMoney do, for
// every number they take.
func TestAppendSmall(t *testing.T) {
	for v := range int64(100) {
		if got, want := string(appendSmall([]byte("x"), v)), string(appendInt([]byte("x"), v)); got != want {
			t.Errorf("appendSmall(%d) = %q; appendInt writes %q", v, got, want)
		}
		if got, want := string(appendCents(nil, v)), string(appendMoney(nil, v)); got != want {
			t.Errorf("appendCents(%d) = %q; appendMoney writes %q", v, got, want)
		}
	}
}

// unifSmall is dbgen's draw only below 2^20 numbers: the lists a row picks
// from, and the pool's word lists, stay below it.
func TestPickRanges(t *testing.T) {
	g := &grammarWords
	lists := map[string]int64{
		"containers": containers.total(), "part types": partTypes.total(), "segments": segments.total(),
		"instructions": instructions.total(), "ship modes": shipModes.total(), "return flags": returnFlags.total(),
		"priorities": priorities.total(),
	}
	for name, p := range map[string]*picker{
		"sentences": &g.sentences, "prepositions": &g.prepositions, "terminators": &g.terminators,
		"articles": &g.articles, "adjectives": &g.adjectives, "adverbs": &g.adverbs, "nouns": &g.nouns,
		"auxiliaries": &g.auxiliaries, "verbs": &g.verbs,
	} {
		lists[name] = int64(len(p.at))
	}
	for name, n := range lists {
		if n < 1 || n >= 1<<20 {
			t.Errorf("%s: %d weights; unifSmall draws from 1 to 2^20-1", name, n)
		}
	}
}

// A row's end skips the rest of its boundary as skip does, for every
// length the multiplier table holds.
func TestSkipMult(t *testing.T) {
	for n := range int64(len(skipMult)) {
		a := newStreams()
		a.skip(sPartName, n)
		if got := mulMod(streamDefs[sPartName].seed, skipMult[n]); got != a.value[sPartName] {
			t.Errorf("skipping %d by the table: %d; by squaring %d", n, got, a.value[sPartName])
		}
	}
	if len(skipMult) != 93 {
		t.Errorf("the table holds %d skips; want 0 to 92, PART's name's boundary", len(skipMult))
	}
}

// touchComments draws the very comments the rows then cut: rows made
// from what it drew ahead are the rows made without it, and the sum of
// each comment's first and last byte, which it reads, is the sum over the
// lines' comments. SUPPLIER is left out of the sum: a Better Business
// Bureau note may overwrite a comment's first byte.
func TestTouchComments(t *testing.T) {
	sc, err := NewScale(0.01)
	if err != nil {
		t.Fatal(err)
	}
	for table := range commentStreams {
		for _, first := range []int64{1, 77} {
			r := newRowSource(sc, table, first)
			got := r.g.touchComments(table, 50)
			text := string(r.next(nil, 50))
			plain, apart := newRowSource(sc, table, first), []byte(nil)
			for i := range int64(50) {
				apart = plain.lines(apart, first+i)
			}
			if text != string(apart) {
				t.Errorf("%s from row %d: the rows made from the comments drawn ahead differ from those made without", table, first)
			}
			want, lines := 0, 0
			for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
				f := strings.Split(line, "|")
				c := f[len(f)-2]
				want += int(c[0]) + int(c[len(c)-1])
				lines++
			}
			if table != Supplier && got != want || lines < 50 {
				t.Errorf("%s from row %d: touched %d; the %d lines' comments sum to %d", table, first, got, lines, want)
			}
		}
	}
}

// A table's rows made from any row on, in runs by any number of
// generators, are the rows made from the first: each row's draws start at
// the row's boundary.
func TestRunsAgree(t *testing.T) {
	sc, err := NewScale(0.001)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range Tables {
		var whole, parts bytes.Buffer
		rows, n, err := WriteTable(context.Background(), &whole, sc, table, 1)
		if err != nil || n != int64(whole.Len()) || rows == 0 {
			t.Fatalf("%s: %d rows, %d bytes written of %d: %v", table, rows, n, whole.Len(), err)
		}
		for _, first := range []int64{2, sc.generatorRows(table)/2 + 1} {
			tail := newRowSource(sc, table, first).next(nil, sc.generatorRows(table)-first+1)
			if !bytes.HasSuffix(whole.Bytes(), tail) || len(tail) == 0 {
				t.Errorf("%s from row %d: not the end of the whole table", table, first)
			}
		}
		if rows2, _, err := WriteTable(context.Background(), &parts, sc, table, 7); err != nil || rows2 != rows || !bytes.Equal(parts.Bytes(), whole.Bytes()) {
			t.Errorf("%s by 7 generators: %d rows (want %d), same bytes %v, %v", table, rows2, rows, bytes.Equal(parts.Bytes(), whole.Bytes()), err)
		}
	}
}

// At some scales below SF 0.022 some parts get a supplier twice, as in
// dbgen's files: a build then cannot have PARTSUPP's primary key.
func TestPartSuppKeysUnique(t *testing.T) {
	for sf, want := range map[float64]bool{0.001: false, 0.007: false, 0.008: true, 0.01: true, 0.021: false, 0.022: true, 0.1: true, 1: true, 10: true} {
		sc, _ := NewScale(sf)
		dup := false
		for p := int64(1); p <= sc.Parts && !dup; p++ {
			seen := map[int64]bool{}
			for n := range int64(suppPerPart) {
				k := sc.partSupplier(p, n)
				dup = dup || seen[k]
				seen[k] = true
			}
		}
		if got := sc.PartSuppKeysUnique(); got != want || got == dup {
			t.Errorf("SF %g: PartSuppKeysUnique() = %v, a part with a supplier twice: %v; want %v", sf, got, dup, want)
		}
	}
}
