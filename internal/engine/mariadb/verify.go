package mariadb

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpcc"
)

var _ engine.OrderVerifier = (*DB)(nil)

// verifySQL returns the acknowledged orders the database contradicts. An
// acknowledged order is there when an ORDER row has its key, customer and
// line count and its first ORDER-LINE its first item; a committed one must
// be there and a rolled-back one must not.
const verifySQL = `
SELECT a.w, a.d, a.o, a.c, a.n, a.i, a.rb FROM tierbench_acks a
 WHERE a.rb = EXISTS (
   SELECT 1 FROM orders o
     JOIN order_line ol ON ol.ol_w_id = o.o_w_id AND ol.ol_d_id = o.o_d_id AND ol.ol_o_id = o.o_id AND ol.ol_number = 1
    WHERE o.o_w_id = a.w AND o.o_d_id = a.d AND o.o_id = a.o
      AND o.o_c_id = a.c AND o.o_ol_cnt = a.n AND ol.ol_i_id = a.i)
 ORDER BY a.w, a.d, a.o`

// verifyBatch is how many acknowledged orders one INSERT carries (about
// 200 kB of SQL, well below the smallest max_allowed_packet).
const verifyBatch = 5000

// VerifyOrders implements engine.OrderVerifier: the acknowledged orders go
// into a temporary table (multi-row INSERTs of verifyBatch rows) and one
// query compares them with ORDER and ORDER-LINE.
func (db *DB) VerifyOrders(ctx context.Context, acks []tpcc.Ack) ([]tpcc.Ack, error) {
	conn, err := db.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	fail := func(what string, err error) ([]tpcc.Ack, error) {
		return nil, fmt.Errorf("%s acknowledged orders: %s", what, db.redact(err))
	}
	if _, err := conn.ExecContext(ctx, `CREATE TEMPORARY TABLE tierbench_acks
		(w int NOT NULL, d int NOT NULL, o int NOT NULL, c int NOT NULL, n int NOT NULL, i int NOT NULL, rb bool NOT NULL)`); err != nil {
		return fail("verifying", err)
	}
	defer conn.ExecContext(context.Background(), "DROP TEMPORARY TABLE IF EXISTS tierbench_acks")
	for len(acks) > 0 {
		n := min(len(acks), verifyBatch)
		stmt := make([]byte, 0, 64+n*40)
		stmt = append(stmt, "INSERT INTO tierbench_acks VALUES "...)
		for i, a := range acks[:n] {
			if i > 0 {
				stmt = append(stmt, ',')
			}
			stmt = append(stmt, '(')
			for j, v := range []int{a.W, a.D, a.OID, a.Customer, a.Lines, a.FirstItem} {
				if j > 0 {
					stmt = append(stmt, ',')
				}
				stmt = strconv.AppendInt(stmt, int64(v), 10)
			}
			if a.RolledBack {
				stmt = append(stmt, ",1)"...)
			} else {
				stmt = append(stmt, ",0)"...)
			}
		}
		if _, err := conn.ExecContext(ctx, string(stmt)); err != nil {
			return fail("loading", err)
		}
		acks = acks[n:]
	}
	rows, err := conn.QueryContext(ctx, verifySQL)
	if err != nil {
		return fail("verifying", err)
	}
	defer rows.Close()
	var bad []tpcc.Ack
	for rows.Next() {
		var a tpcc.Ack
		if err := rows.Scan(&a.W, &a.D, &a.OID, &a.Customer, &a.Lines, &a.FirstItem, &a.RolledBack); err != nil {
			return fail("verifying", err)
		}
		bad = append(bad, a)
	}
	if err := rows.Err(); err != nil {
		return fail("verifying", err)
	}
	return bad, nil
}
