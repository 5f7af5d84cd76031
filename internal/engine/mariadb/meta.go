package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// metaTable is engine.MetaTable, the build's record (the same in every engine).
const metaTable = engine.MetaTable

const (
	statusBuilding = engine.StatusBuilding
	statusComplete = engine.StatusComplete
)

// Meta is the content of tpcc_meta.
type Meta = engine.Meta

// createMeta is tpcc_meta's DDL. The times are UTC, written by tierbench
// (DATETIME has no time zone, and a DEFAULT would be the server's local
// time).
const createMeta = `CREATE TABLE tpcc_meta (
  warehouses int NOT NULL, c_load_last int NOT NULL, c_load_cid int NOT NULL, c_load_item int NOT NULL,
  status varchar(16) NOT NULL, started_at datetime(6) NOT NULL, finished_at datetime(6) NULL,
  tierbench_version varchar(64)) ENGINE=InnoDB`

// timeLayout is how the server prints a DATETIME(6).
const timeLayout = "2006-01-02 15:04:05.999999"

// schemaTables lists the tables a TPC-C schema of tierbench consists of.
func schemaTables() []string { return append([]string{metaTable}, tpcc.Tables...) }

// inList returns names quoted as an SQL list: ('a','b'). The names are
// tierbench's own, never the user's.
func inList(names []string) string {
	return "('" + strings.Join(names, "','") + "')"
}

// existingTables returns which of the schema's tables (or views of their
// names) exist in the connection's database.
func existingTables(ctx context.Context, conn *sql.Conn) ([]string, error) {
	return existingOf(ctx, conn, schemaTables())
}

// existingOf returns which of tables (or views of their names) exist in
// the connection's database.
func existingOf(ctx context.Context, conn *sql.Conn, tables []string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = DATABASE() AND table_name IN `+inList(tables)+` ORDER BY table_name`)
	if err != nil {
		return nil, fmt.Errorf("looking for existing tables: %w", err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("looking for existing tables: %w", err)
		}
		found = append(found, name)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("looking for existing tables: %w", err)
	}
	return found, nil
}

// dropSchema drops every table of the schema that exists.
func dropSchema(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "DROP TABLE IF EXISTS "+strings.Join(schemaTables(), ", ")); err != nil {
		return fmt.Errorf("dropping the TPC-C schema: %w", err)
	}
	return nil
}

// errNoSchema says there is nothing to check or run against.
var errNoSchema = engine.NoSchemaErrorf("no TPC-C schema found in this database; build one with `tierbench tpcc build --dsn DSN --warehouses N`")

// readMeta returns the schema's metadata, or an error that says what is
// missing or unfinished.
func readMeta(ctx context.Context, conn *sql.Conn) (*Meta, error) {
	found, err := existingTables(ctx, conn)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, errNoSchema
	}
	var m Meta
	err = conn.QueryRowContext(ctx, `SELECT warehouses, c_load_last, c_load_cid, c_load_item, status FROM tpcc_meta`).
		Scan(&m.Warehouses, &m.CLoad.Last, &m.CLoad.CID, &m.CLoad.Item, &m.Status)
	switch {
	case errors.Is(err, sql.ErrNoRows) || errNumber(err) == 1146: // ER_NO_SUCH_TABLE
		return nil, engine.NoSchemaErrorf("found tables %s but no tierbench build record (tpcc_meta); rebuild with `tierbench tpcc build --drop`",
			strings.Join(found, ", "))
	case err != nil:
		return nil, fmt.Errorf("reading tpcc_meta: %w", err)
	case m.Status != statusComplete:
		return nil, engine.NoSchemaErrorf("the TPC-C schema build did not complete (status %q); rebuild with `tierbench tpcc build --drop`", m.Status)
	}
	return &m, nil
}

// Schema returns the built schema's size, C-Load and completion time, or an
// error wrapping engine.ErrNoSchema when there is none or its build did not
// complete.
func (db *DB) Schema(ctx context.Context) (tpcc.SchemaInfo, error) {
	conn, err := db.connect(ctx)
	if err != nil {
		return tpcc.SchemaInfo{}, err
	}
	defer conn.Close()
	meta, err := readMeta(ctx, conn)
	if err != nil {
		return tpcc.SchemaInfo{}, err
	}
	info := tpcc.SchemaInfo{Warehouses: meta.Warehouses, CLoad: meta.CLoad}
	var builtAt sql.NullString
	if err := conn.QueryRowContext(ctx, `SELECT finished_at FROM tpcc_meta`).Scan(&builtAt); err != nil {
		return tpcc.SchemaInfo{}, fmt.Errorf("reading tpcc_meta: %w", err)
	}
	if builtAt.Valid {
		t, err := time.ParseInLocation(timeLayout, builtAt.String, time.UTC)
		if err != nil {
			return tpcc.SchemaInfo{}, fmt.Errorf("reading tpcc_meta: finished_at %q is not a time: %w", builtAt.String, err)
		}
		info.BuiltAt = t
	}
	return info, nil
}
