package mariadb

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/engine"
)

var _ engine.Runner = (*DB)(nil)

//go:embed routines.sql
var routinesSQL string

// routinesVersion is the version each procedure's COMMENT in routines.sql
// carries ('tierbench routines N'); a worker refuses routines of another
// version.
const routinesVersion = 2

// routineNames are the stored procedures of engine.ModeRoutines.
var routineNames = []string{"tpcc_new_order", "tpcc_payment", "tpcc_order_status", "tpcc_delivery", "tpcc_stock_level"}

// errRoutinesMissing tells the user how to get the routines back.
var errRoutinesMissing = engine.InputErrorf("the TPC-C routines are missing; reinstall them with `tierbench tpcc build --routines-only`")

// RoutinesSQL returns the script that (re)creates the stored procedures, as
// the mariadb and mysql clients read it (with DELIMITER lines).
func RoutinesSQL() string { return routinesSQL }

// RoutineStatements returns routines.sql as the statements to send one by
// one: the server takes each CREATE PROCEDURE as one statement, with no
// DELIMITER, which only the command-line clients understand.
func RoutineStatements() []string { return splitDelimited(routinesSQL) }

// splitDelimited splits a script of the mysql client's kind: statements end
// with the current delimiter at the end of a line, "DELIMITER x" lines
// change it, and comment lines between statements are dropped.
func splitDelimited(script string) []string {
	var out []string
	delim := ";"
	var cur strings.Builder
	for line := range strings.SplitSeq(script, "\n") {
		line = strings.TrimRight(line, " \t\r")
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 {
			if trimmed == "" || strings.HasPrefix(trimmed, "--") {
				continue
			}
			if rest, ok := strings.CutPrefix(trimmed, "DELIMITER "); ok {
				delim = strings.TrimSpace(rest)
				continue
			}
		}
		if body, ok := strings.CutSuffix(line, delim); ok {
			cur.WriteString(body)
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// InstallRoutines (re)creates the stored procedures of engine.ModeRoutines
// in a database that holds the TPC-C tables. It does not insist that the
// build finished, so that BuildTPCC can install them before it marks the
// build complete.
func (db *DB) InstallRoutines(ctx context.Context) error {
	conn, err := db.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	found, err := existingTables(ctx, conn)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return errNoSchema
	}
	return installRoutines(ctx, conn)
}

// installRoutines drops and recreates each procedure. MySQL and MariaDB
// commit DDL at once, so a failure halfway leaves some procedures new and
// some missing; a worker then refuses to start until they are reinstalled.
func installRoutines(ctx context.Context, conn *sql.Conn) error {
	for _, stmt := range RoutineStatements() {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			first, _, _ := strings.Cut(stmt, "(")
			return fmt.Errorf("installing the TPC-C routines (%s): %w", strings.TrimSpace(first), err)
		}
	}
	return nil
}

// routineComment is the COMMENT of a procedure of this version.
var routineComment = "tierbench routines " + strconv.Itoa(routinesVersion)

// checkRoutinesQuery lists the procedures of routineNames in the
// connection's database, with their comments.
var checkRoutinesQuery = `SELECT ROUTINE_NAME, ROUTINE_COMMENT FROM information_schema.ROUTINES
	WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_NAME IN ('` +
	strings.Join(routineNames, "', '") + `')`

// checkRoutines returns errRoutinesMissing, or an error naming the
// mismatch, unless all the procedures of this version are installed.
// found maps each procedure found to its comment.
func checkRoutines(found map[string]string) error {
	var missing, other []string
	for _, name := range routineNames {
		comment, ok := found[name]
		switch {
		case !ok:
			missing = append(missing, name)
		case comment != routineComment:
			other = append(other, fmt.Sprintf("%s (%q)", name, comment))
		}
	}
	switch {
	case len(missing) == len(routineNames):
		return errRoutinesMissing
	case len(missing) > 0:
		return engine.InputErrorf("the TPC-C routines %s are missing; reinstall them with `tierbench tpcc build --routines-only`",
			strings.Join(missing, ", "))
	case len(other) > 0:
		slices.Sort(other)
		return engine.InputErrorf("the TPC-C routines %s are not of version %d, which this tierbench needs; reinstall them with `tierbench tpcc build --routines-only`",
			strings.Join(other, ", "), routinesVersion)
	}
	return nil
}

// Counters reads the server's Com_commit + Com_rollback and the database's
// sum(d_next_o_id).
//
// Com_commit and Com_rollback count COMMIT and ROLLBACK statements,
// whether a client sends them or a stored procedure runs them, and nothing
// else: a statement run in autocommit mode, a CALL, an implicit commit
// (DDL) add nothing. Each of tierbench's transactions, in either mode,
// ends with exactly one such statement, so TPM counts each once
// (routines.sql and worker.go). SHOW GLOBAL STATUS sums the live counters
// of every connection (and those of connections that ended), so it does
// not lag: a commit counts as soon as it returns. The counters are the
// server's, not the database's: other databases' transactions count too,
// as in HammerDB, which reads the same two. Reading them counts nothing.
//
// The queries run on one connection kept for the purpose (reopened after a
// failure), as the driver reads the counters at the edges of each measured
// interval.
func (db *DB) Counters(ctx context.Context) (engine.Counters, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.countsConn == nil {
		conn, err := db.connect(ctx)
		if err != nil {
			return engine.Counters{}, err
		}
		db.countsConn = conn
	}
	c, err := readCounters(ctx, db.countsConn)
	if err != nil {
		db.countsConn.Close()
		db.countsConn = nil
		if errNumber(err) == 1146 { // ER_NO_SUCH_TABLE
			return engine.Counters{}, errNoSchema
		}
		return engine.Counters{}, fmt.Errorf("reading the transaction counters: %s", db.redact(err))
	}
	return c, nil
}

// comCounters is HammerDB's query for TPM on MySQL and MariaDB.
const comCounters = `SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')`

func readCounters(ctx context.Context, conn *sql.Conn) (engine.Counters, error) {
	var c engine.Counters
	rows, err := conn.QueryContext(ctx, comCounters)
	if err != nil {
		return c, err
	}
	n := 0
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			rows.Close()
			return c, err
		}
		c.Transactions += v
		n++
	}
	if err := rows.Close(); err != nil {
		return c, err
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	if n != 2 {
		return c, fmt.Errorf("SHOW GLOBAL STATUS returned %d of Com_commit and Com_rollback", n)
	}
	err = conn.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(d_next_o_id), 0) AS SIGNED) FROM district`).Scan(&c.SumNextOID)
	return c, err
}

// NewWorker opens one connection for one virtual user. In routines mode it
// first checks that the procedures of this version are installed.
func (db *DB) NewWorker(ctx context.Context, mode string) (engine.Worker, error) {
	if mode != engine.ModeRoutines && mode != engine.ModeStatements {
		return nil, engine.InputErrorf("mode %q is unknown; use %q or %q", mode, engine.ModeRoutines, engine.ModeStatements)
	}
	c, err := db.openWorkerConn(ctx)
	if err != nil {
		return nil, err
	}
	var w engine.Worker
	if mode == engine.ModeRoutines {
		w, err = newRoutineWorker(ctx, c)
	} else {
		w, err = newStmtWorker(ctx, c)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return w, nil
}
