package postgres

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpch"
)

//go:embed tpch_schema.sql
var tpchSchemaSQL string

//go:embed tpch_indexes.sql
var tpchIndexesSQL string

var _ engine.TPCHBuilder = (*DB)(nil)

// TPCHIndexStatements returns the TPC-H keys' and indexes' statements,
// largest first.
func TPCHIndexStatements() []string { return sqlLines(tpchIndexesSQL) }

// sqlLines returns the lines of an SQL file that are statements: neither
// empty nor comments.
func sqlLines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "--") {
			out = append(out, line)
		}
	}
	return out
}

// BuildTPCH creates the TPC-H tables and loads them with opts.Workers
// connections in parallel, then adds the keys and indexes and vacuums and
// analyzes every table. If anything fails, it drops what it made.
func (db *DB) BuildTPCH(ctx context.Context, opts engine.TPCHBuildOptions) (*tpch.BuildResult, error) {
	workers := max(opts.Workers, 1)
	start := time.Now()
	conn, err := db.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())

	found, err := existingOf(ctx, conn, engine.TPCHTableNames())
	if err != nil {
		return nil, err
	}
	if err := engine.ReplaceTPCH(found, opts.Drop, db.cfg.Database, func() error { return dropTPCH(ctx, conn) }); err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, tpchSchemaSQL); err != nil {
		return nil, fmt.Errorf("creating the TPC-H tables: %w", err)
	}
	done := false
	defer db.dropUnless(&done, dropTPCH)
	if _, err := conn.Exec(ctx, `INSERT INTO tpch_meta (scale_factor, status, tierbench_version) VALUES ($1, $2, $3)`,
		opts.Scale.SF, statusBuilding, opts.Version); err != nil {
		return nil, fmt.Errorf("writing tpch_meta: %w", err)
	}

	res := &tpch.BuildResult{Scale: opts.Scale.SF, Workers: workers}
	loadStart := time.Now()
	lc, err := engine.LoadTPCH(ctx, opts.Scale, workers, opts.Progress, func(ctx context.Context) (engine.TableLoader, error) {
		c, err := db.connect(ctx)
		if err != nil {
			return nil, err
		}
		return tpchCopier{c}, nil
	})
	res.LoadSec = time.Since(loadStart).Seconds()
	if err != nil {
		return nil, fmt.Errorf("loading: %w", err)
	}
	engine.TPCHPhase(opts.Progress, lc, "index")
	idxStart := time.Now()
	if err := db.runParallel(ctx, workers, TPCHIndexStatements(), "SET maintenance_work_mem = '256MB'"); err != nil {
		return nil, fmt.Errorf("building keys and indexes: %w", err)
	}
	res.IndexSec = time.Since(idxStart).Seconds()
	engine.TPCHPhase(opts.Progress, lc, "analyze")
	anStart := time.Now()
	// VACUUM as well as ANALYZE, as pgbench -i does: the first query then
	// neither sets every tuple's hint bits nor finds a visibility map that
	// rules out index-only scans.
	var vacuum []string
	for _, t := range tpch.Tables {
		vacuum = append(vacuum, "VACUUM (ANALYZE) "+t)
	}
	if err := db.runParallel(ctx, workers, vacuum, ""); err != nil {
		return nil, fmt.Errorf("vacuuming and analyzing: %w", err)
	}
	res.AnalyzeSec = time.Since(anStart).Seconds()
	if err := conn.QueryRow(ctx, `SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relname = ANY($1)`,
		tpch.Tables).Scan(&res.Bytes); err != nil {
		return nil, fmt.Errorf("measuring the tables' size: %w", err)
	}
	if _, err := conn.Exec(ctx, `UPDATE tpch_meta SET status = $1, finished_at = now()`, statusComplete); err != nil {
		return nil, fmt.Errorf("marking the build complete: %w", err)
	}
	done = true
	res.Rows = lc.Rows()
	res.CopyBytes = lc.Bytes()
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// tpchCopier loads a TPC-H table's rows with COPY … (DELIMITER '|').
type tpchCopier struct{ conn *pgx.Conn }

func (l tpchCopier) LoadTable(ctx context.Context, table string, rows io.Reader) (int64, error) {
	r := bufio.NewReaderSize(rows, 256<<10) // as copyLoader's
	tag, err := l.conn.PgConn().CopyFrom(ctx, r, "COPY "+table+" FROM STDIN (DELIMITER '|')")
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (l tpchCopier) Close() { l.conn.Close(context.Background()) }

// existingOf returns which of tables exist in the current schema.
func existingOf(ctx context.Context, conn *pgx.Conn, tables []string) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT c.relname FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r','p','v','m','f')
		  AND c.relname = ANY($1) ORDER BY c.relname`, tables)
	if err != nil {
		return nil, fmt.Errorf("looking for existing tables: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// dropTPCH drops every TPC-H table that exists.
func dropTPCH(ctx context.Context, conn *pgx.Conn) error {
	if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+strings.Join(engine.TPCHTableNames(), ", ")+" CASCADE"); err != nil {
		return fmt.Errorf("dropping the TPC-H tables: %w", err)
	}
	return nil
}
