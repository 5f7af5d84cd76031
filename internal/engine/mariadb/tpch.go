package mariadb

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpch"
)

//go:embed tpch_schema.sql
var tpchSchemaSQL string

//go:embed tpch_indexes.sql
var tpchIndexesSQL string

var _ engine.TPCHBuilder = (*DB)(nil)

// TPCHIndexStatements returns the TPC-H foreign-key indexes' statements,
// largest first.
func TPCHIndexStatements() []string { return sqlLines(tpchIndexesSQL, "") }

// BuildTPCH creates the TPC-H tables and loads them with opts.Workers
// connections in parallel, then adds the foreign-key indexes and analyzes
// every table. If anything fails, it drops what it made.
func (db *DB) BuildTPCH(ctx context.Context, opts engine.TPCHBuildOptions) (*tpch.BuildResult, error) {
	workers := max(opts.Workers, 1)
	start := time.Now()
	conn, err := db.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := db.checkLocalInfile(ctx, conn); err != nil {
		return nil, err
	}
	found, err := existingOf(ctx, conn, engine.TPCHTableNames())
	if err != nil {
		return nil, err
	}
	if err := engine.ReplaceTPCH(found, opts.Drop, db.cfg.DBName, func() error { return dropTPCH(ctx, conn) }); err != nil {
		return nil, err
	}
	done := false
	defer db.dropUnless(&done, dropTPCH)
	for _, s := range sqlLines(tpchSchemaSQL, ";") {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return nil, fmt.Errorf("creating the TPC-H tables: %s", db.redact(err))
		}
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO tpch_meta (scale_factor, status, started_at, tierbench_version) VALUES (?, ?, ?, ?)`,
		opts.Scale.SF, statusBuilding, time.Now().UTC(), opts.Version); err != nil {
		return nil, fmt.Errorf("writing tpch_meta: %s", db.redact(err))
	}

	res := &tpch.BuildResult{Scale: opts.Scale.SF, Workers: workers}
	loadStart := time.Now()
	lc, err := engine.LoadTPCH(ctx, opts.Scale, workers, opts.Progress, func(ctx context.Context) (engine.TableLoader, error) {
		c, err := db.loaderConn(ctx)
		if err != nil {
			return nil, err
		}
		return tpchInfile{db, c}, nil
	})
	res.LoadSec = time.Since(loadStart).Seconds()
	if err != nil {
		return nil, fmt.Errorf("loading: %w", err)
	}
	engine.TPCHPhase(opts.Progress, lc, "index")
	idxStart := time.Now()
	if err := db.runParallel(ctx, workers, TPCHIndexStatements()); err != nil {
		return nil, fmt.Errorf("building the foreign-key indexes: %w", err)
	}
	res.IndexSec = time.Since(idxStart).Seconds()
	engine.TPCHPhase(opts.Progress, lc, "analyze")
	anStart := time.Now()
	analyze := make([]string, len(tpch.Tables))
	for i, t := range tpch.Tables {
		analyze[i] = "ANALYZE TABLE " + t
	}
	if err := db.runParallel(ctx, workers, analyze); err != nil {
		return nil, fmt.Errorf("analyzing: %w", err)
	}
	res.AnalyzeSec = time.Since(anStart).Seconds()
	if err := conn.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(data_length + index_length), 0) AS SIGNED)
		FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN `+inList(tpch.Tables)).Scan(&res.Bytes); err != nil {
		return nil, fmt.Errorf("measuring the tables' size: %s", db.redact(err))
	}
	if _, err := conn.ExecContext(ctx, `UPDATE tpch_meta SET status = ?, finished_at = ?`, statusComplete, time.Now().UTC()); err != nil {
		return nil, fmt.Errorf("marking the build complete: %s", db.redact(err))
	}
	done = true
	res.Rows = lc.Rows()
	res.CopyBytes = lc.Bytes()
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// tpchInfile loads a TPC-H table's rows with LOAD DATA LOCAL INFILE, as
// infileLoader does TPC-C's, with '|' between fields.
type tpchInfile struct {
	db   *DB
	conn *sql.Conn
}

func (l tpchInfile) LoadTable(ctx context.Context, table string, r io.Reader) (int64, error) {
	name := fmt.Sprintf("tierbench-tpch-%s-%d", table, readerSeq.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return r })
	defer mysql.DeregisterReaderHandler(name)
	res, err := l.conn.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+table+
		" CHARACTER SET utf8mb4 FIELDS TERMINATED BY '|' ENCLOSED BY '' ESCAPED BY '' LINES STARTING BY '' TERMINATED BY X'0A'")
	if err != nil {
		switch {
		case isLocalInfileRefused(err):
			return 0, errLocalInfile
		case errNumber(err) == 1213: // ER_LOCK_DEADLOCK: the statement was rolled back
			return 0, fmt.Errorf("%w: LOAD DATA: %s", engine.ErrLoadConflict, l.db.redact(err))
		}
		return 0, fmt.Errorf("LOAD DATA: %s", l.db.redact(err))
	}
	n, err := res.RowsAffected()
	if err == nil {
		err = l.db.noWarnings(ctx, l.conn)
	}
	if err != nil {
		return 0, fmt.Errorf("LOAD DATA: %w", err)
	}
	return n, nil
}

func (l tpchInfile) Close() { l.conn.Close() }

// dropTPCH drops every TPC-H table that exists.
func dropTPCH(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "DROP TABLE IF EXISTS "+strings.Join(engine.TPCHTableNames(), ", ")); err != nil {
		return fmt.Errorf("dropping the TPC-H tables: %w", err)
	}
	return nil
}
