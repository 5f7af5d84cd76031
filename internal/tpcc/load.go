package tpcc

import (
	"io"
	"strconv"
	"time"
)

// The loader writes rows as tab-separated text with \N for NULL: the text
// format of PostgreSQL's COPY and MySQL's LOAD DATA alike. Every generated
// string is alphanumeric, so no value needs escaping.

// Gen generates the initial population (4.3.3.1) of one worker's share. Each
// loader worker owns a Gen; the C-Load values and the load time are shared.
type Gen struct {
	r     *Rand
	c     CValues
	now   []byte // C_SINCE, O_ENTRY_D, OL_DELIVERY_D, H_DATE: the load time
	plans map[int]*warehousePlan
}

// NewGen returns a generator that draws from r, uses the C-Load values c and
// stamps rows with the time now.
func NewGen(r *Rand, c CValues, now time.Time) *Gen {
	return &Gen{r: r, c: c, now: now.UTC().AppendFormat(nil, "2006-01-02 15:04:05"), plans: map[int]*warehousePlan{}}
}

// warehousePlan holds what ORDER, NEW-ORDER and ORDER-LINE rows of one
// warehouse must agree on: O_C_ID from a random permutation of 1..3000 per
// district, and O_OL_CNT per order.
type warehousePlan struct {
	cid   [DistrictsPerWarehouse][OrdersPerDistrict]int32
	olCnt [DistrictsPerWarehouse][OrdersPerDistrict]uint8
	// firstLine[k] is the flat index of the first order line of order k
	// (k = (d-1)*3000 + o_id-1); the last entry is the warehouse's total.
	firstLine [OrdersPerWarehouse + 1]int64
}

func (g *Gen) plan(w int) *warehousePlan {
	if p, ok := g.plans[w]; ok {
		return p
	}
	p := new(warehousePlan)
	var n int64
	for d := range DistrictsPerWarehouse {
		g.r.Perm(p.cid[d][:])
		for o := range OrdersPerDistrict {
			c := g.r.Range(MinOrderLines, MaxOrderLines) // O_OL_CNT: never pre-generated (4.3.2.1)
			p.olCnt[d][o] = uint8(c)
			p.firstLine[d*OrdersPerDistrict+o] = n
			n += int64(c)
		}
	}
	p.firstLine[OrdersPerWarehouse] = n
	g.plans[w] = p
	return p
}

// ReleasePlan frees the order plan of warehouse w once its ORDER, NEW-ORDER
// and ORDER-LINE rows are written.
func (g *Gen) ReleasePlan(w int) { delete(g.plans, w) }

// OrderLineCount returns how many ORDER-LINE rows warehouse w gets.
func (g *Gen) OrderLineCount(w int) int64 { return g.plan(w).firstLine[OrdersPerWarehouse] }

func tab(b []byte) []byte { return append(b, '\t') }
func eol(b []byte) []byte { return append(b, '\n') }
func appendInt(b []byte, v int) []byte {
	return strconv.AppendInt(b, int64(v), 10)
}

// appendFixed appends v / 10^scale with exactly scale decimals, e.g.
// (-1000, 2) -> "-10.00". Money stays exact: it is never a float.
func appendFixed(b []byte, v int64, scale int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	pow := int64(1)
	for range scale {
		pow *= 10
	}
	b = strconv.AppendInt(b, v/pow, 10)
	if scale == 0 {
		return b
	}
	b = append(b, '.')
	frac := strconv.AppendInt(make([]byte, 0, 8), v%pow+pow, 10) // leading 1 keeps the zeros
	return append(b, frac[1:]...)
}

// appendAddress appends street 1, street 2, city, state and zip (4.3.2.7
// for zip: a random n-string of 4 numbers followed by "11111").
func (g *Gen) appendAddress(b []byte) []byte {
	b = tab(g.r.AppendAString(b, 10, 20))
	b = tab(g.r.AppendAString(b, 10, 20))
	b = tab(g.r.AppendAString(b, 10, 20))
	b = tab(g.r.appendChars(b, 2, alnum[10:36])) // state: two letters
	b = g.r.AppendNString(b, 4, 4)
	return append(b, "11111"...)
}

// Items appends ITEM rows i_id from..to (1-based, inclusive).
// Columns: i_id, i_im_id, i_name, i_price, i_data.
func (g *Gen) Items(b []byte, from, to int) []byte {
	for i := from; i <= to; i++ {
		b = tab(appendInt(b, i))
		b = tab(appendInt(b, g.r.Range(1, 10000)))
		b = tab(g.r.AppendAString(b, 14, 24))
		b = tab(appendFixed(b, int64(g.r.Range(100, 10000)), 2))
		b = eol(g.r.AppendData(b, g.r.Percent(10))) // 10% hold "ORIGINAL"
	}
	return b
}

// Warehouse appends the WAREHOUSE row of w.
// Columns: w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd.
func (g *Gen) Warehouse(b []byte, w int) []byte {
	b = tab(appendInt(b, w))
	b = tab(g.r.AppendAString(b, 6, 10))
	b = tab(g.appendAddress(b))
	b = tab(appendFixed(b, int64(g.r.Range(0, 2000)), 4))
	return eol(appendFixed(b, WarehouseYTDCents, 2))
}

// Districts appends the ten DISTRICT rows of w.
// Columns: d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state,
// d_zip, d_tax, d_ytd, d_next_o_id.
func (g *Gen) Districts(b []byte, w int) []byte {
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		b = tab(appendInt(b, d))
		b = tab(appendInt(b, w))
		b = tab(g.r.AppendAString(b, 6, 10))
		b = tab(g.appendAddress(b))
		b = tab(appendFixed(b, int64(g.r.Range(0, 2000)), 4))
		b = tab(appendFixed(b, DistrictYTDCents, 2))
		b = eol(appendInt(b, DistrictNextOID))
	}
	return b
}

// Stock appends STOCK rows of warehouse w for items from..to.
// Columns: s_i_id, s_w_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt,
// s_dist_01..s_dist_10, s_data: the counters New-Order updates sit
// together, next to S_QUANTITY (see the stock table in schema.sql).
func (g *Gen) Stock(b []byte, w, from, to int) []byte {
	for i := from; i <= to; i++ {
		b = tab(appendInt(b, i))
		b = tab(appendInt(b, w))
		b = tab(appendInt(b, g.r.Range(10, 100)))
		b = append(b, "0\t0\t0\t"...)
		for range 10 {
			b = tab(g.r.appendChars(b, 24, alnum))
		}
		b = eol(g.r.AppendData(b, g.r.Percent(10)))
	}
	return b
}

// splitCustomer turns a 0-based index within a warehouse into (d_id, c_id).
func splitCustomer(k int) (d, c int) {
	return k/CustomersPerDistrict + 1, k%CustomersPerDistrict + 1
}

// Customers appends CUSTOMER rows of warehouse w; from and to are 0-based
// indexes over the warehouse's 30,000 customers (district by district).
// Columns: c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1,
// c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit,
// c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt,
// c_delivery_cnt, c_data.
func (g *Gen) Customers(b []byte, w, from, to int) []byte {
	for k := from; k <= to; k++ {
		d, c := splitCustomer(k)
		b = tab(appendInt(b, c))
		b = tab(appendInt(b, d))
		b = tab(appendInt(b, w))
		b = tab(g.r.AppendAString(b, 8, 16))
		b = append(b, "OE\t"...)
		// C_LAST: the first 1,000 customers of a district take every name
		// once, the rest NURand(255,0,999) with C-Load (4.3.3.1).
		n := c - 1
		if c > NamedCustomersPerDistrict {
			n = g.r.NURand(NURandALast, g.c.Last, 0, 999)
		}
		b = tab(AppendLastName(b, n))
		b = tab(g.appendAddress(b))
		b = tab(g.r.AppendNString(b, 16, 16))
		b = tab(append(b, g.now...))
		if g.r.Percent(10) { // 10% bad credit
			b = append(b, "BC\t"...)
		} else {
			b = append(b, "GC\t"...)
		}
		b = tab(appendFixed(b, CustomerCreditLimCents, 2))
		b = tab(appendFixed(b, int64(g.r.Range(0, 5000)), 4))
		b = tab(appendFixed(b, CustomerBalanceCents, 2))
		b = tab(appendFixed(b, CustomerYTDPaymentCents, 2))
		b = append(b, "1\t0\t"...)
		b = eol(g.r.AppendAString(b, 300, 500))
	}
	return b
}

// History appends HISTORY rows, one per customer, indexed as Customers.
// Columns: h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data.
func (g *Gen) History(b []byte, w, from, to int) []byte {
	for k := from; k <= to; k++ {
		d, c := splitCustomer(k)
		b = tab(appendInt(b, c))
		b = tab(appendInt(b, d))
		b = tab(appendInt(b, w))
		b = tab(appendInt(b, d))
		b = tab(appendInt(b, w))
		b = tab(append(b, g.now...))
		b = tab(appendFixed(b, HistoryAmountCents, 2))
		b = eol(g.r.AppendAString(b, 12, 24))
	}
	return b
}

// Orders appends ORDER rows of warehouse w; from and to are 0-based indexes
// over its 30,000 orders.
// Columns: o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local.
func (g *Gen) Orders(b []byte, w, from, to int) []byte {
	p := g.plan(w)
	for k := from; k <= to; k++ {
		d, o := splitCustomer(k)
		b = tab(appendInt(b, o))
		b = tab(appendInt(b, d))
		b = tab(appendInt(b, w))
		b = tab(appendInt(b, int(p.cid[d-1][o-1])))
		b = tab(append(b, g.now...))
		if o < FirstUndeliveredOrder {
			b = tab(appendInt(b, g.r.Range(1, 10)))
		} else {
			b = append(b, "\\N\t"...)
		}
		b = tab(appendInt(b, int(p.olCnt[d-1][o-1])))
		b = append(b, "1\n"...)
	}
	return b
}

// NewOrders appends NEW-ORDER rows of warehouse w; from and to are 0-based
// indexes over its 9,000 undelivered orders (2101..3000 per district).
// Columns: no_o_id, no_d_id, no_w_id.
func (g *Gen) NewOrders(b []byte, w, from, to int) []byte {
	for k := from; k <= to; k++ {
		d := k/NewOrdersPerDistrict + 1
		o := k%NewOrdersPerDistrict + FirstUndeliveredOrder
		b = tab(appendInt(b, o))
		b = tab(appendInt(b, d))
		b = eol(appendInt(b, w))
	}
	return b
}

// OrderLines appends the ORDER-LINE rows of orders from..to (0-based indexes
// as in Orders) of warehouse w.
// Columns: ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
// ol_delivery_d, ol_quantity, ol_amount, ol_dist_info.
func (g *Gen) OrderLines(b []byte, w, from, to int) []byte {
	p := g.plan(w)
	for k := from; k <= to; k++ {
		d, o := splitCustomer(k)
		delivered := o < FirstUndeliveredOrder
		for n := 1; n <= int(p.olCnt[d-1][o-1]); n++ {
			b = tab(appendInt(b, o))
			b = tab(appendInt(b, d))
			b = tab(appendInt(b, w))
			b = tab(appendInt(b, n))
			b = tab(appendInt(b, g.r.Range(1, NumItems))) // uniform at load, not NURand
			b = tab(appendInt(b, w))
			if delivered {
				b = tab(append(b, g.now...))
				b = append(b, "5\t0.00\t"...)
			} else {
				b = append(b, "\\N\t5\t"...)
				b = tab(appendFixed(b, int64(g.r.Range(1, 999999)), 2))
			}
			b = eol(g.r.appendChars(b, 24, alnum))
		}
	}
	return b
}

// RowReader turns a generator function over an index range into an
// io.Reader, producing rows in chunks as the reader is drained, so a COPY
// streams with bounded memory.
type RowReader struct {
	gen        func(b []byte, from, to int) []byte
	next, last int
	step       int
	buf        []byte
	off        int
	n          int64 // bytes produced
}

// NewRowReader reads the rows gen produces for indexes from..last, step
// indexes at a time.
func NewRowReader(from, last, step int, gen func(b []byte, from, to int) []byte) *RowReader {
	return &RowReader{gen: gen, next: from, last: last, step: step, buf: make([]byte, 0, 64<<10)}
}

// Read implements io.Reader.
func (r *RowReader) Read(p []byte) (int, error) {
	for r.off == len(r.buf) {
		if r.next > r.last {
			return 0, io.EOF
		}
		to := min(r.next+r.step-1, r.last)
		r.buf = r.gen(r.buf[:0], r.next, to)
		r.off = 0
		r.next = to + 1
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	r.n += int64(n)
	return n, nil
}

// Bytes returns how many bytes have been read so far.
func (r *RowReader) Bytes() int64 { return r.n }
