package postgres

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpcc"
)

//go:embed schema.sql
var schemaSQL string

//go:embed indexes.sql
var indexesSQL string

// IndexStatements returns the key and index statements of the schema,
// largest first.
func IndexStatements() []string { return sqlLines(indexesSQL) }

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

	found, err := existingOf(ctx, conn, append(schemaTables(), engine.TPCHMetaTable))
	if err != nil {
		return nil, err
	}
	if err := engine.ReplaceSchema(found, opts.Drop, db.cfg.Database, func() error { return dropSchema(ctx, conn) }); err != nil {
		return nil, err
	}

	seed := engine.RandomSeed()
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
	defer db.dropUnless(&done, dropSchema)

	res := &tpcc.BuildResult{Warehouses: opts.Warehouses, CLoad: cload, Workers: workers}
	lc := engine.NewLoadCounters()
	stopProgress := engine.StartProgress(opts, lc)
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
	res.Rows = lc.PerTable()
	res.CopyBytes = lc.Bytes()
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// load runs the COPY tasks over workers connections.
func (db *DB) load(ctx context.Context, warehouses, workers int, seed uint64, cload tpcc.CValues, lc *engine.LoadCounters) error {
	return engine.Load(ctx, warehouses, workers, seed, cload, lc, func(ctx context.Context) (engine.StreamLoader, error) {
		conn, err := db.connect(ctx)
		if err != nil {
			return nil, err
		}
		return copyLoader{conn}, nil
	})
}

// copyLoader loads streams with COPY FROM STDIN.
type copyLoader struct{ conn *pgx.Conn }

func (l copyLoader) LoadStream(ctx context.Context, table string, w int, rows io.Reader) (int64, error) {
	// pgconn sends what one Read returns as one CopyData message; a
	// 256 KiB buffer keeps messages large and syscalls few.
	r := bufio.NewReaderSize(rows, 256<<10)
	tag, err := l.conn.PgConn().CopyFrom(ctx, r, "COPY "+table+" FROM STDIN")
	if err != nil {
		return 0, fmt.Errorf("COPY %s (warehouse %d): %w", table, w, err)
	}
	return tag.RowsAffected(), nil
}

func (l copyLoader) Close() { l.conn.Close(context.Background()) }

// runParallel runs independent statements over workers connections, each
// connection first running setup (when not empty).
func (db *DB) runParallel(ctx context.Context, workers int, stmts []string, setup string) error {
	return engine.RunParallel(ctx, workers, stmts,
		func(ctx context.Context) (*pgx.Conn, error) {
			conn, err := db.connect(ctx)
			if err != nil {
				return nil, err
			}
			if setup != "" {
				if _, err := conn.Exec(ctx, setup); err != nil {
					conn.Close(context.Background())
					return nil, fmt.Errorf("%s: %w", setup, err)
				}
			}
			return conn, nil
		},
		func(ctx context.Context, conn *pgx.Conn, s string) error {
			_, err := conn.Exec(ctx, s)
			return err
		},
		func(conn *pgx.Conn) { conn.Close(context.Background()) })
}

// dropUnless drops what a build made with drop unless *done: a build that
// failed or was interrupted leaves nothing a check could take for valid.
// The caller's context may be what failed: it cleans up with its own.
func (db *DB) dropUnless(done *bool, drop func(context.Context, *pgx.Conn) error) {
	if *done {
		return
	}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c, err := db.connect(cctx); err == nil {
		_ = drop(cctx, c)
		c.Close(cctx)
	}
}
