// Package postgres is tierbench's PostgreSQL engine, on pgx: the TPC-C DDL,
// the parallel COPY loader, the consistency checks, and (later) the
// transaction routines and workers.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/rawconn"
)

var _ engine.DB = (*DB)(nil)

// DB is a PostgreSQL database named by a DSN. It holds the parsed
// configuration; connections are opened per task.
type DB struct {
	cfg *pgx.ConnConfig
	dsn string // as given: what redact looks for in errors

	countersMu sync.Mutex
	// own counts the transactions tierbench's own readings (Counters,
	// Stats) committed in the database, which Counters takes off the
	// database's count: at a fixed rate of 3,000 a minute they were 2%
	// of it.
	own          atomic.Int64
	countersConn *pgx.Conn // kept open for Counters

	statsMu   sync.Mutex
	statsConn *pgx.Conn // kept open for Stats and ServerInfo
}

// Open parses dsn and checks that the server answers.
func Open(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, engine.InputErrorf("DSN %s is not valid: %s; give one such as postgres://user:password@127.0.0.1:5432/dbname",
			engine.Redact(dsn), parseErrText(err, dsn))
	}
	db := &DB{cfg: cfg, dsn: dsn}
	conn, err := db.connect(ctx)
	if err != nil {
		return nil, err
	}
	conn.Close(ctx)
	return db, nil
}

// connect opens one connection, with an error that names the server but
// never the password.
func (db *DB) connect(ctx context.Context) (*pgx.Conn, error) {
	return db.connectConfig(ctx, db.cfg.Copy())
}

// noParallelParam is the setting connectSerial turns parallel query off
// with.
const noParallelParam = "max_parallel_workers_per_gather"

// connectSerial is connect for a connection whose every transaction counts
// in the database's TPM: a virtual user's, or telemetry's and the
// counters' during a run. It runs without parallel query, unless the DSN
// sets max_parallel_workers_per_gather itself. A TPC-C transaction reads at
// most a few hundred rows, so a worker's launch only costs time; and each
// worker commits transactions of its own that pg_stat_database counts (two
// per worker on PostgreSQL 15), beyond those the driver ran. Stock-Level's
// statement gets a parallel plan whenever PostgreSQL uses a generic plan,
// which cannot see how narrow its range of orders is: with
// plan_cache_mode=force_generic_plan, on a database whose districts had
// grown to 50,000 orders, every Stock-Level counted three. Its socket is
// read and written by raw system calls (see rawconn.Conn), which a run's
// connections make many of.
func (db *DB) connectSerial(ctx context.Context) (*pgx.Conn, error) {
	cfg := db.cfg.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if _, set := cfg.RuntimeParams[noParallelParam]; !set {
		cfg.RuntimeParams[noParallelParam] = "0"
	}
	cfg.DialFunc = rawconn.Dialer(cfg.DialFunc)
	return db.connectConfig(ctx, cfg)
}

// connectConfig is connect with cfg, a copy of db.cfg the caller changed.
func (db *DB) connectConfig(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to PostgreSQL at %s:%d (database %s, user %s): %s",
			db.cfg.Host, db.cfg.Port, db.cfg.Database, db.cfg.User, db.connectErrText(err))
	}
	return conn, nil
}

// keepOpen (re)opens *conn, a connection kept between calls, when it is
// missing or closed; the caller holds the mutex that guards it.
func (db *DB) keepOpen(ctx context.Context, conn **pgx.Conn) error {
	if *conn != nil && !(*conn).IsClosed() {
		return nil
	}
	c, err := db.connectSerial(ctx)
	if err != nil {
		return err
	}
	*conn = c
	return nil
}

// closeKept closes a kept connection, if open, and forgets it.
func closeKept(conn **pgx.Conn) {
	if *conn != nil {
		(*conn).Close(context.Background())
		*conn = nil
	}
}

// connectErrText keeps the part of a connection error a user can act on:
// what the server said, or what the network said.
func (db *DB) connectErrText(err error) string {
	var pgErr *pgconn.PgError
	var opErr *net.OpError
	switch {
	case errors.As(err, &pgErr):
		hint := ""
		switch pgErr.Code {
		case "28P01", "28000": // invalid_password, invalid_authorization_specification
			hint = " (check the user and password in the DSN; `tierbench server status --datadir DIR --json` shows a managed server's)"
		case "3D000": // invalid_catalog_name
			hint = " (check the database name in the DSN, or create the database)"
		}
		return "the server said: " + db.redact(pgErr) + hint
	case errors.As(err, &opErr):
		return db.redact(opErr) + " (is the server running? `tierbench server start` starts one)"
	}
	return db.redact(err)
}

// redact returns err's text with the DSN, should any layer below have quoted
// it or a part of it that holds the password, redacted.
func (db *DB) redact(err error) string { return redactErr(err, db.dsn) }

// redactErr is err's text with dsn's password-carrying parts (the DSN, its
// userinfo, its password parameters) in their redacted forms: never a search
// for the password itself, which would garble ordinary words.
func redactErr(err error, dsn string) string {
	return engine.RedactIn(err.Error(), dsn)
}

// parseErrText is why pgx refused dsn, without pgx's own copy of the DSN
// (its redaction is best effort; the message shows engine.Redact's).
func parseErrText(err error, dsn string) string {
	s := err.Error()
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		// "cannot parse `DSN`: why": the last "`: " ends the DSN, however
		// many backquotes the DSN holds (at worst, some of why goes too).
		if rest, ok := strings.CutPrefix(s, "cannot parse `"); ok {
			if i := strings.LastIndex(rest, "`: "); i >= 0 {
				s = rest[i+3:]
			}
		}
	}
	return engine.RedactIn(s, dsn)
}

// Close closes the connection Counters keeps; every other connection
// belongs to the operation that opened it.
func (db *DB) Close() {
	db.countersMu.Lock()
	defer db.countersMu.Unlock()
	closeKept(&db.countersConn)
	db.statsMu.Lock()
	defer db.statsMu.Unlock()
	closeKept(&db.statsConn)
}

// sqlState returns the SQLSTATE of err, or "".
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}
