package tpch

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"
)

// The rows of the eight tables, as the reference generator makes them
// (dbgen 2.14.0's build.c), in its flat-file format: fields separated and
// ended by '|', money in cents printed as dollars.

const (
	suppPerPart   = 4
	maxLines      = 7 // lines per order, at most
	custMortality = 3 // a customer whose key is a multiple of this has no orders
	startDate     = 92001
	currentDate   = 95168 // 1995-06-17: before it a line is shipped or returned
	totalDays     = 2557  // 1992-01-01 to 1998-12-31
	orderDateMax  = startDate + totalDays - (121 + 30) - 1
	bbbComments   = 10 // suppliers per 10,000 with a Better Business Bureau comment
)

// Table names, in the reference generator's order.
const (
	Part     = "part"
	PartSupp = "partsupp"
	Supplier = "supplier"
	Customer = "customer"
	Orders   = "orders"
	LineItem = "lineitem"
	Nation   = "nation"
	Region   = "region"
)

// Tables are the eight tables, in dbgen's order of generation.
var Tables = []string{Part, PartSupp, Supplier, Customer, Orders, LineItem, Nation, Region}

// Scale is a scale factor and the row counts it gives.
type Scale struct {
	SF        float64
	Parts     int64 // PART rows; PARTSUPP has four per part
	Suppliers int64
	Customers int64
	Orders    int64 // ORDERS rows; LINEITEM has one to seven per order
	mult      int64 // dbgen's integer scale: SF from 1 up, else 1
}

// NewScale checks a scale factor as the reference generator takes it: a
// whole number from 1 (dbgen's limit is 100,000), or below 1 in steps of
// 0.001, whose counts are the SF 1 counts times that many thousandths.
func NewScale(sf float64) (Scale, error) {
	switch {
	case math.IsNaN(sf) || sf <= 0:
		return Scale{}, fmt.Errorf("scale factor %g is not above 0; give one such as 0.01, 1 or 10", sf)
	case sf > 30000:
		return Scale{}, fmt.Errorf("scale factor %g is above 30,000, where dbgen draws keys from 64-bit streams; give at most 30000", sf)
	case sf >= 1 && sf != math.Trunc(sf):
		return Scale{}, fmt.Errorf("scale factor %g is not a whole number; from 1 up the reference generator takes whole numbers, e.g. 1, 10, 30, 100", sf)
	}
	s := Scale{SF: sf, Parts: 200000, Suppliers: 10000, Customers: 150000, Orders: 1500000, mult: int64(sf)}
	if sf < 1 {
		// dbgen: int_scale = (int)(1000 * SF), each base times it / 1000.
		thousandths := int64(1000 * sf)
		if thousandths < 1 || math.Abs(float64(thousandths)-1000*sf) > 1e-6 && math.Abs(float64(thousandths+1)-1000*sf) > 1e-6 {
			return Scale{}, fmt.Errorf("scale factor %g is not a multiple of 0.001; below 1 give one such as 0.01 or 0.1", sf)
		}
		s.mult = 1
		for _, n := range []*int64{&s.Parts, &s.Suppliers, &s.Customers, &s.Orders} {
			*n = max(thousandths**n/1000, 1)
		}
		return s, nil
	}
	s.Parts, s.Suppliers, s.Customers, s.Orders = s.Parts*s.mult, s.Suppliers*s.mult, s.Customers*s.mult, s.Orders*s.mult
	return s, nil
}

// Rows is the number of rows a table has at this scale; LINEITEM's is
// known only once generated (0 here).
func (s Scale) Rows(table string) int64 {
	switch table {
	case Part:
		return s.Parts
	case PartSupp:
		return s.Parts * suppPerPart
	case Supplier:
		return s.Suppliers
	case Customer:
		return s.Customers
	case Orders:
		return s.Orders
	case Nation:
		return int64(len(nations))
	case Region:
		return int64(len(regions))
	}
	return 0
}

// dates are the dates from 1992-01-01 on, as dbgen prints them.
var dates = func() [totalDays]string {
	var d [totalDays]string
	t := time.Date(1992, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range d {
		d[i] = t.AddDate(0, 0, i).Format("2006-01-02")
	}
	return d
}()

// julian turns dbgen's day count (startDate + days since 1992-01-01) into
// its yyddd form.
func julian(date int64) int64 {
	offset, result := date-startDate, int64(startDate)
	for {
		yr := result / 1000
		yend := yr*1000 + 365 + leap(yr)
		if result+offset <= yend {
			return result + offset
		}
		offset -= yend - result + 1
		result += 1000
	}
}

// lastCurrentDay is the last day count whose julian form is at or before
// currentDate: julian grows with the count, so a date is at or before the
// current date when its count is at or before this one.
var lastCurrentDay = func() int64 {
	d := int64(startDate)
	for julian(d+1) <= currentDate {
		d++
	}
	return d
}()

func leap(y int64) int64 {
	if y%4 == 0 && y%100 != 0 {
		return 1
	}
	return 0
}

// retailPrice is a part's price in cents, from its key (clause 4.2.3).
func retailPrice(partkey int64) int64 {
	return 90000 + partkey/10%20001 + partkey%1000*100
}

// partSupplier is the key of the s-th of a part's four suppliers.
func (s Scale) partSupplier(partkey, n int64) int64 {
	total := s.Suppliers
	return (partkey+n*(total/suppPerPart+(partkey-1)/total))%total + 1
}

// PartSuppKeysUnique says whether every part's four suppliers differ at
// this scale, as PARTSUPP's primary key wants. They do from SF 0.022 up
// and at most scales below, but not at SF 0.001 to 0.007, 0.009, 0.012,
// 0.015, 0.018 and 0.021, where dbgen gives some parts a supplier twice (at
// SF 0.001, part 31 has suppliers 2, 7, 2, 7).
func (s Scale) PartSuppKeysUnique() bool {
	seen := map[int64]bool{}
	for p := int64(1); p <= s.Parts; p += s.Suppliers { // (p-1)/S, the step's part that varies, is the same within each run of S parts
		step := s.Suppliers/suppPerPart + (p-1)/s.Suppliers
		if seen[step] {
			continue
		}
		seen[step] = true
		for k := int64(1); k < suppPerPart; k++ {
			if k*step%s.Suppliers == 0 {
				return false
			}
		}
	}
	return true
}

// orderKey spreads order index i over the key space as dbgen does: of each
// 32 keys the first 8 are used by the loaded orders (seq 0); the refresh
// function's new orders use the next 8 (seq 1, dbgen's update sets 1 to
// 999).
func orderKey(i, seq int64) int64 {
	return ((i>>3)<<2|seq&3)<<3 | i&7
}

// generator makes rows, each a line of the flat file, with streams of its
// own: a part with its four PARTSUPP lines, an order with its LINEITEM
// lines; a caller wanting one of the two drops the other.
type generator struct {
	scale Scale
	s     *streams
	buf   []byte
	perm  []int // agg_str's permutation of the colors
	// keySeq is the slot of each 32 order keys this generator's orders
	// take: 0 for the loaded ones, 1 for a refresh function's.
	keySeq int64
	// touched keeps what touchComments read, so that its reads are made;
	// ends is its buffer of the comments' first and last bytes.
	touched int
	ends    []int64
	// cut is how many of ends comment has used, endsStream the stream
	// they were drawn on, and pool the text pool.
	cut        int
	endsStream int
	pool       []byte
	// orderLines is how many lines the last order had, and key its key
	// as each of them begins.
	orderLines int64
	key        []byte
}

func newGenerator(sc Scale) *generator {
	return &generator{scale: sc, s: newStreams(), perm: make([]int, len(colors))}
}

// skipTo advances the generator's streams of table to the start of row
// (1-based): every row takes its boundary of draws from each stream.
func (g *generator) skipTo(table, detail int, row int64) {
	for i, d := range streamDefs {
		if d.of(table, detail) {
			g.s.skip(i, d.boundary*(row-1))
		}
	}
}

func appendMoney(b []byte, cents int64) []byte {
	if cents < 0 {
		b = append(b, '-')
		cents = -cents
	}
	b = appendDigits(b, uint64(cents/100), '.')
	r := cents % 100 * 2
	return append(b, pairs[r], pairs[r+1], '|')
}

// appendSmall appends v, from 0 to 99, and '|'. It is inlined: for the
// many small numbers of a line, appendInt's call cost more than its digits.
func appendSmall(b []byte, v int64) []byte {
	if v < 10 {
		return append(b, byte('0'+v), '|')
	}
	return append(b, pairs[2*v], pairs[2*v+1], '|')
}

// appendCents appends cents, from 0 to 99, as money: 0.07 for 7.
func appendCents(b []byte, cents int64) []byte {
	return append(b, '0', '.', pairs[2*cents], pairs[2*cents+1], '|')
}

func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	return appendDigits(b, uint64(v), '|')
}

// pow10 are the powers of ten a uint64 holds.
var pow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// pairs are the two digits of 00 to 99.
const pairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"4041424344454647484950515253545556575859606162636465666768697071727374757677787980818283848586878889" +
	"90919293949596979899"

// decimalLen is how many decimal digits u has: from its bit length, as
// log10(2) ≈ 1233/4096, and one more when u reaches the next power of ten.
func decimalLen(u uint64) int {
	n := bits.Len64(u|1) * 1233 >> 12
	if u >= pow10[n] {
		n++
	}
	return max(n, 1)
}

// appendDigits appends u in decimal and then sep, writing the digits in
// place from the last, two at a time: strconv.AppendInt formats into a
// buffer of its own and then copies, which took a sixth of a generator's
// time.
func appendDigits(b []byte, u uint64, sep byte) []byte {
	n := decimalLen(u)
	l := len(b)
	b = slices.Grow(b, n+1)[:l+n+1]
	b[l+n] = sep
	i := l + n
	for ; u >= 100; u /= 100 {
		r := u % 100 * 2
		i -= 2
		b[i], b[i+1] = pairs[r], pairs[r+1]
	}
	if u >= 10 {
		b[i-2], b[i-1] = pairs[u*2], pairs[u*2+1]
	} else {
		b[i-1] = byte('0' + u)
	}
	return b
}

func appendStr(b []byte, v string) []byte {
	return append(append(b, v...), '|')
}

// appendPadded appends tag and v zero-padded to width digits.
func appendPadded(b []byte, tag string, v int64, width int) []byte {
	b = append(b, tag...)
	for i := decimalLen(uint64(v)); i < width; i++ {
		b = append(b, '0')
	}
	return appendDigits(b, uint64(v), '|')
}

// phone appends a phone number of nation n: its country code, then three
// groups drawn on stream i.
func (g *generator) phone(b []byte, n int64, i int) []byte {
	area := g.s.unifSmall(100, 999, i)
	exch := g.s.unifSmall(100, 999, i)
	num := g.s.unifSmall(1000, 9999, i)
	// Each group has its width already: 10-99, 100-999, 1000-9999.
	b = appendDigits(b, uint64(10+n%90), '-')
	b = appendDigits(b, uint64(area), '-')
	b = appendDigits(b, uint64(exch), '-')
	return appendDigits(b, uint64(num), '|')
}

// What a row of PART or ORDERS writes: its own table's line, its detail
// table's lines (PARTSUPP's, LINEITEM's), or both. A row that writes one
// draws nothing for the other's fields but those the one it writes needs:
// each field has its stream, and rowStop moves every stream to its
// boundary, so a draw left out changes no other field.
const (
	writeMain = 1 << iota
	writeDetail
	writeBoth = writeMain | writeDetail
)

// part appends PART row i to parts and its four PARTSUPP rows to supps,
// those of them w asks for.
func (g *generator) part(parts, supps []byte, i int64, w int) ([]byte, []byte) {
	s := g.s
	s.rowStart()
	if w&writeMain != 0 {
		parts = appendInt(parts, i)
		// The name: five colors of a fresh permutation of all 92.
		for k := range g.perm {
			g.perm[k] = k
		}
		for k := range g.perm {
			j := s.unif(int64(k), int64(len(g.perm)-1), sPartName)
			g.perm[j], g.perm[k] = g.perm[k], g.perm[j]
		}
		for k := range 5 {
			if k > 0 {
				parts = append(parts, ' ')
			}
			parts = append(parts, colors[g.perm[k]].text...)
		}
		parts = append(parts, '|')
		mfgr := s.unifSmall(1, 5, sPartMfg)
		parts = appendPadded(parts, "Manufacturer#", mfgr, 1)
		brand := s.unifSmall(1, 5, sPartBrand)
		parts = appendPadded(parts, "Brand#", mfgr*10+brand, 2)
		parts = appendStr(parts, partTypes[s.pick(partTypes, sPartType)].text)
		parts = appendInt(parts, s.unifSmall(1, 50, sPartSize))
		parts = appendStr(parts, containers[s.pick(containers, sPartCntr)].text)
		parts = appendMoney(parts, retailPrice(i))
		parts = append(g.comment(parts, 14, sPartCmnt), '|', '\n')
	}
	if w&writeDetail != 0 {
		for n := range int64(suppPerPart) {
			supps = appendInt(supps, i)
			supps = appendInt(supps, g.scale.partSupplier(i, n))
			supps = appendInt(supps, s.unifSmall(1, 9999, sPsQty))
			supps = appendMoney(supps, s.unifSmall(100, 100000, sPsCost))
			supps = append(g.comment(supps, 124, sPsCmnt), '|', '\n')
		}
	}
	s.rowStop(tPart, tPartSupp)
	return parts, supps
}

// party appends the fields a supplier and a customer share, each drawn on
// its table's stream: key, name (tag and the key in 9 digits), address,
// nation, phone and account balance.
func (g *generator) party(b []byte, i int64, tag string, addr, nation, phone, bal int) []byte {
	b = appendInt(b, i)
	b = appendPadded(b, tag, i, 9)
	b = append(g.s.vstr(b, 25, addr), '|')
	n := g.s.unifSmall(0, int64(len(nations)-1), nation)
	b = appendInt(b, n)
	b = g.phone(b, n, phone)
	return appendMoney(b, g.s.unif(-99999, 999999, bal))
}

// supplier appends SUPPLIER row i.
func (g *generator) supplier(b []byte, i int64) []byte {
	s := g.s
	s.rowStart()
	b = g.party(b, i, "Supplier#", sSuppAddr, sSuppNation, sSuppPhone, sSuppBal)
	start := len(b)
	b = g.comment(b, 63, sSuppCmnt)
	comment := b[start:]
	// A few suppliers' comments carry a Better Business Bureau note
	// (clause 4.2.3): the draws are made for every supplier.
	const base, baseLen, typeLen = "Customer ", 9, 10
	press := s.unifSmall(1, 10000, sBBBCmnt)
	kind := s.unifSmall(0, 100, sBBBType)
	noise := s.unifSmall(0, int64(len(comment))-(baseLen+typeLen), sBBBJunk)
	offset := s.unifSmall(0, int64(len(comment))-(baseLen+typeLen+noise), sBBBOffset)
	if press <= bbbComments {
		copy(comment[offset:], base)
		note := "Recommends"
		if kind < 50 {
			note = "Complaints"
		}
		copy(comment[offset+baseLen+noise:], note)
	}
	b = append(b, '|', '\n')
	s.rowStop(tSupplier, tNone)
	return b
}

// customer appends CUSTOMER row i.
func (g *generator) customer(b []byte, i int64) []byte {
	s := g.s
	s.rowStart()
	b = g.party(b, i, "Customer#", sCustAddr, sCustNation, sCustPhone, sCustBal)
	b = appendStr(b, segments[s.pick(segments, sCustSegment)].text)
	b = append(g.comment(b, 73, sCustCmnt), '|', '\n')
	s.rowStop(tCustomer, tNone)
	return b
}

// order appends ORDERS row i to orders and its LINEITEM rows to lines,
// those of them w asks for. An order's total price and status come from
// its lines' prices and ship dates, which are drawn either way.
func (g *generator) order(orders, lines []byte, i int64, w int) ([]byte, []byte) {
	s := g.s
	s.rowStart()
	key := orderKey(i, g.keySeq)
	date := s.unifSmall(startDate, orderDateMax, sOrderDate)
	n := s.unifSmall(1, maxLines, sOrderLines)
	g.orderLines = n
	if w&writeDetail != 0 {
		g.key = appendDigits(g.key[:0], uint64(key), '|') // the same on each line
	}
	var total, shipped int64
	for l := int64(1); l <= n; l++ {
		qty := s.unifSmall(1, 50, sLineQty)
		disc := s.unifSmall(0, 10, sLineDiscount)
		tax := s.unifSmall(0, 8, sLineTax)
		part := s.unif(1, g.scale.Parts, sLinePart)
		price := retailPrice(part) * qty
		total += price * (100 - disc) / 100 * (100 + tax) / 100
		ship := s.unifSmall(1, 121, sLineShip) + date
		status := "O"
		if ship <= lastCurrentDay {
			status = "F"
			shipped++
		}
		if w&writeDetail == 0 {
			continue
		}
		instr := instructions[s.pick(instructions, sLineInstr)].text
		mode := shipModes[s.pick(shipModes, sLineMode)].text
		supp := g.scale.partSupplier(part, s.unifSmall(0, 3, sLineSupp))
		commit := s.unifSmall(30, 90, sLineCommit) + date
		receipt := s.unifSmall(1, 30, sLineReceipt) + ship
		flag := "N"
		if receipt <= lastCurrentDay {
			flag = returnFlags[s.pick(returnFlags, sLineRFlag)].text
		}
		lines = append(lines, g.key...)
		lines = appendInt(lines, part)
		lines = appendInt(lines, supp)
		lines = appendSmall(lines, l)
		lines = appendSmall(lines, qty)
		lines = appendMoney(lines, price)
		lines = appendCents(lines, disc)
		lines = appendCents(lines, tax)
		lines = appendStr(lines, flag[:1])
		lines = appendStr(lines, status)
		lines = appendStr(lines, dates[ship-startDate])
		lines = appendStr(lines, dates[commit-startDate])
		lines = appendStr(lines, dates[receipt-startDate])
		lines = appendStr(lines, instr)
		lines = appendStr(lines, mode)
		lines = append(g.comment(lines, 27, sLineCmnt), '|', '\n')
	}
	if w&writeMain != 0 {
		cust := s.unif(1, g.scale.Customers, sOrderCust)
		for delta := int64(1); cust%custMortality == 0; delta = -delta {
			cust = min(cust+delta, g.scale.Customers)
		}
		prio := priorities[s.pick(priorities, sOrderPrio)].text
		clerk := s.unif(1, max(g.scale.mult*1000, 1000), sOrderClerk)
		status := "O"
		if shipped > 0 {
			status = "P"
		}
		if shipped == n {
			status = "F"
		}
		orders = appendInt(orders, key)
		orders = appendInt(orders, cust)
		orders = appendStr(orders, status)
		orders = appendMoney(orders, total)
		orders = appendStr(orders, dates[date-startDate])
		orders = appendStr(orders, prio)
		orders = appendPadded(orders, "Clerk#", clerk, 9)
		orders = appendInt(orders, 0) // O_SHIPPRIORITY
		orders = append(g.comment(orders, 49, sOrderCmnt), '|', '\n')
	}
	s.rowStop(tOrders, tLineItem)
	return orders, lines
}

// nation appends NATION row i (1-based: key i-1).
func (g *generator) nation(b []byte, i int64) []byte {
	s := g.s
	s.rowStart()
	n := nations[i-1]
	b = appendInt(b, i-1)
	b = appendStr(b, n.text)
	b = appendInt(b, n.weight)
	b = append(s.text(b, 72, sNationCmnt), '|', '\n')
	s.rowStop(tNation, tNone)
	return b
}

// region appends REGION row i (1-based: key i-1).
func (g *generator) region(b []byte, i int64) []byte {
	s := g.s
	s.rowStart()
	b = appendInt(b, i-1)
	b = appendStr(b, regions[i-1].text)
	b = append(s.text(b, 72, sRegionCmnt), '|', '\n')
	s.rowStop(tRegion, tNone)
	return b
}
