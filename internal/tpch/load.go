package tpch

import (
	"bytes"
	"cmp"
	"io"
	"slices"
)

// LoadTask is one run of a table's rows for one loader connection: the
// rows of generator rows First to First+Count-1 (orders for LINEITEM, parts
// for PARTSUPP).
type LoadTask struct {
	Table        string
	First, Count int64
}

// LoadTasks splits the eight tables at scale sc into runs for workers
// loader connections, the largest tables' runs first, so that the small
// tables fill the gaps at the end. A table is cut into about four runs a
// worker, each at least 1,000 generator rows; the runs of a table are in
// row order, so a table clustered on its key (InnoDB) is appended to.
func LoadTasks(sc Scale, workers int) []LoadTask {
	workers = max(workers, 1)
	var out []LoadTask
	for _, table := range Tables {
		total := sc.generatorRows(table)
		chunk := max((total+int64(4*workers)-1)/int64(4*workers), 1000)
		for first := int64(1); first <= total; first += chunk {
			out = append(out, LoadTask{Table: table, First: first, Count: min(chunk, total-first+1)})
		}
	}
	slices.SortStableFunc(out, func(a, b LoadTask) int { return cmp.Compare(tableWeight[b.Table], tableWeight[a.Table]) })
	return out
}

// tableWeight orders the tables by their bytes per generator row at SF 1,
// largest first (lineitem.tbl is 725 MiB, orders.tbl 164, partsupp.tbl
// 114, customer.tbl 23, part.tbl 23, supplier.tbl 1.4).
var tableWeight = map[string]int{LineItem: 8, Orders: 7, PartSupp: 6, Customer: 5, Part: 4, Supplier: 3, Nation: 2, Region: 1}

// loadPiece is how many generator rows a load reader makes at a time.
const loadPiece = 2000

// Reader returns the task's rows as a loader streams them into a table:
// the reference format without the '|' that ends each line, so that
// fields are separated by '|' alone, as COPY and LOAD DATA take them. The
// text holds no tab, backslash or quote: every field is a number, a date or
// words of the generator's word lists.
func (t LoadTask) Reader(sc Scale) io.Reader {
	return &loadReader{src: newRowSource(sc, t.Table, t.First), left: t.Count}
}

type loadReader struct {
	src  *rowSource
	left int64 // generator rows not yet made
	buf  []byte
	off  int
}

func (r *loadReader) Read(p []byte) (int, error) {
	for r.off == len(r.buf) {
		if r.left == 0 {
			return 0, io.EOF
		}
		n := min(r.left, loadPiece)
		r.buf = LoadLines(r.src.next(r.buf[:0], n))
		r.off, r.left = 0, r.left-n
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// LoadLines drops the '|' before each '\n' of b, in place.
func LoadLines(b []byte) []byte {
	out := b[:0]
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(out, b...)
		}
		line := b[:i]
		if n := len(line); n > 0 && line[n-1] == '|' {
			line = line[:n-1]
		}
		out = append(append(out, line...), '\n')
		b = b[i+1:]
	}
	return out
}
