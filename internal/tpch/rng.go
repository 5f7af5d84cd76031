package tpch

// The reference generator's random numbers, as the specification's
// dbgen draws them (dbgen 2.14.0: rnd.c, speed_seed.c, rnd.h): one
// Lehmer ("minimal standard") generator per column, X' = 16807·X mod
// 2^31−1, each with its own starting seed. A row takes a fixed number of
// draws from each of its table's streams, its boundary, whatever it used:
// at the row's end every stream is advanced to the boundary. So row N of a
// table depends only on N, and a table can be generated alone, or from any
// row on, with the same result.

const (
	rngMultiplier = 16807
	rngModulus    = 2147483647 // 2^31 - 1
	maxLong       = 0x7FFFFFFF
)

// Streams by column, numbered as dbgen numbers them.
const (
	sPartMfg      = 0
	sPartBrand    = 1
	sPartType     = 2
	sPartSize     = 3
	sPartCntr     = 4
	sTextPool     = 5
	sPartCmnt     = 6
	sPsQty        = 7
	sPsCost       = 8
	sPsCmnt       = 9
	sOrderSupp    = 10 // unused by the rows, kept for its place
	sOrderClerk   = 11
	sOrderCmnt    = 12
	sOrderDate    = 13
	sLineQty      = 14
	sLineDiscount = 15
	sLineTax      = 16
	sLineInstr    = 17
	sLineMode     = 18
	sLinePart     = 19
	sLineSupp     = 20
	sLineShip     = 21
	sLineCommit   = 22
	sLineReceipt  = 23
	sLineRFlag    = 24
	sLineCmnt     = 25
	sCustAddr     = 26
	sCustNation   = 27
	sCustPhone    = 28
	sCustBal      = 29
	sCustSegment  = 30
	sCustCmnt     = 31
	sSuppAddr     = 32
	sSuppNation   = 33
	sSuppPhone    = 34
	sSuppBal      = 35
	sSuppCmnt     = 36
	sPartName     = 37
	sOrderPrio    = 38
	sHVar         = 39 // unused by the rows
	sOrderCust    = 40
	sNationCmnt   = 41
	sRegionCmnt   = 42
	sOrderLines   = 43
	sBBBJunk      = 44 // dss.h's numbers (rnd.h's comments name 44 and 47 the other way round)
	sBBBType      = 45
	sBBBCmnt      = 46
	sBBBOffset    = 47
	numStreams    = 48
)

// Tables, as the streams name their owner.
const (
	tNone = iota
	tPart
	tPartSupp
	tSupplier
	tCustomer
	tOrders
	tLineItem
	tNation
	tRegion
)

// streamDef is a stream's owner, starting seed and draws per row.
type streamDef struct {
	table    int
	seed     int64
	boundary int64
}

// streamDefs are dbgen's (rnd.h), in stream order.
var streamDefs = [numStreams]streamDef{
	{tPart, 1, 1}, {tPart, 46831694, 1}, {tPart, 1841581359, 1}, {tPart, 1193163244, 1},
	{tPart, 727633698, 1}, {tNone, 933588178, 1}, {tPart, 804159733, 2},
	{tPartSupp, 1671059989, suppPerPart}, {tPartSupp, 1051288424, suppPerPart}, {tPartSupp, 1961692154, suppPerPart * 2},
	{tOrders, 1227283347, 1}, {tOrders, 1171034773, 1}, {tOrders, 276090261, 2}, {tOrders, 1066728069, 1},
	{tLineItem, 209208115, maxLines}, {tLineItem, 554590007, maxLines}, {tLineItem, 721958466, maxLines},
	{tLineItem, 1371272478, maxLines}, {tLineItem, 675466456, maxLines}, {tLineItem, 1808217256, maxLines},
	{tLineItem, 2095021727, maxLines}, {tLineItem, 1769349045, maxLines}, {tLineItem, 904914315, maxLines},
	{tLineItem, 373135028, maxLines}, {tLineItem, 717419739, maxLines}, {tLineItem, 1095462486, maxLines * 2},
	{tCustomer, 881155353, 9}, {tCustomer, 1489529863, 1}, {tCustomer, 1521138112, 3}, {tCustomer, 298370230, 1},
	{tCustomer, 1140279430, 1}, {tCustomer, 1335826707, 2},
	{tSupplier, 706178559, 9}, {tSupplier, 110356601, 1}, {tSupplier, 884434366, 3}, {tSupplier, 962338209, 1},
	{tSupplier, 1341315363, 2},
	{tPart, 709314158, 92}, {tOrders, 591449447, 1}, {tLineItem, 431918286, 1}, {tOrders, 851767375, 1},
	{tNation, 606179079, 2}, {tRegion, 1500869201, 2}, {tOrders, 1434868289, 1},
	{tSupplier, 263032577, 1}, {tSupplier, 753643799, 1}, {tSupplier, 202794285, 1}, {tSupplier, 715851524, 1},
}

// streams is a set of every stream, at its state.
type streams struct {
	value [numStreams]int64
	usage [numStreams]int64
}

func newStreams() *streams {
	s := &streams{}
	for i, d := range streamDefs {
		s.value[i] = d.seed
	}
	return s
}

// unif draws uniformly from low..high on stream i, as dbgen's UnifInt:
// the draw scaled in double precision and truncated. For 0..maxLong dbgen
// computes the range in 32-bit arithmetic, where high−low+1 wraps to
// −2^31, so those draws come out negative (or 0); a_rnd takes their low
// bits, and so does this.
func (s *streams) unif(low, high int64, i int) int64 {
	s.usage[i]++
	s.value[i] = next(s.value[i])
	return scaled(s.value[i], low, high)
}

// unifSmall is unif for ranges of fewer than 2^20 numbers, where the
// integers' quotient is always dbgen's number (see scaled). It is small
// enough for the compiler to copy into its callers: a call or two per
// draw took a tenth of a generator's time.
func (s *streams) unifSmall(low, high int64, i int) int64 {
	v := next(s.value[i])
	s.value[i] = v
	s.usage[i]++
	return scaledSmall(v, low, high)
}

// scaledSmall is scaled for ranges of fewer than 2^20 numbers.
func scaledSmall(v, low, high int64) int64 {
	return low + int64(uint64(v)*uint64(high-low+1)/rngModulus)
}

// scaled is the draw v as a number from low to high (unif): low plus the
// whole part of v/M·r, where M is the modulus and r = high−low+1, each step
// in double precision as dbgen makes it.
//
// The integers' quotient q = ⌊v·r/M⌋ is the same number, without a
// division's latency (a sixth of a generator's time), unless v·r/M lies
// within the doubles' error of a whole number. That error is under
// r·2^-52; on the remainder's scale (v·r − q·M) under r·2^-21, so a
// remainder more than r/2^20 from both 0 and M leaves the whole part as it
// is. v·r/M is never whole (M is a prime above v and r), so for r below
// 2^20 it always does; of every draw for a LINEITEM comment's offset (r
// near 2^28) 599 in 2^31 go by the doubles. r of 2^31, where dbgen's
// range wraps, always does.
func scaled(v, low, high int64) int64 {
	r := high - low + 1
	if r > 0 && r < 1<<20 {
		return low + int64(uint64(v)*uint64(r)/rngModulus)
	}
	if r > 0 && r < 1<<31 {
		p := uint64(v) * uint64(r)
		q := p / rngModulus
		rem, slack := p-q*rngModulus, uint64(r)>>20+1
		if rem >= slack && rngModulus-rem > slack {
			return low + int64(q)
		}
	}
	rng := float64(high - low + 1)
	if low == 0 && high == maxLong {
		rng = -2147483648
	}
	return low + int64(float64(v)/float64(rngModulus)*rng)
}

// next is the Lehmer step X·16807 mod 2^31−1, without a division: the
// product is below 2^46, and 2^31 ≡ 1 modulo 2^31−1.
func next(v int64) int64 {
	x := v * rngMultiplier
	x = x&rngModulus + x>>31
	if x >= rngModulus {
		x -= rngModulus
	}
	return x
}

// skip advances stream i by n draws without making them (dbgen's
// NthElement): X·16807^n mod 2^31−1 by squaring.
func (s *streams) skip(i int, n int64) {
	z, mult := s.value[i], int64(rngMultiplier)
	for n > 0 {
		if n%2 != 0 {
			z = mult * z % rngModulus
		}
		n /= 2
		mult = mult * mult % rngModulus
	}
	s.value[i] = z
}

// mulMod is a·b mod 2^31−1 for a and b below 2^31: the product is below
// 2^62, folded twice as next folds it.
func mulMod(a, b int64) int64 {
	x := a * b
	x = x&rngModulus + x>>31
	x = x&rngModulus + x>>31
	if x >= rngModulus {
		x -= rngModulus
	}
	return x
}

// skipMult[n] is 16807^n mod 2^31−1 for n up to the largest boundary: the
// rest of a row's draws are skipped with one multiplication, where skip's
// squaring takes a division a bit (8% of a generator's time).
var skipMult = func() []int64 {
	var most int64
	for _, d := range streamDefs {
		most = max(most, d.boundary)
	}
	m := make([]int64, most+1)
	m[0] = 1
	for n := 1; n < len(m); n++ {
		m[n] = mulMod(m[n-1], rngMultiplier)
	}
	return m
}()

// rowStreams[table][detail] are the streams rowStop moves for a row of
// table and its detail table (streamDef.of), in stream order.
var rowStreams = func() (r [tRegion + 1][tRegion + 1][]int) {
	for t := range r {
		for d := range r[t] {
			for i, def := range streamDefs {
				if def.of(t, d) {
					r[t][d] = append(r[t][d], i)
				}
			}
		}
	}
	return r
}()

// rowStart begins a row: no draws used yet.
func (s *streams) rowStart() { s.usage = [numStreams]int64{} }

// rowStop ends a row of table (and of its detail table: an order's lines,
// a part's suppliers), advancing each of their streams to its boundary.
func (s *streams) rowStop(table, detail int) {
	for _, i := range rowStreams[table][detail] {
		if n := streamDefs[i].boundary - s.usage[i]; n > 0 {
			s.value[i] = mulMod(s.value[i], skipMult[n])
		}
	}
}

// of says whether the stream belongs to table or to its detail table.
func (d streamDef) of(table, detail int) bool {
	return d.table == table || detail != tNone && d.table == detail
}

// pick draws a member of d by weight on stream i (dbgen's pick_str) and
// returns its index.
func (s *streams) pick(d dist, i int) int {
	j := s.unifSmall(1, d.total(), i)
	k := 0
	for d[k].weight < j {
		k++
	}
	return k
}

// alphaNum is dbgen's alphabet of random strings, 64 characters.
const alphaNum = "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,"

// randomString appends a random string of min..max characters drawn on
// stream i (dbgen's a_rnd): a draw for the length, then one per five
// characters, six bits each.
func (s *streams) randomString(b []byte, min, max int64, i int) []byte {
	n := s.unifSmall(min, max, i)
	var bits int64
	for k := int64(0); k < n; k++ {
		if k%5 == 0 {
			bits = s.unif(0, maxLong, i)
		}
		b = append(b, alphaNum[bits&0o77])
		bits >>= 6
	}
	return b
}

// vstr appends a variable-length random string whose length averages avg
// (dbgen's V_STR: 0.4 to 1.6 times avg).
func (s *streams) vstr(b []byte, avg int, i int) []byte {
	lo, hi := lengthBounds(avg)
	return s.randomString(b, lo, hi, i)
}

// lengthBounds are dbgen's bounds of a variable length of average avg:
// (int)(avg·0.4) and (int)(avg·1.6), in double precision.
func lengthBounds(avg int) (int64, int64) {
	return int64(float64(avg) * 0.4), int64(float64(avg) * 1.6)
}
