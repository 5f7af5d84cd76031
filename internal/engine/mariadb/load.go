package mariadb

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpcc"
)

//go:embed schema.sql
var schemaSQL string

//go:embed indexes.sql
var indexesSQL string

// sqlLines returns the statements of an SQL file whose statements end with
// ";" at the end of a line (sep ";") or take one line each (sep ""), without
// the comment lines.
func sqlLines(text, sep string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "--") {
			continue
		}
		if cur.Len() > 0 {
			cur.WriteByte('\n')
		}
		cur.WriteString(line)
		if sep == "" || strings.HasSuffix(line, sep) {
			out = append(out, strings.TrimSuffix(cur.String(), sep))
			cur.Reset()
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// SchemaStatements returns the CREATE TABLE statements, primary keys
// included, one per element.
func SchemaStatements() []string { return sqlLines(schemaSQL, ";") }

// IndexStatements returns the secondary indexes' statements, built after
// the load.
func IndexStatements() []string { return sqlLines(indexesSQL, "") }

// AnalyzeStatements returns the statements run once the indexes exist:
// ANALYZE TABLE of each table, so that the first measured step plans with
// InnoDB's persistent statistics of the loaded data rather than with those
// sampled while it was loaded.
func AnalyzeStatements() []string {
	out := make([]string, len(tpcc.Tables))
	for i, t := range tpcc.Tables {
		out[i] = "ANALYZE TABLE " + t
	}
	return out
}

// loadSession is what each loader connection sets first: no unique or
// foreign-key checks while loading (the generator's keys are unique by
// construction, and the schema has no foreign keys; InnoDB still refuses a
// duplicate primary key). With both off, MariaDB 10.6 and later load a
// table that is empty at the start of the transaction with table-level
// undo and one sort per index at commit, under an exclusive table lock:
// another loader's stream into the same table waits for that commit, for
// as long as it takes on slow storage, rather than fail with a lock wait
// timeout after innodb_lock_wait_timeout (50 s by default).
var loadSession = []string{
	"SET SESSION unique_checks = 0", "SET SESSION foreign_key_checks = 0",
	"SET SESSION innodb_lock_wait_timeout = 86400",
}

// checkLocalInfile returns errLocalInfile when the server refuses LOAD
// DATA LOCAL.
func (db *DB) checkLocalInfile(ctx context.Context, conn *sql.Conn) error {
	var on bool
	if err := conn.QueryRowContext(ctx, "SELECT @@GLOBAL.local_infile").Scan(&on); err != nil {
		return fmt.Errorf("reading the server's local_infile setting: %s", db.redact(err))
	}
	if !on {
		return errLocalInfile
	}
	return nil
}

// isLocalInfileRefused says whether LOAD DATA LOCAL failed because the
// server or the client does not allow it.
func isLocalInfileRefused(err error) bool {
	switch errNumber(err) {
	case 1148, 4166, 3948: // ER_NOT_ALLOWED_COMMAND, ER_LOAD_INFILE_CAPABILITY_DISABLED (MariaDB), ER_CLIENT_LOCAL_FILES_DISABLED (MySQL 8.0)
		return true
	}
	return false
}

// errLocalInfile says the server refuses the loader's LOAD DATA LOCAL.
var errLocalInfile = errors.New("the server does not allow LOAD DATA LOCAL INFILE (its local_infile setting is OFF), which tierbench loads tables with; " +
	"turn it on with SET GLOBAL local_infile = ON (or local_infile = ON in the server's configuration) and build again")

// BuildTPCC creates the schema and loads it with opts.Workers connections in
// parallel, then builds the secondary indexes and gathers statistics. If
// anything fails, it drops what it created, so no half-built schema is left
// for a check to call valid; should even that fail, tpcc_meta still says
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
	defer conn.Close()

	if err := db.checkLocalInfile(ctx, conn); err != nil {
		return nil, err
	}
	found, err := existingOf(ctx, conn, append(schemaTables(), engine.TPCHMetaTable))
	if err != nil {
		return nil, err
	}
	if err := engine.ReplaceSchema(found, opts.Drop, db.cfg.DBName, func() error { return dropSchema(ctx, conn) }); err != nil {
		return nil, err
	}

	seed := engine.RandomSeed()
	cload := tpcc.NewLoadC(tpcc.NewRand(seed))
	done := false
	defer db.dropUnless(&done, dropSchema)
	for _, s := range SchemaStatements() {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return nil, fmt.Errorf("creating the TPC-C tables: %w", err)
		}
	}
	if _, err := conn.ExecContext(ctx, createMeta); err != nil {
		return nil, fmt.Errorf("creating tpcc_meta: %w", err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO tpcc_meta (warehouses, c_load_last, c_load_cid, c_load_item, status, started_at, tierbench_version)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, opts.Warehouses, cload.Last, cload.CID, cload.Item, statusBuilding, time.Now().UTC(), opts.Version); err != nil {
		return nil, fmt.Errorf("writing tpcc_meta: %w", err)
	}

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
	if err := db.runParallel(ctx, workers, IndexStatements()); err != nil {
		return nil, fmt.Errorf("building the secondary indexes: %w", err)
	}
	if err := db.runParallel(ctx, workers, AnalyzeStatements()); err != nil {
		return nil, fmt.Errorf("analyzing: %w", err)
	}
	res.IndexSec = time.Since(idxStart).Seconds()

	if err := conn.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(data_length + index_length), 0) AS SIGNED)
		FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN `+inList(tpcc.Tables)).Scan(&res.Bytes); err != nil {
		return nil, fmt.Errorf("measuring the schema's size: %w", err)
	}
	// Installed before the build is marked complete, so that a complete
	// build always has its routines.
	if err := db.InstallRoutines(ctx); err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, `UPDATE tpcc_meta SET status = ?, finished_at = ?`, statusComplete, time.Now().UTC()); err != nil {
		return nil, fmt.Errorf("marking the build complete: %w", err)
	}
	done = true
	res.Rows = lc.PerTable()
	res.CopyBytes = lc.Bytes()
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// loaderConn opens a connection for loading: no unique or foreign-key
// checks, and, when the user may, no binary logging of the load (a replica
// would then not get the rows; tierbench's servers have no replicas).
func (db *DB) loaderConn(ctx context.Context) (*sql.Conn, error) {
	conn, err := db.connect(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range loadSession {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %s", s, db.redact(err))
		}
	}
	// Needs SUPER or BINLOG ADMIN; without them the load is logged too.
	_, _ = conn.ExecContext(ctx, "SET SESSION sql_log_bin = 0")
	return conn, nil
}

// load runs the load tasks over workers connections.
func (db *DB) load(ctx context.Context, warehouses, workers int, seed uint64, cload tpcc.CValues, lc *engine.LoadCounters) error {
	return engine.Load(ctx, warehouses, workers, seed, cload, lc, func(ctx context.Context) (engine.StreamLoader, error) {
		conn, err := db.loaderConn(ctx)
		if err != nil {
			return nil, err
		}
		return infileLoader{db, conn}, nil
	})
}

// readerSeq numbers the streams registered with the driver, so that
// concurrent loads (of this build or another in the process) never share a
// name.
var readerSeq atomic.Int64

// infileLoader loads a stream with LOAD DATA LOCAL INFILE 'Reader::NAME':
// the driver answers the server's request for the file NAME with what the
// reader registered under it yields. The generator's text (tab-separated,
// \N for NULL, no quoting, one row a line) is LOAD DATA's default format;
// the clauses spell it out all the same, in hex (tab, backslash, newline)
// so that they mean the same under sql_mode NO_BACKSLASH_ESCAPES.
//
// Measured against multi-row INSERTs of about 1 MB (one transaction per
// stream) on MariaDB 10.11 with 2 CPUs and 2 loaders, LOAD DATA loaded
// 2 and 4 warehouses in 3.1-3.9 s and 5.5-5.9 s (about 350,000 rows/s),
// the INSERTs in 5.5-6.5 s and 9.3-14.3 s (150,000-225,000 rows/s).
type infileLoader struct {
	db   *DB
	conn *sql.Conn
}

func (l infileLoader) LoadStream(ctx context.Context, table string, w int, r io.Reader) (int64, error) {
	name := fmt.Sprintf("tierbench-%s-%d", table, readerSeq.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return r })
	defer mysql.DeregisterReaderHandler(name)
	res, err := l.conn.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+table+
		" CHARACTER SET utf8mb4 FIELDS TERMINATED BY X'09' ENCLOSED BY '' ESCAPED BY X'5C' LINES STARTING BY '' TERMINATED BY X'0A'")
	if err != nil {
		if isLocalInfileRefused(err) {
			return 0, errLocalInfile
		}
		return 0, fmt.Errorf("LOAD DATA into %s: %s", streamName(table, w), l.db.redact(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("LOAD DATA into %s: %s", streamName(table, w), l.db.redact(err))
	}
	// LOAD DATA LOCAL turns every error into a warning and goes on (the
	// server cannot stop the client's stream): a skipped or truncated
	// row shows only there.
	if err := l.db.noWarnings(ctx, l.conn); err != nil {
		return 0, fmt.Errorf("LOAD DATA into %s: %w", streamName(table, w), err)
	}
	return n, nil
}

func (l infileLoader) Close() { l.conn.Close() }

// streamName names a table's share of a load task: "item", "stock
// (warehouse 3)".
func streamName(table string, w int) string {
	if w == 0 {
		return table
	}
	return fmt.Sprintf("%s (warehouse %d)", table, w)
}

// noWarnings returns an error quoting the warnings of the connection's last
// statement, if it had any.
func (db *DB) noWarnings(ctx context.Context, conn *sql.Conn) error {
	var count int64
	if err := conn.QueryRowContext(ctx, "SELECT @@warning_count").Scan(&count); err != nil {
		return fmt.Errorf("reading the warnings: %s", db.redact(err))
	}
	if count == 0 {
		return nil
	}
	rows, err := conn.QueryContext(ctx, "SHOW WARNINGS LIMIT 3")
	if err != nil {
		return fmt.Errorf("%d warnings (reading them: %s)", count, db.redact(err))
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var level, msg string
		var code int
		if err := rows.Scan(&level, &code, &msg); err != nil {
			break
		}
		msgs = append(msgs, fmt.Sprintf("%s %d: %s", level, code, msg))
	}
	return fmt.Errorf("the server took the rows with %d warning(s), so not every row loaded exactly: %s", count, strings.Join(msgs, "; "))
}

// runParallel runs independent statements over workers connections,
// reading and checking what each returns (ANALYZE TABLE answers with rows
// that may say "error").
func (db *DB) runParallel(ctx context.Context, workers int, stmts []string) error {
	return engine.RunParallel(ctx, workers, stmts, db.connect,
		func(ctx context.Context, conn *sql.Conn, s string) error {
			return db.execChecked(ctx, conn, s)
		},
		func(conn *sql.Conn) { conn.Close() })
}

// execChecked runs a statement that may answer with a result set of
// (Table, Op, Msg_type, Msg_text), as ANALYZE TABLE does, and fails on a
// row whose Msg_type is "error".
func (db *DB) execChecked(ctx context.Context, conn *sql.Conn, stmt string) error {
	rows, err := conn.QueryContext(ctx, stmt)
	if err != nil {
		return errors.New(db.redact(err))
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil || len(cols) != 4 {
		return rows.Close()
	}
	for rows.Next() {
		var table, op, kind, msg sql.NullString
		if err := rows.Scan(&table, &op, &kind, &msg); err != nil {
			return err
		}
		if strings.EqualFold(kind.String, "error") {
			return fmt.Errorf("%s: %s", table.String, msg.String)
		}
	}
	return rows.Err()
}

// dropUnless drops what a build made with drop unless *done: a build that
// failed or was interrupted leaves nothing a check could take for valid.
// The caller's context may be what failed: it cleans up with its own.
func (db *DB) dropUnless(done *bool, drop func(context.Context, *sql.Conn) error) {
	if *done {
		return
	}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c, err := db.connect(cctx); err == nil {
		_ = drop(cctx, c)
		c.Close()
	}
}
