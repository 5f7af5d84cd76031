package engine

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tierbench/tierbench/internal/tpcc"
)

// What every engine's loader shares: the tasks of tpcc.LoadTasks spread
// over parallel connections, the counters behind the progress display, and
// the seed of the population. The engine supplies only how one stream of
// rows (tab-separated text, \N for NULL) gets into one table.

// StreamLoader loads streams of rows on one connection of its own.
type StreamLoader interface {
	// LoadStream loads the rows r yields into table and returns how many
	// rows the server took. w is the warehouse of the task (0 for ITEM),
	// for the error message.
	LoadStream(ctx context.Context, table string, w int, r io.Reader) (rows int64, err error)
	// Close closes the connection.
	Close()
}

// LoadCounters are shared by the workers of one build: what has been loaded
// so far, for the progress display and the build's result.
type LoadCounters struct {
	rows, bytes atomic.Int64
	tasksDone   atomic.Int64
	whDone      atomic.Int64
	mu          sync.Mutex
	perTable    map[string]int64
	perW        map[int]int // tasks finished per warehouse
}

// NewLoadCounters returns counters at zero.
func NewLoadCounters() *LoadCounters {
	return &LoadCounters{perTable: map[string]int64{}, perW: map[int]int{}}
}

// Rows returns the rows loaded so far, in all tables.
func (lc *LoadCounters) Rows() int64 { return lc.rows.Load() }

// Bytes returns the bytes of row text streamed so far.
func (lc *LoadCounters) Bytes() int64 { return lc.bytes.Load() }

// PerTable returns a copy of the rows loaded per table, counting finished
// tasks only.
func (lc *LoadCounters) PerTable() map[string]int64 {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	out := make(map[string]int64, len(lc.perTable))
	for k, v := range lc.perTable {
		out[k] = v
	}
	return out
}

// finish records a finished task and its rows per table.
func (lc *LoadCounters) finish(t tpcc.LoadTask, perTable map[string]int64) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	for k, v := range perTable {
		lc.perTable[k] += v
	}
	if t.Kind != "item" {
		lc.perW[t.W]++
		if lc.perW[t.W] == 2 {
			lc.whDone.Add(1)
		}
	}
	lc.tasksDone.Add(1)
}

// countingReader adds what passes through it to a shared counter, for the
// progress display.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Load generates the population of warehouses warehouses (clause 4.3.3.1)
// and loads it over workers connections that open makes, one per worker,
// each taking the next task of tpcc.LoadTasks until none is left. seed
// seeds the generators (each worker draws from its own child of it) and
// cload is the C-Load of the build. The first error stops every worker and
// is returned.
func Load(ctx context.Context, warehouses, workers int, seed uint64, cload tpcc.CValues, lc *LoadCounters,
	open func(ctx context.Context) (StreamLoader, error)) error {
	all := tpcc.LoadTasks(warehouses)
	tasks := make(chan tpcc.LoadTask, len(all))
	for _, t := range all {
		tasks <- t
	}
	close(tasks)
	now := time.Now()
	eg, ctx := errgroup.WithContext(ctx)
	seeds := tpcc.NewRand(seed)
	for range max(workers, 1) {
		r := seeds.Child()
		eg.Go(func() error {
			l, err := open(ctx)
			if err != nil {
				return err
			}
			defer l.Close()
			g := tpcc.NewGen(r, cload, now)
			for t := range tasks {
				if err := loadTask(ctx, l, g, t, lc); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return eg.Wait()
}

func loadTask(ctx context.Context, l StreamLoader, g *tpcc.Gen, t tpcc.LoadTask, lc *LoadCounters) error {
	perTable := map[string]int64{}
	for _, s := range t.Streams(g) {
		n, err := l.LoadStream(ctx, s.Table, t.W, countingReader{s.Reader(), &lc.bytes})
		if err != nil {
			return err
		}
		perTable[s.Table] += n
		lc.rows.Add(n)
	}
	if t.Kind == "rest" {
		g.ReleasePlan(t.W)
	}
	lc.finish(t, perTable)
	return nil
}

// RunParallel runs independent statements (keys, indexes, statistics) over
// up to workers connections that open makes; exec runs one statement on
// one. Errors name the statement.
func RunParallel[C any](ctx context.Context, workers int, stmts []string,
	open func(ctx context.Context) (C, error), exec func(ctx context.Context, conn C, stmt string) error, closeConn func(C)) error {
	work := make(chan string, len(stmts))
	for _, s := range stmts {
		work <- s
	}
	close(work)
	eg, ctx := errgroup.WithContext(ctx)
	for range min(max(workers, 1), len(stmts)) {
		eg.Go(func() error {
			conn, err := open(ctx)
			if err != nil {
				return err
			}
			defer closeConn(conn)
			for s := range work {
				if err := exec(ctx, conn, s); err != nil {
					return fmt.Errorf("%s: %w", s, err)
				}
			}
			return nil
		})
	}
	return eg.Wait()
}

// StartProgress calls opts.Progress once a second until the returned
// function is called; that function reports one last snapshot with the
// next phase's name.
func StartProgress(opts BuildOptions, lc *LoadCounters) func(next string) {
	if opts.Progress == nil {
		return func(string) {}
	}
	totalTasks := float64(2*opts.Warehouses + 1)
	snap := func(phase string) tpcc.BuildProgress {
		return tpcc.BuildProgress{Phase: phase, WarehousesDone: int(lc.whDone.Load()), Warehouses: opts.Warehouses,
			Rows: lc.rows.Load(), Bytes: lc.bytes.Load(), Fraction: float64(lc.tasksDone.Load()) / totalTasks}
	}
	opts.Progress(snap("load"))
	stop := everySecond(func() { opts.Progress(snap("load")) })
	return func(next string) {
		stop()
		opts.Progress(snap(next))
	}
}

// everySecond calls f once a second until the returned function is
// called, which returns once no call of f runs.
func everySecond(f func()) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				f()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// RandomSeed returns a seed for a build's population from the system's
// random source.
func RandomSeed() uint64 {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// MetaTable records what a build made, in every engine: the warehouse
// count, the C-Load values the driver needs to pick a valid C-Run
// (2.1.6.1), and whether the build finished. A build that did not finish is
// never taken for a valid schema.
const MetaTable = "tpcc_meta"

// The build's status in MetaTable.
const (
	StatusBuilding = "building"
	StatusComplete = "complete"
)

// Meta is the content of MetaTable.
type Meta struct {
	Warehouses int
	CLoad      tpcc.CValues
	Status     string
}

// ReplaceSchema is what a build does with the TPC-C tables it found in
// database dbName (and TPCHMetaTable, when the caller looked for it too):
// nothing when there are none; with drop, drops them (dropSchema);
// without, refuses as bad input naming --drop. A TPC-H build there is
// refused either way: its CUSTOMER and ORDERS have TPC-C's names, and
// --drop would take them from under it.
func ReplaceSchema(found []string, drop bool, dbName string, dropSchema func() error) error {
	if slices.Contains(found, TPCHMetaTable) {
		return InputErrorf("database %s holds a TPC-H build, whose customer and orders tables have TPC-C's names; "+
			"build TPC-C in a database of its own", dbName)
	}
	if len(found) == 0 {
		return nil
	}
	if !drop {
		return InputErrorf("database %s already holds TPC-C tables (%s); add --drop to replace them",
			dbName, strings.Join(found, ", "))
	}
	return dropSchema()
}
