package tpch

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
)

// WriteTable writes table's rows at scale sc to w in the reference flat-file
// format (dbgen's TABLE.tbl), with up to workers generators at once, and
// returns how many rows and bytes it wrote. Each generator makes a run of
// rows of its own, starting its streams where the run starts; the runs are
// written in order, so the file is the same at any workers.
func WriteTable(ctx context.Context, w io.Writer, sc Scale, table string, workers int) (rows, written int64, err error) {
	if !slices.Contains(Tables, table) {
		return 0, 0, fmt.Errorf("table %q is not one of TPC-H's: %v", table, Tables)
	}
	workers = max(workers, 1)
	total := sc.generatorRows(table)
	// Runs of at most maxRun generator rows: a run's lines (a few MB at
	// most) are written from buffers used again, which stay in the CPU's
	// caches; one run per worker of a large table grew buffers of 100 MB
	// and more, copied on every growth.
	chunk := min(max(total/int64(workers*8), 1000), maxRun)
	n := int((total + chunk - 1) / chunk)
	done := make([]chan run, n)
	for i := range done {
		done[i] = make(chan run, 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	slots := make(chan struct{}, workers) // runs made and not yet written
	go func() {
		for i := range n {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			first := int64(i)*chunk + 1
			go func() {
				r := newRowSource(sc, table, first)
				b := r.next(runBuffers.Get().([]byte), min(chunk, total-first+1))
				done[i] <- run{b, r.made}
			}()
		}
	}()
	for i := range n {
		var r run
		select {
		case r = <-done[i]:
		case <-ctx.Done():
			return rows, written, ctx.Err()
		}
		b := r.text
		rows += r.lines
		m, err := w.Write(b)
		written += int64(m)
		if err != nil {
			return rows, written, err
		}
		runBuffers.Put(b[:0]) //nolint:staticcheck // a slice header: the buffer is what is kept
		<-slots
	}
	return rows, written, nil
}

// run is a run of a table's lines, made by one generator.
type run struct {
	text  []byte
	lines int64
}

// generatorRows is how many generator rows make table: its own rows, but
// orders for LINEITEM and parts for PARTSUPP.
func (s Scale) generatorRows(table string) int64 {
	switch table {
	case LineItem:
		return s.Orders
	case PartSupp:
		return s.Parts
	}
	return s.Rows(table)
}

// owners are the streams a table's rows draw on: its generator's table and
// that table's detail (an order's lines, a part's suppliers).
var owners = map[string][2]int{
	Part: {tPart, tPartSupp}, PartSupp: {tPart, tPartSupp}, Orders: {tOrders, tLineItem}, LineItem: {tOrders, tLineItem},
	Supplier: {tSupplier, tNone}, Customer: {tCustomer, tNone}, Nation: {tNation, tNone}, Region: {tRegion, tNone},
}

// maxRun is the most generator rows WriteTable makes in one run: 4,096
// orders are about 2 MB of LINEITEM's lines.
const maxRun = 4096

// runBuffers are WriteTable's run buffers, for use again once written.
var runBuffers = sync.Pool{New: func() any { return []byte(nil) }}

// rowSource makes a table's lines from a generator row on, a piece at a
// time.
type rowSource struct {
	g     *generator
	table string
	row   int64 // the next generator row
	made  int64 // how many lines it has made
}

func newRowSource(sc Scale, table string, first int64) *rowSource {
	g := newGenerator(sc)
	o := owners[table]
	g.skipTo(o[0], o[1], first)
	return &rowSource{g: g, table: table, row: first}
}

// next appends the lines of the next n generator rows to buf.
func (r *rowSource) next(buf []byte, n int64) []byte {
	for start, end := r.row, r.row+n; r.row < end; r.row++ {
		if (r.row-start)%aheadRows == 0 {
			r.g.touched += r.g.touchComments(r.table, min(aheadRows, end-r.row))
		}
		buf = r.lines(buf, r.row)
	}
	return buf
}

// lines appends the lines of generator row i.
func (r *rowSource) lines(buf []byte, i int64) []byte {
	g := r.g
	switch r.table {
	case Part:
		buf, _ = g.part(buf, nil, i, writeMain)
	case PartSupp:
		_, buf = g.part(nil, buf, i, writeDetail)
		r.made += suppPerPart - 1
	case Supplier:
		buf = g.supplier(buf, i)
	case Customer:
		buf = g.customer(buf, i)
	case Orders:
		buf, _ = g.order(buf, nil, i, writeMain)
	case LineItem:
		_, buf = g.order(nil, buf, i, writeDetail)
		r.made += g.orderLines - 1
	case Nation:
		buf = g.nation(buf, i)
	case Region:
		buf = g.region(buf, i)
	}
	r.made++
	return buf
}
