package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tierbench/tierbench/internal/tpch"
)

// TPCHBuilder is a database that can build the TPC-H tables.
type TPCHBuilder interface {
	// BuildTPCH creates the eight tables, loads them from tierbench's
	// generator, adds the keys and indexes and gathers statistics.
	BuildTPCH(ctx context.Context, opts TPCHBuildOptions) (*tpch.BuildResult, error)
}

// TPCHBuildOptions says what TPC-H build to make and how.
type TPCHBuildOptions struct {
	Scale   tpch.Scale
	Workers int  // parallel loader connections
	Drop    bool // drop an existing TPC-H build first
	// Progress, when set, is called about once a second while loading.
	Progress func(tpch.BuildProgress)
	Version  string // tierbench's version, stored with the build
}

// TPCHMetaTable records a TPC-H build: its scale factor and whether it
// finished.
const TPCHMetaTable = "tpch_meta"

// TableLoader loads streams of '|'-separated rows into tables, on one
// connection of its own.
type TableLoader interface {
	// LoadTable loads the rows r yields into table and returns how many
	// rows the server took.
	LoadTable(ctx context.Context, table string, r io.Reader) (int64, error)
	Close()
}

// TPCHLoad is one TPC-H load's counters, shared by its loaders.
type TPCHLoad struct {
	rows, bytes, done atomic.Int64
	tasks             int64
	mu                sync.Mutex
	perTable          map[string]int64
}

// LoadTPCH loads the tables of scale sc over workers connections that open
// makes, each taking the next of tpch.LoadTasks until none is left; the
// first error stops every loader and is returned. progress, when set, hears
// of the load about once a second, and once more with phase next when the
// returned function is called.
func LoadTPCH(ctx context.Context, sc tpch.Scale, workers int, progress func(tpch.BuildProgress),
	open func(ctx context.Context) (TableLoader, error)) (*TPCHLoad, error) {
	all := tpch.LoadTasks(sc, workers)
	lc := &TPCHLoad{tasks: int64(len(all)), perTable: map[string]int64{}}
	tasks := make(chan tpch.LoadTask, len(all))
	for _, t := range all {
		tasks <- t
	}
	close(tasks)
	stop := lc.report(progress)
	defer stop()
	eg, ctx := errgroup.WithContext(ctx)
	for range max(workers, 1) {
		eg.Go(func() error {
			l, err := open(ctx)
			if err != nil {
				return err
			}
			defer l.Close()
			for t := range tasks {
				n, err := loadRun(ctx, l, sc, t, &lc.bytes)
				if err != nil {
					return fmt.Errorf("%s (rows from %d): %w", t.Table, t.First, err)
				}
				lc.rows.Add(n)
				lc.done.Add(1)
				lc.mu.Lock()
				lc.perTable[t.Table] += n
				lc.mu.Unlock()
			}
			return nil
		})
	}
	return lc, eg.Wait()
}

// ErrLoadConflict marks a load statement the server rolled back because
// it lost a lock conflict with another loader's (MariaDB's deadlock
// detection, when two loaders append to one table): it may be run again.
var ErrLoadConflict = errors.New("load conflict")

// maxLoadTries is how many times a run of rows is loaded before its
// conflict is an error.
const maxLoadTries = 5

// loadRun loads task t's rows on l, again from its first row when the
// server rolled the statement back for a conflict, and adds the bytes of
// the load that took to streamed.
func loadRun(ctx context.Context, l TableLoader, sc tpch.Scale, t tpch.LoadTask, streamed *atomic.Int64) (int64, error) {
	for try := 1; ; try++ {
		var sent atomic.Int64
		n, err := l.LoadTable(ctx, t.Table, countingReader{t.Reader(sc), &sent})
		if err == nil || !errors.Is(err, ErrLoadConflict) || try == maxLoadTries || ctx.Err() != nil {
			streamed.Add(sent.Load())
			return n, err
		}
	}
}

// Rows returns the rows loaded per table.
func (lc *TPCHLoad) Rows() map[string]int64 {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return maps.Clone(lc.perTable)
}

// Bytes returns the bytes of row text streamed.
func (lc *TPCHLoad) Bytes() int64 { return lc.bytes.Load() }

func (lc *TPCHLoad) snap(phase string) tpch.BuildProgress {
	return tpch.BuildProgress{Phase: phase, Rows: lc.rows.Load(), Bytes: lc.bytes.Load(),
		Fraction: float64(lc.done.Load()) / float64(max(lc.tasks, 1))}
}

// report calls progress once a second until the returned function is
// called.
func (lc *TPCHLoad) report(progress func(tpch.BuildProgress)) func() {
	if progress == nil {
		return func() {}
	}
	progress(lc.snap("load"))
	return everySecond(func() { progress(lc.snap("load")) })
}

// TPCHPhase tells progress, when set, that the build moved on to phase.
func TPCHPhase(progress func(tpch.BuildProgress), lc *TPCHLoad, phase string) {
	if progress != nil {
		progress(lc.snap(phase))
	}
}

// ReplaceTPCH is what a TPC-H build does with the tables it found in
// database dbName, named as TPC-H's (found) and whether a TPC-H build's
// meta table is among them (ours): nothing when there are none; with
// drop, drops a TPC-H build (dropTables); without, refuses as bad input
// naming --drop. Tables of TPC-H's names that no TPC-H build made (TPC-C
// has an ORDERS table too) are never dropped.
func ReplaceTPCH(found []string, drop bool, dbName string, dropTables func() error) error {
	if len(found) == 0 {
		return nil
	}
	if !slices.Contains(found, TPCHMetaTable) {
		return InputErrorf("database %s holds tables named as TPC-H's (%s) that no TPC-H build made, e.g. a TPC-C schema's; "+
			"build TPC-H in a database of its own", dbName, strings.Join(found, ", "))
	}
	if !drop {
		return InputErrorf("database %s already holds a TPC-H build; add --drop to replace it", dbName)
	}
	return dropTables()
}

// TPCHTableNames are the tables a TPC-H build makes: the eight and its
// meta table.
func TPCHTableNames() []string { return append(slices.Clone(tpch.Tables), TPCHMetaTable) }

// TPCHRunner is a database that can run TPC-H's queries and refresh
// functions on a TPC-H build.
type TPCHRunner interface {
	// TPCHBuild reads the build's meta table: its scale factor and how
	// many update sets RF1 and RF2 have applied; an error wrapping
	// ErrNoSchema when there is no complete build.
	TPCHBuild(ctx context.Context) (TPCHBuildInfo, error)
	// NewTPCHSession opens a connection for one query or refresh stream,
	// with the analytic settings TPCHSessionOptions's rule gives it.
	NewTPCHSession(ctx context.Context, opts TPCHSessionOptions) (TPCHSession, error)
	// TPCHDialect is the SQL its queries are written in.
	TPCHDialect() tpch.Dialect
}

// TPCHSessionOptions says how a TPC-H session shares the server.
//
// Each session sizes its analytic settings from the memory M the server is
// sized for, which it reads from the server (PostgreSQL: 4 × shared_buffers;
// MariaDB: 8/5 × innodb_buffer_pool_size, the inverses of a managed server's
// --memory sizing), and from the sessions running at once: each of a
// query's sorts, hashes, join buffers and temporary tables may take
// M/(32 × Sessions) (TPCHShare), a setting never lowered below what the
// server gives a session (a --set above the rule stays). The engines say
// which settings (docs/tpch.md).
type TPCHSessionOptions struct {
	// Sessions is how many TPC-H sessions run at once: 1 in the power
	// test, the query streams and the refresh stream (S+1) in the
	// throughput test. 0 is 1.
	Sessions int
}

// TPCHSettings are the settings a session of r opened with opts runs
// with (its Settings), read on a session of their own: what a run records
// before its sessions open.
func TPCHSettings(ctx context.Context, r TPCHRunner, opts TPCHSessionOptions) (map[string]string, error) {
	sess, err := r.NewTPCHSession(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	return sess.Settings(), nil
}

// Byte sizes, for the bounds engines give TPCHShare.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
)

// TPCHShare is what one sort, hash, join buffer or temporary table of a
// TPC-H session may take of memory m (bytes) with sessions at once:
// m/(32 × sessions), clamped to [lo, hi] and rounded down to a multiple
// of 64 kB (which every such setting of both engines takes as it is).
//
// 32 = 8 × 4: the sessions together take an eighth of M for their
// queries' buffers, and a query has about four of them at once (Q9 and
// Q18 sort, hash and group). The buffer pool or shared buffers and the
// page cache keep the rest, so the data's reads stay what a tier is
// measured on. On PostgreSQL a hash may take hash_mem_multiplier (2)
// times it and each parallel worker has its own, which this eighth leaves
// room for.
func TPCHShare(m int64, sessions int, lo, hi int64) int64 {
	v := m / (32 * int64(max(sessions, 1)))
	v = max(lo, min(v, hi))
	return v / (64 << 10) * (64 << 10)
}

// TPCHBuildInfo is what a TPC-H build's meta table says.
type TPCHBuildInfo struct {
	Scale   float64
	RF1Sets int // update sets RF1 has inserted
	RF2Sets int // update sets RF2 has deleted
}

// TPCHSession runs statements on one connection.
type TPCHSession interface {
	// Query runs a query's statements in order (a view's creation, the
	// query, its dropping) and returns the rows of the one that returns
	// rows, each value as text (NULL as ""). With timeout above 0 the
	// server cancels a statement that runs longer, and the error wraps
	// ErrQueryTimeout.
	Query(ctx context.Context, stmts []string, timeout time.Duration) ([][]string, error)
	// ServerSeconds is the server's own time, in seconds, of the last
	// statement the last Query ran (a query's answer statement), where
	// the engine reports it; 0 where it does not, after a failed Query, or
	// when it cannot be read. It is read on a round trip of its own after
	// Query returned, so call it after the client's time is taken, and
	// before another statement runs on the session (a view's dropping).
	ServerSeconds(ctx context.Context) float64
	// Settings are the analytic settings the session runs with, as the
	// server shows them: those its options set and those of the server
	// that it keeps (docs/tpch.md).
	Settings() map[string]string
	// RF1 inserts the update set's orders and lines in one transaction,
	// which also counts the set in the meta table.
	RF1(ctx context.Context, set tpch.RefreshSet) error
	// RF2 deletes the update set's orders and their lines in one
	// transaction, which also counts the set in the meta table.
	RF2(ctx context.Context, set tpch.RefreshSet) error
	Close()
}

// ErrQueryTimeout says the server cancelled a query that ran past its
// timeout.
var ErrQueryTimeout = errors.New("query timed out")

// NoTPCHBuild is the error of a database without a complete TPC-H build.
func NoTPCHBuild(status string) error {
	if status == "" {
		return NoSchemaErrorf("no TPC-H build found in this database; make one with `tierbench tpch build --dsn DSN --scale SF`")
	}
	return NoSchemaErrorf("the TPC-H build did not complete (status %q); build again with `tierbench tpch build --drop`", status)
}

// LoadFormat is rows of the reference format as COPY and LOAD DATA take
// them: each line's last '|' dropped.
func LoadFormat(b []byte) []byte { return tpch.LoadLines(bytes.Clone(b)) }
