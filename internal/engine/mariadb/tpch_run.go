package mariadb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpch"
)

var _ engine.TPCHRunner = (*DB)(nil)

// TPCHBuild reads tpch_meta.
func (db *DB) TPCHBuild(ctx context.Context) (engine.TPCHBuildInfo, error) {
	var info engine.TPCHBuildInfo
	conn, err := db.connect(ctx)
	if err != nil {
		return info, err
	}
	defer conn.Close()
	found, err := existingOf(ctx, conn, []string{engine.TPCHMetaTable})
	if err != nil {
		return info, err
	}
	if len(found) == 0 {
		return info, engine.NoTPCHBuild("")
	}
	var status string
	err = conn.QueryRowContext(ctx, `SELECT scale_factor, status, rf1_sets, rf2_sets FROM tpch_meta`).Scan(
		&info.Scale, &status, &info.RF1Sets, &info.RF2Sets)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return info, engine.NoTPCHBuild("")
	case err != nil:
		return info, fmt.Errorf("reading tpch_meta: %s", db.redact(err))
	case status != statusComplete:
		return info, engine.NoTPCHBuild(status)
	}
	return info, nil
}

// TPCHDialect is MariaDB's.
func (db *DB) TPCHDialect() tpch.Dialect { return tpch.MariaDB }

// NewTPCHSession opens a connection for a query or refresh stream, with
// its analytic settings (setTPCHSettings) and the server's profiling of
// its statements on, for ServerSeconds.
func (db *DB) NewTPCHSession(ctx context.Context, opts engine.TPCHSessionOptions) (engine.TPCHSession, error) {
	conn, err := db.connect(ctx)
	if err != nil {
		return nil, err
	}
	settings, err := setTPCHSettings(ctx, conn, opts.Sessions)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("setting the TPC-H session's analytic settings: %s", db.redact(err))
	}
	// A server built without profiling (have_profiling NO) refuses it:
	// its statements' times are then not reported.
	_, perr := conn.ExecContext(ctx, "SET SESSION profiling = 1")
	return &tpchSession{db: db, conn: conn, settings: settings, profiling: perr == nil}, nil
}

type tpchSession struct {
	db        *DB
	conn      *sql.Conn
	timeout   time.Duration // max_statement_time now set
	settings  map[string]string
	profiling bool // the server profiles the session's statements
	// last is the last statement the last Query ran, when it succeeded
	// (ServerSeconds looks it up).
	last string
}

func (s *tpchSession) Settings() map[string]string { return maps.Clone(s.settings) }

// Query runs the statements; a timeout is MariaDB's max_statement_time,
// which makes the server itself stop the statement.
func (s *tpchSession) Query(ctx context.Context, stmts []string, timeout time.Duration) ([][]string, error) {
	s.last = ""
	if timeout != s.timeout {
		if _, err := s.conn.ExecContext(ctx, "SET SESSION max_statement_time = "+strconv.FormatFloat(timeout.Seconds(), 'f', 3, 64)); err != nil {
			return nil, errors.New(s.db.redact(err))
		}
		s.timeout = timeout
	}
	var out [][]string
	for _, stmt := range stmts {
		rows, err := s.conn.QueryContext(ctx, stmt)
		if err != nil {
			return nil, s.queryErr(err)
		}
		cols, err := rows.Columns()
		if err != nil {
			rows.Close()
			return nil, s.queryErr(err)
		}
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, s.queryErr(err)
			}
			row := make([]string, len(vals))
			for i, v := range vals {
				row[i] = string(v)
			}
			out = append(out, row)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, s.queryErr(err)
		}
	}
	if len(stmts) > 0 {
		s.last = stmts[len(stmts)-1]
	}
	return out, nil
}

// queryErr marks a statement the server stopped at max_statement_time
// (ER_STATEMENT_TIMEOUT, 1969).
func (s *tpchSession) queryErr(err error) error {
	if errNumber(err) == 1969 {
		return fmt.Errorf("%w after %s: %s", engine.ErrQueryTimeout, s.timeout, s.db.redact(err))
	}
	return errors.New(s.db.redact(err))
}

func (s *tpchSession) RF1(ctx context.Context, set tpch.RefreshSet) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for _, c := range []struct {
			table string
			rows  []byte
		}{{"orders", set.Orders}, {"lineitem", set.LineItems}} {
			name := fmt.Sprintf("tierbench-rf1-%s-%d", c.table, readerSeq.Add(1))
			data := engine.LoadFormat(c.rows)
			mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(data) })
			_, err := tx.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+c.table+
				" CHARACTER SET utf8mb4 FIELDS TERMINATED BY '|' ENCLOSED BY '' ESCAPED BY '' LINES STARTING BY '' TERMINATED BY X'0A'")
			mysql.DeregisterReaderHandler(name)
			if err != nil {
				return fmt.Errorf("RF1 of update set %d into %s: %s", set.N, c.table, s.db.redact(err))
			}
		}
		_, err := tx.ExecContext(ctx, "UPDATE tpch_meta SET rf1_sets = ?", set.N)
		return err
	})
}

// rf2Batch is how many keys one DELETE of RF2 names.
const rf2Batch = 1000

func (s *tpchSession) RF2(ctx context.Context, set tpch.RefreshSet) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for from := 0; from < len(set.Deletes); from += rf2Batch {
			keys := set.Deletes[from:min(from+rf2Batch, len(set.Deletes))]
			list := make([]string, len(keys))
			for i, k := range keys {
				list[i] = strconv.FormatInt(k, 10)
			}
			in := "(" + strings.Join(list, ",") + ")"
			for _, stmt := range []string{"DELETE FROM lineitem WHERE l_orderkey IN " + in, "DELETE FROM orders WHERE o_orderkey IN " + in} {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("RF2 of update set %d: %s", set.N, s.db.redact(err))
				}
			}
		}
		_, err := tx.ExecContext(ctx, "UPDATE tpch_meta SET rf2_sets = ?", set.N)
		return err
	})
}

// inTx runs f in a transaction on the session's connection, committed when
// f succeeds.
func (s *tpchSession) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.conn.BeginTx(ctx, nil)
	if err != nil {
		return errors.New(s.db.redact(err))
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return errors.New(s.db.redact(err))
	}
	return nil
}

func (s *tpchSession) Close() { s.conn.Close() }
