package tpcc

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

func rows(t *testing.T, data []byte, cols int) [][]string {
	t.Helper()
	var out [][]string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != cols {
			t.Fatalf("row has %d columns, want %d: %q", len(f), cols, line)
		}
		out = append(out, f)
	}
	return out
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("not an integer: %q", s)
	}
	return v
}

// within checks the spec's 5% tolerance around 10%: 9.5%..10.5% (4.3.3.1).
func within10pct(t *testing.T, what string, hits, total int) {
	t.Helper()
	p := float64(hits) / float64(total) * 100
	if p < 9.5 || p > 10.5 {
		t.Errorf("%s: %.2f%% of %d rows, want 9.5%%..10.5%%", what, p, total)
	}
}

func newTestGen() *Gen {
	return NewGen(NewRand(11), CValues{Last: 157, CID: 259, Item: 7911}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

func TestItemsAndStock(t *testing.T) {
	g := newTestGen()
	items := rows(t, g.Items(nil, 1, NumItems), 5)
	if len(items) != NumItems {
		t.Fatalf("%d items", len(items))
	}
	orig := 0
	for i, f := range items {
		if atoi(t, f[0]) != i+1 {
			t.Fatalf("i_id %s at %d", f[0], i)
		}
		if im := atoi(t, f[1]); im < 1 || im > 10000 {
			t.Fatalf("i_im_id %d", im)
		}
		if n := len(f[2]); n < 14 || n > 24 {
			t.Fatalf("i_name length %d", n)
		}
		price, err := strconv.ParseFloat(f[3], 64)
		if err != nil || price < 1 || price > 100 || len(f[3]) != strings.Index(f[3], ".")+3 {
			t.Fatalf("i_price %q", f[3])
		}
		if strings.Contains(f[4], "ORIGINAL") {
			orig++
		}
	}
	within10pct(t, "ITEM ORIGINAL", orig, len(items))

	stock := rows(t, g.Stock(nil, 3, 1, StockPerWarehouse), 17)
	orig = 0
	for i, f := range stock {
		if atoi(t, f[0]) != i+1 || f[1] != "3" {
			t.Fatalf("stock key %s,%s", f[0], f[1])
		}
		if q := atoi(t, f[2]); q < 10 || q > 100 {
			t.Fatalf("s_quantity %d", q)
		}
		if f[3] != "0" || f[4] != "0" || f[5] != "0" {
			t.Fatalf("stock counters %v", f[3:6])
		}
		for _, dist := range f[6:16] {
			if len(dist) != 24 {
				t.Fatalf("s_dist length %d", len(dist))
			}
		}
		if strings.Contains(f[16], "ORIGINAL") {
			orig++
		}
	}
	within10pct(t, "STOCK ORIGINAL", orig, len(stock))
}

func TestCustomersAndHistory(t *testing.T) {
	g := newTestGen()
	cust := rows(t, g.Customers(nil, 2, 0, CustomersPerWarehouse-1), 21)
	if len(cust) != CustomersPerWarehouse {
		t.Fatalf("%d customers", len(cust))
	}
	bc := 0
	namesPerDistrict := map[string]map[string]bool{}
	for i, f := range cust {
		d, c := i/3000+1, i%3000+1
		if atoi(t, f[0]) != c || atoi(t, f[1]) != d || f[2] != "2" {
			t.Fatalf("customer key %v", f[:3])
		}
		if c <= 1000 && f[5] != LastName(c-1) {
			t.Fatalf("c_last of c_id %d = %s, want %s", c, f[5], LastName(c-1))
		}
		if namesPerDistrict[f[1]] == nil {
			namesPerDistrict[f[1]] = map[string]bool{}
		}
		namesPerDistrict[f[1]][f[5]] = true
		if f[4] != "OE" || f[14] != "50000.00" || f[16] != "-10.00" || f[17] != "10.00" || f[18] != "1" || f[19] != "0" {
			t.Fatalf("customer initial values %v", f)
		}
		if len(f[11]) != 16 || len(f[10]) != 9 || !strings.HasSuffix(f[10], "11111") {
			t.Fatalf("phone %q zip %q", f[11], f[10])
		}
		switch f[13] {
		case "BC":
			bc++
		case "GC":
		default:
			t.Fatalf("c_credit %q", f[13])
		}
		if disc, _ := strconv.ParseFloat(f[15], 64); disc < 0 || disc > 0.5 {
			t.Fatalf("c_discount %s", f[15])
		}
		if n := len(f[20]); n < 300 || n > 500 {
			t.Fatalf("c_data length %d", n)
		}
	}
	within10pct(t, "CUSTOMER BC", bc, len(cust))
	for d, names := range namesPerDistrict {
		if len(names) != 1000 {
			t.Errorf("district %s has %d distinct last names, want all 1000", d, len(names))
		}
	}
	hist := rows(t, g.History(nil, 2, 0, CustomersPerWarehouse-1), 8)
	if len(hist) != CustomersPerWarehouse || hist[3001][0] != "2" || hist[3001][1] != "2" || hist[0][6] != "10.00" {
		t.Fatalf("history rows %d, first %v", len(hist), hist[0])
	}
}

func TestOrdersPlan(t *testing.T) {
	g := newTestGen()
	orders := rows(t, g.Orders(nil, 1, 0, OrdersPerWarehouse-1), 8)
	lines := rows(t, g.OrderLines(nil, 1, 0, OrdersPerWarehouse-1), 10)
	newOrders := rows(t, g.NewOrders(nil, 1, 0, NewOrdersPerWarehouse-1), 3)
	if int64(len(lines)) != g.OrderLineCount(1) {
		t.Fatalf("%d lines, plan says %d", len(lines), g.OrderLineCount(1))
	}
	// O_C_ID is a permutation of 1..3000 within each district.
	seen := map[[2]int]bool{}
	want := map[[2]int]int{} // (d, o) -> ol_cnt
	olTotal := 0
	cnts := map[int]int{}
	for _, f := range orders {
		d, o, c := atoi(t, f[1]), atoi(t, f[0]), atoi(t, f[3])
		if seen[[2]int{d, c}] {
			t.Fatalf("customer %d of district %d has two orders", c, d)
		}
		seen[[2]int{d, c}] = true
		n := atoi(t, f[6])
		if n < 5 || n > 15 {
			t.Fatalf("o_ol_cnt %d", n)
		}
		cnts[n]++
		want[[2]int{d, o}] = n
		olTotal += n
		if (o < 2101) != (f[5] != `\N`) {
			t.Fatalf("order %d carrier %q", o, f[5])
		}
	}
	if len(seen) != OrdersPerWarehouse || len(cnts) != 11 {
		t.Fatalf("%d (district, customer) pairs; %d distinct ol_cnt values", len(seen), len(cnts))
	}
	if avg := float64(olTotal) / OrdersPerWarehouse; avg < 9.5 || avg > 10.5 {
		t.Fatalf("average lines per order %.2f", avg)
	}
	got := map[[2]int]int{}
	for _, f := range lines {
		d, o := atoi(t, f[1]), atoi(t, f[0])
		got[[2]int{d, o}]++
		if atoi(t, f[3]) != got[[2]int{d, o}] {
			t.Fatalf("ol_number %s out of sequence", f[3])
		}
		delivered := o < 2101
		if delivered && (f[6] == `\N` || f[8] != "0.00") || !delivered && (f[6] != `\N` || f[8] == "0.00") {
			t.Fatalf("order line of order %d: delivery %q amount %q", o, f[6], f[8])
		}
		if f[7] != "5" || len(f[9]) != 24 {
			t.Fatalf("ol_quantity %q dist_info %q", f[7], f[9])
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("order %v: %d lines, o_ol_cnt %d", k, got[k], n)
		}
	}
	if len(newOrders) != NewOrdersPerWarehouse || newOrders[0][0] != "2101" || newOrders[899][0] != "3000" || newOrders[900][1] != "2" {
		t.Fatalf("new orders: %d rows, %v .. %v", len(newOrders), newOrders[0], newOrders[899])
	}
}

func TestRowReaderStreamsEverything(t *testing.T) {
	g := newTestGen()
	want := g.NewOrders(nil, 1, 0, NewOrdersPerWarehouse-1)
	g2 := newTestGen()
	rr := NewRowReader(0, NewOrdersPerWarehouse-1, 7, func(b []byte, from, to int) []byte { return g2.NewOrders(b, 1, from, to) })
	got, err := io.ReadAll(rr)
	if err != nil || string(got) != string(want) || rr.Bytes() != int64(len(want)) {
		t.Fatalf("RowReader gave %d bytes (%v), want %d", len(got), err, len(want))
	}
}

func BenchmarkWarehouse(b *testing.B) {
	g := newTestGen()
	buf := make([]byte, 0, 1<<20)
	var n int
	for b.Loop() {
		for from := 1; from <= StockPerWarehouse; from += 1000 {
			buf = g.Stock(buf[:0], 1, from, from+999)
			n += len(buf)
		}
		for from := 0; from < CustomersPerWarehouse; from += 1000 {
			buf = g.Customers(buf[:0], 1, from, from+999)
			n += len(buf)
			buf = g.History(buf[:0], 1, from, from+999)
			n += len(buf)
			buf = g.Orders(buf[:0], 1, from, from+999)
			n += len(buf)
			buf = g.OrderLines(buf[:0], 1, from, from+999)
			n += len(buf)
		}
		g.ReleasePlan(1)
	}
	b.SetBytes(int64(n / b.N))
}
