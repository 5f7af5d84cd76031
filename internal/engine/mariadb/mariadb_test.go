package mariadb_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/mariadb"
	"github.com/tierbench/tierbench/internal/server/mariatest"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// The tests are package mariadb_test, not mariadb: mariatest imports
// mariadb (for ParseDSN), which an internal test package could not import
// back. export_test.go lends them what they need of the inside.

func TestMain(m *testing.M) { mariatest.Main(m) }

// openTest opens dsn as tierbench does, and a plain connection to it for
// the test's own statements.
func openTest(t *testing.T, dsn string) (*mariadb.DB, *sql.DB) {
	t.Helper()
	db, err := mariadb.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	cfg, err := mariadb.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw := sql.OpenDB(c)
	raw.SetMaxOpenConns(1) // one session: SET and what follows it share it
	t.Cleanup(func() { raw.Close() })
	return db, raw
}

func exec(t *testing.T, conn *sql.DB, stmt string) {
	t.Helper()
	if _, err := conn.Exec(stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func queryInt(t *testing.T, conn *sql.DB, q string) int64 {
	t.Helper()
	var n int64
	if err := conn.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
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

func check(t *testing.T, db *mariadb.DB) *tpcc.CheckResult {
	t.Helper()
	res, err := db.CheckTPCC(context.Background(), engine.CheckOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// existing lists the schema's tables in the test's database.
func existing(t *testing.T, conn *sql.DB) []string {
	t.Helper()
	rows, err := conn.Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()
		AND table_name IN ('tpcc_meta','item','warehouse','district','stock','customer','history','orders','new_order','order_line')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestBuildCheckAndCorruption(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, conn := openTest(t, mariatest.NewDatabase(t))
	var progress []tpcc.BuildProgress
	res, err := db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 2, Workers: 2, Version: "test",
		Progress: func(p tpcc.BuildProgress) { progress = append(progress, p) }})
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
	if res.Bytes <= 0 || res.CopyBytes <= 0 || res.LoadSec <= 0 || res.IndexSec <= 0 || res.Seconds < res.LoadSec || res.Workers != 2 {
		t.Errorf("sizes or times not measured: %+v", res)
	}
	if len(progress) < 2 || progress[0].Phase != "load" || progress[len(progress)-1].Phase != "index" ||
		progress[len(progress)-1].Fraction != 1 || progress[len(progress)-1].WarehousesDone != 2 {
		t.Errorf("progress reports: %+v", progress)
	}
	// The C-Load values are stored for the driver's C-Run (2.1.6.1).
	if stored := queryInt(t, conn, "SELECT c_load_last FROM tpcc_meta WHERE status = 'complete' AND tierbench_version = 'test'"); stored != int64(res.CLoad.Last) {
		t.Fatalf("tpcc_meta c_load_last = %d, build said %d", stored, res.CLoad.Last)
	}
	info, err := db.Schema(ctx)
	if err != nil || info.Warehouses != 2 || info.CLoad != res.CLoad || time.Since(info.BuiltAt) > time.Minute || time.Since(info.BuiltAt) < 0 {
		t.Fatalf("Schema: %+v %v (built at %v, now %v)", info, err, info.BuiltAt, time.Now().UTC())
	}
	// The two secondary indexes exist, and statistics were gathered.
	if idx := queryInt(t, conn, `SELECT count(DISTINCT index_name) FROM information_schema.statistics
		WHERE table_schema = DATABASE() AND index_name IN ('customer_last_idx', 'orders_customer_idx')`); idx != 2 {
		t.Fatalf("secondary indexes: %d, want 2", idx)
	}
	// Money and times arrive exactly: every payment is 10.00, every
	// balance -10.00, every entry date the load's.
	if n := queryInt(t, conn, `SELECT count(*) FROM history WHERE h_amount <> 10.00`); n != 0 {
		t.Errorf("%d history rows with h_amount other than 10.00", n)
	}
	if n := queryInt(t, conn, `SELECT count(DISTINCT o_entry_d) FROM orders`); n != 1 {
		t.Errorf("%d distinct o_entry_d, want the one load time", n)
	}
	if n := queryInt(t, conn, `SELECT count(*) FROM orders WHERE o_carrier_id IS NULL`); n != 18000 {
		t.Errorf("%d orders without a carrier, want 18000 (\\N loads as NULL)", n)
	}
	if n := queryInt(t, conn, `SELECT count(*) FROM customer WHERE c_balance <> -10.00 OR c_ytd_payment <> 10.00 OR c_credit_lim <> 50000.00`); n != 0 {
		t.Errorf("%d customers with other than the initial money", n)
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

	// Corruptions that break conditions apart from each other's are made
	// together, a check over two warehouses being the test's cost:
	// - raising one W_YTD breaks W_YTD = sum(D_YTD) (1) and W_YTD =
	//   sum(H_AMOUNT) (8);
	// - losing an order line breaks the per-district line count (4) and
	//   the order's line count (6);
	// - a payment-like change to one customer's balance breaks 10 and 12;
	// - raising another's year-to-date payment breaks 12 alone (one query
	//   counts both, and must not mix them up).
	exec(t, conn, "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 2")
	exec(t, conn, "DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id = 5 AND ol_number = 1")
	exec(t, conn, "UPDATE customer SET c_balance = c_balance - 5 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 7")
	exec(t, conn, "UPDATE customer SET c_ytd_payment = c_ytd_payment + 3 WHERE c_w_id = 2 AND c_d_id = 4 AND c_id = 9")
	f := failed(check(t, db))
	if len(f) != 6 || f["3.3.2.1"] != 1 || f["3.3.2.8"] != 1 || f["3.3.2.4"] != 1 || f["3.3.2.6"] != 1 || f["3.3.2.10"] != 1 || f["3.3.2.12"] != 2 {
		t.Fatalf("after raising w_ytd, deleting an order line, changing a balance and a year-to-date payment: failed %v, want 1, 8, 4, 6 and 10 once each, 12 twice", f)
	}
	// Sampling: of two warehouses, both are checked, so the sample is all.
	res2, err := db.CheckTPCC(ctx, engine.CheckOptions{Seed: 7})
	if err != nil || failed(res2)["3.3.2.10"] != 1 {
		t.Fatalf("sampled check: %v %v", failed(res2), err)
	}
	exec(t, conn, "UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 2")
	exec(t, conn, "UPDATE customer SET c_balance = c_balance + 5 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 7")
	exec(t, conn, "UPDATE customer SET c_ytd_payment = c_ytd_payment - 3 WHERE c_w_id = 2 AND c_d_id = 4 AND c_id = 9")

	// The order line stays lost. A district's D_YTD breaks 9 (and W_YTD =
	// sum(D_YTD), 1); an order line without its order (in another
	// district) adds one violation to each of 4 (its district's lines)
	// and 6 (the line's order).
	exec(t, conn, "UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 4")
	exec(t, conn, "INSERT INTO order_line VALUES (9999, 2, 1, 1, 1, 1, NULL, 5, 1.00, 'x')")
	f = failed(check(t, db))
	if len(f) != 4 || f["3.3.2.1"] != 1 || f["3.3.2.9"] != 1 || f["3.3.2.4"] != 2 || f["3.3.2.6"] != 2 {
		t.Fatalf("after raising d_ytd and adding an orphan order line: failed %v, want 1 and 9 once, 4 and 6 twice", f)
	}
	exec(t, conn, "UPDATE district SET d_ytd = d_ytd - 1 WHERE d_w_id = 1 AND d_id = 4")
	exec(t, conn, "DELETE FROM order_line WHERE ol_o_id = 9999")

	// Last, as they stay: a delivered line on an undelivered order and an
	// undelivered line of a delivered one break 7 twice; a gap in NEW-ORDER breaks 3, the order is then undelivered
	// without its NEW-ORDER row (5), and the database is no longer as
	// loaded, so 11 is not applicable and NEW-ORDER's cardinality is not
	// held to 4.2.2; D_NEXT_O_ID out of step with the orders breaks 2 (and
	// ORDER's cardinality, sum(d_next_o_id - 1)).
	exec(t, conn, "UPDATE order_line SET ol_delivery_d = '2020-01-01 00:00:00' WHERE ol_w_id = 2 AND ol_d_id = 1 AND ol_o_id = 2500 AND ol_number = 1")
	exec(t, conn, "UPDATE order_line SET ol_delivery_d = NULL WHERE ol_w_id = 2 AND ol_d_id = 2 AND ol_o_id = 5 AND ol_number = 2")
	exec(t, conn, "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 1 AND no_o_id = 2500")
	exec(t, conn, "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 2 AND d_id = 10")
	got = check(t, db)
	f = failed(got)
	if got.AsLoaded || got.OK || f["3.3.2.7"] != 2 || f["3.3.2.3"] != 1 || f["3.3.2.5"] != 1 || f["3.3.2.2"] != 1 || f["3.3.2.6"] != 1 {
		t.Fatalf("after changing two lines' delivery, removing a new_order row and moving d_next_o_id: as_loaded %v, failed %v; want 7 twice, 3, 5, 2 and 6 (the lost line) once each",
			got.AsLoaded, f)
	}
	for _, c := range got.Conditions {
		if c.ID == "3.3.2.11" && (c.Scope != "not-applicable" || !c.OK) {
			t.Fatalf("3.3.2.11 after a change: %+v", c)
		}
	}
	for _, c := range got.Cardinalities {
		if c.Table == "orders" && (c.OK || c.Expected != 60001) {
			t.Fatalf("orders cardinality after moving d_next_o_id: %+v", c)
		}
	}

	// A second build without --drop is refused and leaves the schema alone.
	_, err = db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 1, Workers: 2})
	if !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), "--drop") {
		t.Fatalf("second build without drop: %v, want a refusal naming --drop", err)
	}
	if w := queryInt(t, conn, "SELECT warehouses FROM tpcc_meta"); w != 2 {
		t.Fatalf("refused build changed the schema: %d warehouses", w)
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
	if _, err := db.CheckTPCC(ctx, engine.CheckOptions{}); !errors.Is(err, engine.ErrNoSchema) {
		t.Fatalf("check of an unfinished build: %v, want ErrNoSchema", err)
	}
	if _, err := db.Schema(ctx); !errors.Is(err, engine.ErrNoSchema) {
		t.Fatalf("Schema of an unfinished build: %v, want ErrNoSchema", err)
	}
	// Tables without a build record are not a schema either.
	exec(t, conn, "DROP TABLE tpcc_meta")
	if _, err := db.Schema(ctx); !errors.Is(err, engine.ErrNoSchema) || !strings.Contains(err.Error(), "tpcc_meta") {
		t.Fatalf("Schema without tpcc_meta: %v, want ErrNoSchema naming tpcc_meta", err)
	}
}

// The conditions restricted to warehouses name them in the query, and
// those that are not name none.
func TestConditionQuery(t *testing.T) {
	if q := mariadb.ConditionQuery(engine.CustomerPair, []int{1, 7, 12}); !strings.Contains(q, "IN (1,7,12)") || strings.Contains(q, "{W}") {
		t.Errorf("10 and 12 for 1, 7, 12: %s", q)
	}
	if q := mariadb.ConditionQuery("3.3.2.1", nil); strings.Contains(q, "{W}") || strings.Contains(q, " IN (") {
		t.Errorf("3.3.2.1: %s", q)
	}
}

func TestInterruptedBuildLeavesNothingValid(t *testing.T) {
	t.Parallel()
	db, conn := openTest(t, mariatest.NewDatabase(t))
	ctx, cancel := context.WithCancel(context.Background())
	var once bool
	_, err := db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 3, Workers: 2, Progress: func(p tpcc.BuildProgress) {
		if !once && p.Phase == "load" && p.Rows > 0 {
			once = true
			cancel() // interrupt mid-load, as Ctrl-C does
		}
	}})
	cancel()
	if err == nil {
		t.Fatal("interrupted build reported success")
	}
	_, err = db.CheckTPCC(context.Background(), engine.CheckOptions{})
	if !errors.Is(err, engine.ErrNoSchema) {
		t.Fatalf("check after an interrupted build: %v, want 'no TPC-C schema'", err)
	}
	if found := existing(t, conn); len(found) != 0 {
		t.Fatalf("interrupted build left tables %v", found)
	}
}

func TestCheckWithoutSchema(t *testing.T) {
	t.Parallel()
	db, _ := openTest(t, mariatest.NewDatabase(t))
	_, err := db.CheckTPCC(context.Background(), engine.CheckOptions{})
	if !errors.Is(err, engine.ErrNoSchema) || !errors.Is(err, engine.ErrBadInput) {
		t.Fatalf("check of an empty database: %v, want ErrNoSchema", err)
	}
	if _, err := db.Schema(context.Background()); !errors.Is(err, engine.ErrNoSchema) {
		t.Fatalf("Schema of an empty database: %v, want ErrNoSchema", err)
	}
	if _, err := db.BuildTPCC(context.Background(), engine.BuildOptions{Warehouses: 0}); !errors.Is(err, engine.ErrBadInput) {
		t.Fatalf("build of 0 warehouses: %v, want bad input", err)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := mariadb.Open(ctx, "mysql://u:s3cret@127.0.0.1:notaport/db")
	if !errors.Is(err, engine.ErrBadInput) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("malformed DSN: %v, want bad input without the password", err)
	}

	// The right server and user with a wrong password.
	u, err := url.Parse(mariatest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	user := u.User.Username()
	u.User = url.UserPassword(user, "wr0ngPassw0rd")
	_, err = mariadb.Open(ctx, u.String())
	if err == nil || errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), user) ||
		!strings.Contains(err.Error(), "check the user and password") || strings.Contains(err.Error(), "wr0ngPassw0rd") {
		t.Fatalf("wrong password: %v, want a failure to connect naming user %s and what to check, without the password", err, user)
	}

	// Nothing listens on port 1.
	_, err = mariadb.Open(ctx, "mysql://u:s3cret@127.0.0.1:1/db?timeout=2s")
	if err == nil || errors.Is(err, engine.ErrBadInput) {
		t.Fatalf("unreachable server: %v, want a runtime error", err)
	}
	if msg := err.Error(); strings.Contains(msg, "s3cret") || !strings.Contains(msg, "127.0.0.1:1") || !strings.Contains(msg, "cannot connect") {
		t.Fatalf("unreachable server: %q, want the address and no password", msg)
	}
}

func TestVerifyOrders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, conn := openTest(t, mariatest.NewDatabase(t))
	if _, err := db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 1, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	// Every loaded order, acknowledged as committed: none is contradicted;
	// more than one INSERT batch of them.
	rows, err := conn.Query(`SELECT o_w_id, o_d_id, o_id, o_c_id, o_ol_cnt, ol_i_id FROM orders
		JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND ol_number = 1
		WHERE o_d_id <= 5`)
	if err != nil {
		t.Fatal(err)
	}
	var acks []tpcc.Ack
	for rows.Next() {
		var a tpcc.Ack
		if err := rows.Scan(&a.W, &a.D, &a.OID, &a.Customer, &a.Lines, &a.FirstItem); err != nil {
			t.Fatal(err)
		}
		acks = append(acks, a)
	}
	rows.Close()
	if len(acks) != 15000 {
		t.Fatalf("%d orders in districts 1-5, want 15000", len(acks))
	}
	bad, err := db.VerifyOrders(ctx, acks)
	if err != nil || len(bad) != 0 {
		t.Fatalf("loaded orders acknowledged as committed: violations %v (%v), want none", bad[:min(len(bad), 3)], err)
	}

	there := acks[42]
	rolledBackThere := there
	rolledBackThere.RolledBack = true
	otherCustomer := there
	otherCustomer.Customer = there.Customer%3000 + 1
	missing := tpcc.Ack{W: 1, D: 1, OID: 3001, Customer: 1, Lines: 5, FirstItem: 1}
	missingRolledBack := missing
	missingRolledBack.RolledBack = true
	bad, err = db.VerifyOrders(ctx, []tpcc.Ack{there, rolledBackThere, otherCustomer, missing, missingRolledBack})
	if err != nil {
		t.Fatal(err)
	}
	want := []tpcc.Ack{rolledBackThere, otherCustomer, missing}
	if len(bad) != len(want) {
		t.Fatalf("violations %+v, want %+v", bad, want)
	}
	for _, w := range want {
		if !slices.Contains(bad, w) {
			t.Errorf("violation %+v not reported (got %+v)", w, bad)
		}
	}
	if bad, err := db.VerifyOrders(ctx, nil); err != nil || len(bad) != 0 {
		t.Fatalf("no acknowledgements: %v %v", bad, err)
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	db, _ := openTest(t, mariatest.NewDatabase(t))
	version, settings, err := db.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if version != db.Version || version == "" {
		t.Errorf("server version %q, Open read %q", version, db.Version)
	}
	got := map[string]string{}
	var names []string
	for _, s := range settings {
		if _, dup := got[s.Name]; dup {
			t.Errorf("%s listed twice", s.Name)
		}
		got[s.Name] = s.Value
		names = append(names, s.Name)
	}
	for _, name := range []string{"innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "innodb_page_size", "transaction_isolation", "max_connections"} {
		if got[name] == "" {
			t.Errorf("%s missing or empty in %v", name, settings)
		}
	}
	// Sizes carry their unit.
	for _, name := range []string{"innodb_buffer_pool_size", "innodb_log_file_size", "innodb_page_size"} {
		if v := got[name]; !strings.HasSuffix(v, "B") {
			t.Errorf("%s = %q, want a size with a unit such as 128MB", name, v)
		}
	}
	// The server's subset of SettingNames, in SettingNames' order.
	want := slices.DeleteFunc(slices.Clone(mariadb.SettingNames), func(n string) bool { _, ok := got[n]; return !ok })
	if !slices.Equal(names, want) {
		t.Errorf("settings in order %v, want %v", names, want)
	}
	if len(settings) < len(mariadb.SettingNames)-2 {
		t.Errorf("only %d of %d settings: %v", len(settings), len(mariadb.SettingNames), names)
	}
	t.Logf("%s: %v", version, settings)
}

func TestStats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, conn := openTest(t, mariatest.NewDatabase(t))
	exec(t, conn, "CREATE TABLE t (id int PRIMARY KEY, v varchar(100)) ENGINE=InnoDB")
	before, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// One explicit transaction (COMMIT), one rolled back, and reads of
	// the table's pages.
	exec(t, conn, "BEGIN")
	exec(t, conn, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	exec(t, conn, "COMMIT")
	exec(t, conn, "BEGIN")
	exec(t, conn, "INSERT INTO t VALUES (4, 'd')")
	exec(t, conn, "ROLLBACK")
	for range 10 {
		queryInt(t, conn, "SELECT count(*) FROM t")
	}
	after, err := db.Stats(ctx) // on the connection kept since the first call
	if err != nil {
		t.Fatal(err)
	}
	grew := func(name string) float64 { return after.Counters[name] - before.Counters[name] }
	if grew(mariadb.StatCommits) < 1 || grew(mariadb.StatRollbacks) < 1 {
		t.Errorf("commits grew %v, rollbacks %v; want at least 1 each", grew(mariadb.StatCommits), grew(mariadb.StatRollbacks))
	}
	if grew(mariadb.StatBlocksHit)+grew(mariadb.StatBlocksRead) < 10 {
		t.Errorf("buffer pool requests grew %v hit + %v read over 10 reads of a table", grew(mariadb.StatBlocksHit), grew(mariadb.StatBlocksRead))
	}
	if grew(mariadb.StatWALBytes) <= 0 {
		t.Errorf("%s did not grow over a committed insert", mariadb.StatWALBytes)
	}
	for _, name := range []string{mariadb.StatCommits, mariadb.StatRollbacks, mariadb.StatBlocksRead, mariadb.StatBlocksHit,
		mariadb.StatDataReads, mariadb.StatDataWrites, mariadb.StatDataReadBytes, mariadb.StatDataWrittenBytes,
		mariadb.StatWALBytes, mariadb.StatLogWaits, mariadb.StatRowLockWaits, mariadb.StatRowLockTimeMs} {
		v, ok := after.Counters[name]
		if !ok || v < 0 {
			t.Errorf("counter %s = %v (present %v), want a count", name, v, ok)
		}
		if v < before.Counters[name] {
			t.Errorf("counter %s went down: %v then %v", name, before.Counters[name], v)
		}
	}
	g := after.Gauges
	if g[mariadb.StatPagesTotal] <= 0 || g[mariadb.StatPagesFree] < 0 || g[mariadb.StatPagesFree] > g[mariadb.StatPagesTotal] ||
		g[mariadb.StatPagesDirty] < 0 || g[mariadb.StatPagesDirty] > g[mariadb.StatPagesTotal] {
		t.Errorf("buffer pool pages: %v", g)
	}
	// conn is another connection; Stats' own is not counted.
	if g[mariadb.StatThreadsConnected] < 1 || g[mariadb.StatThreadsRunning] < 0 {
		t.Errorf("threads: %v", g)
	}
	// With performance_schema on (as on tierbench's servers), the server's
	// own data-file read time is there.
	var ps int
	if err := conn.QueryRow("SELECT @@performance_schema").Scan(&ps); err != nil {
		t.Fatal(err)
	}
	_, timed := after.Counters[mariadb.StatBlockReadMs]
	if ps == 1 && !timed {
		t.Errorf("performance_schema is on but %s is missing: %v", mariadb.StatBlockReadMs, after.Counters)
	}
	if ps == 0 && timed {
		t.Errorf("performance_schema is off but %s is there", mariadb.StatBlockReadMs)
	}
	t.Logf("counters %v\ngauges %v", after.Counters, after.Gauges)

	dir, pid, err := db.ServerInfo(ctx)
	if err != nil || dir == "" {
		t.Fatalf("ServerInfo: %q, %d, %v", dir, pid, err)
	}
	var dataDir, pidFile string
	if err := conn.QueryRow("SELECT @@datadir, @@pid_file").Scan(&dataDir, &pidFile); err != nil {
		t.Fatal(err)
	}
	if strings.TrimRight(dataDir, "/") != dir {
		t.Errorf("data directory %q, server says %q", dir, dataDir)
	}
	// When the server runs here (its PID file readable), its PID is known.
	if _, err := os.ReadFile(pidFile); err == nil && pid <= 0 {
		t.Errorf("PID file %s readable, but no server PID", pidFile)
	} else if err != nil && pid != 0 {
		t.Errorf("PID file %s unreadable (%v), but PID %d", pidFile, err, pid)
	}
}

// A statistics connection that is gone gives an error, never a panic: the
// performance_schema read must not touch rows it did not get (a lost
// connection's error has no server error number).
func TestReadFileIOOnClosedConn(t *testing.T) {
	t.Parallel()
	_, raw := openTest(t, mariatest.NewDatabase(t))
	conn, err := raw.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := map[string]float64{}
	if err := mariadb.ReadFileIO(context.Background(), conn, c); err != nil {
		t.Fatalf("on an open connection: %v", err)
	}
	if _, ok := c[mariadb.StatBlockReadMs]; !ok {
		t.Errorf("performance_schema is on in the test server, yet no %s: %v", mariadb.StatBlockReadMs, c)
	}
	conn.Close()
	if err := mariadb.ReadFileIO(context.Background(), conn, map[string]float64{}); err == nil {
		t.Fatal("a closed connection read file I/O times without an error")
	}
}
