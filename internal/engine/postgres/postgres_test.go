package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/tpcc"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func openTest(t *testing.T, dsn string) (*DB, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return db, conn
}

func exec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// failed returns the IDs of the conditions that did not hold, with their
// violation counts.
func failed(res *tpcc.CheckResult) map[string]int64 {
	out := map[string]int64{}
	for _, c := range res.Conditions {
		if !c.OK {
			out[c.ID] = c.Violations
		}
	}
	return out
}

func check(t *testing.T, db *DB) *tpcc.CheckResult {
	t.Helper()
	res, err := db.CheckTPCC(context.Background(), engine.CheckOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestBuildCheckAndCorruption(t *testing.T) {
	ctx := context.Background()
	db, conn := openTest(t, pgtest.NewDatabase(t))
	res, err := db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 2, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	exact := map[string]int64{
		"item": 100000, "warehouse": 2, "district": 20, "stock": 200000, "customer": 60000,
		"history": 60000, "orders": 60000, "new_order": 18000,
	}
	for table, want := range exact {
		if res.Rows[table] != want {
			t.Errorf("%s: built %d rows, want %d", table, res.Rows[table], want)
		}
	}
	if ol := res.Rows["order_line"]; ol < 594000 || ol > 606000 {
		t.Errorf("order_line: %d rows, want 600,000 ±1%%", ol)
	}
	if res.Bytes <= 0 || res.CopyBytes <= 0 {
		t.Errorf("sizes not measured: %+v", res)
	}
	// The C-Load values are stored for the driver's C-Run (2.1.6.1).
	var stored int
	if err := conn.QueryRow(ctx, "SELECT c_load_last FROM tpcc_meta WHERE status = 'complete'").Scan(&stored); err != nil || stored != res.CLoad.Last {
		t.Fatalf("tpcc_meta c_load_last = %d (%v), build said %d", stored, err, res.CLoad.Last)
	}
	// The two secondary indexes exist.
	var idx int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE indexname IN ('customer_last_idx', 'orders_customer_idx')`).Scan(&idx); err != nil || idx != 2 {
		t.Fatalf("secondary indexes: %d (%v)", idx, err)
	}

	// Vacuumed (not by autovacuum) and analyzed after the load, so the first
	// measured step does not pay for it. (Pages are not checked for being
	// all-visible: this test server commits asynchronously, and VACUUM
	// cannot mark a page whose rows' commits are not flushed yet.)
	rows, err := conn.Query(ctx, `SELECT relname, last_vacuum IS NOT NULL, last_analyze IS NOT NULL
		FROM pg_stat_user_tables WHERE relname = ANY($1)`, tpcc.Tables)
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	for rows.Next() {
		var name string
		var vacuumed, analyzed bool
		if err := rows.Scan(&name, &vacuumed, &analyzed); err != nil {
			t.Fatal(err)
		}
		seen++
		if !vacuumed || !analyzed {
			t.Errorf("%s after build: vacuumed %v, analyzed %v; want both", name, vacuumed, analyzed)
		}
	}
	if rows.Err() != nil || seen != len(tpcc.Tables) {
		t.Fatalf("vacuum state of %d tables of %d (%v)", seen, len(tpcc.Tables), rows.Err())
	}

	got := check(t, db)
	if !got.OK || !got.AsLoaded || len(got.Conditions) != 12 || len(failed(got)) != 0 {
		t.Fatalf("fresh build does not pass: %+v", got)
	}
	for _, c := range got.Cardinalities {
		if !c.OK {
			t.Errorf("cardinality %s: %d, want %d", c.Table, c.Found, c.Expected)
		}
	}

	// Raising one W_YTD breaks W_YTD = sum(D_YTD) and W_YTD = sum(H_AMOUNT).
	exec(t, conn, "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 2")
	f := failed(check(t, db))
	if len(f) != 2 || f["3.3.2.1"] != 1 || f["3.3.2.8"] != 1 {
		t.Fatalf("after raising w_ytd: failed %v, want 3.3.2.1 and 3.3.2.8 once each", f)
	}
	exec(t, conn, "UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 2")

	// Losing an order line breaks the per-district line count (4) and the
	// order's line count (6).
	exec(t, conn, "DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id = 5 AND ol_number = 1")
	f = failed(check(t, db))
	if len(f) != 2 || f["3.3.2.4"] != 1 || f["3.3.2.6"] != 1 {
		t.Fatalf("after deleting an order line: failed %v, want 3.3.2.4 and 3.3.2.6", f)
	}

	// A payment-like change to one customer's balance breaks 10 and 12;
	// raising another's year-to-date payment breaks 12 alone (one query
	// counts both, and must not mix them up).
	exec(t, conn, "UPDATE customer SET c_balance = c_balance - 5 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 7")
	exec(t, conn, "UPDATE customer SET c_ytd_payment = c_ytd_payment + 3 WHERE c_w_id = 2 AND c_d_id = 4 AND c_id = 9")
	f = failed(check(t, db))
	if f["3.3.2.10"] != 1 || f["3.3.2.12"] != 2 {
		t.Fatalf("after changing a balance and a year-to-date payment: failed %v, want 3.3.2.10 once and 3.3.2.12 twice", f)
	}

	// Delivering an order by hand (NEW-ORDER row gone, carrier left null)
	// breaks 5; the database is no longer as loaded, so 11 is not
	// applicable. A delivered line of an undelivered order and an
	// undelivered line of a delivered one break 7 twice (and 6, which
	// counts the same lines in one query with it, not at all).
	exec(t, conn, "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 1 AND no_o_id = 2101")
	exec(t, conn, "UPDATE order_line SET ol_delivery_d = now() WHERE ol_w_id = 2 AND ol_d_id = 1 AND ol_o_id = 2500 AND ol_number = 1")
	exec(t, conn, "UPDATE order_line SET ol_delivery_d = NULL WHERE ol_w_id = 2 AND ol_d_id = 2 AND ol_o_id = 5 AND ol_number = 2")
	got = check(t, db)
	if f := failed(got); got.AsLoaded || f["3.3.2.5"] != 1 || f["3.3.2.7"] != 2 || f["3.3.2.6"] != 1 {
		t.Fatalf("after removing a new_order row and changing two lines' delivery: as_loaded %v, failed %v; want 5 once, 7 twice, 6 still once (the lost line)",
			got.AsLoaded, f)
	}
	for _, c := range got.Conditions {
		if c.ID == "3.3.2.11" && (c.Scope != "not-applicable" || !c.OK) {
			t.Fatalf("3.3.2.11 after a change: %+v", c)
		}
	}

	// A second build without --drop is refused and leaves the schema alone.
	_, err = db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 1, Workers: 2})
	if !errors.Is(err, engine.ErrBadInput) {
		t.Fatalf("second build without drop: %v, want a refusal", err)
	}
	var w int
	if err := conn.QueryRow(ctx, "SELECT warehouses FROM tpcc_meta").Scan(&w); err != nil || w != 2 {
		t.Fatalf("refused build changed the schema: %d warehouses (%v)", w, err)
	}

	// --drop rebuilds from scratch.
	res, err = db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 1, Workers: 3, Drop: true})
	if err != nil || res.Rows["warehouse"] != 1 {
		t.Fatalf("rebuild with drop: %+v %v", res, err)
	}
	if got := check(t, db); !got.OK || got.Warehouses != 1 {
		t.Fatalf("rebuilt schema does not pass: %v", failed(got))
	}

	// A schema whose build record says it did not finish is not valid.
	exec(t, conn, "UPDATE tpcc_meta SET status = 'building'")
	if _, err := db.CheckTPCC(ctx, engine.CheckOptions{}); err == nil {
		t.Fatal("check accepted an unfinished build")
	}
}

func TestInterruptedBuildLeavesNothingValid(t *testing.T) {
	db, conn := openTest(t, pgtest.NewDatabase(t))
	ctx, cancel := context.WithCancel(context.Background())
	var once bool
	_, err := db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 3, Workers: 2, Progress: func(p tpcc.BuildProgress) {
		if !once && p.Phase == "load" {
			once = true
			cancel() // interrupt mid-load, as Ctrl-C does
		}
	}})
	cancel()
	if err == nil {
		t.Fatal("interrupted build reported success")
	}
	_, err = db.CheckTPCC(context.Background(), engine.CheckOptions{})
	if !errors.Is(err, engine.ErrBadInput) {
		t.Fatalf("check after an interrupted build: %v, want 'no TPC-C schema'", err)
	}
	found, err := existingTables(context.Background(), conn)
	if err != nil || len(found) != 0 {
		t.Fatalf("interrupted build left tables %v (%v)", found, err)
	}
}

func TestCheckWithoutSchema(t *testing.T) {
	db, _ := openTest(t, pgtest.NewDatabase(t))
	_, err := db.CheckTPCC(context.Background(), engine.CheckOptions{})
	if !errors.Is(err, engine.ErrBadInput) {
		t.Fatalf("check of an empty database: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Open(ctx, "postgres://u:s3cret@127.0.0.1:notaport/db")
	if !errors.Is(err, engine.ErrBadInput) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("malformed DSN: %v, want bad input without the password", err)
	}
	_, err = Open(ctx, "postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=2")
	if err == nil || errors.Is(err, engine.ErrBadInput) {
		t.Fatalf("unreachable server: %v, want a runtime error", err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("password in error: %s", err)
	}
}
