package tpcc

import (
	"fmt"
	"math/bits"
)

// Rand is a small, fast generator (splitmix64) for loading and driving. It
// is not safe for concurrent use: every worker owns one. The loader needs
// hundreds of millions of draws, so the methods avoid interfaces and
// allocations; statistical quality is ample for TPC-C's uniform draws.
type Rand struct{ s uint64 }

// NewRand returns a generator seeded with seed.
func NewRand(seed uint64) *Rand { return &Rand{s: seed} }

// Child returns a generator seeded with r's next output, for a worker of
// its own. Seeds spaced by splitmix64's increment (seed, seed+γ, seed+2γ …)
// would give every worker the same stream shifted by a draw or two —
// virtual users sending the same customers and items a moment apart — while
// a seed drawn from the output is unrelated to r's state and to r's other
// children.
func (r *Rand) Child() *Rand { return NewRand(r.Uint64()) }

// Uint64 returns 64 random bits.
func (r *Rand) Uint64() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Intn returns a uniform value in [0, n) for n > 0 (Lemire's multiply-shift;
// the bias is below 2^-40 for every n TPC-C uses).
func (r *Rand) Intn(n int) int {
	hi, _ := bits.Mul64(r.Uint64(), uint64(n))
	return int(hi)
}

// Range returns a uniform value in [lo, hi]: the spec's random(x..y) (2.1.5).
func (r *Rand) Range(lo, hi int) int { return lo + r.Intn(hi-lo+1) }

// Float64 returns a uniform value in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// NURand is the non-uniform random function of 2.1.6:
// (((random(0,A) | random(x,y)) + C) % (y-x+1)) + x.
func (r *Rand) NURand(a, c, x, y int) int {
	return (((r.Range(0, a) | r.Range(x, y)) + c) % (y - x + 1)) + x
}

const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// AppendAString appends a random a-string of length lo..hi (4.3.2.2). The
// character set is the 62 letters and digits, which the spec's alphabet must
// include; the database's character set (UTF8) can represent far more than
// the 128 characters 4.3.2.2 asks it to.
func (r *Rand) AppendAString(b []byte, lo, hi int) []byte {
	return r.appendChars(b, r.Range(lo, hi), alnum)
}

// AppendNString appends a random n-string (digits) of length lo..hi.
func (r *Rand) AppendNString(b []byte, lo, hi int) []byte {
	return r.appendChars(b, r.Range(lo, hi), alnum[:10])
}

// appendChars draws n characters from set. One 64-bit draw yields up to eight
// characters: each multiply by len(set) moves the next digit into the high
// word, the low word keeping the unused randomness.
func (r *Rand) appendChars(b []byte, n int, set string) []byte {
	m := uint64(len(set))
	for n > 0 {
		x := r.Uint64()
		k := min(n, 8)
		for range k {
			var hi uint64
			hi, x = bits.Mul64(x, m)
			b = append(b, set[hi])
		}
		n -= k
	}
	return b
}

// AppendData appends a random a-string of length 26..50 that, when original
// is true, holds "ORIGINAL" at a random position (I_DATA, S_DATA, 4.3.3.1).
func (r *Rand) AppendData(b []byte, original bool) []byte {
	n := r.Range(26, 50)
	if !original {
		return r.appendChars(b, n, alnum)
	}
	pos := r.Range(0, n-8)
	b = r.appendChars(b, pos, alnum)
	b = append(b, "ORIGINAL"...)
	return r.appendChars(b, n-8-pos, alnum)
}

// Percent returns true with probability p/100.
func (r *Rand) Percent(p int) bool { return r.Intn(100) < p }

// Perm fills p with a random permutation of 1..len(p) (Fisher-Yates).
func (r *Rand) Perm(p []int32) {
	for i := range p {
		p[i] = int32(i + 1)
	}
	for i := len(p) - 1; i > 0; i-- {
		j := r.Intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
}

// CValues are the NURand constants C of one phase (2.1.6): drawn once and
// shared by every terminal.
type CValues struct {
	Last int `json:"c_last"`  // C for C_LAST, in 0..255
	CID  int `json:"c_id"`    // C for C_ID, in 0..1023
	Item int `json:"ol_i_id"` // C for OL_I_ID, in 0..8191
}

// NewLoadC draws the C-Load values used while populating the database.
func NewLoadC(r *Rand) CValues {
	return CValues{Last: r.Range(0, NURandALast), CID: r.Range(0, NURandACID), Item: r.Range(0, NURandAItem)}
}

// ValidCRunLast reports whether run is an allowed C-Run for C_LAST given the
// C-Load load (2.1.6.1): |C-Run - C-Load| in 65..119, but not 96 or 112.
func ValidCRunLast(load, run int) bool {
	if run < 0 || run > NURandALast {
		return false
	}
	d := run - load
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

// NewRunC draws the C-Run values for a run against a database loaded with
// load. C_LAST gets a C-Run that satisfies 2.1.6.1; C_ID and OL_I_ID, for
// which the spec sets no such rule, get fresh values.
func NewRunC(r *Rand, load CValues) (CValues, error) {
	var ok []int
	for c := 0; c <= NURandALast; c++ {
		if ValidCRunLast(load.Last, c) {
			ok = append(ok, c)
		}
	}
	if len(ok) == 0 {
		return CValues{}, fmt.Errorf("no valid C-Run for C_LAST with C-Load %d", load.Last)
	}
	return CValues{Last: ok[r.Intn(len(ok))], CID: r.Range(0, NURandACID), Item: r.Range(0, NURandAItem)}, nil
}
