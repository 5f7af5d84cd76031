package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpch"
)

var _ engine.TPCHRunner = (*DB)(nil)

// TPCHBuild reads tpch_meta.
func (db *DB) TPCHBuild(ctx context.Context) (engine.TPCHBuildInfo, error) {
	conn, err := db.connect(ctx)
	if err != nil {
		return engine.TPCHBuildInfo{}, err
	}
	defer conn.Close(context.Background())
	return readTPCHMeta(ctx, conn)
}

func readTPCHMeta(ctx context.Context, conn *pgx.Conn) (engine.TPCHBuildInfo, error) {
	var info engine.TPCHBuildInfo
	found, err := existingOf(ctx, conn, []string{engine.TPCHMetaTable})
	if err != nil {
		return info, err
	}
	if len(found) == 0 {
		return info, engine.NoTPCHBuild("")
	}
	var status string
	if err := conn.QueryRow(ctx, `SELECT scale_factor, status, rf1_sets, rf2_sets FROM tpch_meta`).Scan(
		&info.Scale, &status, &info.RF1Sets, &info.RF2Sets); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return info, engine.NoTPCHBuild("")
		}
		return info, fmt.Errorf("reading tpch_meta: %w", err)
	}
	if status != statusComplete {
		return info, engine.NoTPCHBuild(status)
	}
	return info, nil
}

// TPCHDialect is Postgres's.
func (db *DB) TPCHDialect() tpch.Dialect { return tpch.Postgres }

// NewTPCHSession opens a connection for a query or refresh stream, with
// its analytic settings (setTPCHSettings). Its queries may use parallel
// workers, as PostgreSQL plans them.
func (db *DB) NewTPCHSession(ctx context.Context, opts engine.TPCHSessionOptions) (engine.TPCHSession, error) {
	conn, err := db.connect(ctx)
	if err != nil {
		return nil, err
	}
	settings, err := setTPCHSettings(ctx, conn, opts.Sessions)
	if err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("setting the TPC-H session's analytic settings: %s", db.redact(err))
	}
	return &tpchSession{db: db, conn: conn, settings: settings}, nil
}

type tpchSession struct {
	db       *DB
	conn     *pgx.Conn
	timeout  time.Duration // statement_timeout now set
	settings map[string]string
	// last is the last statement the last Query ran, when it succeeded
	// (ServerSeconds looks it up).
	last string
}

func (s *tpchSession) Settings() map[string]string { return maps.Clone(s.settings) }

func (s *tpchSession) Query(ctx context.Context, stmts []string, timeout time.Duration) ([][]string, error) {
	s.last = ""
	if timeout != s.timeout {
		if _, err := s.conn.Exec(ctx, "SET statement_timeout = "+strconv.FormatInt(timeout.Milliseconds(), 10)); err != nil {
			return nil, err
		}
		s.timeout = timeout
	}
	var out [][]string
	for _, stmt := range stmts {
		began := time.Now()
		rows, err := s.statement(ctx, stmt)
		if s.timedOut(err) && time.Since(began) < s.timeout {
			// Cancelled for statement_timeout before the timeout had run,
			// as PostgreSQL 15 once did here 2 ms into a 10 ms timeout on a
			// loaded host: not this statement's timeout, so it is run
			// again, once.
			rows, err = s.statement(ctx, stmt)
		}
		if err != nil {
			return nil, s.queryErr(err)
		}
		out = append(out, rows...)
	}
	if len(stmts) > 0 {
		s.last = stmts[len(stmts)-1]
	}
	return out, nil
}

// statement runs one statement and returns its rows as text.
func (s *tpchSession) statement(ctx context.Context, stmt string) ([][]string, error) {
	rows, err := s.conn.Query(ctx, stmt, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		raw := rows.RawValues()
		row := make([]string, len(raw))
		for i, v := range raw {
			row[i] = string(v)
		}
		out = append(out, row)
	}
	rows.Close()
	return out, rows.Err()
}

// timedOut says whether the server cancelled a statement for the
// session's timeout (SQLSTATE 57014, query_canceled, with
// statement_timeout's message).
func (s *tpchSession) timedOut(err error) bool { return sqlState(err) == "57014" && s.timeout > 0 }

// queryErr marks a statement the server cancelled for its timeout.
func (s *tpchSession) queryErr(err error) error {
	if s.timedOut(err) {
		return fmt.Errorf("%w after %s: %s", engine.ErrQueryTimeout, s.timeout, redactErr(err, s.db.dsn))
	}
	return errors.New(redactErr(err, s.db.dsn))
}

func (s *tpchSession) RF1(ctx context.Context, set tpch.RefreshSet) error {
	return pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error {
		for _, c := range []struct {
			table string
			rows  []byte
		}{{"orders", set.Orders}, {"lineitem", set.LineItems}} {
			if _, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(engine.LoadFormat(c.rows)), "COPY "+c.table+" FROM STDIN (DELIMITER '|')"); err != nil {
				return fmt.Errorf("RF1 of update set %d into %s: %w", set.N, c.table, err)
			}
		}
		_, err := tx.Exec(ctx, "UPDATE tpch_meta SET rf1_sets = $1", set.N)
		return err
	})
}

func (s *tpchSession) RF2(ctx context.Context, set tpch.RefreshSet) error {
	return pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error {
		for _, stmt := range []string{"DELETE FROM lineitem WHERE l_orderkey = ANY($1)", "DELETE FROM orders WHERE o_orderkey = ANY($1)"} {
			if _, err := tx.Exec(ctx, stmt, set.Deletes); err != nil {
				return fmt.Errorf("RF2 of update set %d: %s: %w", set.N, stmt, err)
			}
		}
		_, err := tx.Exec(ctx, "UPDATE tpch_meta SET rf2_sets = $1", set.N)
		return err
	})
}

func (s *tpchSession) Close() { s.conn.Close(context.Background()) }
