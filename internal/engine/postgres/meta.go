package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

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

const createMeta = `CREATE TABLE tpcc_meta (
  warehouses int NOT NULL, c_load_last int NOT NULL, c_load_cid int NOT NULL, c_load_item int NOT NULL,
  status text NOT NULL, started_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz,
  tierbench_version text)`

// schemaTables lists the tables a TPC-C schema of tierbench consists of.
func schemaTables() []string { return append([]string{metaTable}, tpcc.Tables...) }

// existingTables returns which of the schema's tables exist in the current schema.
func existingTables(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	return existingOf(ctx, conn, schemaTables())
}

// dropSchema drops every table of the schema that exists.
func dropSchema(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+strings.Join(schemaTables(), ", ")+" CASCADE")
	if err != nil {
		return fmt.Errorf("dropping the TPC-C schema: %w", err)
	}
	return nil
}

// errNoSchema says there is nothing to check or run against.
var errNoSchema = engine.NoSchemaErrorf("no TPC-C schema found in this database; build one with `tierbench tpcc build --dsn DSN --warehouses N`")

// readMeta returns the schema's metadata, or an error that says what is
// missing or unfinished.
func readMeta(ctx context.Context, conn *pgx.Conn) (*Meta, error) {
	found, err := existingTables(ctx, conn)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, errNoSchema
	}
	var m Meta
	err = conn.QueryRow(ctx, `SELECT warehouses, c_load_last, c_load_cid, c_load_item, status FROM tpcc_meta`).
		Scan(&m.Warehouses, &m.CLoad.Last, &m.CLoad.CID, &m.CLoad.Item, &m.Status)
	switch {
	case errors.Is(err, pgx.ErrNoRows) || sqlState(err) == "42P01":
		return nil, engine.NoSchemaErrorf("found tables %s but no tierbench build record (tpcc_meta); rebuild with `tierbench tpcc build --drop`",
			strings.Join(found, ", "))
	case err != nil:
		return nil, fmt.Errorf("reading tpcc_meta: %w", err)
	case m.Status != statusComplete:
		return nil, engine.NoSchemaErrorf("the TPC-C schema build did not complete (status %q); rebuild with `tierbench tpcc build --drop`", m.Status)
	}
	return &m, nil
}
