package mariadb_test

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
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
	tpchtest.CheckServerSeconds(t, db)
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
	tpchtest.CheckNoTPCCOver(t, db, 0.008, func() error {
		_, err := db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 1, Workers: 1, Drop: true})
		return err
	})

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

// A TPC-H session raises its join and sort buffers and its temporary
// tables' size to its share of the memory the server is sized for (M =
// 8/5 × innodb_buffer_pool_size): M/32 alone and M/96 beside two other
// sessions, in steps of 64kB, never below the server's; a query's join
// buffers together may take four join buffers.
func TestTPCHSessionSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, raw := openTest(t, mariatest.NewDatabase(t))
	pool := queryInt(t, raw, "SELECT @@innodb_buffer_pool_size")
	serverJoin := queryInt(t, raw, "SELECT @@global.join_buffer_size")
	serverSort := queryInt(t, raw, "SELECT @@global.sort_buffer_size")
	share := func(sessions, lo, hi, server int64) int64 {
		v := min(max(pool/5*8/(32*sessions), lo), hi)
		return max(v/(64<<10)*(64<<10), server)
	}
	for _, sessions := range []int64{1, 3} {
		got, err := engine.TPCHSettings(ctx, db, engine.TPCHSessionOptions{Sessions: int(sessions)})
		if err != nil {
			t.Fatal(err)
		}
		join, sort := share(sessions, 256<<10, 256<<20, serverJoin), share(sessions, 256<<10, 256<<20, serverSort)
		if sizeOf(t, got["join_buffer_size"]) != join || sizeOf(t, got["join_buffer_space_limit"]) < 4*join ||
			sizeOf(t, got["sort_buffer_size"]) != sort || got["tmp_table_size"] == "" || got["max_heap_table_size"] != got["tmp_table_size"] {
			t.Errorf("%d sessions with a %d-byte buffer pool: %v; want join_buffer_size %d, its space limit 4 times it, sort_buffer_size %d, and the temporary tables' sizes",
				sessions, pool, got, join, sort)
		}
	}
	if share(1, 256<<10, 256<<20, serverJoin) == serverJoin {
		t.Errorf("the rule gives the server's own join_buffer_size, %d bytes; want the test to show a change", serverJoin)
	}
	sess, err := db.NewTPCHSession(ctx, engine.TPCHSessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := sess.Query(ctx, []string{"SELECT @@session.join_buffer_size"}, 0)
	sess.Close()
	if want := share(1, 256<<10, 256<<20, serverJoin); err != nil || len(rows) != 1 || rows[0][0] != strconv.FormatInt(want, 10) {
		t.Errorf("a session's join_buffer_size: %v, %v; want the rule's %d bytes", rows, err, want)
	}
}

// sizeOf reads a size as the settings show it ("6528kB", "16MB", "100B").
func sizeOf(t *testing.T, s string) int64 {
	t.Helper()
	unit := int64(1)
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, unit = strings.TrimSuffix(s, u.suffix), u.size
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("size %q: %v", s, err)
	}
	return n * unit
}
