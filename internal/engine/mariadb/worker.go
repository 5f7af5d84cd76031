package mariadb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/rawconn"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// Both modes run the read-write transactions at READ COMMITTED: every row
// a transaction changes is locked by the UPDATE (or SELECT ... FOR UPDATE)
// that reads it, which reads its latest committed version, so New-Order,
// Payment and Delivery see what level 3 requires of them among themselves
// (3.4.1), and InnoDB takes no gap locks, which REPEATABLE READ, its
// default, takes on every locking range scan. Order-Status reads one
// REPEATABLE READ snapshot, read-only; Stock-Level needs committed reads
// only. The lock order is the PostgreSQL worker's (see routines.sql):
// New-Order its district, then its stock rows sorted by (supply warehouse,
// item); Payment its district, its customer, the warehouse row last;
// Delivery per district, in ascending order, the oldest NEW-ORDER row
// (waiting for another Delivery that holds it).
//
// Counting: Com_commit and Com_rollback count COMMIT and ROLLBACK
// statements, whoever runs them (a client or a stored procedure), with or
// without a transaction open, and nothing else: not a statement in
// autocommit mode, not a CALL, not an implicit commit. Every transaction of
// either mode ends with exactly one: COMMIT when it committed; ROLLBACK for
// the rolled-back New-Order (2.4.2.3) and for every failure the server
// answers (sent by the worker, or run by the procedure's handler). So
// Δ(Com_commit + Com_rollback) counts each transaction the workers ran
// once, as the driver does; only a transaction cut off by a lost connection,
// which the server rolls back without a ROLLBACK statement, counts nothing.
//
// A worker talks to the go-sql-driver/mysql connection directly, through
// database/sql/driver, not through database/sql: no pool, no per-query
// context watcher (the transactions get a context that is never
// cancelled; Interrupt closes the socket instead), no conversion of
// results beyond the driver's own. Measured on routines-mode Payment, one
// worker: 38–43 µs of client CPU a call against 49–50 µs through a
// *sql.Conn's prepared *sql.Stmt (8 allocations against 24). Its socket is
// read and written by raw system calls (package rawconn), which took a SELECT 1
// round trip from 33 µs of client CPU to 12 µs. The routines mode's CALLs
// go around the driver altogether, on the same socket (wire.go).

var (
	_ engine.Worker = (*routineWorker)(nil)
	_ engine.Worker = (*stmtWorker)(nil)
)

// wconn is one worker's connection: the driver's connection, the socket
// under it, and buffers reused by every statement.
type wconn struct {
	db     *DB
	dc     driver.Conn
	sock   net.Conn      // set by the dialer during Connect, before any other use
	greet  *greetingConn // the socket as the driver reads it, noting the server's capabilities (wire.go)
	broken atomic.Bool   // Interrupt closed the socket
	args   []driver.Value
	dest   [32]driver.Value
}

// openWorkerConn connects with a dialer that keeps the socket, so that
// Interrupt can close it from another goroutine.
func (db *DB) openWorkerConn(ctx context.Context) (*wconn, error) {
	c := &wconn{db: db, args: make([]driver.Value, 0, 9*tpcc.MaxOrderLines)}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		if err == nil {
			c.sock = nc
			nc = rawconn.Wrap(nc)
			if rc, ok := nc.(*rawconn.Conn); ok {
				c.greet = &greetingConn{Conn: rc}
				nc = c.greet
			}
		}
		return nc, err
	}
	dc, err := db.connector(dial).Connect(ctx)
	if err != nil {
		return nil, db.connectError(err)
	}
	c.dc = dc
	return c, nil
}

// Interrupt closes the socket under the connection; net.Conn.Close is safe
// while another goroutine reads or writes it.
func (c *wconn) Interrupt() {
	c.broken.Store(true)
	if c.sock != nil {
		_ = c.sock.Close()
	}
}

// Close ends the session (COM_QUIT) and closes the socket.
func (c *wconn) Close() { _ = c.dc.Close() }

// PublishStats does nothing: SHOW GLOBAL STATUS adds up the live counters
// of every connection when it is read, so a commit counts in Com_commit as
// soon as it returns.
func (c *wconn) PublishStats(context.Context) (bool, error) { return false, nil }

// setArgs stores the parameters of the next statement in c.args.
func (c *wconn) setArgs(args ...int64) {
	c.args = c.args[:0]
	for _, a := range args {
		c.args = append(c.args, a)
	}
}

// query runs st with c.args. A context that can be cancelled goes through
// the driver's context-aware call (which watches it in another goroutine);
// the driver's VUs pass one that cannot, which takes the context-free call
// (deprecated in database/sql/driver, still implemented by the driver),
// saving the []NamedValue the other would allocate.
func (c *wconn) query(ctx context.Context, st driver.Stmt) (driver.Rows, error) {
	if ctx.Done() == nil {
		return st.Query(c.args)
	}
	return st.(driver.StmtQueryContext).QueryContext(ctx, c.named())
}

// exec runs st with c.args and returns the rows it changed and the insert
// id (the value of LAST_INSERT_ID(expr) for an UPDATE that sets it).
func (c *wconn) exec(ctx context.Context, st driver.Stmt) (affected, insertID int64, err error) {
	var res driver.Result
	if ctx.Done() == nil {
		res, err = st.Exec(c.args) // as in query
	} else {
		res, err = st.(driver.StmtExecContext).ExecContext(ctx, c.named())
	}
	if err != nil {
		return 0, 0, err
	}
	affected, _ = res.RowsAffected()
	insertID, _ = res.LastInsertId()
	return affected, insertID, nil
}

func (c *wconn) named() []driver.NamedValue {
	nv := make([]driver.NamedValue, len(c.args))
	for i, a := range c.args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return nv
}

// text runs one statement without parameters by the text protocol
// (START TRANSACTION, COMMIT, ROLLBACK).
func (c *wconn) text(ctx context.Context, sql string) error {
	_, err := c.dc.(driver.ExecerContext).ExecContext(ctx, sql, nil)
	return err
}

// prepare prepares sql on the server for the connection's lifetime.
func (c *wconn) prepare(ctx context.Context, sql string) (driver.Stmt, error) {
	st, err := c.dc.(driver.ConnPrepareContext).PrepareContext(ctx, sql)
	if err != nil {
		if errNumber(err) == 1146 { // ER_NO_SUCH_TABLE
			return nil, errNoSchema
		}
		return nil, fmt.Errorf("preparing %.60q: %w", sql, err)
	}
	return st, nil
}

// next reads the next row of rows, which must have n columns, into
// c.dest[:n]. Its []byte values point into the driver's buffer and are
// valid until the next read. It reports false at the end of the rows.
func (c *wconn) next(rows driver.Rows, n int) (bool, error) {
	if cols := len(rows.Columns()); cols != n {
		return false, fmt.Errorf("a statement returned %d columns, want %d", cols, n)
	}
	switch err := rows.Next(c.dest[:n]); err {
	case nil:
		return true, nil
	case io.EOF:
		return false, nil
	default:
		return false, err
	}
}

// closeRows closes rows (reading what is left of the response) and returns
// err, or the error of closing when err is nil.
func closeRows(rows driver.Rows, err error) error {
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// fail turns err into what the driver expects: ctx.Err() itself when the
// context is done (the run is ending, the transaction is not a failure),
// otherwise a classified *engine.TxnError.
func (c *wconn) fail(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if c.broken.Load() {
		err = fmt.Errorf("the connection was closed by Interrupt: %w", err)
	}
	return classify(err, c.broken.Load())
}

// Server errors a retry may cure, and those that mean the session is gone.
const (
	erLockWaitTimeout   = 1205 // ER_LOCK_WAIT_TIMEOUT: only the statement was rolled back
	erLockDeadlock      = 1213 // ER_LOCK_DEADLOCK: the transaction was rolled back
	erServerShutdown    = 1053 // ER_SERVER_SHUTDOWN
	erConnectionKilled  = 1927 // ER_CONNECTION_KILLED (MariaDB)
	erClientInteraction = 4031 // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8.0: disconnected for inactivity)
	crServerGone        = 2006 // CR_SERVER_GONE_ERROR (client library)
	crServerLost        = 2013 // CR_SERVER_LOST (client library)
)

// classify maps a failed transaction's error to its kind: the errors a
// retry may cure, a lost connection (also when the server says it is
// ending the session), or anything else. broken says the worker's socket
// was closed by Interrupt.
func classify(err error, broken bool) *engine.TxnError {
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		kind := engine.ErrOther
		switch myErr.Number {
		case erLockDeadlock:
			kind = engine.ErrDeadlock
		case erLockWaitTimeout:
			kind = engine.ErrLockTimeout
		case erServerShutdown, erConnectionKilled, erClientInteraction, crServerGone, crServerLost:
			kind = engine.ErrConnection
		}
		state := ""
		if myErr.SQLState != [5]byte{} {
			state = string(myErr.SQLState[:])
		}
		return &engine.TxnError{Kind: kind, SQLState: state, Err: err}
	}
	var netErr net.Error
	if broken || errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &netErr) {
		return &engine.TxnError{Kind: engine.ErrConnection, Err: err}
	}
	return &engine.TxnError{Kind: engine.ErrOther, Err: err}
}

// intValue returns an integer column's value.
func intValue(v driver.Value) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case []byte:
		return strconv.ParseInt(string(v), 10, 64)
	case nil:
		return 0, errors.New("unexpected NULL")
	}
	return 0, fmt.Errorf("unexpected %T for an integer", v)
}

// scaledValue returns a DECIMAL column's value times 10^scale, exactly:
// "-10.00" at scale 2 is -1000, "0.1234" at scale 4 is 1234. Digits past
// scale are an error, not rounded.
func scaledValue(v driver.Value, scale int) (int64, error) {
	b, ok := v.([]byte)
	if !ok {
		if i, isInt := v.(int64); isInt {
			for range scale {
				i *= 10
			}
			return i, nil
		}
		return 0, fmt.Errorf("unexpected %T for a decimal", v)
	}
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	frac, digits := -1, 0
	for _, ch := range b {
		switch {
		case ch == '.' && frac < 0:
			frac = 0
		case ch >= '0' && ch <= '9':
			if frac >= 0 {
				if frac == scale {
					return 0, fmt.Errorf("decimal %q has more than %d decimal places", v, scale)
				}
				frac++
			}
			n = n*10 + int64(ch-'0')
			digits++
		default:
			return 0, fmt.Errorf("%q is not a decimal", v)
		}
	}
	if digits == 0 || digits > 18 {
		return 0, fmt.Errorf("%q is not a decimal of at most 18 digits", v)
	}
	for frac = max(frac, 0); frac < scale; frac++ {
		n *= 10
	}
	if neg {
		n = -n
	}
	return n, nil
}

func allLocal(in *tpcc.NewOrderInput) int64 {
	if in.AllLocal {
		return 1
	}
	return 0
}

func checkLines(in *tpcc.NewOrderInput) error {
	if n := len(in.Lines); n == 0 || n > tpcc.MaxOrderLines {
		return classify(fmt.Errorf("a New-Order has %d lines, want %d..%d", n, tpcc.MinOrderLines, tpcc.MaxOrderLines), false)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Routines mode: one CALL of a stored procedure per transaction, prepared
// once per connection, one round trip: the procedure commits (or rolls
// back) its own transaction and returns its outputs as a final result set.

const (
	callNewOrder = iota
	callPayment
	callOrderStatus
	callDelivery
	callStockLevel
	numCalls
)

var callSQL = [numCalls]string{
	callNewOrder:    "CALL tpcc_new_order(?, ?, ?, ?, ?)",
	callPayment:     "CALL tpcc_payment(?, ?, ?, ?, ?, ?, ?)",
	callOrderStatus: "CALL tpcc_order_status(?, ?, ?, ?)",
	callDelivery:    "CALL tpcc_delivery(?, ?)",
	callStockLevel:  "CALL tpcc_stock_level(?, ?, ?)",
}

// routineWorker runs the transactions as stored procedures.
type routineWorker struct {
	*wconn
	wire  *callWire // the calls by this package's own protocol code (wire.go); nil: by the driver's
	calls [numCalls]driver.Stmt
	lines []byte // New-Order's lines as JSON
}

func newRoutineWorker(ctx context.Context, c *wconn) (*routineWorker, error) {
	if err := c.checkRoutines(ctx); err != nil {
		return nil, err
	}
	w := &routineWorker{wconn: c, lines: make([]byte, 0, 32*tpcc.MaxOrderLines)}
	if c.greet != nil && !c.db.tls() && !c.db.driverCalls {
		wire, err := newCallWire(c.greet)
		if err != nil {
			return nil, fmt.Errorf("preparing the TPC-C routines' calls: %w", err)
		}
		if w.wire = wire; wire != nil {
			return w, nil
		}
	}
	for i, sql := range callSQL {
		st, err := c.prepare(ctx, sql)
		if err != nil {
			return nil, err
		}
		w.calls[i] = st
	}
	return w, nil
}

// checkRoutines reads which procedures are installed, and of which
// version (runner.go).
func (c *wconn) checkRoutines(ctx context.Context) error {
	rows, err := c.dc.(driver.QueryerContext).QueryContext(ctx, checkRoutinesQuery, nil)
	if err != nil {
		return fmt.Errorf("looking for the TPC-C routines: %s", c.db.redact(err))
	}
	found := map[string]string{}
	for {
		ok, err := c.next(rows, 2)
		if err != nil {
			return closeRows(rows, fmt.Errorf("looking for the TPC-C routines: %s", c.db.redact(err)))
		}
		if !ok {
			break
		}
		name, _ := c.dest[0].([]byte)
		comment, _ := c.dest[1].([]byte)
		found[string(name)] = string(comment)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("looking for the TPC-C routines: %s", c.db.redact(err))
	}
	return checkRoutines(found)
}

// call runs procedure k with c.args and reads its one result row of n
// columns into c.dest; decode must take what it needs before call returns.
func (w *routineWorker) call(ctx context.Context, k, n int, decode func([]driver.Value) error) error {
	if w.wire != nil {
		stop, err := engine.InterruptOnDone(ctx, w)
		if err != nil {
			return err
		}
		defer stop()
		return w.wire.call(k, n, w.args, w.dest[:], decode)
	}
	rows, err := w.query(ctx, w.calls[k])
	if err != nil {
		return err
	}
	ok, err := w.next(rows, n)
	if err == nil && !ok {
		err = fmt.Errorf("%s returned no row", callSQL[k])
	}
	if err == nil {
		err = decode(w.dest[:n])
	}
	return closeRows(rows, err)
}

// appendLines writes the order lines as the JSON array tpcc_new_order
// reads: [[item, supply warehouse, quantity], ...], in input order.
func appendLines(b []byte, lines []tpcc.OrderLineInput) []byte {
	b = append(b, '[')
	for i, l := range lines {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(l.ItemID), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(l.SupplyW), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(l.Quantity), 10)
		b = append(b, ']')
	}
	return append(b, ']')
}

func (w *routineWorker) NewOrder(ctx context.Context, in *tpcc.NewOrderInput) (tpcc.NewOrderOutput, error) {
	if err := checkLines(in); err != nil {
		return tpcc.NewOrderOutput{}, err
	}
	w.lines = appendLines(w.lines[:0], in.Lines)
	w.setArgs(int64(in.W), int64(in.D), int64(in.C), allLocal(in))
	w.args = append(w.args, w.lines)
	var out tpcc.NewOrderOutput
	err := w.call(ctx, callNewOrder, 3, func(row []driver.Value) error {
		oid, err := intValue(row[0])
		if err != nil {
			return fmt.Errorf("tpcc_new_order's o_id: %w", err)
		}
		total, err := intValue(row[1])
		if err != nil {
			return fmt.Errorf("tpcc_new_order's total_cents: %w", err)
		}
		rolledBack, err := intValue(row[2])
		if err != nil {
			return fmt.Errorf("tpcc_new_order's rolled_back: %w", err)
		}
		out = tpcc.NewOrderOutput{OID: int(oid), TotalCents: total, RolledBack: rolledBack != 0}
		if out.RolledBack {
			out.TotalCents = 0
		}
		return nil
	})
	if err != nil {
		return tpcc.NewOrderOutput{}, w.fail(ctx, err)
	}
	return out, nil
}

// customerArgs appends the customer's number, or 0 and the last name.
func (c *wconn) customerArgs(byName bool, cid int, last string) {
	if byName {
		c.args = append(c.args, int64(0), last)
		return
	}
	c.args = append(c.args, int64(cid), "")
}

func (w *routineWorker) Payment(ctx context.Context, in *tpcc.PaymentInput) (tpcc.PaymentOutput, error) {
	w.setArgs(int64(in.W), int64(in.D), int64(in.CW), int64(in.CD))
	w.customerArgs(in.ByName, in.CID, in.CLast)
	w.args = append(w.args, in.AmountCents)
	var out tpcc.PaymentOutput
	err := w.call(ctx, callPayment, 1, func(row []driver.Value) error {
		cid, err := intValue(row[0])
		out.CID = int(cid)
		return err
	})
	if err != nil {
		return tpcc.PaymentOutput{}, w.fail(ctx, err)
	}
	return out, nil
}

func (w *routineWorker) OrderStatus(ctx context.Context, in *tpcc.OrderStatusInput) (tpcc.OrderStatusOutput, error) {
	w.setArgs(int64(in.W), int64(in.D))
	w.customerArgs(in.ByName, in.CID, in.CLast)
	var out tpcc.OrderStatusOutput
	err := w.call(ctx, callOrderStatus, 3, func(row []driver.Value) error {
		var v [3]int64
		for i := range v {
			var err error
			if v[i], err = intValue(row[i]); err != nil {
				return fmt.Errorf("tpcc_order_status's column %d: %w", i+1, err)
			}
		}
		out = tpcc.OrderStatusOutput{CID: int(v[0]), OID: int(v[1]), Lines: int(v[2])}
		return nil
	})
	if err != nil {
		return tpcc.OrderStatusOutput{}, w.fail(ctx, err)
	}
	return out, nil
}

func (w *routineWorker) Delivery(ctx context.Context, in *tpcc.DeliveryInput) (tpcc.DeliveryOutput, error) {
	w.setArgs(int64(in.W), int64(in.Carrier))
	var out tpcc.DeliveryOutput
	err := w.call(ctx, callDelivery, 1, func(row []driver.Value) error {
		b, ok := row[0].([]byte)
		if !ok {
			return fmt.Errorf("tpcc_delivery returned %T, want a list of order numbers", row[0])
		}
		return parseDelivered(b, &out)
	})
	if err != nil {
		return tpcc.DeliveryOutput{}, w.fail(ctx, err)
	}
	return out, nil
}

// parseDelivered reads tpcc_delivery's "o1,o2,...,o10" into out.
func parseDelivered(b []byte, out *tpcc.DeliveryOutput) error {
	const districts = tpcc.DistrictsPerWarehouse
	d, n, digits := 0, 0, 0
	for i := 0; i <= len(b); i++ {
		if i == len(b) || b[i] == ',' {
			if digits == 0 || d == districts {
				return fmt.Errorf("tpcc_delivery returned %q, want %d order numbers", b, districts)
			}
			out.Delivered[d] = n
			if n == 0 {
				out.Skipped++
			}
			d, n, digits = d+1, 0, 0
			continue
		}
		if b[i] < '0' || b[i] > '9' || digits == 9 {
			return fmt.Errorf("tpcc_delivery returned %q, want %d order numbers", b, districts)
		}
		n = n*10 + int(b[i]-'0')
		digits++
	}
	if d != districts {
		return fmt.Errorf("tpcc_delivery returned %q, want %d order numbers", b, districts)
	}
	return nil
}

func (w *routineWorker) StockLevel(ctx context.Context, in *tpcc.StockLevelInput) (tpcc.StockLevelOutput, error) {
	w.setArgs(int64(in.W), int64(in.D), int64(in.Threshold))
	var out tpcc.StockLevelOutput
	err := w.call(ctx, callStockLevel, 1, func(row []driver.Value) error {
		n, err := intValue(row[0])
		out.LowStock = int(n)
		return err
	})
	if err != nil {
		return tpcc.StockLevelOutput{}, w.fail(ctx, err)
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// Statements mode: the same transactions as server-side prepared statements
// (prepared once per connection) in an explicit START TRANSACTION ...
// COMMIT, the client carrying the logic. The protocol has no pipelining
// that go-sql-driver/mysql offers, so each statement is a round trip;
// statements are combined where SQL allows it without changing what is
// read or locked. Money crosses the wire as integer cents (rates as
// ten-thousandths), converted exactly in SQL (? * 0.01 is an exact
// DECIMAL), so the client does only integer arithmetic, rounding as
// DECIMAL's ROUND does.

const (
	sqlBegin         = "START TRANSACTION"
	sqlBeginReadOnly = "START TRANSACTION READ ONLY"
	// Order-Status: one REPEATABLE READ snapshot, for the next transaction
	// only (the session stays at READ COMMITTED).
	sqlSnapshotLevel = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"
	sqlBeginSnapshot = "START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT"
	sqlCommit        = "COMMIT"
	sqlRollback      = "ROLLBACK"
	sqlReadCommitted = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"
)

// The statements prepared when the worker starts.
const (
	sNODistrict = iota
	sNOHeader
	sNOStockUpdate
	sNOOrder
	sNONewOrder
	sPDistrict
	sByName
	sPCustomer
	sPWarehouse
	sPScreen
	sPHistory
	sOSCustomer
	sOSOrder
	sOSLines
	sDNewOrder
	sDDelete
	sDOrder
	sDLines
	sDCustomer
	sSLNext
	sSLCount
	numStmts
)

var stmtSQL = [numStmts]string{
	// New-Order (2.4.2.2). D_NEXT_O_ID incremented, the new value handed
	// back in the OK packet's insert id by LAST_INSERT_ID(expr).
	sNODistrict: `UPDATE district SET d_next_o_id = LAST_INSERT_ID(d_next_o_id + 1) WHERE d_w_id = ? AND d_id = ?`,
	sNOHeader: `SELECT w_tax, d_tax, c_discount, c_last, c_credit FROM warehouse, district, customer
		WHERE w_id = ? AND d_w_id = ? AND d_id = ? AND c_w_id = ? AND c_d_id = ? AND c_id = ?`,
	sNOStockUpdate: `UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + ?,
		s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?`,
	sNOOrder: `INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES (?, ?, ?, ?, NOW(), NULL, ?, ?)`,
	sNONewOrder: `INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)`,

	// Payment (2.5.2.2).
	sPDistrict: `UPDATE district SET d_ytd = d_ytd + ? * 0.01 WHERE d_w_id = ? AND d_id = ?`,
	sByName:    `SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first`,
	sPCustomer: `UPDATE customer SET
		  c_balance = c_balance - ? * 0.01,
		  c_ytd_payment = c_ytd_payment + ? * 0.01,
		  c_payment_cnt = c_payment_cnt + 1,
		  c_data = IF(c_credit = 'BC',
		    LEFT(CONCAT(c_id, ' ', c_d_id, ' ', c_w_id, ' ', ?, ' ', ?, ' ', ? * 0.01, ' | ', c_data), 500),
		    c_data)
		WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?`,
	sPWarehouse: `UPDATE warehouse SET w_ytd = w_ytd + ? * 0.01 WHERE w_id = ?`,
	// What the terminal shows; W_NAME and D_NAME also make H_DATA.
	sPScreen: `SELECT w_name, d_name, w_street_1, w_street_2, w_city, w_state, w_zip,
		  d_street_1, d_street_2, d_city, d_state, d_zip,
		  c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip,
		  c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance,
		  IF(c_credit = 'BC', LEFT(c_data, 200), '')
		FROM warehouse, district, customer
		WHERE w_id = ? AND d_w_id = ? AND d_id = ? AND c_w_id = ? AND c_d_id = ? AND c_id = ?`,
	sPHistory: `INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		VALUES (?, ?, ?, ?, ?, NOW(), ? * 0.01, ?)`,

	// Order-Status (2.6.2.2).
	sOSCustomer: `SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?`,
	sOSOrder: `SELECT o_id, o_entry_d, o_carrier_id FROM orders
		WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1`,
	sOSLines: `SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
		WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?`,

	// Delivery (2.7.4.2). O_C_ID comes back in the insert id, as above.
	sDNewOrder: `SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ?
		ORDER BY no_o_id LIMIT 1 FOR UPDATE`,
	sDDelete: `DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?`,
	sDOrder: `UPDATE orders SET o_carrier_id = ?, o_c_id = LAST_INSERT_ID(o_c_id)
		WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?`,
	sDLines: `UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?`,
	sDCustomer: `UPDATE customer SET
		  c_balance = c_balance + (SELECT COALESCE(SUM(ol_amount), 0) FROM order_line
		                           WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?),
		  c_delivery_cnt = c_delivery_cnt + 1
		WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?`,

	// Stock-Level (2.8.2.2).
	sSLNext: `SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?`,
	sSLCount: `SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = ol_w_id AND s_i_id = ol_i_id
		WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id >= ? AND ol_o_id < ? AND s_quantity < ?`,
}

// The New-Order statements whose shape depends on the number of lines,
// prepared on first use.
const (
	vItems = iota // the lines' items
	vStock        // their stock rows, locked
	vLines        // the ORDER-LINE rows
	numVariants
)

// variantSQL returns the statement of variant v for n order lines.
func variantSQL(v, n int) string {
	var b []byte
	switch v {
	case vItems:
		b = append(b, "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ("...)
		for i := range n {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, '?')
		}
		b = append(b, ')')
	case vStock:
		// The rows are read, and locked, in primary-key order: the range
		// optimizer turns the OR of key lookups into ranges sorted by key.
		b = append(b, `SELECT s_w_id, s_i_id, s_quantity, CASE ?
		  WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
		  WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
		  WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
		FROM stock WHERE `...)
		for i := range n {
			if i > 0 {
				b = append(b, " OR "...)
			}
			b = append(b, "(s_w_id = ? AND s_i_id = ?)"...)
		}
		b = append(b, " ORDER BY s_w_id, s_i_id FOR UPDATE"...)
	case vLines:
		b = append(b, `INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
		  ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES `...)
		for i := range n {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, "(?, ?, ?, ?, ?, ?, NULL, ?, ? * 0.01, ?)"...)
		}
	}
	return string(b)
}

// stmtWorker runs the transactions as prepared statements.
type stmtWorker struct {
	*wconn
	st       [numStmts]driver.Stmt
	variants [numVariants][tpcc.MaxOrderLines + 1]driver.Stmt

	order  [tpcc.MaxOrderLines]int   // New-Order line indexes in lock order
	price  [tpcc.MaxOrderLines]int64 // each line's I_PRICE in cents, -1 when not found
	rowOf  [tpcc.MaxOrderLines]int   // each line's stock row: its place among the distinct rows in lock order
	stockQ [tpcc.MaxOrderLines]int64 // each stock row's S_QUANTITY
	dist   [tpcc.MaxOrderLines][24]byte
	distN  [tpcc.MaxOrderLines]int
	ids    []int64 // customers matching a last name
	hdata  []byte
}

func newStmtWorker(ctx context.Context, c *wconn) (*stmtWorker, error) {
	if err := c.text(ctx, sqlReadCommitted); err != nil {
		return nil, fmt.Errorf("%s: %s", sqlReadCommitted, c.db.redact(err))
	}
	w := &stmtWorker{wconn: c, ids: make([]int64, 0, 16), hdata: make([]byte, 0, 24)}
	for i, sql := range stmtSQL {
		st, err := c.prepare(ctx, sql)
		if err != nil {
			return nil, err
		}
		w.st[i] = st
	}
	return w, nil
}

// variant returns the prepared statement of variant v for n lines.
func (w *stmtWorker) variant(ctx context.Context, v, n int) (driver.Stmt, error) {
	if st := w.variants[v][n]; st != nil {
		return st, nil
	}
	st, err := w.prepare(ctx, variantSQL(v, n))
	if err != nil {
		return nil, err
	}
	w.variants[v][n] = st
	return st, nil
}

// abort rolls the open transaction back (unless the connection is gone)
// and returns err classified. A lock wait timeout (1205) rolled back only
// the statement that timed out: the ROLLBACK ends the rest.
func (w *stmtWorker) abort(ctx context.Context, err error) error {
	w.rollback()
	return w.fail(ctx, err)
}

// rollback ends the open transaction; on a dead connection there is none.
// It does not use the caller's context, which may be what ended.
func (w *stmtWorker) rollback() {
	if w.broken.Load() {
		return
	}
	_ = w.text(context.Background(), sqlRollback)
}

// changedOne runs st and fails unless it changed exactly one row; it
// returns the insert id.
func (w *stmtWorker) changedOne(ctx context.Context, st int, what string) (int64, error) {
	n, id, err := w.exec(ctx, w.st[st])
	if err == nil && n != 1 {
		err = fmt.Errorf("%s: %d rows changed, want 1", what, n)
	}
	return id, err
}

// roundDiv returns num/den rounded half away from zero, as DECIMAL's
// ROUND does; num and den are positive here.
func roundDiv(num, den int64) int64 { return (num + den/2) / den }

// lineBefore orders order lines by (supply warehouse, item, position).
func lineBefore(lines []tpcc.OrderLineInput, a, b int) bool {
	la, lb := lines[a], lines[b]
	if la.SupplyW != lb.SupplyW {
		return la.SupplyW < lb.SupplyW
	}
	if la.ItemID != lb.ItemID {
		return la.ItemID < lb.ItemID
	}
	return a < b
}

func (w *stmtWorker) NewOrder(ctx context.Context, in *tpcc.NewOrderInput) (tpcc.NewOrderOutput, error) {
	if err := checkLines(in); err != nil {
		return tpcc.NewOrderOutput{}, err
	}
	out, err := w.newOrder(ctx, in)
	if err != nil {
		return tpcc.NewOrderOutput{}, w.abort(ctx, err)
	}
	return out, nil
}

func (w *stmtWorker) newOrder(ctx context.Context, in *tpcc.NewOrderInput) (tpcc.NewOrderOutput, error) {
	n := len(in.Lines)
	W, D, C := int64(in.W), int64(in.D), int64(in.C)
	var out tpcc.NewOrderOutput
	if err := w.text(ctx, sqlBegin); err != nil {
		return out, err
	}
	// D_NEXT_O_ID, incremented: the district row is locked until COMMIT.
	w.setArgs(W, D)
	next, err := w.changedOne(ctx, sNODistrict, fmt.Sprintf("district %d of warehouse %d", D, W))
	if err != nil {
		return out, err
	}
	out.OID = int(next - 1)

	// W_TAX, D_TAX; C_DISCOUNT, C_LAST, C_CREDIT.
	var wTax, dTax, discount int64
	w.setArgs(W, W, D, W, D, C)
	rows, err := w.query(ctx, w.st[sNOHeader])
	if err != nil {
		return out, err
	}
	ok, err := w.next(rows, 5)
	if err == nil && !ok {
		err = fmt.Errorf("customer %d of district %d of warehouse %d does not exist", C, D, W)
	}
	if err == nil {
		wTax, err = scaledValue(w.dest[0], 4)
	}
	if err == nil {
		dTax, err = scaledValue(w.dest[1], 4)
	}
	if err == nil {
		discount, err = scaledValue(w.dest[2], 4)
	}
	if err = closeRows(rows, err); err != nil {
		return out, err
	}

	// Each line's I_PRICE (I_NAME and I_DATA feed only the screen and
	// brand-generic), before any stock is touched.
	st, err := w.variant(ctx, vItems, n)
	if err != nil {
		return out, err
	}
	w.args = w.args[:0]
	for i, l := range in.Lines {
		w.args = append(w.args, int64(l.ItemID))
		w.price[i] = -1
	}
	if rows, err = w.query(ctx, st); err != nil {
		return out, err
	}
	for {
		ok, err = w.next(rows, 4)
		if err != nil || !ok {
			break
		}
		var id, price int64
		if id, err = intValue(w.dest[0]); err != nil {
			break
		}
		if price, err = scaledValue(w.dest[1], 2); err != nil {
			break
		}
		for i, l := range in.Lines {
			if int64(l.ItemID) == id {
				w.price[i] = price
			}
		}
	}
	if err = closeRows(rows, err); err != nil {
		return out, err
	}
	for i := range n {
		if w.price[i] < 0 {
			// 2.4.2.3: an unused item number: the whole transaction rolls back.
			if err := w.text(ctx, sqlRollback); err != nil {
				return out, err
			}
			return tpcc.NewOrderOutput{OID: out.OID, RolledBack: true}, nil
		}
	}

	// The stock rows, locked in (supply warehouse, item) order, so that
	// concurrent New-Orders never wait on each other in a cycle.
	for i := range n {
		w.order[i] = i
	}
	for i := 1; i < n; i++ { // insertion sort: at most 15 lines, no allocation
		for j := i; j > 0 && lineBefore(in.Lines, w.order[j], w.order[j-1]); j-- {
			w.order[j], w.order[j-1] = w.order[j-1], w.order[j]
		}
	}
	if st, err = w.variant(ctx, vStock, n); err != nil {
		return out, err
	}
	w.setArgs(D)
	for _, i := range w.order[:n] {
		w.args = append(w.args, int64(in.Lines[i].SupplyW), int64(in.Lines[i].ItemID))
	}
	if rows, err = w.query(ctx, st); err != nil {
		return out, err
	}
	// Rows come in the lines' lock order, once per distinct (warehouse,
	// item): row k is the k-th distinct key of w.order.
	k := -1
	for j, i := range w.order[:n] {
		l := in.Lines[i]
		if j > 0 && l.SupplyW == in.Lines[w.order[j-1]].SupplyW && l.ItemID == in.Lines[w.order[j-1]].ItemID {
			w.rowOf[i] = k
			continue
		}
		k++
		w.rowOf[i] = k
		if err = w.readStockRow(rows, k, l); err != nil {
			break
		}
	}
	if err == nil {
		if ok, err = w.next(rows, 4); err == nil && ok {
			err = errors.New("more stock rows than the order's lines name")
		}
	}
	if err = closeRows(rows, err); err != nil {
		return out, err
	}

	// Per stock row: S_QUANTITY after each of its lines in turn (down by
	// OL_QUANTITY if that leaves at least 10, else down by it and up by
	// 91), S_YTD += the quantities, S_ORDER_CNT += the lines,
	// S_REMOTE_CNT += the remote lines.
	for j := 0; j < n; {
		l := in.Lines[w.order[j]]
		k := w.rowOf[w.order[j]]
		q := w.stockQ[k]
		var ytd, cnt, remote int64
		for ; j < n && w.rowOf[w.order[j]] == k; j++ {
			lq := int64(in.Lines[w.order[j]].Quantity)
			if q >= lq+10 {
				q -= lq
			} else {
				q = q - lq + 91
			}
			ytd += lq
			cnt++
			if l.SupplyW != int32(in.W) {
				remote++
			}
		}
		w.setArgs(q, ytd, cnt, remote, int64(l.SupplyW), int64(l.ItemID))
		if _, err := w.changedOne(ctx, sNOStockUpdate, "a stock row"); err != nil {
			return out, err
		}
	}

	// The order, its NEW-ORDER row, and its lines in one statement.
	w.setArgs(int64(out.OID), D, W, C, int64(n), allLocal(in))
	if _, err := w.changedOne(ctx, sNOOrder, "the order"); err != nil {
		return out, err
	}
	w.setArgs(int64(out.OID), D, W)
	if _, err := w.changedOne(ctx, sNONewOrder, "the NEW-ORDER row"); err != nil {
		return out, err
	}
	if st, err = w.variant(ctx, vLines, n); err != nil {
		return out, err
	}
	w.args = w.args[:0]
	var sumCents int64
	for i, l := range in.Lines {
		amount := int64(l.Quantity) * w.price[i]
		sumCents += amount
		k := w.rowOf[i]
		w.args = append(w.args, int64(out.OID), D, W, int64(i+1), int64(l.ItemID), int64(l.SupplyW),
			int64(l.Quantity), amount, w.dist[k][:w.distN[k]])
	}
	if changed, _, err := w.exec(ctx, st); err != nil {
		return out, err
	} else if changed != int64(n) {
		return out, fmt.Errorf("%d order lines written, want %d", changed, n)
	}
	if err := w.text(ctx, sqlCommit); err != nil {
		return out, err
	}
	// 2.4.2.2: sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX), the
	// rates in ten-thousandths: exact, then rounded to cents.
	out.TotalCents = roundDiv(sumCents*(10000-discount)*(10000+wTax+dTax), 10000*10000)
	return out, nil
}

// readStockRow reads stock row k, which must be line l's, into w.stockQ[k]
// and w.dist[k].
func (w *stmtWorker) readStockRow(rows driver.Rows, k int, l tpcc.OrderLineInput) error {
	ok, err := w.next(rows, 4)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("stock row (%d, %d) does not exist", l.SupplyW, l.ItemID)
	}
	sw, err := intValue(w.dest[0])
	if err != nil {
		return err
	}
	si, err := intValue(w.dest[1])
	if err != nil {
		return err
	}
	if sw != int64(l.SupplyW) || si != int64(l.ItemID) {
		return fmt.Errorf("stock row (%d, %d) came where (%d, %d) was due: the rows are not in key order", sw, si, l.SupplyW, l.ItemID)
	}
	if w.stockQ[k], err = intValue(w.dest[2]); err != nil {
		return err
	}
	dist, ok := w.dest[3].([]byte)
	if !ok || len(dist) > len(w.dist[k]) {
		return fmt.Errorf("stock row (%d, %d) has no S_DIST of 24 characters", sw, si)
	}
	w.distN[k] = copy(w.dist[k][:], dist)
	return nil
}

// pickByName returns the customer at position ceil(n/2) of those of
// district (w, d) with the last name, sorted by C_FIRST (2.5.2.2, 2.6.2.2).
func (w *stmtWorker) pickByName(ctx context.Context, cw, cd int64, last string) (int64, error) {
	w.setArgs(cw, cd)
	w.args = append(w.args, last)
	rows, err := w.query(ctx, w.st[sByName])
	if err != nil {
		return 0, err
	}
	w.ids = w.ids[:0]
	for {
		ok, err := w.next(rows, 1)
		if err != nil || !ok {
			if err = closeRows(rows, err); err != nil {
				return 0, err
			}
			break
		}
		id, err := intValue(w.dest[0])
		if err != nil {
			return 0, closeRows(rows, err)
		}
		w.ids = append(w.ids, id)
	}
	if len(w.ids) == 0 {
		return 0, fmt.Errorf("no customer named %s in district %d of warehouse %d", last, cd, cw)
	}
	return w.ids[(len(w.ids)+1)/2-1], nil
}

func (w *stmtWorker) Payment(ctx context.Context, in *tpcc.PaymentInput) (tpcc.PaymentOutput, error) {
	cid, err := w.payment(ctx, in)
	if err != nil {
		return tpcc.PaymentOutput{}, w.abort(ctx, err)
	}
	return tpcc.PaymentOutput{CID: int(cid)}, nil
}

func (w *stmtWorker) payment(ctx context.Context, in *tpcc.PaymentInput) (int64, error) {
	W, D, CW, CD, cid := int64(in.W), int64(in.D), int64(in.CW), int64(in.CD), int64(in.CID)
	amount := in.AmountCents
	if err := w.text(ctx, sqlBegin); err != nil {
		return 0, err
	}
	// D_YTD += H_AMOUNT; the customer; W_YTD += H_AMOUNT, last (see the
	// lock order above).
	w.setArgs(amount, W, D)
	if _, err := w.changedOne(ctx, sPDistrict, fmt.Sprintf("district %d of warehouse %d", D, W)); err != nil {
		return 0, err
	}
	if in.ByName {
		var err error
		if cid, err = w.pickByName(ctx, CW, CD, in.CLast); err != nil {
			return 0, err
		}
	}
	w.setArgs(amount, amount, D, W, amount, CW, CD, cid)
	if _, err := w.changedOne(ctx, sPCustomer, fmt.Sprintf("customer %d of district %d of warehouse %d", cid, CD, CW)); err != nil {
		return 0, err
	}
	w.setArgs(amount, W)
	if _, err := w.changedOne(ctx, sPWarehouse, fmt.Sprintf("warehouse %d", W)); err != nil {
		return 0, err
	}

	// The screen's fields; H_DATA = W_NAME, four spaces, D_NAME.
	w.setArgs(W, W, D, CW, CD, cid)
	rows, err := w.query(ctx, w.st[sPScreen])
	if err != nil {
		return 0, err
	}
	ok, err := w.next(rows, 27)
	if err == nil && !ok {
		err = errors.New("the warehouse, district or customer paid is gone")
	}
	if err == nil {
		wName, _ := w.dest[0].([]byte)
		dName, _ := w.dest[1].([]byte)
		w.hdata = append(append(append(w.hdata[:0], wName...), "    "...), dName...)
	}
	if err = closeRows(rows, err); err != nil {
		return 0, err
	}
	w.setArgs(cid, CD, CW, D, W, amount)
	w.args = append(w.args, w.hdata)
	if _, err := w.changedOne(ctx, sPHistory, "the HISTORY row"); err != nil {
		return 0, err
	}
	return cid, w.text(ctx, sqlCommit)
}

func (w *stmtWorker) OrderStatus(ctx context.Context, in *tpcc.OrderStatusInput) (tpcc.OrderStatusOutput, error) {
	out, err := w.orderStatus(ctx, in)
	if err != nil {
		return tpcc.OrderStatusOutput{}, w.abort(ctx, err)
	}
	return out, nil
}

func (w *stmtWorker) orderStatus(ctx context.Context, in *tpcc.OrderStatusInput) (tpcc.OrderStatusOutput, error) {
	W, D, cid := int64(in.W), int64(in.D), int64(in.CID)
	var out tpcc.OrderStatusOutput
	// One REPEATABLE READ snapshot: the customer's latest order and its
	// lines are read as of one moment.
	if err := w.text(ctx, sqlSnapshotLevel); err != nil {
		return out, err
	}
	if err := w.text(ctx, sqlBeginSnapshot); err != nil {
		return out, err
	}
	if in.ByName {
		var err error
		if cid, err = w.pickByName(ctx, W, D, in.CLast); err != nil {
			return out, err
		}
	}
	out.CID = int(cid)
	w.setArgs(W, D, cid)
	rows, err := w.query(ctx, w.st[sOSCustomer])
	if err != nil {
		return out, err
	}
	ok, err := w.next(rows, 4)
	if err == nil && !ok {
		err = fmt.Errorf("customer %d of district %d of warehouse %d does not exist", cid, D, W)
	}
	if err = closeRows(rows, err); err != nil {
		return out, err
	}

	// The customer's latest order, if any, and its lines.
	if rows, err = w.query(ctx, w.st[sOSOrder]); err != nil {
		return out, err
	}
	var oid int64
	if ok, err = w.next(rows, 3); err == nil && ok {
		oid, err = intValue(w.dest[0])
	}
	if err = closeRows(rows, err); err != nil {
		return out, err
	}
	out.OID = int(oid)
	if oid != 0 {
		w.setArgs(W, D, oid)
		if rows, err = w.query(ctx, w.st[sOSLines]); err != nil {
			return out, err
		}
		for {
			if ok, err = w.next(rows, 5); err != nil || !ok {
				break
			}
			out.Lines++
		}
		if err = closeRows(rows, err); err != nil {
			return out, err
		}
	}
	return out, w.text(ctx, sqlCommit)
}

func (w *stmtWorker) Delivery(ctx context.Context, in *tpcc.DeliveryInput) (tpcc.DeliveryOutput, error) {
	out, err := w.delivery(ctx, in)
	if err != nil {
		return tpcc.DeliveryOutput{}, w.abort(ctx, err)
	}
	return out, nil
}

func (w *stmtWorker) delivery(ctx context.Context, in *tpcc.DeliveryInput) (tpcc.DeliveryOutput, error) {
	W, carrier := int64(in.W), int64(in.Carrier)
	var out tpcc.DeliveryOutput
	if err := w.text(ctx, sqlBegin); err != nil {
		return out, err
	}
	for d := int64(1); d <= tpcc.DistrictsPerWarehouse; d++ {
		// The oldest NEW-ORDER row, locked (after another Delivery that
		// holds it); none: the district is skipped (2.7.4.2).
		w.setArgs(W, d)
		rows, err := w.query(ctx, w.st[sDNewOrder])
		if err != nil {
			return out, err
		}
		var oid int64
		ok, err := w.next(rows, 1)
		if err == nil && ok {
			oid, err = intValue(w.dest[0])
		}
		if err = closeRows(rows, err); err != nil {
			return out, err
		}
		if oid == 0 {
			out.Skipped++
			continue
		}
		w.setArgs(W, d, oid)
		if _, err := w.changedOne(ctx, sDDelete, "the NEW-ORDER row"); err != nil {
			return out, err
		}
		// O_CARRIER_ID set; O_C_ID comes back as the insert id.
		w.setArgs(carrier, W, d, oid)
		cid, err := w.changedOne(ctx, sDOrder, fmt.Sprintf("order %d of district %d", oid, d))
		if err != nil {
			return out, err
		}
		w.setArgs(W, d, oid)
		if n, _, err := w.exec(ctx, w.st[sDLines]); err != nil {
			return out, err
		} else if n < tpcc.MinOrderLines {
			return out, fmt.Errorf("order %d of district %d has %d lines", oid, d, n)
		}
		// C_BALANCE += the lines' OL_AMOUNT, C_DELIVERY_CNT += 1.
		w.setArgs(W, d, oid, W, d, cid)
		if _, err := w.changedOne(ctx, sDCustomer, fmt.Sprintf("customer %d of district %d", cid, d)); err != nil {
			return out, err
		}
		out.Delivered[d-1] = int(oid)
	}
	return out, w.text(ctx, sqlCommit)
}

func (w *stmtWorker) StockLevel(ctx context.Context, in *tpcc.StockLevelInput) (tpcc.StockLevelOutput, error) {
	out, err := w.stockLevel(ctx, in)
	if err != nil {
		return tpcc.StockLevelOutput{}, w.abort(ctx, err)
	}
	return out, nil
}

func (w *stmtWorker) stockLevel(ctx context.Context, in *tpcc.StockLevelInput) (tpcc.StockLevelOutput, error) {
	W, D := int64(in.W), int64(in.D)
	var out tpcc.StockLevelOutput
	// Committed reads suffice (2.8.2.3); READ ONLY says so to the server.
	if err := w.text(ctx, sqlBeginReadOnly); err != nil {
		return out, err
	}
	w.setArgs(W, D)
	rows, err := w.query(ctx, w.st[sSLNext])
	if err != nil {
		return out, err
	}
	var next int64
	ok, err := w.next(rows, 1)
	if err == nil && !ok {
		err = fmt.Errorf("district %d of warehouse %d does not exist", D, W)
	}
	if err == nil {
		next, err = intValue(w.dest[0])
	}
	if err = closeRows(rows, err); err != nil {
		return out, err
	}
	w.setArgs(W, D, next-20, next, int64(in.Threshold))
	if rows, err = w.query(ctx, w.st[sSLCount]); err != nil {
		return out, err
	}
	var n int64
	if ok, err = w.next(rows, 1); err == nil && ok {
		n, err = intValue(w.dest[0])
	}
	if err = closeRows(rows, err); err != nil {
		return out, err
	}
	out.LowStock = int(n)
	return out, w.text(ctx, sqlCommit)
}
