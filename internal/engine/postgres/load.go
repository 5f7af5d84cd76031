package postgres

import (
	"bufio"
	"context"
	crand "crypto/rand"
	_ "embed"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpcc"
)

//go:embed schema.sql
var schemaSQL string

//go:embed indexes.sql
var indexesSQL string

// IndexStatements returns the key and index statements of the schema,
// largest first.
func IndexStatements() []string {
	var out []string
	for _, line := range strings.Split(indexesSQL, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "--") {
			out = append(out, line)
		}
	}
	return out
}

// SchemaSQL returns the CREATE TABLE statements (without keys).
func SchemaSQL() string { return schemaSQL }

// AfterLoadStatements returns the statements run once the keys and indexes
// exist: VACUUM, as pgbench -i does, so that the first measured step does
// not pay for the load (autovacuum's insert-triggered passes over every
// table, and hint bits set by the first reader of each freshly copied
// tuple); and ANALYZE, in the same pass, of only the columns the
// transactions filter, join or group on: statistics of the wide text
// columns (C_DATA, S_DIST_xx) cost most of ANALYZE's time and guide no plan.
func AfterLoadStatements() []string {
	return []string{
		"VACUUM (ANALYZE) stock (s_w_id, s_i_id, s_quantity)",
		"VACUUM (ANALYZE) customer (c_w_id, c_d_id, c_id, c_last, c_first)",
		"VACUUM (ANALYZE) order_line (ol_w_id, ol_d_id, ol_o_id, ol_i_id, ol_delivery_d)",
		"VACUUM (ANALYZE) orders (o_w_id, o_d_id, o_id, o_c_id, o_carrier_id)",
		"VACUUM (ANALYZE) history (h_w_id, h_d_id, h_c_w_id, h_c_d_id, h_c_id)",
		"VACUUM (ANALYZE) new_order", "VACUUM (ANALYZE) item (i_id)",
		"VACUUM (ANALYZE) district", "VACUUM (ANALYZE) warehouse",
	}
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

// loadCounters are shared by the workers of one build.
type loadCounters struct {
	rows, bytes atomic.Int64
	tasksDone   atomic.Int64
	mu          sync.Mutex
	perTable    map[string]int64
	perW        map[int]int // tasks finished per warehouse
	whDone      atomic.Int64
}

func (lc *loadCounters) finish(t tpcc.LoadTask, perTable map[string]int64) {
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

// BuildTPCC creates the schema and loads it with opts.Workers connections in
// parallel, then builds keys and indexes and gathers statistics. If anything
// fails, it drops what it created, so no half-built schema is left for a
// check to call valid; should even that fail, tpcc_meta still says
// "building".
func (db *DB) BuildTPCC(ctx context.Context, opts engine.BuildOptions) (*tpcc.BuildResult, error) {
	if opts.Warehouses < 1 {
		return nil, engine.InputErrorf("warehouses must be 1 or more (got %d)", opts.Warehouses)
	}
	workers := max(opts.Workers, 1)
	start := time.Now()
	conn, err := db.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())

	found, err := existingTables(ctx, conn)
	if err != nil {
		return nil, err
	}
	if len(found) > 0 {
		if !opts.Drop {
			return nil, engine.InputErrorf("database %s already holds TPC-C tables (%s); add --drop to replace them",
				db.cfg.Database, strings.Join(found, ", "))
		}
		if err := dropSchema(ctx, conn); err != nil {
			return nil, err
		}
	}

	seed := randomSeed()
	cload := tpcc.NewLoadC(tpcc.NewRand(seed))
	if _, err := conn.Exec(ctx, schemaSQL); err != nil {
		return nil, fmt.Errorf("creating the TPC-C tables: %w", err)
	}
	if _, err := conn.Exec(ctx, createMeta); err != nil {
		return nil, fmt.Errorf("creating tpcc_meta: %w", err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO tpcc_meta (warehouses, c_load_last, c_load_cid, c_load_item, status, tierbench_version)
		VALUES ($1, $2, $3, $4, $5, $6)`, opts.Warehouses, cload.Last, cload.CID, cload.Item, statusBuilding, opts.Version); err != nil {
		return nil, fmt.Errorf("writing tpcc_meta: %w", err)
	}
	done := false
	defer func() {
		if done {
			return
		}
		// The caller's context may be what failed: clean up with our own.
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := db.connect(cctx); err == nil {
			_ = dropSchema(cctx, c)
			c.Close(cctx)
		}
	}()

	res := &tpcc.BuildResult{Warehouses: opts.Warehouses, CLoad: cload, Workers: workers}
	lc := &loadCounters{perTable: map[string]int64{}, perW: map[int]int{}}
	stopProgress := startProgress(opts, lc)
	loadStart := time.Now()
	err = db.load(ctx, opts.Warehouses, workers, seed, cload, lc)
	res.LoadSec = time.Since(loadStart).Seconds()
	stopProgress("index")
	if err != nil {
		return nil, fmt.Errorf("loading: %w", err)
	}
	idxStart := time.Now()
	if err := db.runParallel(ctx, workers, IndexStatements(), "SET maintenance_work_mem = '256MB'"); err != nil {
		return nil, fmt.Errorf("building keys and indexes: %w", err)
	}
	if err := db.runParallel(ctx, workers, AfterLoadStatements(), ""); err != nil {
		return nil, fmt.Errorf("vacuuming and analyzing: %w", err)
	}
	res.IndexSec = time.Since(idxStart).Seconds()

	if err := conn.QueryRow(ctx, `SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relname = ANY($1)`,
		tpcc.Tables).Scan(&res.Bytes); err != nil {
		return nil, fmt.Errorf("measuring the schema's size: %w", err)
	}
	if err := installRoutines(ctx, conn); err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `UPDATE tpcc_meta SET status = $1, finished_at = now()`, statusComplete); err != nil {
		return nil, fmt.Errorf("marking the build complete: %w", err)
	}
	done = true
	res.Rows = lc.perTable
	res.CopyBytes = lc.bytes.Load()
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// load runs the COPY tasks over workers connections.
func (db *DB) load(ctx context.Context, warehouses, workers int, seed uint64, cload tpcc.CValues, lc *loadCounters) error {
	all := tpcc.LoadTasks(warehouses)
	tasks := make(chan tpcc.LoadTask, len(all))
	for _, t := range all {
		tasks <- t
	}
	close(tasks)
	now := time.Now()
	eg, ctx := errgroup.WithContext(ctx)
	seeds := tpcc.NewRand(seed)
	for range workers {
		r := seeds.Child()
		eg.Go(func() error {
			conn, err := db.connect(ctx)
			if err != nil {
				return err
			}
			defer conn.Close(context.Background())
			g := tpcc.NewGen(r, cload, now)
			for t := range tasks {
				if err := copyTask(ctx, conn, g, t, lc); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return eg.Wait()
}

func copyTask(ctx context.Context, conn *pgx.Conn, g *tpcc.Gen, t tpcc.LoadTask, lc *loadCounters) error {
	perTable := map[string]int64{}
	for _, s := range t.Streams(g) {
		rr := s.Reader()
		// pgconn sends what one Read returns as one CopyData message; a
		// 256 KiB buffer keeps messages large and syscalls few.
		r := bufio.NewReaderSize(countingReader{rr, &lc.bytes}, 256<<10)
		tag, err := conn.PgConn().CopyFrom(ctx, r, "COPY "+s.Table+" FROM STDIN")
		if err != nil {
			return fmt.Errorf("COPY %s (warehouse %d): %w", s.Table, t.W, err)
		}
		perTable[s.Table] += tag.RowsAffected()
		lc.rows.Add(tag.RowsAffected())
	}
	if t.Kind == "rest" {
		g.ReleasePlan(t.W)
	}
	lc.finish(t, perTable)
	return nil
}

// runParallel runs independent statements over workers connections, each
// connection first running setup (when not empty).
func (db *DB) runParallel(ctx context.Context, workers int, stmts []string, setup string) error {
	work := make(chan string, len(stmts))
	for _, s := range stmts {
		work <- s
	}
	close(work)
	eg, ctx := errgroup.WithContext(ctx)
	for range min(workers, len(stmts)) {
		eg.Go(func() error {
			conn, err := db.connect(ctx)
			if err != nil {
				return err
			}
			defer conn.Close(context.Background())
			if setup != "" {
				if _, err := conn.Exec(ctx, setup); err != nil {
					return fmt.Errorf("%s: %w", setup, err)
				}
			}
			for s := range work {
				if _, err := conn.Exec(ctx, s); err != nil {
					return fmt.Errorf("%s: %w", s, err)
				}
			}
			return nil
		})
	}
	return eg.Wait()
}

// startProgress calls opts.Progress once a second until the returned
// function is called; that function reports one last snapshot with the
// next phase's name.
func startProgress(opts engine.BuildOptions, lc *loadCounters) func(next string) {
	if opts.Progress == nil {
		return func(string) {}
	}
	totalTasks := float64(2*opts.Warehouses + 1)
	snap := func(phase string) tpcc.BuildProgress {
		return tpcc.BuildProgress{Phase: phase, WarehousesDone: int(lc.whDone.Load()), Warehouses: opts.Warehouses,
			Rows: lc.rows.Load(), Bytes: lc.bytes.Load(), Fraction: float64(lc.tasksDone.Load()) / totalTasks}
	}
	stop := make(chan struct{})
	finished := make(chan struct{})
	opts.Progress(snap("load"))
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				opts.Progress(snap("load"))
			}
		}
	}()
	return func(next string) {
		close(stop)
		<-finished
		opts.Progress(snap(next))
	}
}

func randomSeed() uint64 {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}
