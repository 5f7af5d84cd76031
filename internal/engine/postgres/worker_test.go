package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// TestTransactions runs the five transactions in both modes against a
// fresh two-warehouse schema per mode (two, so lines and payments can be
// remote), checks their effects row by row, then runs a concurrent burst
// and the consistency conditions.
func TestTransactions(t *testing.T) {
	for _, mode := range []string{engine.ModeRoutines, engine.ModeStatements} {
		t.Run(mode, func(t *testing.T) { testTransactions(t, mode) })
	}
}

// txnEnv is one mode's built schema, a worker and a plain connection for
// setting up and inspecting rows.
type txnEnv struct {
	t    *testing.T
	ctx  context.Context
	db   *DB
	conn *pgx.Conn
	w    engine.Worker
	mode string
}

func (e *txnEnv) exec(sql string, args ...any) {
	e.t.Helper()
	if _, err := e.conn.Exec(e.ctx, sql, args...); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
}

// query scans one row of sql into dest.
func (e *txnEnv) query(sql string, args []any, dest ...any) {
	e.t.Helper()
	if err := e.conn.QueryRow(e.ctx, sql, args...).Scan(dest...); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
}

func (e *txnEnv) int64(sql string, args ...any) int64 {
	e.t.Helper()
	var v int64
	e.query(sql, args, &v)
	return v
}

func (e *txnEnv) nextOID(w, d int) int {
	e.t.Helper()
	return int(e.int64(`SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2`, w, d))
}

func (e *txnEnv) newWorker() engine.Worker {
	e.t.Helper()
	w, err := e.db.NewWorker(e.ctx, e.mode)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

func testTransactions(t *testing.T, mode string) {
	ctx := context.Background()
	db, conn := openTest(t, pgtest.NewDatabase(t))
	if _, err := db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 2, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	e := &txnEnv{t: t, ctx: ctx, db: db, conn: conn, mode: mode}
	e.w = e.newWorker()
	t.Cleanup(e.w.Close)

	t.Run("each", func(t *testing.T) { e.t = t; testEach(e) })
	t.Run("rollback", func(t *testing.T) { e.t = t; testRollback(e) })
	t.Run("payment-by-name", func(t *testing.T) { e.t = t; testPaymentByName(e) })
	t.Run("stock", func(t *testing.T) { e.t = t; testStock(e) })
	t.Run("lock-order", func(t *testing.T) { e.t = t; testLockOrder(e) })
	t.Run("payment-lock-order", func(t *testing.T) { e.t = t; testPaymentLockOrder(e) })
	t.Run("delivery", func(t *testing.T) { e.t = t; testDelivery(e) })
	t.Run("after-error", func(t *testing.T) { e.t = t; testAfterError(e) })
	t.Run("publish-while-busy", func(t *testing.T) { e.t = t; testPublishWhileBusy(e) })
	t.Run("burst", func(t *testing.T) { e.t = t; testBurst(e) })
	t.Run("verify-orders", func(t *testing.T) { e.t = t; testVerifyOrders(e) })
	if mode == engine.ModeRoutines {
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
	var carrierNull bool
	e.query(`SELECT o_ol_cnt, o_all_local, o_c_id, o_carrier_id IS NULL FROM orders WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = $1`,
		[]any{no.OID}, &olCnt, &allLocal, &cid, &carrierNull)
	if olCnt != 10 || allLocal != 1 || cid != 77 || !carrierNull {
		t.Fatalf("order row: ol_cnt %d all_local %d c_id %d carrier null %v", olCnt, allLocal, cid, carrierNull)
	}
	if n := e.int64(`SELECT count(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = 4 AND no_o_id = $1`, no.OID); n != 1 {
		t.Fatalf("new_order rows: %d", n)
	}
	total := e.int64(`SELECT round(sum(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax) * 100)::bigint
		FROM order_line, customer, warehouse, district
		WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id = $1 AND c_w_id = 1 AND c_d_id = 4 AND c_id = 77
		  AND w_id = 1 AND d_w_id = 1 AND d_id = 4
		GROUP BY c_discount, w_tax, d_tax`, no.OID)
	if no.TotalCents != total || total <= 0 {
		t.Fatalf("total %d cents, the rows say %d", no.TotalCents, total)
	}
	// ol_number follows the input; OL_AMOUNT = qty * I_PRICE; not delivered.
	bad := e.int64(`SELECT count(*) FROM order_line JOIN item ON i_id = ol_i_id
		WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id = $1
		  AND (ol_i_id <> 500 + 7 * (ol_number - 1) OR ol_quantity <> 1 + (ol_number - 1) % 10
		    OR ol_amount <> ol_quantity * i_price OR ol_delivery_d IS NOT NULL OR ol_supply_w_id <> 1)`, no.OID)
	if bad != 0 {
		t.Fatalf("%d order lines differ from the input", bad)
	}

	// Payment by number.
	p, err := e.w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 4, CW: 1, CD: 4, CID: 77, AmountCents: 100})
	if err != nil || p.CID != 77 {
		t.Fatalf("Payment: %+v %v", p, err)
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
	want := e.int64(`SELECT count(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = 1 AND s_i_id = ol_i_id
		WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id >= $1 - 20 AND ol_o_id < $1 AND s_quantity < 20`, prev+1)
	if int64(sl.LowStock) != want {
		t.Fatalf("Stock-Level: %d, want %d", sl.LowStock, want)
	}
	// Everything above over 100 is low: every item of the last 20 orders.
	sl, err = e.w.StockLevel(ctx, &tpcc.StockLevelInput{W: 1, D: 4, Threshold: 1000})
	all := e.int64(`SELECT count(DISTINCT ol_i_id) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id >= $1 - 20 AND ol_o_id < $1`, prev+1)
	if err != nil || int64(sl.LowStock) != all || all < 10 {
		t.Fatalf("Stock-Level with threshold 1000: %+v %v, want %d", sl, err, all)
	}
}

// xacts reads the database's committed and rolled-back transaction counts.
func (e *txnEnv) xacts() (commits, rollbacks int64) {
	e.t.Helper()
	e.query(`SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = current_database()`, nil, &commits, &rollbacks)
	return commits, rollbacks
}

// testAfterError runs, on one worker, a New-Order the server rolls back
// (an error reply), then a Payment and a New-Order that commit: each must
// get its own reply, so a call reads everything the last one left. Then
// the worker's backend is terminated, and its next call is a lost
// connection.
func testAfterError(e *txnEnv) {
	t, ctx := e.t, e.ctx
	w := e.newWorker()
	defer w.Close()
	prev := e.nextOID(1, 3)
	ls := lines(1, 3, 1000)
	ls[len(ls)-1].ItemID = tpcc.UnusedItemID
	out, err := w.NewOrder(ctx, &tpcc.NewOrderInput{W: 1, D: 3, C: 1, Lines: ls, Rollback: true, AllLocal: true})
	if err != nil || !out.RolledBack || out.OID != prev {
		t.Fatalf("rolled-back New-Order: %+v, %v; want RolledBack with O_ID %d", out, err, prev)
	}
	pay, err := w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 3, CW: 1, CD: 3, CID: 7, AmountCents: 1234})
	if err != nil || pay.CID != 7 {
		t.Fatalf("Payment after the rollback: %+v, %v; want customer 7", pay, err)
	}
	out, err = w.NewOrder(ctx, &tpcc.NewOrderInput{W: 1, D: 3, C: 2, Lines: lines(1, 3, 1000), AllLocal: true})
	if err != nil || out.RolledBack || out.OID != prev {
		t.Fatalf("New-Order after them: %+v, %v; want O_ID %d committed", out, err, prev)
	}
	cw := e.newWorker()
	defer cw.Close()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := cw.Payment(cancelled, &tpcc.PaymentInput{W: 1, D: 3, CW: 1, CD: 3, CID: 7, AmountCents: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a call with its context ended: %v; want %v", err, context.Canceled)
	}
	pid := workerPID(w)
	var ok bool
	e.query(`SELECT pg_terminate_backend($1, 5000)`, []any{pid}, &ok)
	if !ok {
		t.Fatalf("backend %d was not terminated", pid)
	}
	_, err = w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 3, CW: 1, CD: 3, CID: 7, AmountCents: 1})
	var te *engine.TxnError
	if !errors.As(err, &te) || te.Kind != engine.ErrConnection {
		t.Fatalf("a call on a terminated backend: %v; want a lost connection", err)
	}
}

// workerPID is the backend process of w's connection.
func workerPID(w engine.Worker) uint32 {
	switch w := w.(type) {
	case *routineWorker:
		return w.conn.PgConn().PID()
	case *stmtWorker:
		return w.conn.PgConn().PID()
	}
	return 0
}

// testPublishWhileBusy asks a worker to publish its statistics while its
// New-Order waits for a district row the test holds, as the driver may at
// an edge when a transaction outlasts the edge's wait. The ask must be
// refused at once, not sent beside the call (which would leave one of the
// two waiting for a reply the other read), and the New-Order must then
// finish with its own result.
func testPublishWhileBusy(e *txnEnv) {
	t, ctx := e.t, e.ctx
	w := e.newWorker()
	defer w.Close()
	tx, err := e.conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var next int
	if err := tx.QueryRow(ctx, `SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4 FOR UPDATE`).Scan(&next); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out tpcc.NewOrderOutput
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := w.NewOrder(ctx, &tpcc.NewOrderInput{W: 1, D: 4, C: 3, Lines: lines(1, 5, 2000), AllLocal: true})
		done <- result{out, err}
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if e.int64(`SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, workerPID(w)) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the New-Order never waited for the district row")
		}
	}
	asked := make(chan error, 1)
	go func() {
		ran, err := w.PublishStats(ctx)
		if ran && err == nil {
			err = errors.New("it ran")
		}
		asked <- err
	}()
	select {
	case err := <-asked:
		if err == nil {
			t.Fatal("PublishStats during a call returned no error")
		}
	case <-time.After(time.Minute):
		t.Fatal("PublishStats during a call has not returned after a minute")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.out.RolledBack || r.out.OID != next {
		t.Fatalf("the New-Order after the refused ask: %+v, %v; want O_ID %d committed", r.out, r.err, next)
	}
	if _, err := w.PublishStats(ctx); err != nil {
		t.Fatalf("PublishStats between transactions: %v", err)
	}
}

func testRollback(e *txnEnv) {
	t, ctx := e.t, e.ctx
	before, err := e.db.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, rollbacks := e.xacts()
	prev := e.nextOID(2, 7)
	ls := lines(2, 6, 1000)
	ls[len(ls)-1].ItemID = tpcc.UnusedItemID // 2.4.1.4: the last item is unused
	// A worker of its own: its backend publishes its statistics when it
	// exits, so xact_rollback shows the rollback soon after Close.
	w := e.newWorker()
	out, err := w.NewOrder(ctx, &tpcc.NewOrderInput{W: 2, D: 7, C: 1, Lines: ls, Rollback: true, AllLocal: true})
	w.Close()
	if err != nil {
		t.Fatalf("rolled-back New-Order returned an error: %v", err)
	}
	if !out.RolledBack || out.OID != prev {
		t.Fatalf("rolled-back New-Order: %+v, want RolledBack with O_ID %d", out, prev)
	}
	if got := e.nextOID(2, 7); got != prev {
		t.Fatalf("d_next_o_id went from %d to %d", prev, got)
	}
	if n := e.int64(`SELECT count(*) FROM orders WHERE o_w_id = 2 AND o_d_id = 7 AND o_id = $1`, prev); n != 0 {
		t.Fatal("the rolled-back order was stored")
	}
	if n := e.int64(`SELECT count(*) FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 7 AND ol_o_id = $1`, prev); n != 0 {
		t.Fatal("lines of the rolled-back order were stored")
	}
	if n := e.int64(`SELECT sum(s_order_cnt) FROM stock WHERE s_w_id = 2 AND s_i_id = ANY($1)`, []int32{1000, 1007, 1014}); n != 0 {
		t.Fatalf("the rolled-back order changed stock (s_order_cnt %d)", n)
	}
	// pg_stat_database lags (see Counters): poll.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, r := e.xacts()
		after, err := e.db.Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r > rollbacks && after.Transactions > before.Transactions {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("xact_rollback stayed at %d (was %d); Counters %+v, before %+v", r, rollbacks, after, before)
		}
		time.Sleep(200 * time.Millisecond)
	}
	after, err := e.db.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := e.int64(`SELECT sum(d_next_o_id) FROM district`); after.SumNextOID != want {
		t.Fatalf("Counters.SumNextOID = %d, want %d", after.SumNextOID, want)
	}
}

func testPaymentByName(e *txnEnv) {
	t, ctx := e.t, e.ctx
	// Three customers of district (1, 2) share a last name nobody else has;
	// sorted by C_FIRST the middle one is customer 9.
	e.exec(`UPDATE customer SET c_last = 'TESTNAME', c_first = CASE c_id WHEN 5 THEN 'CCCC' WHEN 17 THEN 'AAAA' ELSE 'BBBB' END,
		c_credit = CASE c_id WHEN 9 THEN 'BC' ELSE c_credit END
		WHERE c_w_id = 1 AND c_d_id = 2 AND c_id IN (5, 9, 17)`)
	if n := e.int64(`SELECT count(*) FROM customer WHERE c_last = 'TESTNAME'`); n != 3 {
		t.Fatalf("%d customers named TESTNAME", n)
	}
	type snap struct {
		balance, ytd string
		cnt          int
		wYTD, dYTD   string
		history      int64
	}
	read := func() snap {
		var s snap
		e.query(`SELECT c_balance::text, c_ytd_payment::text, c_payment_cnt FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 9`,
			nil, &s.balance, &s.ytd, &s.cnt)
		e.query(`SELECT w_ytd::text FROM warehouse WHERE w_id = 1`, nil, &s.wYTD)
		e.query(`SELECT d_ytd::text FROM district WHERE d_w_id = 1 AND d_id = 3`, nil, &s.dYTD)
		s.history = e.int64(`SELECT count(*) FROM history`)
		return s
	}
	before := read()
	// Paid at district 3 for a customer of district 2.
	p, err := e.w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 3, CW: 1, CD: 2, ByName: true, CLast: "TESTNAME", AmountCents: 12345})
	if err != nil || p.CID != 9 {
		t.Fatalf("Payment by name: %+v %v, want customer 9", p, err)
	}
	after := read()
	var delta []string
	e.query(`SELECT ARRAY[($1::numeric - $2::numeric)::text, ($3::numeric - $4::numeric)::text,
		($5::numeric - $6::numeric)::text, ($7::numeric - $8::numeric)::text]`,
		[]any{before.balance, after.balance, after.ytd, before.ytd, after.wYTD, before.wYTD, after.dYTD, before.dYTD}, &delta)
	for i, what := range []string{"c_balance fell", "c_ytd_payment grew", "w_ytd grew", "d_ytd grew"} {
		if delta[i] != "123.45" {
			t.Errorf("%s by %s, want 123.45", what, delta[i])
		}
	}
	if after.cnt != before.cnt+1 || after.history != before.history+1 {
		t.Fatalf("c_payment_cnt %d -> %d, history %d -> %d", before.cnt, after.cnt, before.history, after.history)
	}
	var hOK bool
	e.query(`SELECT h.h_data = w_name || '    ' || d_name AND h.h_amount = 123.45
		FROM history h, warehouse, district
		WHERE h_c_id = 9 AND h_c_d_id = 2 AND h_c_w_id = 1 AND h_d_id = 3 AND h_w_id = 1 AND h_amount = 123.45
		  AND w_id = 1 AND d_w_id = 1 AND d_id = 3`, nil, &hOK)
	if !hOK {
		t.Fatal("history row has the wrong H_DATA")
	}
	// 2.5.2.2: a bad-credit customer's C_DATA starts with the payment.
	var data string
	e.query(`SELECT c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 9`, nil, &data)
	if !strings.HasPrefix(data, "9 2 1 3 1 123.45 | ") || len(data) > 500 {
		t.Fatalf("C_DATA of the BC customer: %.60q (%d chars)", data, len(data))
	}

	// Order-Status by name picks the same customer.
	os, err := e.w.OrderStatus(ctx, &tpcc.OrderStatusInput{W: 1, D: 2, ByName: true, CLast: "TESTNAME"})
	if err != nil || os.CID != 9 || os.OID == 0 || os.Lines < tpcc.MinOrderLines {
		t.Fatalf("Order-Status by name: %+v %v", os, err)
	}
	// A name nobody has is an error, not a crash.
	_, err = e.w.Payment(ctx, &tpcc.PaymentInput{W: 1, D: 3, CW: 1, CD: 2, ByName: true, CLast: "NOSUCHNAME", AmountCents: 100})
	var te *engine.TxnError
	if !errors.As(err, &te) || te.Kind != engine.ErrOther {
		t.Fatalf("Payment for an unknown name: %v, want a TxnError of kind other", err)
	}
	// The failed Payment left nothing behind, and the worker still works.
	if got := read(); got.wYTD != after.wYTD || got.history != after.history {
		t.Fatalf("failed Payment changed w_ytd %s -> %s, history %d -> %d", after.wYTD, got.wYTD, after.history, got.history)
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
		rows, err := e.conn.Query(ctx, `SELECT s_w_id, s_i_id, s_quantity, s_ytd::int, s_order_cnt, s_remote_cnt FROM stock
			WHERE (s_w_id = 1 AND s_i_id IN (101, 102, 104)) OR (s_w_id = 2 AND s_i_id = 103)`)
		if err != nil {
			t.Fatal(err)
		}
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
	bad := e.int64(`SELECT count(*) FROM order_line JOIN stock ON s_w_id = ol_supply_w_id AND s_i_id = ol_i_id
		WHERE ol_w_id = 1 AND ol_d_id = 5 AND ol_o_id = $1 AND ol_dist_info <> s_dist_05`, out.OID)
	if bad != 0 {
		t.Fatalf("%d lines with the wrong OL_DIST_INFO", bad)
	}
	var numbers []int32
	e.query(`SELECT array_agg(ol_i_id ORDER BY ol_number) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 5 AND ol_o_id = $1`,
		[]any{out.OID}, &numbers)
	if fmt.Sprint(numbers) != "[104 101 103 102 104]" {
		t.Fatalf("lines by ol_number: %v", numbers)
	}
	if n := e.int64(`SELECT o_all_local FROM orders WHERE o_w_id = 1 AND o_d_id = 5 AND o_id = $1`, out.OID); n != 0 {
		t.Fatalf("o_all_local = %d for an order with a remote line", n)
	}
	// Stock-Level counts distinct items: item 104, on two lines of the
	// order above, counts once.
	var lineCount, distinct int64
	e.query(`SELECT count(*), count(DISTINCT ol_i_id) FROM order_line
		WHERE ol_w_id = 1 AND ol_d_id = 5 AND ol_o_id >= $1 - 19 AND ol_o_id <= $1`, []any{out.OID}, &lineCount, &distinct)
	sl, err := e.w.StockLevel(ctx, &tpcc.StockLevelInput{W: 1, D: 5, Threshold: 1000})
	if err != nil || int64(sl.LowStock) != distinct || lineCount <= distinct {
		t.Fatalf("Stock-Level with threshold 1000: %+v %v, want %d distinct items of %d lines", sl, err, distinct, lineCount)
	}
}

// holdRows runs sql (a SELECT ... FOR UPDATE) on a connection of its own,
// in a transaction it leaves open, so the rows stay locked until the
// caller rolls it back (or the test ends).
func (e *txnEnv) holdRows(sql string) pgx.Tx {
	e.t.Helper()
	c, err := e.db.connect(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close(context.Background()) })
	tx, err := c.Begin(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { tx.Rollback(context.Background()) })
	if _, err := tx.Exec(e.ctx, sql); err != nil {
		e.t.Fatal(err)
	}
	return tx
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
func (e *txnEnv) blockedWithout(tx pgx.Tx, txn, held, free, probe string, run func() error) {
	t, ctx := e.t, e.ctx
	t.Helper()
	done := e.startBlocked(txn, held, run)
	var lockErr error
	if ptx, err := e.conn.Begin(ctx); err != nil {
		t.Fatal(err)
	} else {
		_, lockErr = ptx.Exec(ctx, probe)
		_ = ptx.Rollback(ctx)
	}
	if err := tx.Rollback(ctx); err != nil {
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
// row lock (another transaction holds the row named held), with the
// channel its outcome comes on. It fails the test if txn finishes first.
func (e *txnEnv) startBlocked(txn, held string, run func() error) <-chan error {
	t := e.t
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- run() }()
	deadline := time.Now().Add(30 * time.Second)
	for e.int64(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`) == 0 {
		select {
		case err := <-done:
			t.Fatalf("%s finished (%v) while another transaction held its %s", txn, err, held)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never waited for its %s, held by another transaction", txn, held)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return done
}

func testDelivery(e *txnEnv) {
	t, ctx := e.t, e.ctx
	// Warehouse 2, district 1 is untouched: its oldest undelivered order
	// is 2101.
	var cid int
	var sum, balance string
	var cnt int
	e.query(`SELECT o_c_id, (SELECT sum(ol_amount) FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 1 AND ol_o_id = 2101)::text
		FROM orders WHERE o_w_id = 2 AND o_d_id = 1 AND o_id = 2101`, nil, &cid, &sum)
	e.query(`SELECT c_balance::text, c_delivery_cnt FROM customer WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = $1`, []any{cid}, &balance, &cnt)

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
	done := e.startBlocked("Delivery", "district 2's oldest NEW-ORDER row", delivery(7))
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if out.Delivered[0] != 2101 || out.Delivered[1] != 2101 || out.Skipped != 0 {
		t.Fatalf("Delivery: %+v, want 2101 in districts 1 and 2", out)
	}

	var ok bool
	e.query(`SELECT c_balance = $1::numeric + $2::numeric AND c_delivery_cnt = $3 + 1 FROM customer
		WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = $4`, []any{balance, sum, cnt, cid}, &ok)
	if !ok {
		t.Fatalf("customer %d: balance or delivery count not updated (balance was %s, order sum %s)", cid, balance, sum)
	}
	if n := e.int64(`SELECT count(*) FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 1 AND ol_o_id = 2101 AND ol_delivery_d IS NULL`); n != 0 {
		t.Fatalf("%d lines without OL_DELIVERY_D", n)
	}
	if n := e.int64(`SELECT o_carrier_id FROM orders WHERE o_w_id = 2 AND o_d_id = 1 AND o_id = 2101`); n != 7 {
		t.Fatalf("o_carrier_id = %d, want 7", n)
	}
	if n := e.int64(`SELECT count(*) FROM new_order WHERE no_w_id = 2 AND no_d_id = 1 AND no_o_id = 2101`); n != 0 {
		t.Fatal("the NEW-ORDER row of the delivered order is still there")
	}

	// Another Delivery delivers district 3's oldest order (2102 now) and
	// commits: the waiting Delivery goes on to the next, 2103.
	tx = e.holdRows(deliverByHand)
	done = e.startBlocked("Delivery", "district 3's oldest NEW-ORDER row", delivery(8))
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || out.Delivered[2] != 2103 || out.Delivered[1] != 2102 || out.Skipped != 0 {
		t.Fatalf("Delivery after another delivered its district's oldest order: %+v %v", out, err)
	}
}

// deliverByHand delivers order 2102 of warehouse 2, district 3, as a
// Delivery would.
const deliverByHand = `DELETE FROM new_order WHERE no_w_id = 2 AND no_d_id = 3 AND no_o_id = 2102;
UPDATE orders SET o_carrier_id = 1 WHERE o_w_id = 2 AND o_d_id = 3 AND o_id = 2102;
UPDATE order_line SET ol_delivery_d = now() WHERE ol_w_id = 2 AND ol_d_id = 3 AND ol_o_id = 2102;
UPDATE customer SET c_delivery_cnt = c_delivery_cnt + 1,
  c_balance = c_balance + (SELECT sum(ol_amount) FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 3 AND ol_o_id = 2102)
 WHERE c_w_id = 2 AND c_d_id = 3 AND c_id = (SELECT o_c_id FROM orders WHERE o_w_id = 2 AND o_d_id = 3 AND o_id = 2102)`

// testBurst runs a few hundred random transactions from two workers at once
// (both on warehouse 1 for New-Order, Payment and Delivery, to contend),
// then checks the consistency conditions of 3.3.2.
func testBurst(e *txnEnv) {
	t, ctx := e.t, e.ctx
	const perWorker = 200
	var wg sync.WaitGroup
	errs := make(chan error, 2*perWorker)
	counts := make([][tpcc.NumKinds]int, 2)
	for g := range 2 {
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
				k, err := randomTxn(ctx, w, r, 2)
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
	for _, c := range res.Conditions {
		if c.ID == "3.3.2.11" && c.Scope != "not-applicable" {
			t.Fatalf("3.3.2.11: %+v", c)
		}
	}
}

// randomTxn runs one transaction with inputs drawn roughly as 2.4-2.8 do.
func randomTxn(ctx context.Context, w engine.Worker, r *tpcc.Rand, warehouses int) (tpcc.Kind, error) {
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
		return tpcc.NewOrder, err
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
		return tpcc.Payment, err
	case x < 92:
		in := &tpcc.OrderStatusInput{W: home, D: r.Range(1, 10)}
		if r.Percent(60) {
			in.ByName, in.CLast = true, tpcc.LastName(r.NURand(tpcc.NURandALast, cLast, 0, 999))
		} else {
			in.CID = r.NURand(tpcc.NURandACID, cID, 1, 3000)
		}
		_, err := w.OrderStatus(ctx, in)
		return tpcc.OrderStatus, err
	case x < 96:
		_, err := w.Delivery(ctx, &tpcc.DeliveryInput{W: home, Carrier: r.Range(1, 10)})
		return tpcc.Delivery, err
	default:
		out, err := w.StockLevel(ctx, &tpcc.StockLevelInput{W: home, D: r.Range(1, 10), Threshold: r.Range(10, 20)})
		if err == nil && out.LowStock < 0 {
			err = fmt.Errorf("negative low stock %d", out.LowStock)
		}
		return tpcc.StockLevel, err
	}
}

func testRoutinesMissing(e *txnEnv) {
	t, ctx := e.t, e.ctx
	e.exec(`DROP FUNCTION tpcc_routines_version()`)
	_, err := e.db.NewWorker(ctx, engine.ModeRoutines)
	if !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), "--routines-only") {
		t.Fatalf("worker without routines: %v", err)
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
	if _, err := w.StockLevel(ctx, &tpcc.StockLevelInput{W: 1, D: 1, Threshold: 15}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	info, err := e.db.Schema(ctx)
	if err != nil || info.Warehouses != 2 || info.BuiltAt.IsZero() {
		t.Fatalf("Schema: %+v %v", info, err)
	}
}

func TestNewWorkerErrors(t *testing.T) {
	ctx := context.Background()
	db, _ := openTest(t, pgtest.NewDatabase(t))
	if _, err := db.NewWorker(ctx, "procedures"); !errors.Is(err, engine.ErrBadInput) {
		t.Fatalf("unknown mode: %v", err)
	}
	if _, err := db.NewWorker(ctx, engine.ModeRoutines); !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), "routines-only") {
		t.Fatalf("routines mode on an empty database: %v", err)
	}
	if _, err := db.Schema(ctx); !errors.Is(err, engine.ErrNoSchema) {
		t.Fatalf("Schema of an empty database: %v", err)
	}
	if err := db.InstallRoutines(ctx); !errors.Is(err, engine.ErrNoSchema) {
		t.Fatalf("InstallRoutines on an empty database: %v", err)
	}
	if _, err := db.Counters(ctx); !errors.Is(err, engine.ErrNoSchema) {
		t.Fatalf("Counters of an empty database: %v", err)
	}
}

func TestClassify(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("calling: %w", &pgconn.PgError{Code: code, Message: "m"}) }
	cases := []struct {
		name       string
		err        error
		connClosed bool
		kind       engine.ErrorKind
		state      string
	}{
		{"serialization", pg("40001"), false, engine.ErrSerialization, "40001"},
		{"deadlock", pg("40P01"), false, engine.ErrDeadlock, "40P01"},
		{"unique violation", pg("23505"), false, engine.ErrOther, "23505"},
		{"raise", pg("P0001"), false, engine.ErrOther, "P0001"},
		{"admin shutdown", pg("57P01"), false, engine.ErrConnection, "57P01"},
		{"connection failure", pg("08006"), false, engine.ErrConnection, "08006"},
		{"EOF", fmt.Errorf("reading: %w", io.EOF), false, engine.ErrConnection, ""},
		{"unexpected EOF", io.ErrUnexpectedEOF, false, engine.ErrConnection, ""},
		{"net", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, false, engine.ErrConnection, ""},
		{"closed net conn", fmt.Errorf("x: %w", net.ErrClosed), false, engine.ErrConnection, ""},
		{"conn closed", errors.New("conn closed"), true, engine.ErrConnection, ""},
		{"other", errors.New("cannot scan"), false, engine.ErrOther, ""},
	}
	for _, c := range cases {
		got := classify(c.err, c.connClosed)
		if got.Kind != c.kind || got.SQLState != c.state || !errors.Is(got, c.err) {
			t.Errorf("%s: %+v, want kind %s state %q", c.name, got, c.kind, c.state)
		}
	}

	// A done context is reported as itself, not as a failure.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := &base{}
	if err := b.fail(ctx, errors.New("read: connection reset")); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled context: %v", err)
	}
}

// BenchmarkWorker measures each transaction, one worker at a time, on a
// one-warehouse schema, reporting the client's CPU per transaction
// (cpu-µs/op: the benchmark process's user+system time, which excludes the
// server's). Run with: go test -run '^$' -bench Worker ./internal/engine/postgres
// TIERBENCH_BENCH_DSN names a database with a built schema to use instead
// of building one, so that a CPU profile shows the transactions only.
func BenchmarkWorker(b *testing.B) {
	ctx := context.Background()
	dsn := os.Getenv("TIERBENCH_BENCH_DSN")
	if dsn == "" {
		dsn = pgtest.NewDatabase(b)
	}
	db, err := Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Schema(ctx); err != nil {
		if _, err := db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 1, Workers: 2}); err != nil {
			b.Fatal(err)
		}
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
				run := func() error {
					switch kind {
					case "round_trip":
						var one int
						var conn *pgx.Conn
						switch w := w.(type) {
						case *routineWorker:
							conn = w.conn
						case *stmtWorker:
							conn = w.conn
						}
						return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
					case "new_order":
						ls := lines(1, 10, r.Range(1, 90000))
						_, err := w.NewOrder(ctx, &tpcc.NewOrderInput{W: 1, D: r.Range(1, 10), C: r.Range(1, 3000), Lines: ls, AllLocal: true})
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
					_, err := randomTxn(ctx, w, r, 1)
					return err
				}
				if err := run(); err != nil { // prepares the statements
					b.Fatal(err)
				}
				var before, after syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
				b.ResetTimer()
				for range b.N {
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
				cpu := time.Duration(syscall.TimevalToNsec(after.Utime) - syscall.TimevalToNsec(before.Utime) +
					syscall.TimevalToNsec(after.Stime) - syscall.TimevalToNsec(before.Stime))
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
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
			b.ResetTimer()
			var wg sync.WaitGroup
			for i, w := range ws {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := tpcc.NewRand(uint64(i + 10))
					for range b.N / workers {
						if _, err := randomTxn(ctx, w, r, 1); err != nil {
							var te *engine.TxnError
							if errors.As(err, &te) && (te.Kind == engine.ErrDeadlock || te.Kind == engine.ErrSerialization) {
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
			cpu := time.Duration(syscall.TimevalToNsec(after.Utime) - syscall.TimevalToNsec(before.Utime) +
				syscall.TimevalToNsec(after.Stime) - syscall.TimevalToNsec(before.Stime))
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N/workers*workers), "cpu-µs/op")
		})
	}
}

// testVerifyOrders: acknowledged New-Orders are checked against ORDER and
// ORDER-LINE by their key, customer, line count and first item.
func testVerifyOrders(e *txnEnv) {
	t, ctx := e.t, e.ctx
	w := e.newWorker()
	defer w.Close()
	newOrder := func(d, c int, rollback bool) tpcc.Ack {
		in := &tpcc.NewOrderInput{W: 1, D: d, C: c, Lines: lines(1, 6, 2000+c), Rollback: rollback, AllLocal: true}
		if rollback {
			in.Lines[len(in.Lines)-1].ItemID = tpcc.UnusedItemID
		}
		out, err := w.NewOrder(ctx, in)
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
	verify := func(acks ...tpcc.Ack) []tpcc.Ack {
		t.Helper()
		bad, err := e.db.VerifyOrders(ctx, acks)
		if err != nil {
			t.Fatal(err)
		}
		return bad
	}
	if bad := verify(committed, rolledBack, next); len(bad) != 0 {
		t.Fatalf("acknowledged orders as stored are reported: %+v", bad)
	}
	otherCustomer := committed
	otherCustomer.Customer++
	claimed := committed
	claimed.RolledBack = true // a rollback whose order is there after all
	missing := committed
	missing.OID = e.nextOID(1, 3) + 5
	bad := verify(committed, otherCustomer, claimed, missing, rolledBack)
	if want := []tpcc.Ack{otherCustomer, claimed, missing}; len(bad) != 3 || !slicesEqualAcks(bad, want) {
		t.Fatalf("violations %+v, want %+v", bad, want)
	}
	e.exec(`DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id = $1`, committed.OID)
	if bad := verify(committed); len(bad) != 1 || bad[0] != committed {
		t.Fatalf("an order whose lines are gone: violations %+v, want the order", bad)
	}
}

// slicesEqualAcks compares as sets (VerifyOrders orders by key).
func slicesEqualAcks(a, b []tpcc.Ack) bool {
	seen := map[tpcc.Ack]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}
