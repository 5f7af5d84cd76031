package postgres

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpcc"
)

var _ engine.Runner = (*DB)(nil)

//go:embed routines.sql
var routinesSQL string

// routinesVersion is what tpcc_routines_version() returns in routines.sql;
// a worker refuses routines of another version.
const routinesVersion = 2

// errRoutinesMissing tells the user how to get the routines back.
var errRoutinesMissing = engine.InputErrorf("the TPC-C routines are missing; reinstall them with `tierbench tpcc build --routines-only`")

// RoutinesSQL returns the script that (re)creates the stored routines.
func RoutinesSQL() string { return routinesSQL }

// Schema returns the built schema's size, C-Load and build time.
func (db *DB) Schema(ctx context.Context) (tpcc.SchemaInfo, error) {
	conn, err := db.connect(ctx)
	if err != nil {
		return tpcc.SchemaInfo{}, err
	}
	defer conn.Close(context.Background())
	meta, err := readMeta(ctx, conn)
	if err != nil {
		return tpcc.SchemaInfo{}, err
	}
	info := tpcc.SchemaInfo{Warehouses: meta.Warehouses, CLoad: meta.CLoad}
	var builtAt *time.Time
	if err := conn.QueryRow(ctx, `SELECT finished_at FROM tpcc_meta`).Scan(&builtAt); err != nil {
		return tpcc.SchemaInfo{}, fmt.Errorf("reading tpcc_meta: %w", err)
	}
	if builtAt != nil {
		info.BuiltAt = *builtAt
	}
	return info, nil
}

// InstallRoutines (re)creates the stored routines of engine.ModeRoutines in
// a built schema.
func (db *DB) InstallRoutines(ctx context.Context) error {
	conn, err := db.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := readMeta(ctx, conn); err != nil {
		return err
	}
	return installRoutines(ctx, conn)
}

// installRoutines runs routines.sql: one simple-protocol script, so it is
// one transaction and either all routines change or none.
func installRoutines(ctx context.Context, conn *pgx.Conn) error {
	if _, err := conn.Exec(ctx, routinesSQL); err != nil {
		return fmt.Errorf("installing the TPC-C routines: %w", err)
	}
	return nil
}

// checkRoutines returns errRoutinesMissing, or an error naming the
// mismatch, unless the routines of this version are installed.
func checkRoutines(ctx context.Context, conn *pgx.Conn) error {
	var v int
	err := conn.QueryRow(ctx, `SELECT tpcc_routines_version()`).Scan(&v)
	switch {
	case sqlState(err) == "42883": // undefined_function
		return errRoutinesMissing
	case err != nil:
		return fmt.Errorf("looking for the TPC-C routines: %w", err)
	case v != routinesVersion:
		return engine.InputErrorf("the TPC-C routines are version %d, this tierbench needs version %d; reinstall them with `tierbench tpcc build --routines-only`",
			v, routinesVersion)
	}
	return nil
}

// Counters reads the database's commit and rollback counts and
// sum(d_next_o_id).
//
// pg_stat_database lags: a backend publishes its counts when it goes idle,
// at most once a second, and one that published less than a second ago
// waits until it is next idle for 10 s (PostgreSQL 15+), or exits. So a
// sample can miss up to about a second of transactions of busy workers, and
// more of ones that just stopped; over a measured interval of minutes, with
// samples taken while workers run, the error is in the first and last
// second only. This query's own transaction is counted too (one per call),
// as is each Stats reading's: the count returned leaves out every such
// transaction committed before this reading (db.own), give or take the
// one or two of the last second that the server may not have published
// yet.
//
// The query runs on one connection kept for the purpose (reopened after a
// failure): the driver reads the counters at the edges of each measured
// interval, and a new connection per read (with SCRAM, several
// milliseconds) would widen the edges by as much.
func (db *DB) Counters(ctx context.Context) (engine.Counters, error) {
	db.countersMu.Lock()
	defer db.countersMu.Unlock()
	if err := db.keepOpen(ctx, &db.countersConn); err != nil {
		return engine.Counters{}, err
	}
	var c engine.Counters
	own := db.own.Load()
	err := db.countersConn.QueryRow(ctx, `SELECT
		(SELECT coalesce(sum(xact_commit + xact_rollback), 0)::bigint FROM pg_stat_database WHERE datname = current_database()),
		(SELECT coalesce(sum(d_next_o_id), 0)::bigint FROM district)`).Scan(&c.Transactions, &c.SumNextOID)
	if err != nil {
		closeKept(&db.countersConn)
	}
	if sqlState(err) == "42P01" { // undefined_table
		return engine.Counters{}, errNoSchema
	}
	if err != nil {
		return engine.Counters{}, fmt.Errorf("reading the transaction counters: %w", err)
	}
	db.own.Add(1)
	c.Transactions -= own
	return c, nil
}

// NewWorker opens one connection for one virtual user. In routines mode it
// first checks that the routines are installed.
// The connection runs without parallel query (see connectSerial).
func (db *DB) NewWorker(ctx context.Context, mode string) (engine.Worker, error) {
	if mode != engine.ModeRoutines && mode != engine.ModeStatements {
		return nil, engine.InputErrorf("mode %q is unknown; use %q or %q", mode, engine.ModeRoutines, engine.ModeStatements)
	}
	conn, err := db.connectSerial(ctx)
	if err != nil {
		return nil, err
	}
	b := base{conn: conn}
	if mode == engine.ModeStatements {
		return &stmtWorker{base: b}, nil
	}
	if err := checkRoutines(ctx, conn); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	stmts, err := prepareRoutines(ctx, conn)
	if err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return &routineWorker{base: b, stmts: stmts}, nil
}
