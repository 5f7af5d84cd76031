package mariadb_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/server/mariatest"
	"github.com/tierbench/tierbench/internal/tpch"
	"github.com/tierbench/tierbench/internal/tpch/tpchtest"
)

// A TPC-H build at SF 0.01 holds exactly the generator's rows; has its
// primary keys and foreign-key indexes; and is refused a second time
// without --drop and replaced with it. Tables of TPC-H's names that no
// TPC-H build made are never dropped.
func TestBuildTPCH(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, raw := openTest(t, mariatest.NewDatabase(t))
	sc, _ := tpch.NewScale(0.01)
	res, err := db.BuildTPCH(ctx, engine.TPCHBuildOptions{Scale: sc, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows[tpch.LineItem] != 60175 || res.Rows[tpch.Customer] != 1500 || res.Bytes <= res.CopyBytes/2 {
		t.Errorf("build %+v; want 60,175 line items, 1,500 customers, and its bytes on disk", res)
	}
	tpchtest.CheckTables(t, sc, func(table string) ([]string, error) { return dumpTable(raw, table) })
	tpchtest.CheckAnswers(t, db)
	tpchtest.CheckRunner(t, db, func(table string) int64 { return queryInt(t, raw, "SELECT count(*) FROM "+table) })
	keys := queryInt(t, raw, `SELECT count(*) FROM information_schema.statistics
		WHERE table_schema = DATABASE() AND index_name = 'PRIMARY' AND seq_in_index = 1`)
	indexes := queryInt(t, raw, `SELECT count(DISTINCT index_name) FROM information_schema.statistics
		WHERE table_schema = DATABASE() AND index_name LIKE '%fkidx'`)
	if keys != 8 || indexes != 6 {
		t.Errorf("%d primary keys and %d foreign-key indexes; want 8 and 6", keys, indexes)
	}

	_, err = db.BuildTPCH(ctx, engine.TPCHBuildOptions{Scale: sc, Workers: 2})
	if !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), "add --drop") {
		t.Errorf("a second build without drop: %v; want bad input naming --drop", err)
	}
	small, _ := tpch.NewScale(0.008)
	if res, err := db.BuildTPCH(ctx, engine.TPCHBuildOptions{Scale: small, Workers: 2, Drop: true}); err != nil || res.Rows[tpch.Orders] != 12000 {
		t.Errorf("a build with drop at SF 0.008: %+v, %v; want 12,000 orders", res, err)
	}

	// A TPC-C schema's ORDERS is not TPC-H's: refused even with drop, and kept.
	odb, other := openTest(t, mariatest.NewDatabase(t))
	exec(t, other, "CREATE TABLE orders (o_id int)")
	exec(t, other, "INSERT INTO orders VALUES (1)")
	_, err = odb.BuildTPCH(ctx, engine.TPCHBuildOptions{Scale: small, Workers: 2, Drop: true})
	if n := queryInt(t, other, "SELECT count(*) FROM orders"); n != 1 || !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), "no TPC-H build made") {
		t.Errorf("a build with drop over another schema's orders: %v; orders has %d rows; want bad input and the row kept", err, n)
	}
}

// dumpTable reads a table's rows as text, fields joined by '|'.
func dumpTable(conn *sql.DB, table string) ([]string, error) {
	rows, err := conn.Query("SELECT * FROM " + table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	fields := make([]string, len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			fields[i] = string(v)
		}
		out = append(out, strings.Join(fields, "|"))
	}
	return out, rows.Err()
}
