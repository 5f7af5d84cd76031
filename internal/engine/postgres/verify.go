package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/tpcc"
)

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

// VerifyOrders implements engine.OrderVerifier: the acknowledged orders go
// into a temporary table (COPY) and one query compares them with ORDER and
// ORDER-LINE.
func (db *DB) VerifyOrders(ctx context.Context, acks []tpcc.Ack) ([]tpcc.Ack, error) {
	conn, err := db.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("verifying acknowledged orders: %s", db.redact(err))
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE tierbench_acks (w int, d int, o int, c int, n int, i int, rb bool) ON COMMIT DROP`); err != nil {
		return nil, fmt.Errorf("verifying acknowledged orders: %s", db.redact(err))
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"tierbench_acks"}, []string{"w", "d", "o", "c", "n", "i", "rb"},
		pgx.CopyFromSlice(len(acks), func(i int) ([]any, error) {
			a := acks[i]
			return []any{int32(a.W), int32(a.D), int32(a.OID), int32(a.Customer), int32(a.Lines), int32(a.FirstItem), a.RolledBack}, nil
		}))
	if err != nil {
		return nil, fmt.Errorf("loading acknowledged orders: %s", db.redact(err))
	}
	if _, err := tx.Exec(ctx, `ANALYZE tierbench_acks`); err != nil {
		return nil, fmt.Errorf("verifying acknowledged orders: %s", db.redact(err))
	}
	rows, err := tx.Query(ctx, verifySQL)
	if err != nil {
		return nil, fmt.Errorf("verifying acknowledged orders: %s", db.redact(err))
	}
	var bad []tpcc.Ack
	for rows.Next() {
		var a tpcc.Ack
		if err := rows.Scan(&a.W, &a.D, &a.OID, &a.Customer, &a.Lines, &a.FirstItem, &a.RolledBack); err != nil {
			return nil, err
		}
		bad = append(bad, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("verifying acknowledged orders: %s", db.redact(err))
	}
	return bad, nil
}
