package mariadb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/mariadb"
	"github.com/tierbench/tierbench/internal/server/mariatest"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// TestTransactions runs the five transactions in both modes against a
// fresh two-warehouse schema per mode (two, so lines and payments can be
// remote), checks their effects row by row, how the server counts them,
// then runs a concurrent burst and the consistency conditions.
//
// Each mode has a managed server of its own, not a database on the shared
// one: the counting subtest reads the server's global commit counters,
// which any other test's transactions would move. So the modes run side
// by side, and beside the package's other tests.
func TestTransactions(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{engine.ModeRoutines, engine.ModeStatements} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testTransactions(t, mode)
		})
	}
}

// txnEnv is one mode's built schema, a worker and a plain connection for
// setting up and inspecting rows.
type txnEnv struct {
	t    *testing.T
	ctx  context.Context
	dsn  string
	db   *mariadb.DB
	conn *sql.DB
	w    engine.Worker
	mode string
}

func (e *txnEnv) exec(q string, args ...any) {
	e.t.Helper()
	if _, err := e.conn.ExecContext(e.ctx, q, args...); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
}

// query scans one row of q into dest.
func (e *txnEnv) query(q string, args []any, dest ...any) {
	e.t.Helper()
	if err := e.conn.QueryRowContext(e.ctx, q, args...).Scan(dest...); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
}

func (e *txnEnv) int64(q string, args ...any) int64 {
	e.t.Helper()
	var v int64
	e.query(q, args, &v)
	return v
}

func (e *txnEnv) nextOID(w, d int) int {
	e.t.Helper()
	return int(e.int64(`SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?`, w, d))
}

func (e *txnEnv) newWorker() engine.Worker {
	e.t.Helper()
	w, err := e.db.NewWorker(e.ctx, e.mode)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

// otherConn opens a connection of the test's own, closed when the test ends.
func (e *txnEnv) otherConn() *sql.Conn {
	e.t.Helper()
	cfg, err := mariadb.ParseDSN(e.dsn)
	if err != nil {
		e.t.Fatal(err)
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	pool := sql.OpenDB(connector)
	e.t.Cleanup(func() { pool.Close() })
	c, err := pool.Conn(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

func testTransactions(t *testing.T, mode string) {
	ctx := context.Background()
	// Each mode's server of its own, both copies of one built once.
	dsn := mariatest.StartCloned(t, ctx, "tpcc2", func(ctx context.Context, dsn string) error {
		db, err := mariadb.Open(ctx, dsn)
		if err != nil {
			return err
		}
		defer db.Close()
		if _, err := db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 2, Workers: 2}); err != nil {
			return err
		}
		return db.InstallRoutines(ctx) // until BuildTPCC installs them
	}).DSN
	db, conn := openTest(t, dsn)
	e := &txnEnv{t: t, ctx: ctx, dsn: dsn, db: db, conn: conn, mode: mode}
	e.w = e.newWorker()
	t.Cleanup(e.w.Close)
	if wire := mariadb.WireCalls(e.w); wire != (mode == engine.ModeRoutines) {
		t.Fatalf("a %s worker makes its calls by its own protocol code: %v", mode, wire)
	}

	t.Run("each", func(t *testing.T) { e.t = t; testEach(e) })
	t.Run("rollback", func(t *testing.T) { e.t = t; testRollback(e) })
	t.Run("payment-by-name", func(t *testing.T) { e.t = t; testPaymentByName(e) })
	t.Run("stock", func(t *testing.T) { e.t = t; testStock(e) })
	t.Run("lock-order", func(t *testing.T) { e.t = t; testLockOrder(e) })
	t.Run("payment-lock-order", func(t *testing.T) { e.t = t; testPaymentLockOrder(e) })
	t.Run("lock-timeout", func(t *testing.T) { e.t = t; testLockTimeout(e) })
	t.Run("deadlock", func(t *testing.T) { e.t = t; testDeadlock(e) })
	t.Run("delivery", func(t *testing.T) { e.t = t; testDelivery(e) })
	t.Run("interrupt", func(t *testing.T) { e.t = t; testInterrupt(e) })
	t.Run("counting", func(t *testing.T) { e.t = t; testCounting(e) })
	t.Run("burst", func(t *testing.T) { e.t = t; testBurst(e) })
	t.Run("verify-orders", func(t *testing.T) { e.t = t; testVerifyOrders(e) })
	if mode == engine.ModeRoutines {
		// The calls through the driver, as on a TLS connection.
		t.Run("driver-calls", func(t *testing.T) {
			wireDB, wireW := e.db, e.w
			defer func() { e.t, e.db, e.w = t, wireDB, wireW }()
			e.t = t
			e.db, _ = openTest(t, dsn)
			mariadb.SetDriverCalls(e.db)
			e.w = e.newWorker()
			defer e.w.Close()
			if mariadb.WireCalls(e.w) {
				t.Fatal("SetDriverCalls did not take")
			}
			for name, f := range map[string]func(*txnEnv){"payment-by-name": testPaymentByName,
				"lock-timeout": testLockTimeout, "counting": testCounting} {
				t.Run(name, func(t *testing.T) { e.t = t; f(e) })
			}
		})
		t.Run("routines-missing", func(t *testing.T) { e.t = t; testRoutinesMissing(e) })
	}
}

// lines returns n order lines of home warehouse w with distinct items.
func lines(w, n, firstItem int) []tpcc.OrderLineInput {
	out := make([]tpcc.OrderLineInput, n)
	for i := range out {
		out[i] = tpcc.OrderLineInput{ItemID: int32(firstItem + 7*i), SupplyW: int32(w), Quantity: int32(1 + i%10)}
	}
	return out
}

func testEach(e *txnEnv) {
	t, ctx := e.t, e.ctx
	// New-Order: the order number is the district's D_NEXT_O_ID, which
	// grows by one; the order and its lines exist; the total is what the
	// database computes from the stored rows.
	prev := e.nextOID(1, 4)
	in := &tpcc.NewOrderInput{W: 1, D: 4, C: 77, Lines: lines(1, 10, 500), AllLocal: true}
	no, err := e.w.NewOrder(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if no.OID != prev || no.RolledBack || e.nextOID(1, 4) != prev+1 {
		t.Fatalf("New-Order: %+v, d_next_o_id was %d and is %d", no, prev, e.nextOID(1, 4))
	}
	var olCnt, allLocal, cid int
	var carrierNull, entryRecent bool
	e.query(`SELECT o_ol_cnt, o_all_local, o_c_id, o_carrier_id IS NULL, o_entry_d > NOW() - INTERVAL 1 MINUTE
		FROM orders WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = ?`,
		[]any{no.OID}, &olCnt, &allLocal, &cid, &carrierNull, &entryRecent)
	if olCnt != 10 || allLocal != 1 || cid != 77 || !carrierNull || !entryRecent {
		t.Fatalf("order row: ol_cnt %d all_local %d c_id %d carrier null %v entered now %v", olCnt, allLocal, cid, carrierNull, entryRecent)
	}
	if n := e.int64(`SELECT COUNT(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = 4 AND no_o_id = ?`, no.OID); n != 1 {
		t.Fatalf("new_order rows: %d", n)
	}
	total := e.int64(`SELECT CAST(ROUND(SUM(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax) * 100) AS SIGNED)
		FROM order_line, customer, warehouse, district
		WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id = ? AND c_w_id = 1 AND c_d_id = 4 AND c_id = 77
		  AND w_id = 1 AND d_w_id = 1 AND d_id = 4
		GROUP BY c_discount, w_tax, d_tax`, no.OID)
	if no.TotalCents != total || total <= 0 {
		t.Fatalf("total %d cents, the rows say %d", no.TotalCents, total)
	}
	// ol_number follows the input; OL_AMOUNT = qty * I_PRICE; not delivered.
	bad := e.int64(`SELECT COUNT(*) FROM order_line JOIN item ON i_id = ol_i_id
		WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id = ?
		  AND (ol_i_id <> 500 + 7 * (ol_number - 1) OR ol_quantity <> 1 + (ol_number - 1) % 10
		    OR ol_amount <> ol_quantity * i_price OR ol_delivery_d IS NOT NULL OR ol_supply_w_id <> 1)`, no.OID)
	if n := e.int64(`SELECT COUNT(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id = ?`, no.OID); bad != 0 || n != 10 {
		t.Fatalf("%d order lines, %d of them differ from the input", n, bad)
	}

	// Payment by number: W_YTD, D_YTD, C_BALANCE, C_YTD_PAYMENT,
	// C_PAYMENT_CNT and HISTORY.
	type snap struct{ wYTD, dYTD, balance, ytd, cnt, history int64 }
	read := func() snap {
		var s snap
		e.query(`SELECT CAST(w_ytd * 100 AS SIGNED), CAST(d_ytd * 100 AS SIGNED) FROM warehouse, district
			WHERE w_id = 1 AND d_w_id = 1 AND d_id = 4`, nil, &s.wYTD, &s.dYTD)
		e.query(`SELECT CAST(c_balance * 100 AS SIGNED), CAST(c_ytd_payment * 100 AS SIGNED), c_payment_cnt FROM customer
			WHERE c_w_id = 1 AND c_d_id = 4 AND c_id = 77`, nil, &s.balance, &s.ytd, &s.cnt)
		s.history = e.int64(`SELECT COUNT(*) FROM history WHERE h_c_w_id = 1 AND h_c_d_id = 4 AND h_c_id = 77`)
		return s
	}
	before := read()
	p, err := e.w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 4, CW: 1, CD: 4, CID: 77, AmountCents: 100})
	if err != nil || p.CID != 77 {
		t.Fatalf("Payment: %+v %v", p, err)
	}
	after := read()
	if want := (snap{before.wYTD + 100, before.dYTD + 100, before.balance - 100, before.ytd + 100, before.cnt + 1, before.history + 1}); after != want {
		t.Fatalf("Payment of 1.00: %+v -> %+v, want %+v", before, after, want)
	}

	// Order-Status finds the order just entered.
	os, err := e.w.OrderStatus(ctx, &tpcc.OrderStatusInput{W: 1, D: 4, CID: 77})
	if err != nil || os.CID != 77 || os.OID != no.OID || os.Lines != 10 {
		t.Fatalf("Order-Status: %+v %v, want order %d with 10 lines", os, err, no.OID)
	}

	// Delivery on a fresh warehouse delivers order 2101 of every district
	// (4.3.3.1: 2101..3000 are undelivered).
	d, err := e.w.Delivery(ctx, &tpcc.DeliveryInput{W: 1, Carrier: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range d.Delivered {
		if o != tpcc.FirstUndeliveredOrder {
			t.Fatalf("Delivery: district %d delivered %d, want %d (%+v)", i+1, o, tpcc.FirstUndeliveredOrder, d)
		}
	}
	if d.Skipped != 0 {
		t.Fatalf("Delivery skipped %d", d.Skipped)
	}

	// Stock-Level: after the order above, its items are among the last 20.
	sl, err := e.w.StockLevel(ctx, &tpcc.StockLevelInput{W: 1, D: 4, Threshold: 20})
	if err != nil || sl.LowStock < 0 {
		t.Fatalf("Stock-Level: %+v %v", sl, err)
	}
	want := e.int64(`SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = 1 AND s_i_id = ol_i_id
		WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id >= ? - 20 AND ol_o_id < ? AND s_quantity < 20`, prev+1, prev+1)
	if int64(sl.LowStock) != want {
		t.Fatalf("Stock-Level: %d, want %d", sl.LowStock, want)
	}
	// Everything is below 1000: every item of the last 20 orders.
	sl, err = e.w.StockLevel(ctx, &tpcc.StockLevelInput{W: 1, D: 4, Threshold: 1000})
	all := e.int64(`SELECT COUNT(DISTINCT ol_i_id) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id >= ? - 20 AND ol_o_id < ?`, prev+1, prev+1)
	if err != nil || int64(sl.LowStock) != all || all < 10 {
		t.Fatalf("Stock-Level with threshold 1000: %+v %v, want %d", sl, err, all)
	}
}

// testCounting checks what each transaction counts in Com_commit and
// Com_rollback (TPM's source): exactly one per transaction, committed ones
// as commits, the rolled-back New-Order and failed transactions as
// rollbacks, on the worker's own session; and that the server-wide
// counters Counters reads show them at once, with no publishing step.
func testCounting(e *txnEnv) {
	t, ctx := e.t, e.ctx
	w := e.newWorker()
	defer w.Close()
	if published, err := w.PublishStats(ctx); published || err != nil {
		t.Fatalf("PublishStats = %v, %v; want false, nil", published, err)
	}
	session := func() (int64, int64) {
		t.Helper()
		c, r, err := mariadb.SessionCounts(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		return c, r
	}
	global := func() int64 {
		t.Helper()
		c, err := e.db.Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c.Transactions
	}
	step := func(what string, wantCommits, wantRollbacks int64, run func() error) {
		t.Helper()
		c0, r0 := session()
		g0 := global()
		if err := run(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		g1 := global()
		c1, r1 := session()
		if c1-c0 != wantCommits || r1-r0 != wantRollbacks {
			t.Errorf("%s counted %d commits and %d rollbacks, want %d and %d", what, c1-c0, r1-r0, wantCommits, wantRollbacks)
		}
		// The server-wide counters include everyone's transactions: on a
		// server of the test's own nobody else runs any.
		n := wantCommits + wantRollbacks
		if g1-g0 != n {
			t.Errorf("%s: Com_commit + Com_rollback grew by %d right after, want %d", what, g1-g0, n)
		}
	}
	step("New-Order", 1, 0, func() error {
		_, err := w.NewOrder(ctx, &tpcc.NewOrderInput{W: 1, D: 9, C: 12, Lines: lines(1, 7, 3000), AllLocal: true})
		return err
	})
	step("rolled-back New-Order", 0, 1, func() error {
		ls := lines(1, 7, 3000)
		ls[6].ItemID = tpcc.UnusedItemID
		out, err := w.NewOrder(ctx, &tpcc.NewOrderInput{W: 1, D: 9, C: 12, Lines: ls, AllLocal: true, Rollback: true})
		if err == nil && !out.RolledBack {
			err = errors.New("not rolled back")
		}
		return err
	})
	step("Payment by number", 1, 0, func() error {
		_, err := w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 9, CW: 1, CD: 9, CID: 12, AmountCents: 500})
		return err
	})
	step("Payment by name", 1, 0, func() error {
		_, err := w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 9, CW: 2, CD: 3, ByName: true, CLast: tpcc.LastName(0), AmountCents: 500})
		return err
	})
	step("failed Payment", 0, 1, func() error {
		_, err := w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 9, CW: 1, CD: 9, ByName: true, CLast: "NOSUCHNAME", AmountCents: 500})
		var te *engine.TxnError
		if !errors.As(err, &te) || te.Kind != engine.ErrOther {
			return fmt.Errorf("want a TxnError of kind other, got %v", err)
		}
		return nil
	})
	step("Order-Status", 1, 0, func() error {
		_, err := w.OrderStatus(ctx, &tpcc.OrderStatusInput{W: 1, D: 9, ByName: true, CLast: tpcc.LastName(1)})
		return err
	})
	step("Delivery", 1, 0, func() error {
		_, err := w.Delivery(ctx, &tpcc.DeliveryInput{W: 2, Carrier: 4})
		return err
	})
	step("Stock-Level", 1, 0, func() error {
		_, err := w.StockLevel(ctx, &tpcc.StockLevelInput{W: 1, D: 9, Threshold: 15})
		return err
	})
	// A random mix: one count per transaction, whatever its kind or fate.
	r := tpcc.NewRand(7)
	var done, rolledBack, failures int64
	c0, r0 := session()
	g0 := global()
	for range 200 {
		_, rb, err := randomTxn(ctx, w, r, 2)
		switch {
		case err != nil:
			failures++
		case rb:
			rolledBack++
		}
		done++
	}
	g1 := global()
	c1, r1 := session()
	if c1-c0 != done-rolledBack-failures || r1-r0 != rolledBack+failures {
		t.Errorf("%d transactions (%d rolled back, %d failed) counted %d commits and %d rollbacks",
			done, rolledBack, failures, c1-c0, r1-r0)
	}
	if g1-g0 != done {
		t.Errorf("%d transactions: Com_commit + Com_rollback grew by %d", done, g1-g0)
	}
	t.Logf("mix of %d: %d rolled back, %d failed", done, rolledBack, failures)
}

func testRollback(e *txnEnv) {
	t, ctx := e.t, e.ctx
	prev := e.nextOID(2, 7)
	ls := lines(2, 6, 1000)
	ls[len(ls)-1].ItemID = tpcc.UnusedItemID // 2.4.1.4: the last item is unused
	out, err := e.w.NewOrder(ctx, &tpcc.NewOrderInput{W: 2, D: 7, C: 1, Lines: ls, Rollback: true, AllLocal: true})
	if err != nil {
		t.Fatalf("rolled-back New-Order returned an error: %v", err)
	}
	if !out.RolledBack || out.OID != prev || out.TotalCents != 0 {
		t.Fatalf("rolled-back New-Order: %+v, want RolledBack with O_ID %d", out, prev)
	}
	if got := e.nextOID(2, 7); got != prev {
		t.Fatalf("d_next_o_id went from %d to %d", prev, got)
	}
	if n := e.int64(`SELECT COUNT(*) FROM orders WHERE o_w_id = 2 AND o_d_id = 7 AND o_id = ?`, prev); n != 0 {
		t.Fatal("the rolled-back order was stored")
	}
	if n := e.int64(`SELECT COUNT(*) FROM new_order WHERE no_w_id = 2 AND no_d_id = 7 AND no_o_id = ?`, prev); n != 0 {
		t.Fatal("the rolled-back order's NEW-ORDER row was stored")
	}
	if n := e.int64(`SELECT COUNT(*) FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 7 AND ol_o_id = ?`, prev); n != 0 {
		t.Fatal("lines of the rolled-back order were stored")
	}
	if n := e.int64(`SELECT SUM(s_order_cnt) FROM stock WHERE s_w_id = 2 AND s_i_id IN (1000, 1007, 1014)`); n != 0 {
		t.Fatalf("the rolled-back order changed stock (s_order_cnt %d)", n)
	}
	// The next order takes the number back.
	next, err := e.w.NewOrder(ctx, &tpcc.NewOrderInput{W: 2, D: 7, C: 1, Lines: lines(2, 5, 1000), AllLocal: true})
	if err != nil || next.OID != prev || next.RolledBack {
		t.Fatalf("New-Order after the rollback: %+v %v, want O_ID %d", next, err, prev)
	}
	c, err := e.db.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := e.int64(`SELECT SUM(d_next_o_id) FROM district`); c.SumNextOID != want {
		t.Fatalf("Counters.SumNextOID = %d, want %d", c.SumNextOID, want)
	}
}

func testPaymentByName(e *txnEnv) {
	t, ctx := e.t, e.ctx
	// Three customers of district (1, 2) share a last name nobody else has;
	// sorted by C_FIRST the middle one is customer 9.
	e.exec(`UPDATE customer SET c_last = 'TESTNAME', c_first = CASE c_id WHEN 5 THEN 'CCCC' WHEN 17 THEN 'AAAA' ELSE 'BBBB' END,
		c_credit = CASE c_id WHEN 9 THEN 'BC' ELSE c_credit END
		WHERE c_w_id = 1 AND c_d_id = 2 AND c_id IN (5, 9, 17)`)
	if n := e.int64(`SELECT COUNT(*) FROM customer WHERE c_last = 'TESTNAME'`); n != 3 {
		t.Fatalf("%d customers named TESTNAME", n)
	}
	type snap struct {
		balance, ytd, cnt, wYTD, dYTD, history int64
	}
	read := func() snap {
		var s snap
		e.query(`SELECT CAST(c_balance * 100 AS SIGNED), CAST(c_ytd_payment * 100 AS SIGNED), c_payment_cnt
			FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 9`, nil, &s.balance, &s.ytd, &s.cnt)
		e.query(`SELECT CAST(w_ytd * 100 AS SIGNED) FROM warehouse WHERE w_id = 1`, nil, &s.wYTD)
		e.query(`SELECT CAST(d_ytd * 100 AS SIGNED) FROM district WHERE d_w_id = 1 AND d_id = 3`, nil, &s.dYTD)
		s.history = e.int64(`SELECT COUNT(*) FROM history`)
		return s
	}
	before := read()
	// Paid at district 3 for a customer of district 2.
	p, err := e.w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 3, CW: 1, CD: 2, ByName: true, CLast: "TESTNAME", AmountCents: 12345})
	if err != nil || p.CID != 9 {
		t.Fatalf("Payment by name: %+v %v, want customer 9", p, err)
	}
	after := read()
	if want := (snap{before.balance - 12345, before.ytd + 12345, before.cnt + 1, before.wYTD + 12345, before.dYTD + 12345, before.history + 1}); after != want {
		t.Fatalf("Payment of 123.45: %+v -> %+v, want %+v", before, after, want)
	}
	var hOK bool
	e.query(`SELECT h.h_data = CONCAT(w_name, '    ', d_name) AND h.h_amount = 123.45 AND h.h_date > NOW() - INTERVAL 1 MINUTE
		FROM history h, warehouse, district
		WHERE h_c_id = 9 AND h_c_d_id = 2 AND h_c_w_id = 1 AND h_d_id = 3 AND h_w_id = 1 AND h_amount = 123.45
		  AND w_id = 1 AND d_w_id = 1 AND d_id = 3`, nil, &hOK)
	if !hOK {
		t.Fatal("history row has the wrong H_DATA, H_AMOUNT or H_DATE")
	}
	// 2.5.2.2: a bad-credit customer's C_DATA starts with the payment.
	var data string
	e.query(`SELECT c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 9`, nil, &data)
	if !strings.HasPrefix(data, "9 2 1 3 1 123.45 | ") || len(data) > 500 {
		t.Fatalf("C_DATA of the BC customer: %.60q (%d chars)", data, len(data))
	}
	// A good-credit customer's C_DATA does not change.
	var data5 string
	e.query(`SELECT c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 5`, nil, &data5)
	if _, err := e.w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 3, CW: 1, CD: 2, CID: 5, AmountCents: 100}); err != nil {
		t.Fatal(err)
	}
	var data5After string
	e.query(`SELECT c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 5`, nil, &data5After)
	if e.int64(`SELECT c_credit = 'GC' FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 5`) == 1 && data5After != data5 {
		t.Fatal("a good-credit customer's C_DATA changed")
	}

	// Two and four namesakes: rows 1 and 2 (ceil(n/2)).
	e.exec(`UPDATE customer SET c_last = 'PAIRNAME', c_first = CASE c_id WHEN 30 THEN 'BB' ELSE 'AA' END
		WHERE c_w_id = 2 AND c_d_id = 4 AND c_id IN (30, 31)`)
	e.exec(`UPDATE customer SET c_last = 'FOURNAME', c_first = CONCAT('F', 60 - c_id)
		WHERE c_w_id = 2 AND c_d_id = 4 AND c_id IN (40, 41, 42, 43)`)
	for _, c := range []struct {
		name string
		want int
	}{{"PAIRNAME", 31}, {"FOURNAME", 42}} {
		p, err := e.w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 1, CW: 2, CD: 4, ByName: true, CLast: c.name, AmountCents: 100})
		if err != nil || p.CID != c.want {
			t.Errorf("Payment by name %s: %+v %v, want customer %d", c.name, p, err, c.want)
		}
		os, err := e.w.OrderStatus(ctx, &tpcc.OrderStatusInput{W: 2, D: 4, ByName: true, CLast: c.name})
		if err != nil || os.CID != c.want {
			t.Errorf("Order-Status by name %s: %+v %v, want customer %d", c.name, os, err, c.want)
		}
	}

	// Order-Status by name picks the same customer.
	os, err := e.w.OrderStatus(ctx, &tpcc.OrderStatusInput{W: 1, D: 2, ByName: true, CLast: "TESTNAME"})
	if err != nil || os.CID != 9 || os.OID == 0 || os.Lines < tpcc.MinOrderLines {
		t.Fatalf("Order-Status by name: %+v %v", os, err)
	}
	// A name nobody has is an error, not a crash.
	after = read()
	_, err = e.w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 3, CW: 1, CD: 2, ByName: true, CLast: "NOSUCHNAME", AmountCents: 100})
	var te *engine.TxnError
	if !errors.As(err, &te) || te.Kind != engine.ErrOther || !strings.Contains(err.Error(), "NOSUCHNAME") {
		t.Fatalf("Payment for an unknown name: %v, want a TxnError of kind other naming it", err)
	}
	// The failed Payment left nothing behind (its district's D_YTD was
	// updated when it failed: that was rolled back), and the worker still
	// works.
	if got := read(); got != after {
		t.Fatalf("failed Payment changed %+v to %+v", after, got)
	}
	if _, err := e.w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 3, CW: 1, CD: 2, CID: 5, AmountCents: 100}); err != nil {
		t.Fatalf("Payment after a failed one: %v", err)
	}
}

func testStock(e *txnEnv) {
	t, ctx := e.t, e.ctx
	// 2.4.2.2: 12 < 5 + 10 so 12 - 5 + 91 = 98; 50 >= 15 so 45; item 103
	// comes from warehouse 2 (remote); item 104 is ordered twice: 12 -> 98
	// -> 93.
	e.exec(`UPDATE stock SET s_quantity = CASE s_i_id WHEN 101 THEN 12 WHEN 102 THEN 50 WHEN 103 THEN 30 ELSE 12 END
		WHERE (s_w_id = 1 AND s_i_id IN (101, 102, 104)) OR (s_w_id = 2 AND s_i_id = 103)`)
	type row struct {
		w, i, qty, ytd, orders, remote int
	}
	read := func() map[[2]int]row {
		rows, err := e.conn.QueryContext(ctx, `SELECT s_w_id, s_i_id, s_quantity, CAST(s_ytd AS SIGNED), s_order_cnt, s_remote_cnt FROM stock
			WHERE (s_w_id = 1 AND s_i_id IN (101, 102, 104)) OR (s_w_id = 2 AND s_i_id = 103)`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[[2]int]row{}
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.w, &r.i, &r.qty, &r.ytd, &r.orders, &r.remote); err != nil {
				t.Fatal(err)
			}
			out[[2]int{r.w, r.i}] = r
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		return out
	}
	before := read()
	in := &tpcc.NewOrderInput{W: 1, D: 5, C: 3, Lines: []tpcc.OrderLineInput{
		{ItemID: 104, SupplyW: 1, Quantity: 5},
		{ItemID: 101, SupplyW: 1, Quantity: 5},
		{ItemID: 103, SupplyW: 2, Quantity: 5},
		{ItemID: 102, SupplyW: 1, Quantity: 5},
		{ItemID: 104, SupplyW: 1, Quantity: 5},
	}}
	out, err := e.w.NewOrder(ctx, in)
	if err != nil || out.RolledBack {
		t.Fatalf("New-Order: %+v %v", out, err)
	}
	after := read()
	want := map[[2]int]row{
		{1, 101}: {qty: 98, ytd: 5, orders: 1},
		{1, 102}: {qty: 45, ytd: 5, orders: 1},
		{2, 103}: {qty: 25, ytd: 5, orders: 1, remote: 1},
		{1, 104}: {qty: 93, ytd: 10, orders: 2},
	}
	for k, wr := range want {
		b, a := before[k], after[k]
		if a.qty != wr.qty || a.ytd-b.ytd != wr.ytd || a.orders-b.orders != wr.orders || a.remote-b.remote != wr.remote {
			t.Errorf("stock %v: quantity %d (want %d), s_ytd +%d (want %d), s_order_cnt +%d (want %d), s_remote_cnt +%d (want %d)",
				k, a.qty, wr.qty, a.ytd-b.ytd, wr.ytd, a.orders-b.orders, wr.orders, a.remote-b.remote, wr.remote)
		}
	}
	// OL_DIST_INFO is the supplying stock row's S_DIST_05; the order is
	// not all-local.
	bad := e.int64(`SELECT COUNT(*) FROM order_line JOIN stock ON s_w_id = ol_supply_w_id AND s_i_id = ol_i_id
		WHERE ol_w_id = 1 AND ol_d_id = 5 AND ol_o_id = ? AND ol_dist_info <> s_dist_05`, out.OID)
	if bad != 0 {
		t.Fatalf("%d lines with the wrong OL_DIST_INFO", bad)
	}
	var numbers string
	e.query(`SELECT GROUP_CONCAT(ol_i_id ORDER BY ol_number) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 5 AND ol_o_id = ?`,
		[]any{out.OID}, &numbers)
	if numbers != "104,101,103,102,104" {
		t.Fatalf("lines by ol_number: %v", numbers)
	}
	if n := e.int64(`SELECT o_all_local FROM orders WHERE o_w_id = 1 AND o_d_id = 5 AND o_id = ?`, out.OID); n != 0 {
		t.Fatalf("o_all_local = %d for an order with a remote line", n)
	}
	// Stock-Level counts distinct items: item 104, on two lines of the
	// order above, counts once.
	var lineCount, distinct int64
	e.query(`SELECT COUNT(*), COUNT(DISTINCT ol_i_id) FROM order_line
		WHERE ol_w_id = 1 AND ol_d_id = 5 AND ol_o_id >= ? - 19 AND ol_o_id <= ?`, []any{out.OID, out.OID}, &lineCount, &distinct)
	sl, err := e.w.StockLevel(ctx, &tpcc.StockLevelInput{W: 1, D: 5, Threshold: 1000})
	if err != nil || int64(sl.LowStock) != distinct || lineCount <= distinct {
		t.Fatalf("Stock-Level with threshold 1000: %+v %v, want %d distinct items of %d lines", sl, err, distinct, lineCount)
	}
}

// holdRows runs q (a SELECT ... FOR UPDATE) on a connection of its own, in
// a transaction it leaves open, so the rows stay locked until the caller
// rolls it back (or the test ends).
func (e *txnEnv) holdRows(q string) *sql.Tx {
	e.t.Helper()
	c := e.otherConn()
	tx, err := c.BeginTx(e.ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.ExecContext(e.ctx, q); err != nil {
		e.t.Fatal(err)
	}
	return tx
}

// lockWaits counts the transactions of the server waiting for a row lock.
// InnoDB refreshes what INNODB_TRX shows only when it was last read more
// than 0.1 s ago: poll it more slowly than that.
func (e *txnEnv) lockWaits() int64 {
	return e.int64(`SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'`)
}

// testLockOrder checks that New-Order locks its stock rows in (supply
// warehouse, item) order, not in the order its lines name them, which is
// what keeps concurrent New-Orders free of deadlocks. A second connection
// holds the lower row; the New-Order, whose first line names the higher
// row, must block on the lower one without having locked the higher.
func testLockOrder(e *txnEnv) {
	tx := e.holdRows(`SELECT 1 FROM stock WHERE s_w_id = 1 AND s_i_id = 201 FOR UPDATE`)
	in := &tpcc.NewOrderInput{W: 1, D: 6, C: 9, AllLocal: true, Lines: []tpcc.OrderLineInput{
		{ItemID: 205, SupplyW: 1, Quantity: 1},
		{ItemID: 201, SupplyW: 1, Quantity: 1},
		{ItemID: 203, SupplyW: 1, Quantity: 1},
		{ItemID: 207, SupplyW: 1, Quantity: 1},
		{ItemID: 202, SupplyW: 1, Quantity: 1},
	}}
	e.blockedWithout(tx, "New-Order", "stock row (1, 201)", "stock row (1, 205)",
		`SELECT 1 FROM stock WHERE s_w_id = 1 AND s_i_id = 205 FOR UPDATE NOWAIT`,
		func() error {
			out, err := e.w.NewOrder(e.ctx, in)
			if err == nil && out.RolledBack {
				err = errors.New("New-Order rolled back")
			}
			return err
		})
}

// testPaymentLockOrder checks that Payment locks its warehouse row last:
// blocked on its customer, it must not hold the warehouse row, which every
// Payment of the warehouse needs.
func testPaymentLockOrder(e *txnEnv) {
	tx := e.holdRows(`SELECT 1 FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_id = 31 FOR UPDATE`)
	e.blockedWithout(tx, "Payment", "customer (2, 5, 31)", "warehouse row 2",
		`SELECT 1 FROM warehouse WHERE w_id = 2 FOR UPDATE NOWAIT`,
		func() error {
			_, err := e.w.Payment(e.ctx, &tpcc.PaymentInput{W: 2, D: 5, CW: 2, CD: 5, CID: 31, AmountCents: 100})
			return err
		})
}

// blockedWithout runs txn while tx holds the row named held: txn must wait
// for it, and while it waits, probe (a NOWAIT lock of the row named free)
// must succeed. Then tx rolls back and txn must finish without error.
func (e *txnEnv) blockedWithout(tx *sql.Tx, txn, held, free, probe string, run func() error) {
	t, ctx := e.t, e.ctx
	t.Helper()
	done := e.startBlocked(tx, txn, held, run)
	var lockErr error
	c := e.otherConn()
	if ptx, err := c.BeginTx(ctx, nil); err != nil {
		t.Fatal(err)
	} else {
		_, lockErr = ptx.ExecContext(ctx, probe)
		_ = ptx.Rollback()
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("%s after its %s was released: %v", txn, held, err)
	}
	if lockErr != nil {
		t.Fatalf("%s, waiting for its %s, already held its %s: %v", txn, held, free, lockErr)
	}
}

// startBlocked runs txn in the background and returns once it waits for a
// row lock (tx holds the row named held), with the channel its outcome
// comes on. It fails the test if txn finishes first, or never waits; but
// not before txn, which may run on the mode's shared worker, is done.
func (e *txnEnv) startBlocked(tx *sql.Tx, txn, held string, run func() error) <-chan error {
	t := e.t
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- run() }()
	fatal := func(format string, args ...any) {
		t.Helper()
		_ = tx.Rollback()
		select {
		case <-done:
		case <-time.After(time.Minute):
		}
		t.Fatalf(format, args...)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		// First past INNODB_TRX's 0.1 s of stale answers, which may hold a
		// wait of the subtest before.
		time.Sleep(150 * time.Millisecond)
		select {
		case err := <-done:
			done <- err
			fatal("%s finished (%v) while another transaction held its %s", txn, err, held)
		default:
		}
		if e.lockWaits() > 0 {
			return done
		}
		if time.Now().After(deadline) {
			fatal("%s never waited for its %s, held by another transaction", txn, held)
		}
	}
}

// testLockTimeout: InnoDB rolls back only the statement that waited too
// long (1205); the worker must roll back the rest of the transaction, and
// report a retryable lock timeout.
func testLockTimeout(e *txnEnv) {
	t, ctx := e.t, e.ctx
	w := e.newWorker()
	defer w.Close()
	if err := mariadb.WorkerExec(ctx, w, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	dYTD := func() int64 {
		return e.int64(`SELECT CAST(d_ytd * 100 AS SIGNED) FROM district WHERE d_w_id = 2 AND d_id = 6`)
	}
	before := dYTD()
	tx := e.holdRows(`SELECT 1 FROM customer WHERE c_w_id = 2 AND c_d_id = 6 AND c_id = 44 FOR UPDATE`)
	_, r0, err := mariadb.SessionCounts(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	// Payment updates its district, then waits for the customer.
	_, err = w.Payment(ctx, &tpcc.PaymentInput{W: 2, D: 6, CW: 2, CD: 6, CID: 44, AmountCents: 777})
	var te *engine.TxnError
	if !errors.As(err, &te) || te.Kind != engine.ErrLockTimeout || !te.Kind.Retryable() || te.SQLState != "HY000" {
		t.Fatalf("Payment on a locked customer: %v, want a retryable lock_timeout", err)
	}
	_, r1, err := mariadb.SessionCounts(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if r1-r0 != 1 {
		t.Errorf("the timed-out Payment counted %d rollbacks, want 1", r1-r0)
	}
	// The district's row is unlocked and unchanged: another connection can
	// lock it at once.
	c := e.otherConn()
	if _, err := c.ExecContext(ctx, `SET SESSION innodb_lock_wait_timeout = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, `UPDATE district SET d_ytd = d_ytd WHERE d_w_id = 2 AND d_id = 6`); err != nil {
		t.Fatalf("the timed-out Payment still holds its district: %v", err)
	}
	if got := dYTD(); got != before {
		t.Fatalf("the timed-out Payment's district update survived: d_ytd %d -> %d", before, got)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Payment(ctx, &tpcc.PaymentInput{W: 2, D: 6, CW: 2, CD: 6, CID: 44, AmountCents: 777}); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if got := dYTD(); got != before+777 {
		t.Fatalf("after the retry d_ytd %d -> %d, want +777", before, got)
	}
}

// testDeadlock makes a Payment the victim of a deadlock: another
// transaction, heavier in InnoDB's eyes (more rows changed), holds the
// Payment's customer and then asks for the district the Payment holds. The
// Payment must report a retryable deadlock (1213, SQLSTATE 40001), count
// one rollback, and leave nothing behind.
func testDeadlock(e *txnEnv) {
	t, ctx := e.t, e.ctx
	w := e.newWorker()
	defer w.Close()
	dYTD := func() int64 {
		return e.int64(`SELECT CAST(d_ytd * 100 AS SIGNED) FROM district WHERE d_w_id = 2 AND d_id = 7`)
	}
	before := dYTD()
	c := e.otherConn()
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `UPDATE customer SET c_balance = c_balance + 1
		WHERE c_w_id = 2 AND c_d_id = 7 AND c_id BETWEEN 50 AND 149`); err != nil {
		t.Fatal(err)
	}
	_, r0, err := mariadb.SessionCounts(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.Payment(ctx, &tpcc.PaymentInput{W: 2, D: 7, CW: 2, CD: 7, CID: 50, AmountCents: 321})
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for e.lockWaits() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the Payment never waited for its customer")
		}
		time.Sleep(150 * time.Millisecond)
	}
	// The Payment holds district (2, 7) and waits for customer (2, 7, 50):
	// asking for the district closes the cycle.
	if _, err := tx.ExecContext(ctx, `UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 2 AND d_id = 7`); err != nil {
		t.Fatalf("the heavier transaction was chosen as the victim: %v", err)
	}
	err = <-done
	var te *engine.TxnError
	if !errors.As(err, &te) || te.Kind != engine.ErrDeadlock || !te.Kind.Retryable() || te.SQLState != "40001" {
		t.Fatalf("Payment in a deadlock: %v, want a retryable deadlock with SQLSTATE 40001", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, r1, err := mariadb.SessionCounts(ctx, w); err != nil || r1-r0 != 1 {
		t.Errorf("the deadlocked Payment counted %d rollbacks (%v), want 1", r1-r0, err)
	}
	if got := dYTD(); got != before {
		t.Fatalf("the deadlocked Payment's district update survived: d_ytd %d -> %d", before, got)
	}
	if _, err := w.Payment(ctx, &tpcc.PaymentInput{W: 2, D: 7, CW: 2, CD: 7, CID: 50, AmountCents: 321}); err != nil {
		t.Fatalf("the retry: %v", err)
	}
}

func testDelivery(e *txnEnv) {
	t, ctx := e.t, e.ctx
	// Warehouse 2, district 1 is untouched: its oldest undelivered order
	// is 2101.
	var cid int
	var sum, balance, cnt int64
	e.query(`SELECT o_c_id, (SELECT CAST(SUM(ol_amount) * 100 AS SIGNED) FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 1 AND ol_o_id = 2101)
		FROM orders WHERE o_w_id = 2 AND o_d_id = 1 AND o_id = 2101`, nil, &cid, &sum)
	e.query(`SELECT CAST(c_balance * 100 AS SIGNED), c_delivery_cnt FROM customer WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = ?`, []any{cid}, &balance, &cnt)

	// Another Delivery holds district 2's oldest NEW-ORDER row, then rolls
	// back. The Delivery waits for it and delivers that order: had it taken
	// the next one (SKIP LOCKED), the district's undelivered orders would
	// have a gap (3.3.2.3).
	var out tpcc.DeliveryOutput
	delivery := func(carrier int) func() error {
		return func() (err error) {
			out, err = e.w.Delivery(ctx, &tpcc.DeliveryInput{W: 2, Carrier: carrier})
			return err
		}
	}
	tx := e.holdRows(`SELECT 1 FROM new_order WHERE no_w_id = 2 AND no_d_id = 2 AND no_o_id = 2101 FOR UPDATE`)
	done := e.startBlocked(tx, "Delivery", "district 2's oldest NEW-ORDER row", delivery(7))
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if out.Delivered[0] != 2101 || out.Delivered[1] != 2101 || out.Skipped != 0 {
		t.Fatalf("Delivery: %+v, want 2101 in districts 1 and 2", out)
	}

	var balanceAfter, cntAfter int64
	e.query(`SELECT CAST(c_balance * 100 AS SIGNED), c_delivery_cnt FROM customer WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = ?`,
		[]any{cid}, &balanceAfter, &cntAfter)
	if balanceAfter != balance+sum || cntAfter != cnt+1 {
		t.Fatalf("customer %d: balance %d -> %d (order sum %d), delivery count %d -> %d", cid, balance, balanceAfter, sum, cnt, cntAfter)
	}
	if n := e.int64(`SELECT COUNT(*) FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 1 AND ol_o_id = 2101
		AND (ol_delivery_d IS NULL OR ol_delivery_d < NOW() - INTERVAL 1 MINUTE)`); n != 0 {
		t.Fatalf("%d lines without OL_DELIVERY_D of now", n)
	}
	if n := e.int64(`SELECT o_carrier_id FROM orders WHERE o_w_id = 2 AND o_d_id = 1 AND o_id = 2101`); n != 7 {
		t.Fatalf("o_carrier_id = %d, want 7", n)
	}
	if n := e.int64(`SELECT COUNT(*) FROM new_order WHERE no_w_id = 2 AND no_d_id = 1 AND no_o_id = 2101`); n != 0 {
		t.Fatal("the NEW-ORDER row of the delivered order is still there")
	}
	// Another Delivery delivers district 3's oldest order (2102 now) and
	// commits: the waiting Delivery goes on to the next, 2103.
	tx = e.holdRows(deliverByHand[0])
	for _, q := range deliverByHand[1:] {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	done = e.startBlocked(tx, "Delivery", "district 3's oldest NEW-ORDER row", delivery(8))
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || out.Delivered[2] != 2103 || out.Delivered[1] != 2102 || out.Skipped != 0 {
		t.Fatalf("Delivery after another delivered its district's oldest order: %+v %v", out, err)
	}

	// A district with nothing to deliver is skipped (2.7.4.2). (Its
	// NEW-ORDER rows are put back afterwards, for the consistency
	// conditions.)
	e.exec(`CREATE TEMPORARY TABLE saved_new_order AS SELECT * FROM new_order WHERE no_w_id = 2 AND no_d_id = 9`)
	e.exec(`DELETE FROM new_order WHERE no_w_id = 2 AND no_d_id = 9`)
	out, err := e.w.Delivery(ctx, &tpcc.DeliveryInput{W: 2, Carrier: 9})
	e.exec(`INSERT INTO new_order SELECT * FROM saved_new_order`)
	e.exec(`DROP TEMPORARY TABLE saved_new_order`)
	if err != nil || out.Skipped != 1 || out.Delivered[8] != 0 || out.Delivered[9] == 0 {
		t.Fatalf("Delivery with an empty district: %+v %v", out, err)
	}
}

// deliverByHand delivers order 2102 of warehouse 2, district 3, as a
// Delivery would.
var deliverByHand = []string{
	`DELETE FROM new_order WHERE no_w_id = 2 AND no_d_id = 3 AND no_o_id = 2102`,
	`UPDATE orders SET o_carrier_id = 1 WHERE o_w_id = 2 AND o_d_id = 3 AND o_id = 2102`,
	`UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = 2 AND ol_d_id = 3 AND ol_o_id = 2102`,
	`UPDATE customer SET c_delivery_cnt = c_delivery_cnt + 1,
	   c_balance = c_balance + (SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 3 AND ol_o_id = 2102)
	 WHERE c_w_id = 2 AND c_d_id = 3 AND c_id = (SELECT o_c_id FROM orders WHERE o_w_id = 2 AND o_d_id = 3 AND o_id = 2102)`,
}

// testInterrupt: Interrupt unblocks a transaction waiting for a lock from
// another goroutine; the error is a lost connection.
func testInterrupt(e *txnEnv) {
	t, ctx := e.t, e.ctx
	w := e.newWorker()
	tx := e.holdRows(`SELECT 1 FROM district WHERE d_w_id = 1 AND d_id = 8 FOR UPDATE`)
	done := make(chan error, 1)
	go func() {
		_, err := w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 8, CW: 1, CD: 8, CID: 3, AmountCents: 100})
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for e.lockWaits() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the Payment never waited for its district")
		}
		time.Sleep(150 * time.Millisecond)
	}
	start := time.Now()
	w.Interrupt()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Interrupt did not unblock the Payment")
	}
	var te *engine.TxnError
	if !errors.As(err, &te) || te.Kind != engine.ErrConnection {
		t.Fatalf("interrupted Payment: %v, want a connection error", err)
	}
	t.Logf("interrupted after %v: %v", time.Since(start), err)
	w.Close()
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// The server ends the session: its wait ends and it holds nothing.
	if _, err := e.w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 8, CW: 1, CD: 8, CID: 3, AmountCents: 100}); err != nil {
		t.Fatalf("Payment after the interrupted one: %v", err)
	}
}

// testBurst runs a few hundred random transactions from four workers at
// once (all on warehouse 1 for most transactions, to contend), then checks
// the consistency conditions of 3.3.2.
func testBurst(e *txnEnv) {
	t, ctx := e.t, e.ctx
	const workers, perWorker = 4, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	counts := make([][tpcc.NumKinds]int, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := e.db.NewWorker(ctx, e.mode)
			if err != nil {
				errs <- err
				return
			}
			defer w.Close()
			r := tpcc.NewRand(uint64(g + 1))
			for range perWorker {
				k, _, err := randomTxn(ctx, w, r, 2)
				counts[g][k]++
				if err != nil {
					errs <- fmt.Errorf("%s: %w", k, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("mix run: %v", counts)
	res := check(t, e.db)
	if !res.OK {
		t.Fatalf("consistency after the burst: failed %v", failed(res))
	}
}

// randomTxn runs one transaction with inputs drawn roughly as 2.4-2.8 do.
// It reports whether a New-Order rolled back.
func randomTxn(ctx context.Context, w engine.Worker, r *tpcc.Rand, warehouses int) (tpcc.Kind, bool, error) {
	const cLast, cID, cItem = 100, 200, 300
	home := 1
	if r.Percent(20) {
		home = r.Range(1, warehouses)
	}
	x := r.Intn(100)
	switch {
	case x < 45:
		in := &tpcc.NewOrderInput{W: home, D: r.Range(1, 10), C: r.NURand(tpcc.NURandACID, cID, 1, 3000), AllLocal: true}
		n := r.Range(tpcc.MinOrderLines, tpcc.MaxOrderLines)
		for range n {
			l := tpcc.OrderLineInput{ItemID: int32(r.NURand(tpcc.NURandAItem, cItem, 1, tpcc.NumItems)), SupplyW: int32(home),
				Quantity: int32(r.Range(1, 10))}
			if r.Percent(5) { // more remote lines than 1%, to contend across warehouses
				l.SupplyW = int32(r.Range(1, warehouses))
			}
			if l.SupplyW != int32(home) {
				in.AllLocal = false
			}
			in.Lines = append(in.Lines, l)
		}
		if r.Percent(3) {
			in.Rollback = true
			in.Lines[n-1].ItemID = tpcc.UnusedItemID
		}
		out, err := w.NewOrder(ctx, in)
		if err == nil && out.RolledBack != in.Rollback {
			err = fmt.Errorf("rolled back %v, input said %v", out.RolledBack, in.Rollback)
		}
		return tpcc.NewOrder, out.RolledBack, err
	case x < 88:
		in := &tpcc.PaymentInput{W: home, D: r.Range(1, 10), AmountCents: int64(r.Range(100, 500000))}
		in.CW, in.CD = in.W, in.D
		if r.Percent(15) {
			in.CW, in.CD = r.Range(1, warehouses), r.Range(1, 10)
		}
		if r.Percent(60) {
			in.ByName, in.CLast = true, tpcc.LastName(r.NURand(tpcc.NURandALast, cLast, 0, 999))
		} else {
			in.CID = r.NURand(tpcc.NURandACID, cID, 1, 3000)
		}
		_, err := w.Payment(ctx, in)
		return tpcc.Payment, false, err
	case x < 92:
		in := &tpcc.OrderStatusInput{W: home, D: r.Range(1, 10)}
		if r.Percent(60) {
			in.ByName, in.CLast = true, tpcc.LastName(r.NURand(tpcc.NURandALast, cLast, 0, 999))
		} else {
			in.CID = r.NURand(tpcc.NURandACID, cID, 1, 3000)
		}
		_, err := w.OrderStatus(ctx, in)
		return tpcc.OrderStatus, false, err
	case x < 96:
		_, err := w.Delivery(ctx, &tpcc.DeliveryInput{W: home, Carrier: r.Range(1, 10)})
		return tpcc.Delivery, false, err
	default:
		out, err := w.StockLevel(ctx, &tpcc.StockLevelInput{W: home, D: r.Range(1, 10), Threshold: r.Range(10, 20)})
		if err == nil && out.LowStock < 0 {
			err = fmt.Errorf("negative low stock %d", out.LowStock)
		}
		return tpcc.StockLevel, false, err
	}
}

// testVerifyOrders: acknowledged New-Orders of the worker are checked
// against ORDER and ORDER-LINE.
func testVerifyOrders(e *txnEnv) {
	t, ctx := e.t, e.ctx
	newOrder := func(d, c int, rollback bool) tpcc.Ack {
		in := &tpcc.NewOrderInput{W: 1, D: d, C: c, Lines: lines(1, 6, 2000+c), Rollback: rollback, AllLocal: true}
		if rollback {
			in.Lines[len(in.Lines)-1].ItemID = tpcc.UnusedItemID
		}
		out, err := e.w.NewOrder(ctx, in)
		if err != nil || out.RolledBack != rollback {
			t.Fatalf("New-Order: %+v, %v", out, err)
		}
		return tpcc.NewAck(in, out)
	}
	committed := newOrder(3, 11, false)
	rolledBack := newOrder(4, 12, true)
	next := newOrder(4, 13, false) // takes the rolled-back order's number
	if next.OID != rolledBack.OID {
		t.Fatalf("the order after a rollback got O_ID %d, want %d", next.OID, rolledBack.OID)
	}
	bad, err := e.db.VerifyOrders(ctx, []tpcc.Ack{committed, rolledBack, next})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 0 {
		t.Fatalf("acknowledged orders as stored are reported: %+v", bad)
	}
	claimed := committed
	claimed.RolledBack = true // a rollback whose order is there after all
	if bad, err := e.db.VerifyOrders(ctx, []tpcc.Ack{claimed}); err != nil || len(bad) != 1 {
		t.Fatalf("a committed order acknowledged as rolled back: violations %+v, %v", bad, err)
	}
}

func testRoutinesMissing(e *txnEnv) {
	t, ctx := e.t, e.ctx
	e.exec(`DROP PROCEDURE tpcc_payment`)
	_, err := e.db.NewWorker(ctx, engine.ModeRoutines)
	if !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), "--routines-only") || !strings.Contains(err.Error(), "tpcc_payment") {
		t.Fatalf("worker without tpcc_payment: %v", err)
	}
	// Another version is refused too.
	e.exec(`ALTER PROCEDURE tpcc_delivery COMMENT 'tierbench routines 0'`)
	if _, err := e.db.NewWorker(ctx, engine.ModeRoutines); !errors.Is(err, engine.ErrBadInput) {
		t.Fatalf("worker with routines of another version: %v", err)
	}
	// Statements mode does not need them.
	w, err := e.db.NewWorker(ctx, engine.ModeStatements)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := e.db.InstallRoutines(ctx); err != nil {
		t.Fatal(err)
	}
	// Installing twice is fine.
	if err := e.db.InstallRoutines(ctx); err != nil {
		t.Fatal(err)
	}
	w, err = e.db.NewWorker(ctx, engine.ModeRoutines)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 1, CW: 1, CD: 1, CID: 1, AmountCents: 100}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	info, err := e.db.Schema(ctx)
	if err != nil || info.Warehouses != 2 || info.BuiltAt.IsZero() {
		t.Fatalf("Schema: %+v %v", info, err)
	}
}

func TestNewWorkerErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openTest(t, mariatest.NewDatabase(t))
	if _, err := db.NewWorker(ctx, "procedures"); !errors.Is(err, engine.ErrBadInput) {
		t.Fatalf("unknown mode: %v", err)
	}
	if _, err := db.NewWorker(ctx, engine.ModeRoutines); !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), "routines-only") {
		t.Fatalf("routines mode on an empty database: %v", err)
	}
	if _, err := db.NewWorker(ctx, engine.ModeStatements); !errors.Is(err, engine.ErrNoSchema) {
		t.Fatalf("statements mode on an empty database: %v", err)
	}
	if err := db.InstallRoutines(ctx); !errors.Is(err, engine.ErrNoSchema) {
		t.Fatalf("InstallRoutines on an empty database: %v", err)
	}
	if _, err := db.Counters(ctx); !errors.Is(err, engine.ErrNoSchema) {
		t.Fatalf("Counters of an empty database: %v", err)
	}
}

// BenchmarkWorker measures each transaction, one worker at a time, on a
// one-warehouse schema, reporting the client's CPU per transaction
// (cpu-µs/op: the benchmark process's user+system time, which excludes the
// server's). Run with: go test -run '^$' -bench Worker ./internal/engine/mariadb
// TIERBENCH_BENCH_DSN names a database with a built schema to use instead
// of building one, so that a CPU profile shows the transactions only;
// When the server runs on this host (its PID from ServerInfo, or
// TIERBENCH_BENCH_SERVER_PID), its CPU per transaction is reported too
// (server-cpu-µs/op, in steps of the kernel's 10 ms tick).
func BenchmarkWorker(b *testing.B) {
	ctx := context.Background()
	dsn := os.Getenv("TIERBENCH_BENCH_DSN")
	if dsn == "" {
		dsn = mariatest.NewDatabase(b)
	}
	db, err := mariadb.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Schema(ctx); err != nil {
		if _, err := db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 1, Workers: 2}); err != nil {
			b.Fatal(err)
		}
		if err := db.InstallRoutines(ctx); err != nil {
			b.Fatal(err)
		}
	}
	serverPID := os.Getenv("TIERBENCH_BENCH_SERVER_PID")
	if _, pid, err := db.ServerInfo(ctx); serverPID == "" && err == nil && pid > 0 {
		serverPID = fmt.Sprint(pid)
	}
	serverCPU := func(b *testing.B) serverCPUReading {
		if serverPID == "" {
			return serverCPUReading{}
		}
		return serverCPUReading{serverPID, procTicks(b, serverPID)}
	}
	// round_trip is the floor: SELECT 1 over the worker's connection.
	kinds := []string{"round_trip", "new_order", "payment", "order_status", "delivery", "stock_level", "mix"}
	for _, mode := range []string{engine.ModeRoutines, engine.ModeStatements} {
		for _, kind := range kinds {
			b.Run(mode+"/"+kind, func(b *testing.B) {
				w, err := db.NewWorker(ctx, mode)
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				r := tpcc.NewRand(1)
				in := &tpcc.NewOrderInput{W: 1, AllLocal: true}
				run := func() error {
					switch kind {
					case "round_trip":
						_, err := mariadb.WorkerInt(ctx, w, "SELECT 1")
						return err
					case "new_order":
						in.D, in.C = r.Range(1, 10), r.Range(1, 3000)
						in.Lines = in.Lines[:0]
						for i := range 10 {
							in.Lines = append(in.Lines, tpcc.OrderLineInput{ItemID: int32(r.Range(1, 90000) + 7*i), SupplyW: 1, Quantity: int32(1 + i)})
						}
						_, err := w.NewOrder(ctx, in)
						return err
					case "payment":
						_, err := w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 1, CW: 1, CD: r.Range(1, 10), CID: r.Range(1, 3000), AmountCents: 1234})
						return err
					case "order_status":
						_, err := w.OrderStatus(ctx, &tpcc.OrderStatusInput{W: 1, D: r.Range(1, 10), CID: r.Range(1, 3000)})
						return err
					case "delivery":
						_, err := w.Delivery(ctx, &tpcc.DeliveryInput{W: 1, Carrier: 1})
						return err
					case "stock_level":
						_, err := w.StockLevel(ctx, &tpcc.StockLevelInput{W: 1, D: r.Range(1, 10), Threshold: 15})
						return err
					}
					_, _, err := randomTxn(ctx, w, r, 1)
					return err
				}
				if err := run(); err != nil { // prepares what is prepared lazily
					b.Fatal(err)
				}
				var before, after syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
				server := serverCPU(b)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
				b.ReportMetric(cpuMicros(before, after)/float64(b.N), "cpu-µs/op")
				server.report(b, b.N)
			})
		}
		// The mix from several workers at once, as a run drives it: the
		// client's per-transaction CPU without idle-time overhead.
		b.Run(mode+"/mix-parallel", func(b *testing.B) {
			const workers = 4
			ws := make([]engine.Worker, workers)
			for i := range ws {
				w, err := db.NewWorker(ctx, mode)
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				ws[i] = w
			}
			var before, after syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			server := serverCPU(b)
			b.ResetTimer()
			var wg sync.WaitGroup
			for i, w := range ws {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := tpcc.NewRand(uint64(i + 10))
					for range b.N / workers {
						if _, _, err := randomTxn(ctx, w, r, 1); err != nil {
							var te *engine.TxnError
							if errors.As(err, &te) && te.Kind.Retryable() {
								continue
							}
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			b.ReportMetric(cpuMicros(before, after)/float64(max(b.N/workers*workers, 1)), "cpu-µs/op")
			server.report(b, max(b.N/workers*workers, 1))
		})
	}
}

// cpuMicros is the process's user+system CPU between two readings, in µs.
func cpuMicros(before, after syscall.Rusage) float64 {
	cpu := time.Duration(syscall.TimevalToNsec(after.Utime) - syscall.TimevalToNsec(before.Utime) +
		syscall.TimevalToNsec(after.Stime) - syscall.TimevalToNsec(before.Stime))
	return float64(cpu.Microseconds())
}

// serverCPUReading is the server process's CPU time at the start of a
// benchmark, when TIERBENCH_BENCH_SERVER_PID names it.
type serverCPUReading struct {
	pid   string
	ticks int64
}

// report adds the server's CPU per operation over n operations.
func (r serverCPUReading) report(b *testing.B, n int) {
	if r.pid == "" {
		return
	}
	const tick = 10 * time.Millisecond // USER_HZ = 100 on Linux
	d := time.Duration(procTicks(b, r.pid)-r.ticks) * tick
	b.ReportMetric(float64(d.Microseconds())/float64(n), "server-cpu-µs/op")
}

// procTicks is a process's user+system time (all its threads) in clock ticks.
func procTicks(b *testing.B, pid string) int64 {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's closing parenthesis: utime and stime
	// are the 12th and 13th.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	var u, s int64
	if _, err := fmt.Sscan(f[11], &u); err != nil {
		b.Fatal(err)
	}
	if _, err := fmt.Sscan(f[12], &s); err != nil {
		b.Fatal(err)
	}
	return u + s
}
