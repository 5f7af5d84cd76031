package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/rawconn"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// Both modes run the transactions at READ COMMITTED, PostgreSQL's default:
// every row a transaction changes is locked by the UPDATE (or SELECT ... FOR
// UPDATE) that reads it, and a later statement re-reads the row's latest
// committed version, so New-Order, Payment and Delivery see what level 3
// requires of them among themselves (3.4.1). Order-Status reads one snapshot
// (a STABLE routine; REPEATABLE READ READ ONLY in statements mode), and
// Stock-Level needs committed reads only.
//
// Lock order, which is what keeps the transactions free of deadlocks:
// New-Order locks its district, then its stock rows sorted by (supply
// warehouse, item), so two New-Orders never wait on each other in a cycle;
// Payment locks its district, one customer, then the warehouse row, last,
// so whoever holds a warehouse row waits for nothing more (every Payment of
// the warehouse needs it, and holds it until its commit is flushed: taken
// last, it is held the shortest time); Delivery takes, per district in
// ascending order, the oldest NEW-ORDER row (waiting for another Delivery
// that holds it, so that none is delivered out of order), that order and
// its lines, and its customer. New-Order locks no customer, Payment no stock.

var (
	_ engine.Worker = (*routineWorker)(nil)
	_ engine.Worker = (*stmtWorker)(nil)
)

// errRolledBack is the SQLSTATE tpcc_new_order raises for an unused item.
const errRolledBack = "TB001"

// base is what both kinds of worker share: one connection and the mapping
// of failures to *engine.TxnError.
type base struct {
	conn *pgx.Conn
}

func (b *base) Close() { b.conn.Close(context.Background()) }

// Interrupt closes the socket under the connection; net.Conn.Close is safe
// while another goroutine reads or writes it.
func (b *base) Interrupt() { _ = b.conn.PgConn().Conn().Close() }

// PublishStats asks the backend to flush its pending statistics as it goes
// idle after this statement (pg_stat_force_next_flush, PostgreSQL 15 on),
// the statement's own commit among them, which the driver takes off the
// end edge's count. A backend flushes nothing, though, while no relation,
// function or WAL statistics are pending, and its commits wait in its
// counters until some are: a connection idle since its last flush (a VU
// in keying or think time) left the call's commit out of the reading, and
// a 3-second step of 10 VUs with keying and think times reported -59
// TPM. Reading a row of a catalog gives the flush a relation's statistics
// to carry. Before 15 a statistics collector received them within half a
// second unasked.
func (b *base) PublishStats(ctx context.Context) (bool, error) {
	version := b.conn.PgConn().ParameterStatus("server_version") // "15.18 (Debian …)"
	major, _ := strconv.Atoi(version[:strings.IndexFunc(version+".", func(r rune) bool { return r < '0' || r > '9' })])
	if major < 15 {
		return false, nil
	}
	if _, err := b.conn.Exec(ctx, "SELECT pg_stat_force_next_flush() FROM pg_catalog.pg_am LIMIT 1"); err != nil {
		return false, err
	}
	return true, nil
}

// fail turns err into what the driver expects: ctx.Err() itself when the
// context is done (the run is ending, the transaction is not a failure),
// otherwise a classified *engine.TxnError.
func (b *base) fail(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return classify(err, b.conn.IsClosed())
}

// classify maps a failed transaction's error to its kind: the SQLSTATEs a
// retry may cure, a lost connection (also when the server says it is
// terminating it), or anything else.
func classify(err error, connClosed bool) *engine.TxnError {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		kind := engine.ErrOther
		switch code := pgErr.Code; {
		case code == "40001": // serialization_failure
			kind = engine.ErrSerialization
		case code == "40P01": // deadlock_detected
			kind = engine.ErrDeadlock
		case len(code) == 5 && code[:2] == "08", // connection_exception class
			code == "57P01", code == "57P02", code == "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			kind = engine.ErrConnection
		}
		return &engine.TxnError{Kind: kind, SQLState: pgErr.Code, Err: err}
	}
	var netErr net.Error
	if connClosed || pgconn.SafeToRetry(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.As(err, &netErr) {
		return &engine.TxnError{Kind: engine.ErrConnection, Err: err}
	}
	return &engine.TxnError{Kind: engine.ErrOther, Err: err}
}

func allLocal(in *tpcc.NewOrderInput) int32 {
	if in.AllLocal {
		return 1
	}
	return 0
}

// ---------------------------------------------------------------------------
// Routines mode: one call of a PL/pgSQL function per transaction, one round
// trip, run in autocommit (the call is the transaction).
//
// The calls are prepared once per connection (parsed once, as pgx's
// statement cache would) and run with pgconn's ExecStatement on parameters
// the worker encodes itself in binary into reused buffers: measured, that
// saves 5-7 µs of client CPU per call over pgx's generic encoding and
// scanning (boxing every argument, finding an encode plan per argument,
// the Rows machinery) and allocates next to nothing. prepareRoutines checks
// the parameter and result types against what the encoders write, so a
// routine of another signature fails at connect time, not mid-run.

// routineCall is one prepared call: its SQL, and the parameter and result
// types the worker encodes and decodes.
type routineCall struct {
	name, sql string
	params    []uint32
	results   []uint32
}

const (
	callNewOrder = iota
	callPayment
	callOrderStatus
	callDelivery
	callStockLevel
	numCalls
)

const int4ArrayOID = 1007

var routineCalls = [numCalls]routineCall{
	callNewOrder: {"tb_new_order", `SELECT new_o_id, total_cents FROM tpcc_new_order($1, $2, $3, $4, $5, $6, $7)`,
		[]uint32{pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, int4ArrayOID, int4ArrayOID, int4ArrayOID},
		[]uint32{pgtype.Int4OID, pgtype.Int8OID}},
	callPayment: {"tb_payment", `SELECT tpcc_payment($1, $2, $3, $4, $5, $6, $7)`,
		[]uint32{pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.TextOID, pgtype.Int8OID},
		[]uint32{pgtype.Int4OID}},
	callOrderStatus: {"tb_order_status", `SELECT out_c_id, out_o_id, out_lines FROM tpcc_order_status($1, $2, $3, $4)`,
		[]uint32{pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.TextOID},
		[]uint32{pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID}},
	callDelivery: {"tb_delivery", `SELECT tpcc_delivery($1, $2)`,
		[]uint32{pgtype.Int4OID, pgtype.Int4OID},
		[]uint32{int4ArrayOID}},
	callStockLevel: {"tb_stock_level", `SELECT tpcc_stock_level($1, $2, $3)`,
		[]uint32{pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID},
		[]uint32{pgtype.Int4OID}},
}

// prepareRoutines prepares every call on conn and checks its types.
func prepareRoutines(ctx context.Context, conn *pgx.Conn) (sds [numCalls]*pgconn.StatementDescription, err error) {
	for i, c := range routineCalls {
		sd, err := conn.Prepare(ctx, c.name, c.sql)
		if err != nil {
			return sds, fmt.Errorf("preparing %s: %w", c.name, err)
		}
		ok := slices.Equal(sd.ParamOIDs, c.params) && len(sd.Fields) == len(c.results)
		for j := 0; ok && j < len(c.results); j++ {
			ok = sd.Fields[j].DataTypeOID == c.results[j]
		}
		if !ok {
			return sds, engine.InputErrorf("the TPC-C routine behind %s has another signature than this tierbench expects; reinstall the routines with `tierbench tpcc build --routines-only`", c.name)
		}
		sds[i] = sd
	}
	return sds, nil
}

// binaryParams encodes one call's parameters in PostgreSQL's binary format
// into one reused buffer.
type binaryParams struct {
	buf     []byte
	ends    [8]int
	n       int
	values  [8][]byte
	formats [8]int16
}

func (p *binaryParams) reset() {
	if p.buf == nil {
		p.buf = make([]byte, 0, 512)
		for i := range p.formats {
			p.formats[i] = 1 // binary
		}
	}
	p.buf, p.n = p.buf[:0], 0
}

func (p *binaryParams) end() { p.ends[p.n] = len(p.buf); p.n++ }

func (p *binaryParams) int4(v int32) {
	p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(v))
	p.end()
}

func (p *binaryParams) int8(v int64) {
	p.buf = binary.BigEndian.AppendUint64(p.buf, uint64(v))
	p.end()
}

func (p *binaryParams) text(s string) {
	p.buf = append(p.buf, s...)
	p.end()
}

// int4Array appends a one-dimensional int4[] without NULLs: at(l) of each
// order line.
func (p *binaryParams) int4Array(lines []tpcc.OrderLineInput, at func(tpcc.OrderLineInput) int32) {
	be := binary.BigEndian
	p.buf = be.AppendUint32(p.buf, 1) // dimensions
	p.buf = be.AppendUint32(p.buf, 0) // no NULLs
	p.buf = be.AppendUint32(p.buf, pgtype.Int4OID)
	p.buf = be.AppendUint32(p.buf, uint32(len(lines)))
	p.buf = be.AppendUint32(p.buf, 1) // lower bound
	for _, l := range lines {
		p.buf = be.AppendUint32(p.buf, 4)
		p.buf = be.AppendUint32(p.buf, uint32(at(l)))
	}
	p.end()
}

// args returns the encoded parameters; they are valid until the next reset.
func (p *binaryParams) args() ([][]byte, []int16) {
	start := 0
	for i := range p.n {
		p.values[i] = p.buf[start:p.ends[i]:p.ends[i]]
		start = p.ends[i]
	}
	return p.values[:p.n], p.formats[:p.n]
}

var binaryResults = []int16{1}

// routineWorker runs the transactions as stored routines.
type routineWorker struct {
	base
	stmts [numCalls]*pgconn.StatementDescription
	p     binaryParams
	bind  pgproto3.Bind
	// busy is held while a call is on the wire. pgconn's own lock does not
	// see a call that goes around it, and the driver may ask PublishStats
	// while a transaction that outlasted the edge's wait is still running:
	// a query sent then would interleave with the call's replies.
	busy sync.Mutex
}

// errBusy is PublishStats's answer while a call is on the wire, as
// pgconn's "conn busy" was: the driver then reads the counters until they
// settle.
var errBusy = errors.New("the connection is busy with a transaction")

// PublishStats publishes the connection's statistics (base.PublishStats),
// unless a call is on the wire.
func (w *routineWorker) PublishStats(ctx context.Context) (bool, error) {
	if !w.busy.TryLock() {
		return false, errBusy
	}
	defer w.busy.Unlock()
	return w.base.PublishStats(ctx)
}

// call runs routine c with the parameters in w.p and hands its one result
// row to scan, which must copy what it keeps. A call that returns no row is
// an error.
//
// The call speaks the extended protocol through the connection's
// frontend itself: Bind, Execute and Sync in one write, then the replies
// up to ReadyForQuery. pgconn's ExecStatement did the same with more
// around it, which a one-row call to a prepared routine does not need:
// per call, it armed and stopped a 15 ms timer that guards a large write
// against a server blocked writing to us (these messages are a few
// hundred bytes, far below a socket's buffer), and built and drained a
// result reader. The connection is otherwise idle while a worker calls
// (a worker is one VU's), and the routines change no setting the server
// reports, so pgconn's view of it stays right.
//
// The driver's contexts never end (it calls Interrupt instead); a context
// that does end closes the socket, as Interrupt does.
func (w *routineWorker) call(ctx context.Context, c int, scan func(row [][]byte) error) error {
	stop, err := engine.InterruptOnDone(ctx, w)
	if err != nil {
		return err
	}
	defer stop()
	w.busy.Lock()
	defer w.busy.Unlock()
	values, formats := w.p.args()
	fe := w.conn.PgConn().Frontend()
	w.bind = pgproto3.Bind{PreparedStatement: w.stmts[c].Name, ParameterFormatCodes: formats, Parameters: values, ResultFormatCodes: binaryResults}
	fe.SendBind(&w.bind)
	fe.SendExecute(&pgproto3.Execute{})
	fe.SendSync(&pgproto3.Sync{})
	if rc, ok := w.conn.PgConn().Conn().(*rawconn.Conn); ok {
		rc.HoldWrite() // the call goes out with the first read of its reply
	}
	if err := fe.Flush(); err != nil {
		return w.lost(err)
	}
	var scanErr, pgErr error
	rows := 0
	for {
		msg, err := fe.Receive()
		if err != nil {
			return w.lost(err)
		}
		switch msg := msg.(type) {
		case *pgproto3.DataRow:
			if rows++; rows == 1 {
				scanErr = scan(msg.Values)
			}
		case *pgproto3.ErrorResponse:
			pgErr = pgconn.ErrorResponseToPgError(msg)
		case *pgproto3.ReadyForQuery:
			switch {
			case pgErr != nil:
				return pgErr
			case scanErr == nil && rows != 1:
				return fmt.Errorf("%s returned %d rows, want 1", routineCalls[c].name, rows)
			}
			return scanErr
		}
	}
}

// lost closes the socket (Interrupt) after a failed write or read in the
// middle of a call, whose replies can no longer be told apart from the next
// call's, and returns err.
func (w *routineWorker) lost(err error) error {
	w.Interrupt()
	return err
}

// int4At and int8At decode a binary column, refusing NULL and odd sizes.
func int4At(row [][]byte, i int) (int32, error) {
	if len(row) <= i || len(row[i]) != 4 {
		return 0, fmt.Errorf("result column %d is not a non-null int4", i+1)
	}
	return int32(binary.BigEndian.Uint32(row[i])), nil
}

func int8At(row [][]byte, i int) (int64, error) {
	if len(row) <= i || len(row[i]) != 8 {
		return 0, fmt.Errorf("result column %d is not a non-null int8", i+1)
	}
	return int64(binary.BigEndian.Uint64(row[i])), nil
}

func lineItem(l tpcc.OrderLineInput) int32     { return l.ItemID }
func lineSupply(l tpcc.OrderLineInput) int32   { return l.SupplyW }
func lineQuantity(l tpcc.OrderLineInput) int32 { return l.Quantity }

func (w *routineWorker) NewOrder(ctx context.Context, in *tpcc.NewOrderInput) (tpcc.NewOrderOutput, error) {
	w.p.reset()
	w.p.int4(int32(in.W))
	w.p.int4(int32(in.D))
	w.p.int4(int32(in.C))
	w.p.int4(allLocal(in))
	w.p.int4Array(in.Lines, lineItem)
	w.p.int4Array(in.Lines, lineSupply)
	w.p.int4Array(in.Lines, lineQuantity)
	var out tpcc.NewOrderOutput
	err := w.call(ctx, callNewOrder, func(row [][]byte) error {
		oid, err := int4At(row, 0)
		out.OID = int(oid)
		if err == nil {
			out.TotalCents, err = int8At(row, 1)
		}
		return err
	})
	if err != nil {
		// 2.4.2.3: the unused item; the routine's transaction rolled back.
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == errRolledBack {
			oid, convErr := strconv.Atoi(pgErr.Detail)
			if convErr != nil {
				return tpcc.NewOrderOutput{}, classify(fmt.Errorf("rolled-back New-Order without an order number: %w", err), false)
			}
			return tpcc.NewOrderOutput{OID: oid, RolledBack: true}, nil
		}
		return tpcc.NewOrderOutput{}, w.fail(ctx, err)
	}
	return out, nil
}

// customer encodes the customer's number, or 0 and the last name.
func (p *binaryParams) customer(byName bool, cid int, last string) {
	if byName {
		p.int4(0)
		p.text(last)
		return
	}
	p.int4(int32(cid))
	p.text("")
}

func (w *routineWorker) Payment(ctx context.Context, in *tpcc.PaymentInput) (tpcc.PaymentOutput, error) {
	w.p.reset()
	w.p.int4(int32(in.W))
	w.p.int4(int32(in.D))
	w.p.int4(int32(in.CW))
	w.p.int4(int32(in.CD))
	w.p.customer(in.ByName, in.CID, in.CLast)
	w.p.int8(in.AmountCents)
	var out tpcc.PaymentOutput
	err := w.call(ctx, callPayment, func(row [][]byte) error {
		cid, err := int4At(row, 0)
		out.CID = int(cid)
		return err
	})
	if err != nil {
		return tpcc.PaymentOutput{}, w.fail(ctx, err)
	}
	return out, nil
}

func (w *routineWorker) OrderStatus(ctx context.Context, in *tpcc.OrderStatusInput) (tpcc.OrderStatusOutput, error) {
	w.p.reset()
	w.p.int4(int32(in.W))
	w.p.int4(int32(in.D))
	w.p.customer(in.ByName, in.CID, in.CLast)
	var out tpcc.OrderStatusOutput
	err := w.call(ctx, callOrderStatus, func(row [][]byte) error {
		var v [3]int32
		for i := range v {
			var err error
			if v[i], err = int4At(row, i); err != nil {
				return err
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
	w.p.reset()
	w.p.int4(int32(in.W))
	w.p.int4(int32(in.Carrier))
	var out tpcc.DeliveryOutput
	err := w.call(ctx, callDelivery, func(row [][]byte) error {
		// A binary int4[] of one dimension: header (dimensions, NULL flag,
		// element type, length, lower bound), then (length, value) pairs.
		const districts = tpcc.DistrictsPerWarehouse
		be := binary.BigEndian
		if len(row) != 1 || len(row[0]) != 20+8*districts ||
			be.Uint32(row[0]) != 1 || be.Uint32(row[0][12:]) != districts {
			return fmt.Errorf("tpcc_delivery did not return %d order numbers", districts)
		}
		for i := range districts {
			e := row[0][20+8*i:]
			if be.Uint32(e) != 4 {
				return fmt.Errorf("tpcc_delivery returned a NULL order number")
			}
			out.Delivered[i] = int(int32(be.Uint32(e[4:])))
			if out.Delivered[i] == 0 {
				out.Skipped++
			}
		}
		return nil
	})
	if err != nil {
		return tpcc.DeliveryOutput{}, w.fail(ctx, err)
	}
	return out, nil
}

func (w *routineWorker) StockLevel(ctx context.Context, in *tpcc.StockLevelInput) (tpcc.StockLevelOutput, error) {
	w.p.reset()
	w.p.int4(int32(in.W))
	w.p.int4(int32(in.D))
	w.p.int4(int32(in.Threshold))
	var out tpcc.StockLevelOutput
	err := w.call(ctx, callStockLevel, func(row [][]byte) error {
		n, err := int4At(row, 0)
		out.LowStock = int(n)
		return err
	})
	if err != nil {
		return tpcc.StockLevelOutput{}, w.fail(ctx, err)
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// Statements mode: the same transactions as client-side prepared statements
// in an explicit BEGIN ... COMMIT, the client carrying the logic. Statements
// that do not depend on each other's results go in one pgx.Batch, so a
// transaction costs two or three round trips rather than one per statement.
// Money crosses the wire as integer cents (or ten-thousandths for rates),
// converted exactly in SQL, so the client does no decimal arithmetic but
// integer arithmetic that rounds as numeric does.

const (
	sqlBegin         = `BEGIN`
	sqlBeginReadOnly = `BEGIN READ ONLY`
	sqlBeginSnapshot = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`
	sqlCommit        = `COMMIT`
	sqlRollback      = `ROLLBACK`

	// New-Order (2.4.2.2).
	sqlNOWarehouse = `SELECT (w_tax * 10000)::int FROM warehouse WHERE w_id = $1`
	sqlNODistrict  = `UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2
		RETURNING (d_tax * 10000)::int, d_next_o_id - 1`
	sqlNOCustomer = `SELECT (c_discount * 10000)::int, c_last, c_credit FROM customer
		WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3`
	sqlNOItem  = `SELECT (i_price * 100)::int, i_name, i_data FROM item WHERE i_id = $1`
	sqlNOOrder = `INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES ($1, $2, $3, $4, now(), NULL, $5, $6)`
	sqlNONewOrder = `INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)`
	// One line: its stock row updated (S_QUANTITY wraps by 91 below
	// OL_QUANTITY + 10) and its ORDER-LINE inserted with the district's
	// S_DIST_xx. $1 supply W, $2 item, $3 qty, $4 1 if remote, $5 district,
	// $6 order, $7 home W, $8 ol_number, $9 OL_AMOUNT in cents.
	sqlNOLine = `WITH s AS (
		UPDATE stock SET
		  s_quantity = CASE WHEN s_quantity >= $3::int + 10 THEN s_quantity - $3::int ELSE s_quantity - $3::int + 91 END,
		  s_ytd = s_ytd + $3::int, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $4::int
		WHERE s_w_id = $1::int AND s_i_id = $2::int
		RETURNING CASE $5::int
		  WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
		  WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
		  WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
		INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
		                        ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
		SELECT $6::int, $5::int, $7::int, $8::int, $2::int, $1::int, NULL, $3::int, $9::bigint * 0.01, dist FROM s`

	// Payment (2.5.2.2); $n::bigint * 0.01 turns cents into an exact numeric.
	sqlPWarehouse = `UPDATE warehouse SET w_ytd = w_ytd + $2::bigint * 0.01 WHERE w_id = $1
		RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip`
	sqlPDistrict = `UPDATE district SET d_ytd = d_ytd + $3::bigint * 0.01 WHERE d_w_id = $1 AND d_id = $2
		RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip`
	sqlCustomerByName = `SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 ORDER BY c_first`
	sqlPCustomer      = `UPDATE customer SET
		  c_balance = c_balance - $4::bigint * 0.01,
		  c_ytd_payment = c_ytd_payment + $4::bigint * 0.01,
		  c_payment_cnt = c_payment_cnt + 1,
		  c_data = CASE WHEN c_credit = 'BC'
		    THEN left(format('%s %s %s %s %s %s | ', c_id, c_d_id, c_w_id, $5::int, $6::int, $4::bigint * 0.01) || c_data, 500)
		    ELSE c_data END
		WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3
		RETURNING c_first, c_middle, c_last, c_credit`
	// H_DATA is W_NAME, four spaces, D_NAME ($7): the warehouse's name is
	// read in the statement, so it can go in the round trip that updates
	// the warehouse row.
	sqlPHistory = `INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		SELECT $1, $2, $3, $4, $5, now(), $6::bigint * 0.01, w_name || '    ' || $7 FROM warehouse WHERE w_id = $5`

	// Order-Status (2.6.2.2).
	sqlOSCustomer = `SELECT c_first, c_middle, c_last FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3`
	sqlOSOrder    = `SELECT o_id, o_entry_d, o_carrier_id FROM orders
		WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1`
	sqlOSLines = `SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
		WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3`

	// Delivery (2.7.4.2).
	sqlDNewOrder = `DELETE FROM new_order
		WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = (
		  SELECT no_o_id FROM new_order WHERE no_w_id = $1 AND no_d_id = $2
		  ORDER BY no_o_id LIMIT 1 FOR UPDATE)
		RETURNING no_o_id`
	sqlDOrder = `UPDATE orders SET o_carrier_id = $4 WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3 RETURNING o_c_id`
	sqlDLines = `UPDATE order_line SET ol_delivery_d = now() WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3
		RETURNING (ol_amount * 100)::bigint`
	sqlDCustomer = `UPDATE customer SET c_balance = c_balance + $4::bigint * 0.01, c_delivery_cnt = c_delivery_cnt + 1
		WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3`

	// Stock-Level (2.8.2.2).
	sqlSLNext  = `SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2`
	sqlSLCount = `SELECT count(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = $1 AND s_i_id = ol_i_id
		WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id >= $3::int - 20 AND ol_o_id < $3::int AND s_quantity < $4::int`
)

// stmtWorker runs the transactions as client-side statements.
type stmtWorker struct {
	base
	order   [tpcc.MaxOrderLines]int // New-Order line indexes in lock order
	price   [tpcc.MaxOrderLines]int64
	ids     []int32 // customers matching a last name
	oids    [tpcc.DistrictsPerWarehouse]int32
	cids    [tpcc.DistrictsPerWarehouse]int32
	amounts [tpcc.DistrictsPerWarehouse]int64
}

// abort rolls the open transaction back (unless the connection is gone)
// and returns err classified.
func (w *stmtWorker) abort(ctx context.Context, err error) error {
	w.rollback()
	return w.fail(ctx, err)
}

// rollback ends the open transaction; on a dead connection there is none.
// It does not use the caller's context, which may be what ended.
func (w *stmtWorker) rollback() {
	if w.conn.IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = w.conn.Exec(ctx, sqlRollback)
}

// roundDiv returns num/den rounded half away from zero, as numeric's round
// does; num and den are positive here.
func roundDiv(num, den int64) int64 { return (num + den/2) / den }

func (w *stmtWorker) NewOrder(ctx context.Context, in *tpcc.NewOrderInput) (tpcc.NewOrderOutput, error) {
	n := len(in.Lines)
	if n == 0 || n > tpcc.MaxOrderLines {
		return tpcc.NewOrderOutput{}, classify(fmt.Errorf("a New-Order has %d lines, want %d..%d", n, tpcc.MinOrderLines, tpcc.MaxOrderLines), false)
	}
	W, D, C := int32(in.W), int32(in.D), int32(in.C)

	// Round trip 1: W_TAX; D_TAX and D_NEXT_O_ID, incremented; the
	// customer; each line's item.
	b := &pgx.Batch{}
	b.Queue(sqlBegin)
	b.Queue(sqlNOWarehouse, W)
	b.Queue(sqlNODistrict, W, D)
	b.Queue(sqlNOCustomer, W, D, C)
	for _, l := range in.Lines {
		b.Queue(sqlNOItem, l.ItemID)
	}
	var wTax, dTax, discount int64
	var out tpcc.NewOrderOutput
	br := w.conn.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		err = br.QueryRow().Scan(&wTax)
	}
	if err == nil {
		err = br.QueryRow().Scan(&dTax, &out.OID)
	}
	if err == nil {
		err = br.QueryRow().Scan(&discount, nil, nil)
	}
	missing := false
	for i := 0; err == nil && i < n; i++ {
		// I_NAME and I_DATA feed only the screen and brand-generic.
		err = br.QueryRow().Scan(&w.price[i], nil, nil)
		if errors.Is(err, pgx.ErrNoRows) {
			err, missing = nil, true
		}
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return tpcc.NewOrderOutput{}, w.abort(ctx, err)
	}
	if missing {
		// 2.4.2.3: an unused item number: the whole transaction rolls back.
		if _, err := w.conn.Exec(ctx, sqlRollback); err != nil {
			return tpcc.NewOrderOutput{}, w.fail(ctx, err)
		}
		return tpcc.NewOrderOutput{OID: out.OID, RolledBack: true}, nil
	}

	// Round trip 2: the order, its NEW-ORDER row and its lines, then
	// COMMIT. Lines go in (supply warehouse, item) order so concurrent
	// New-Orders lock stock rows in one order; ol_number keeps input order.
	for i := range n {
		w.order[i] = i
	}
	for i := 1; i < n; i++ { // insertion sort: at most 15 lines, no allocation
		for j := i; j > 0 && lineBefore(in.Lines, w.order[j], w.order[j-1]); j-- {
			w.order[j], w.order[j-1] = w.order[j-1], w.order[j]
		}
	}
	b = &pgx.Batch{}
	b.Queue(sqlNOOrder, int32(out.OID), D, W, C, int32(n), allLocal(in))
	b.Queue(sqlNONewOrder, int32(out.OID), D, W)
	var sumCents int64
	for _, i := range w.order[:n] {
		l := in.Lines[i]
		remote := int32(0)
		if l.SupplyW != W {
			remote = 1
		}
		amount := int64(l.Quantity) * w.price[i]
		sumCents += amount
		b.Queue(sqlNOLine, l.SupplyW, l.ItemID, l.Quantity, remote, D, int32(out.OID), W, int32(i+1), amount)
	}
	b.Queue(sqlCommit)
	br = w.conn.SendBatch(ctx, b)
	for i := 0; err == nil && i < 2+n; i++ {
		var tag pgconn.CommandTag
		tag, err = br.Exec()
		if err == nil && tag.RowsAffected() != 1 {
			err = fmt.Errorf("New-Order statement %d of order %d changed %d rows, want 1", i+1, out.OID, tag.RowsAffected())
		}
	}
	if err == nil {
		_, err = br.Exec() // COMMIT
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return tpcc.NewOrderOutput{}, w.abort(ctx, err)
	}
	// 2.4.2.2: sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX), the
	// rates in ten-thousandths: exact, then rounded to cents.
	out.TotalCents = roundDiv(sumCents*(10000-discount)*(10000+wTax+dTax), 10000*10000)
	return out, nil
}

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

// pickByName returns the customer at position ceil(n/2) of those with the
// last name, sorted by C_FIRST (2.5.2.2, 2.6.2.2), read from rows.
func (w *stmtWorker) pickByName(rows pgx.Rows, last string) (int32, error) {
	w.ids = w.ids[:0]
	for rows.Next() {
		var id int32
		if err := rows.Scan(&id); err != nil {
			return 0, err
		}
		w.ids = append(w.ids, id)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(w.ids) == 0 {
		return 0, fmt.Errorf("no customer named %s", last)
	}
	return w.ids[(len(w.ids)+1)/2-1], nil
}

func (w *stmtWorker) Payment(ctx context.Context, in *tpcc.PaymentInput) (tpcc.PaymentOutput, error) {
	W, D, CW, CD, cid := int32(in.W), int32(in.D), int32(in.CW), int32(in.CD), int32(in.CID)
	amount := in.AmountCents

	// Round trip 1: D_YTD; the customer's update when chosen by number, the
	// candidates when chosen by name.
	b := &pgx.Batch{}
	b.Queue(sqlBegin)
	b.Queue(sqlPDistrict, W, D, amount)
	if in.ByName {
		b.Queue(sqlCustomerByName, CW, CD, in.CLast)
	} else {
		b.Queue(sqlPCustomer, CW, CD, cid, amount, D, W)
	}
	var dName string
	br := w.conn.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		err = br.QueryRow().Scan(&dName, nil, nil, nil, nil, nil)
	}
	if err == nil {
		if in.ByName {
			var rows pgx.Rows
			if rows, err = br.Query(); err == nil {
				cid, err = w.pickByName(rows, in.CLast)
				rows.Close()
			}
		} else {
			err = br.QueryRow().Scan(nil, nil, nil, nil)
		}
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return tpcc.PaymentOutput{}, w.abort(ctx, err)
	}

	// Round trip 2: the customer chosen by name; W_YTD, last (see the lock
	// order above); HISTORY; COMMIT.
	b = &pgx.Batch{}
	if in.ByName {
		b.Queue(sqlPCustomer, CW, CD, cid, amount, D, W)
	}
	b.Queue(sqlPWarehouse, W, amount)
	b.Queue(sqlPHistory, cid, CD, CW, D, W, amount, dName)
	b.Queue(sqlCommit)
	br = w.conn.SendBatch(ctx, b)
	if in.ByName {
		err = br.QueryRow().Scan(nil, nil, nil, nil)
	}
	if err == nil {
		err = br.QueryRow().Scan(nil, nil, nil, nil, nil, nil)
	}
	if err == nil {
		_, err = br.Exec()
	}
	if err == nil {
		_, err = br.Exec()
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return tpcc.PaymentOutput{}, w.abort(ctx, err)
	}
	return tpcc.PaymentOutput{CID: int(cid)}, nil
}

func (w *stmtWorker) OrderStatus(ctx context.Context, in *tpcc.OrderStatusInput) (tpcc.OrderStatusOutput, error) {
	W, D, cid := int32(in.W), int32(in.D), int32(in.CID)
	// One REPEATABLE READ snapshot: the customer's latest order and its
	// lines are read as of one moment.
	var err error
	if in.ByName {
		b := &pgx.Batch{}
		b.Queue(sqlBeginSnapshot)
		b.Queue(sqlCustomerByName, W, D, in.CLast)
		br := w.conn.SendBatch(ctx, b)
		_, err = br.Exec()
		if err == nil {
			var rows pgx.Rows
			if rows, err = br.Query(); err == nil {
				cid, err = w.pickByName(rows, in.CLast)
				rows.Close()
			}
		}
		if closeErr := br.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return tpcc.OrderStatusOutput{}, w.abort(ctx, err)
		}
	}

	b := &pgx.Batch{}
	if !in.ByName {
		b.Queue(sqlBeginSnapshot)
	}
	b.Queue(sqlOSCustomer, W, D, cid)
	b.Queue(sqlOSOrder, W, D, cid)
	out := tpcc.OrderStatusOutput{CID: int(cid)}
	var oid int32
	br := w.conn.SendBatch(ctx, b)
	if !in.ByName {
		_, err = br.Exec()
	}
	if err == nil {
		err = br.QueryRow().Scan(nil, nil, nil)
	}
	if err == nil {
		err = br.QueryRow().Scan(&oid, nil, nil)
		if errors.Is(err, pgx.ErrNoRows) { // no order yet
			err = nil
		}
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return tpcc.OrderStatusOutput{}, w.abort(ctx, err)
	}
	out.OID = int(oid)

	b = &pgx.Batch{}
	if oid != 0 {
		b.Queue(sqlOSLines, W, D, oid)
	}
	b.Queue(sqlCommit)
	br = w.conn.SendBatch(ctx, b)
	if oid != 0 {
		var rows pgx.Rows
		if rows, err = br.Query(); err == nil {
			for rows.Next() {
				out.Lines++
			}
			rows.Close()
			err = rows.Err()
		}
	}
	if err == nil {
		_, err = br.Exec()
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return tpcc.OrderStatusOutput{}, w.abort(ctx, err)
	}
	return out, nil
}

func (w *stmtWorker) Delivery(ctx context.Context, in *tpcc.DeliveryInput) (tpcc.DeliveryOutput, error) {
	W, carrier := int32(in.W), int32(in.Carrier)
	const districts = tpcc.DistrictsPerWarehouse

	// Round trip 1: per district, the oldest NEW-ORDER row (once another
	// Delivery that holds it is done), removed.
	b := &pgx.Batch{}
	b.Queue(sqlBegin)
	for d := int32(1); d <= districts; d++ {
		b.Queue(sqlDNewOrder, W, d)
	}
	var out tpcc.DeliveryOutput
	br := w.conn.SendBatch(ctx, b)
	_, err := br.Exec()
	for i := 0; err == nil && i < districts; i++ {
		w.oids[i] = 0
		err = br.QueryRow().Scan(&w.oids[i])
		if errors.Is(err, pgx.ErrNoRows) { // 2.7.4.2: nothing to deliver: skipped
			err = nil
			out.Skipped++
		}
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return tpcc.DeliveryOutput{}, w.abort(ctx, err)
	}

	// Round trip 2: O_CARRIER_ID set and O_C_ID read; OL_DELIVERY_D set and
	// OL_AMOUNT summed.
	b = &pgx.Batch{}
	for i, o := range w.oids {
		if o != 0 {
			d := int32(i + 1)
			b.Queue(sqlDOrder, W, d, o, carrier)
			b.Queue(sqlDLines, W, d, o)
		}
	}
	if b.Len() > 0 {
		br = w.conn.SendBatch(ctx, b)
		for i := 0; err == nil && i < districts; i++ {
			if w.oids[i] == 0 {
				continue
			}
			if err = br.QueryRow().Scan(&w.cids[i]); err != nil {
				break
			}
			w.amounts[i] = 0
			var rows pgx.Rows
			if rows, err = br.Query(); err != nil {
				break
			}
			var cents int64
			for rows.Next() {
				if err = rows.Scan(&cents); err != nil {
					break
				}
				w.amounts[i] += cents
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		if closeErr := br.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return tpcc.DeliveryOutput{}, w.abort(ctx, err)
		}
	}

	// Round trip 3: C_BALANCE += the sum, C_DELIVERY_CNT += 1; COMMIT.
	b = &pgx.Batch{}
	for i, o := range w.oids {
		if o != 0 {
			b.Queue(sqlDCustomer, W, int32(i+1), w.cids[i], w.amounts[i])
		}
	}
	b.Queue(sqlCommit)
	br = w.conn.SendBatch(ctx, b)
	for i := 0; err == nil && i < b.Len(); i++ {
		var tag pgconn.CommandTag
		tag, err = br.Exec()
		if err == nil && i < b.Len()-1 && tag.RowsAffected() != 1 {
			err = fmt.Errorf("delivery updated %d customers, want 1", tag.RowsAffected())
		}
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return tpcc.DeliveryOutput{}, w.abort(ctx, err)
	}
	for i, o := range w.oids {
		out.Delivered[i] = int(o)
	}
	return out, nil
}

func (w *stmtWorker) StockLevel(ctx context.Context, in *tpcc.StockLevelInput) (tpcc.StockLevelOutput, error) {
	W, D := int32(in.W), int32(in.D)
	// Committed reads suffice (2.8.2.3); READ ONLY says so to the server.
	b := &pgx.Batch{}
	b.Queue(sqlBeginReadOnly)
	b.Queue(sqlSLNext, W, D)
	var next int32
	br := w.conn.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		err = br.QueryRow().Scan(&next)
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return tpcc.StockLevelOutput{}, w.abort(ctx, err)
	}

	b = &pgx.Batch{}
	b.Queue(sqlSLCount, W, D, next, int32(in.Threshold))
	b.Queue(sqlCommit)
	var out tpcc.StockLevelOutput
	br = w.conn.SendBatch(ctx, b)
	err = br.QueryRow().Scan(&out.LowStock)
	if err == nil {
		_, err = br.Exec()
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return tpcc.StockLevelOutput{}, w.abort(ctx, err)
	}
	return out, nil
}
