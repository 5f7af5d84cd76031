package mariadb_test

import (
	"bytes"
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/engine/mariadb"
	"github.com/tierbench/tierbench/internal/server/mariatest"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// createTables creates the TPC-C tables, without loading them.
func createTables(t *testing.T, conn *sql.DB) {
	t.Helper()
	for _, s := range mariadb.SchemaStatements() {
		exec(t, conn, s)
	}
}

// asText returns a table's rows as the generator writes them: columns in
// DDL order, tab-separated, \N for NULL, one row a line, in key order.
func asText(t *testing.T, conn *sql.DB, table, orderBy string) string {
	t.Helper()
	rows, err := conn.Query(`SELECT column_name FROM information_schema.columns
		WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position`, table)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, `IFNULL(`+c+`, CONCAT(CHAR(92), 'N'))`) // \N, whatever sql_mode says of backslashes
	}
	rows.Close()
	rows, err = conn.Query(`SELECT CONCAT_WS(CHAR(9), ` + strings.Join(cols, ", ") + `) FROM ` + table + ` ORDER BY ` + orderBy)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// Every table's text, as the generator writes it, arrives exactly: what the
// server returns is the same text again (money to the cent, times to the
// second, NULLs as NULL), also when the session's sql_mode takes
// backslashes literally in SQL strings.
func TestLoadDataExact(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"", "NO_BACKSLASH_ESCAPES"} {
		name := "server's sql_mode"
		if mode != "" {
			name = mode
		}
		t.Run(name, func(t *testing.T) { testLoadDataExact(t, mode) })
	}
}

func testLoadDataExact(t *testing.T, sqlMode string) {
	ctx := context.Background()
	dsn := mariatest.NewDatabase(t)
	if sqlMode != "" {
		// Parameters the driver does not know are session variables.
		dsn += "?sql_mode=" + url.QueryEscape("'"+sqlMode+"'")
	}
	db, conn := openTest(t, dsn)
	if sqlMode != "" {
		var mode string
		if err := conn.QueryRow("SELECT @@SESSION.sql_mode").Scan(&mode); err != nil || mode != sqlMode {
			t.Fatalf("session sql_mode %q (%v), want %q", mode, err, sqlMode)
		}
	}
	createTables(t, conn)
	g := tpcc.NewGen(tpcc.NewRand(1), tpcc.NewLoadC(tpcc.NewRand(2)), time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC))
	const w = 3
	for _, c := range []struct {
		table, key string
		gen        func(b []byte) []byte
	}{
		{"item", "i_id", func(b []byte) []byte { return g.Items(b, 1, 200) }},
		{"warehouse", "w_id", func(b []byte) []byte { return g.Warehouse(b, w) }},
		{"district", "d_w_id, d_id", func(b []byte) []byte { return g.Districts(b, w) }},
		{"stock", "s_w_id, s_i_id", func(b []byte) []byte { return g.Stock(b, w, 1, 200) }},
		{"customer", "c_w_id, c_d_id, c_id", func(b []byte) []byte { return g.Customers(b, w, 2990, 3010) }},
		{"history", "h_c_w_id, h_c_d_id, h_c_id", func(b []byte) []byte { return g.History(b, w, 0, 99) }},
		// Orders 2091..2111 of district 1: delivered and not.
		{"orders", "o_w_id, o_d_id, o_id", func(b []byte) []byte { return g.Orders(b, w, 2090, 2110) }},
		{"new_order", "no_w_id, no_d_id, no_o_id", func(b []byte) []byte { return g.NewOrders(b, w, 0, 20) }},
		{"order_line", "ol_w_id, ol_d_id, ol_o_id, ol_number", func(b []byte) []byte { return g.OrderLines(b, w, 2090, 2110) }},
	} {
		text := c.gen(nil)
		want := int64(bytes.Count(text, []byte{'\n'}))
		n, err := db.LoadRows(ctx, c.table, bytes.NewReader(text))
		if err != nil {
			t.Fatalf("%s: %v", c.table, err)
		}
		if n != want {
			t.Errorf("%s: loaded %d rows, want %d", c.table, n, want)
		}
		if got := asText(t, conn, c.table, c.key); got != string(text) {
			t.Errorf("%s: the server's rows differ from the generator's:\n%.600s\nwant\n%.600s", c.table, got, text)
		}
	}
	if n := queryInt(t, conn, "SELECT count(*) FROM order_line WHERE ol_delivery_d IS NULL"); n == 0 {
		t.Error("no undelivered order line among those loaded: \\N did not load as NULL")
	}
}

// LOAD DATA LOCAL keeps going past a bad row with a warning; the loader
// makes each warning an error, so a load is exact or fails.
func TestLoadDataWarningsFail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, conn := openTest(t, mariatest.NewDatabase(t))
	createTables(t, conn)
	for _, c := range []struct{ why, rows string }{
		{"price out of range", "1\t2\tname\t99999.99\tdata\n"},
		{"name too long", "2\t2\t" + strings.Repeat("n", 30) + "\t1.00\tdata\n"},
		{"a column short", "3\t2\tname\t1.00\n"},
		{"a duplicate key", "4\t2\tname\t1.00\tdata\n4\t2\tname\t1.00\tdata\n"},
		{"not a number", "x5\t2\tname\t1.00\tdata\n"},
	} {
		_, err := db.LoadRows(ctx, "item", strings.NewReader(c.rows))
		if err == nil || !strings.Contains(err.Error(), "warning") || !strings.Contains(err.Error(), "item") {
			t.Errorf("%s: %v, want an error quoting the warnings", c.why, err)
		} else {
			t.Logf("%s: %v", c.why, err)
		}
	}
	// A clean stream after them loads (each statement's warnings are its own).
	if n, err := db.LoadRows(ctx, "item", strings.NewReader("10\t2\tname\t1.00\tdata\n")); err != nil || n != 1 {
		t.Errorf("clean row: %d, %v", n, err)
	}
}
