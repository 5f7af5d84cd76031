package tpch

import (
	"fmt"
	"strings"
)

// The queries' substitution parameters, drawn as TPC's qgen 2.14.0 draws
// them (its varsub.c), or the specification's validation values (qgen -d).
//
// qgen seeds query n's stream with the seed advanced n times by the Lehmer
// step, so a query's parameters depend on the seed alone, not on the other
// queries nor on the stream's order. Each query draws on its own stream,
// with dbgen's uniform draw and its weighted pick from the distributions.

// MaxSeed is the largest seed: qgen's seeds are Lehmer states below
// 2^31−1.
const MaxSeed = rngModulus - 1

// nations2 is dists.dss's nations2: the 25 nations, each weighing 1, as the
// queries draw them.
var nations2 = func() dist {
	d := make(dist, len(nations))
	for i, n := range nations {
		d[i] = member{n.text, int64(i + 1)}
	}
	return d
}()

// q13Words are dists.dss's Q13a and Q13b, the words of Q13's LIKE pattern.
var (
	q13a = dist{{"special", 20}, {"pending", 40}, {"unusual", 60}, {"express", 80}}
	q13b = dist{{"packages", 40}, {"requests", 80}, {"accounts", 120}, {"deposits", 160}}
)

// qstream is one of qgen's query streams.
type qstream struct{ v int64 }

func (q *qstream) unif(low, high int64) int64 {
	q.v = next(q.v)
	return low + int64(float64(q.v)/float64(rngModulus)*float64(high-low+1))
}

func (q *qstream) pick(d dist) int {
	j := q.unif(1, d.total())
	k := 0
	for d[k].weight < j {
		k++
	}
	return k
}

// permute shuffles a as qgen's permute does: for each position i, a swap
// with a position drawn from i to the end.
func (q *qstream) permute(a []int64) {
	for i := range a {
		j := q.unif(int64(i), int64(len(a)-1))
		a[i], a[j] = a[j], a[i]
	}
}

// q11Fraction is Q11's fraction at scale factor sf, as qgen prints it.
func q11Fraction(sf float64) string { return fmt.Sprintf("%11.10f", 0.0001/sf) }

// Substitutions are the 22 queries' parameters (index n−1) that qgen -r
// seed -s sf writes, each as qgen substitutes it into the query's text.
// The seed is 1 to MaxSeed: from 0 every draw is the same, and qgen, like
// this, would never find Q7 a second nation.
func Substitutions(seed int64, sf float64) [22][]string {
	if seed < 1 || seed > MaxSeed {
		panic(fmt.Sprintf("tpch: seed %d is not 1 to %d", seed, MaxSeed))
	}
	var out [22][]string
	s := seed
	for n := 1; n <= 22; n++ {
		s = next(s)
		out[n-1] = draw(n, &qstream{s}, sf)
	}
	return out
}

// month is qgen's "19YY-MM-01" of month t from January 1993.
func month(t int64) string { return fmt.Sprintf("19%02d-%02d-01", 93+t/12, t%12+1) }

func year(q *qstream) string { return fmt.Sprintf("19%02d-01-01", q.unif(93, 97)) }

func brand(q *qstream) string {
	m := q.unif(1, 5)
	return fmt.Sprintf("Brand#%d%d", m, q.unif(1, 5))
}

// draw draws query n's parameters on its stream q.
func draw(n int, q *qstream, sf float64) []string {
	str := func(d dist) string { return d[q.pick(d)].text }
	itoa := func(v int64) string { return fmt.Sprint(v) }
	switch n {
	case 1:
		return []string{itoa(q.unif(60, 120))}
	case 2:
		size := itoa(q.unif(1, 50))
		typ := str(partTypes)
		return []string{size, typ[strings.LastIndexByte(typ, ' ')+1:], str(regions)}
	case 3:
		seg := str(segments)
		return []string{seg, dates[q.unif(0, 30)+1155]} // a day of March 1995
	case 4:
		return []string{month(q.unif(1, 58))}
	case 5:
		r := str(regions)
		return []string{r, year(q)}
	case 6:
		y := year(q)
		disc := fmt.Sprintf("0.%02d", q.unif(2, 9))
		return []string{y, disc, itoa(q.unif(24, 25))}
	case 7:
		a := q.pick(nations2)
		b := q.pick(nations2)
		for b == a {
			b = q.pick(nations2)
		}
		return []string{nations2[a].text, nations2[b].text}
	case 8:
		i := q.pick(nations2)
		return []string{nations2[i].text, regions[nations[i].weight].text, str(partTypes)}
	case 9:
		return []string{str(colors)}
	case 10:
		return []string{month(q.unif(1, 24))}
	case 11:
		return []string{str(nations2), q11Fraction(sf)}
	case 12:
		a := q.pick(shipModes)
		b := q.pick(shipModes)
		for b == a {
			b = q.pick(shipModes)
		}
		return []string{shipModes[a].text, shipModes[b].text, year(q)}
	case 13:
		a := str(q13a)
		return []string{a, str(q13b)}
	case 14:
		return []string{month(q.unif(0, 59))}
	case 15:
		return []string{month(q.unif(0, 57))}
	case 16:
		b := brand(q)
		typ := str(partTypes)
		out := []string{b, typ[:strings.LastIndexByte(typ, ' ')]}
		sizes := make([]int64, 50)
		for i := range sizes {
			sizes[i] = int64(i + 1)
		}
		q.permute(sizes)
		for _, v := range sizes[:8] {
			out = append(out, itoa(v))
		}
		return out
	case 17:
		b := brand(q)
		return []string{b, str(containers)}
	case 18:
		return []string{itoa(q.unif(312, 315))}
	case 19:
		b1, b2, b3 := brand(q), brand(q), brand(q)
		q1 := q.unif(1, 10)
		q2 := q.unif(10, 20)
		return []string{b1, b2, b3, itoa(q1), itoa(q2), itoa(q.unif(20, 30))}
	case 20:
		c := str(colors)
		y := year(q)
		return []string{c, y, str(nations2)}
	case 21:
		return []string{str(nations2)}
	case 22:
		codes := make([]int64, 25)
		for i := range codes {
			codes[i] = int64(10 + i)
		}
		q.permute(codes)
		out := make([]string, 7)
		for i := range out {
			out[i] = itoa(10 + codes[i])
		}
		return out
	}
	return nil
}

// ValidationSubstitutions are the specification's validation parameters
// (qgen -d), with which the reference answers were made; Q11's fraction is
// 0.0001/SF, as qgen -d prints it at sf.
func ValidationSubstitutions(sf float64) [22][]string {
	return [22][]string{
		{"90"}, {"15", "BRASS", "EUROPE"}, {"BUILDING", "1995-03-15"}, {"1993-07-01"}, {"ASIA", "1994-01-01"},
		{"1994-01-01", ".06", "24"}, {"FRANCE", "GERMANY"}, {"BRAZIL", "AMERICA", "ECONOMY ANODIZED STEEL"}, {"green"},
		{"1993-10-01"}, {"GERMANY", q11Fraction(sf)}, {"MAIL", "SHIP", "1994-01-01"}, {"special", "requests"}, {"1995-09-01"},
		{"1996-01-01"}, {"Brand#45", "MEDIUM POLISHED", "49", "14", "23", "45", "19", "3", "36", "9"}, {"Brand#23", "MED BOX"},
		{"300"}, {"Brand#12", "Brand#23", "Brand#34", "1", "10", "20"}, {"forest", "1994-01-01", "CANADA"}, {"SAUDI ARABIA"},
		{"13", "31", "23", "29", "30", "18", "17"},
	}
}
