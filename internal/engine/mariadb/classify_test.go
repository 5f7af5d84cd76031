package mariadb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// This file is package mariadb: unit tests that need no server, and what
// the worker tests of package mariadb_test reach inside a worker for.

// workerConn returns the connection under a worker of NewWorker.
func workerConn(w engine.Worker) (*wconn, error) {
	switch w := w.(type) {
	case *routineWorker:
		if w.wire != nil {
			// The driver reads the connection next: the last CALL's
			// closing OK must not be left for it.
			if err := w.wire.settle(); err != nil {
				return nil, err
			}
		}
		return w.wconn, nil
	case *stmtWorker:
		return w.wconn, nil
	}
	return nil, fmt.Errorf("%T is not a worker of package mariadb", w)
}

// WireCalls says whether w makes its calls by wire.go's code.
func WireCalls(w engine.Worker) bool {
	rw, ok := w.(*routineWorker)
	return ok && rw.wire != nil
}

// SetDriverCalls makes db's routines workers call through the driver.
func SetDriverCalls(db *DB) { db.driverCalls = true }

// WorkerExec runs a statement without parameters on a worker's own
// connection (a session setting, say).
func WorkerExec(ctx context.Context, w engine.Worker, sql string) error {
	c, err := workerConn(w)
	if err != nil {
		return err
	}
	return c.text(ctx, sql)
}

// WorkerInt runs a query that returns one integer on a worker's own
// connection: SELECT 1 is the round trip a transaction cannot beat.
func WorkerInt(ctx context.Context, w engine.Worker, query string) (int64, error) {
	c, err := workerConn(w)
	if err != nil {
		return 0, err
	}
	rows, err := c.dc.(driver.QueryerContext).QueryContext(ctx, query, nil)
	if err != nil {
		return 0, err
	}
	var v int64
	ok, err := c.next(rows, 1)
	if err == nil && !ok {
		err = errors.New("no row")
	}
	if err == nil {
		v, err = intValue(c.dest[0])
	}
	return v, closeRows(rows, err)
}

// SessionCounts reads Com_commit and Com_rollback of a worker's own session.
func SessionCounts(ctx context.Context, w engine.Worker) (commits, rollbacks int64, err error) {
	c, err := workerConn(w)
	if err != nil {
		return 0, 0, err
	}
	rows, err := c.dc.(driver.QueryerContext).QueryContext(ctx,
		`SHOW SESSION STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')`, nil)
	if err != nil {
		return 0, 0, err
	}
	for {
		ok, err := c.next(rows, 2)
		if err != nil || !ok {
			return commits, rollbacks, closeRows(rows, err)
		}
		name, _ := c.dest[0].([]byte)
		v, err := intValue(c.dest[1])
		if err != nil {
			return 0, 0, closeRows(rows, err)
		}
		switch strings.ToLower(string(name)) {
		case "com_commit":
			commits = v
		case "com_rollback":
			rollbacks = v
		}
	}
}

func TestClassify(t *testing.T) {
	my := func(n uint16, state string) error {
		e := &mysql.MySQLError{Number: n, Message: "m"}
		copy(e.SQLState[:], state)
		return fmt.Errorf("calling: %w", e)
	}
	cases := []struct {
		name   string
		err    error
		broken bool
		kind   engine.ErrorKind
		state  string
	}{
		{"deadlock", my(1213, "40001"), false, engine.ErrDeadlock, "40001"},
		{"lock wait timeout", my(1205, "HY000"), false, engine.ErrLockTimeout, "HY000"},
		{"duplicate key", my(1062, "23000"), false, engine.ErrOther, "23000"},
		{"signal", my(1644, "45000"), false, engine.ErrOther, "45000"},
		{"no state", my(1105, ""), false, engine.ErrOther, ""},
		{"server shutdown", my(1053, "08S01"), false, engine.ErrConnection, "08S01"},
		{"connection killed", my(1927, "70100"), false, engine.ErrConnection, "70100"},
		{"server gone", my(2006, "HY000"), false, engine.ErrConnection, "HY000"},
		{"server lost", my(2013, "HY000"), false, engine.ErrConnection, "HY000"},
		{"inactivity", my(4031, "HY000"), false, engine.ErrConnection, "HY000"},
		{"bad conn", driver.ErrBadConn, false, engine.ErrConnection, ""},
		{"invalid conn", fmt.Errorf("x: %w", mysql.ErrInvalidConn), false, engine.ErrConnection, ""},
		{"EOF", fmt.Errorf("reading: %w", io.EOF), false, engine.ErrConnection, ""},
		{"unexpected EOF", io.ErrUnexpectedEOF, false, engine.ErrConnection, ""},
		{"net", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, false, engine.ErrConnection, ""},
		{"reset", fmt.Errorf("write: %w", syscall.ECONNRESET), false, engine.ErrConnection, ""},
		{"pipe", fmt.Errorf("write: %w", syscall.EPIPE), false, engine.ErrConnection, ""},
		{"closed net conn", fmt.Errorf("x: %w", net.ErrClosed), false, engine.ErrConnection, ""},
		{"interrupted", errors.New("busy buffer"), true, engine.ErrConnection, ""},
		{"other", errors.New("cannot scan"), false, engine.ErrOther, ""},
	}
	for _, c := range cases {
		got := classify(c.err, c.broken)
		if got.Kind != c.kind || got.SQLState != c.state || !errors.Is(got, c.err) {
			t.Errorf("%s: %+v, want kind %s state %q", c.name, got, c.kind, c.state)
		}
		if c.kind == engine.ErrDeadlock || c.kind == engine.ErrLockTimeout {
			if !got.Kind.Retryable() {
				t.Errorf("%s: kind %s is not retryable", c.name, got.Kind)
			}
		}
	}

	// A done context is reported as itself, not as a failure.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &wconn{}
	if err := c.fail(ctx, errors.New("read: connection reset")); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled context: %v", err)
	}
	if err := c.fail(context.Background(), my(1213, "40001")); !errors.Is(err, &mysql.MySQLError{Number: 1213}) {
		t.Fatalf("deadlock: %v", err)
	}
}

func TestScaledValue(t *testing.T) {
	cases := []struct {
		in    driver.Value
		scale int
		want  int64
		ok    bool
	}{
		{[]byte("-10.00"), 2, -1000, true},
		{[]byte("0.1234"), 4, 1234, true},
		{[]byte("0.12"), 4, 1200, true},
		{[]byte("12"), 2, 1200, true},
		{[]byte("3.5"), 2, 350, true},
		{int64(7), 2, 700, true},
		{[]byte("0.12345"), 4, 0, false},
		{[]byte("1.2.3"), 2, 0, false},
		{[]byte(""), 2, 0, false},
		{[]byte("-"), 2, 0, false},
		{[]byte("1e5"), 2, 0, false},
		{nil, 2, 0, false},
	}
	for _, c := range cases {
		got, err := scaledValue(c.in, c.scale)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("scaledValue(%q, %d) = %d, %v; want %d, ok %v", c.in, c.scale, got, err, c.want, c.ok)
		}
	}
	if v, err := intValue([]byte("42")); err != nil || v != 42 {
		t.Errorf("intValue of text: %d %v", v, err)
	}
	if _, err := intValue(nil); err == nil {
		t.Error("intValue(nil) did not fail")
	}
}

func TestParseDelivered(t *testing.T) {
	var out tpcc.DeliveryOutput
	if err := parseDelivered([]byte("2101,0,2103,2104,2105,2106,2107,2108,0,2110"), &out); err != nil {
		t.Fatal(err)
	}
	want := [tpcc.DistrictsPerWarehouse]int{2101, 0, 2103, 2104, 2105, 2106, 2107, 2108, 0, 2110}
	if out.Delivered != want || out.Skipped != 2 {
		t.Fatalf("got %+v", out)
	}
	for _, bad := range []string{"", "1,2,3", "1,2,3,4,5,6,7,8,9,10,11", "1,,3,4,5,6,7,8,9,10", "1,2,3,4,5,6,7,8,9,x", "1,2,3,4,5,6,7,8,9,10,"} {
		if err := parseDelivered([]byte(bad), &tpcc.DeliveryOutput{}); err == nil {
			t.Errorf("parseDelivered(%q) did not fail", bad)
		}
	}
}

func TestAppendLines(t *testing.T) {
	got := string(appendLines(nil, []tpcc.OrderLineInput{{ItemID: 12, SupplyW: 1, Quantity: 5}, {ItemID: 100001, SupplyW: 20, Quantity: 10}}))
	if want := "[[12,1,5],[100001,20,10]]"; got != want {
		t.Fatalf("appendLines = %s, want %s", got, want)
	}
}

func TestRoutineStatements(t *testing.T) {
	stmts := RoutineStatements()
	var creates, drops int
	for _, s := range stmts {
		if strings.Contains(s, "DELIMITER") || strings.HasSuffix(s, "$$") || strings.HasSuffix(s, ";;") {
			t.Errorf("statement keeps the client's delimiter: %.80q", s)
		}
		switch {
		case strings.HasPrefix(s, "CREATE PROCEDURE "):
			creates++
			if !strings.Contains(s, "COMMENT '"+routineComment+"'") {
				t.Errorf("procedure without the version comment: %.60q", s)
			}
			if !strings.HasSuffix(s, "END") {
				t.Errorf("procedure does not end with END: ...%q", s[max(0, len(s)-40):])
			}
		case strings.HasPrefix(s, "DROP PROCEDURE IF EXISTS "):
			drops++
		default:
			t.Errorf("unexpected statement %.60q", s)
		}
	}
	if creates != len(routineNames) || drops != len(routineNames) {
		t.Fatalf("%d CREATE and %d DROP statements, want %d of each", creates, drops, len(routineNames))
	}
	for _, name := range routineNames {
		if !strings.Contains(routinesSQL, "CREATE PROCEDURE "+name+"(") {
			t.Errorf("routines.sql does not create %s", name)
		}
	}
	got := splitDelimited("-- c\nSELECT 1;\nDELIMITER //\nCREATE X\nBEGIN SELECT 2; END//\n\nDELIMITER ;\nSELECT 3;")
	want := []string{"SELECT 1", "CREATE X\nBEGIN SELECT 2; END", "SELECT 3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("splitDelimited = %q, want %q", got, want)
	}
}

func TestCheckRoutines(t *testing.T) {
	all := map[string]string{}
	for _, n := range routineNames {
		all[n] = routineComment
	}
	if err := checkRoutines(all); err != nil {
		t.Fatal(err)
	}
	if err := checkRoutines(map[string]string{}); !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), "--routines-only") {
		t.Fatalf("none installed: %v", err)
	}
	some := map[string]string{}
	for k, v := range all {
		some[k] = v
	}
	delete(some, "tpcc_payment")
	if err := checkRoutines(some); !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), "tpcc_payment") {
		t.Fatalf("one missing: %v", err)
	}
	some["tpcc_payment"] = "tierbench routines 0"
	if err := checkRoutines(some); !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), fmt.Sprintf("not of version %d", routinesVersion)) {
		t.Fatalf("one of another version: %v", err)
	}
}

func TestVariantSQL(t *testing.T) {
	if got := variantSQL(vItems, 3); !strings.HasSuffix(got, "IN (?, ?, ?)") {
		t.Errorf("items: %s", got)
	}
	if got := variantSQL(vStock, 2); strings.Count(got, "?") != 5 || !strings.HasSuffix(got, "FOR UPDATE") {
		t.Errorf("stock: %s", got)
	}
	if got := variantSQL(vLines, 15); strings.Count(got, "?") != 9*15 {
		t.Errorf("lines: %d parameters", strings.Count(got, "?"))
	}
}

// settle reads what is owed of the last CALL's reply, so that the driver
// may use the connection. Only tests do (workerConn): a worker's calls
// never hand the connection back.
func (cw *callWire) settle() error {
	if !cw.owed {
		return nil
	}
	cw.owed, cw.inReply = false, true
	// after set the receive mark above the OK's length, for the next
	// call's reply to come with it; here the OK comes alone, and a read
	// that found it not yet there waited for bytes that never came (a CI
	// run hung 8 minutes in testCounting).
	cw.conn.WakeAt(1)
	if err := cw.finish(); err != nil {
		_ = cw.conn.Close()
		return err
	}
	if cw.pos != cw.end {
		_ = cw.conn.Close()
		return errors.New("the server sent more than a CALL's reply")
	}
	return nil
}
