package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// conditionSQL counts the violations of each condition of 3.3.2: every query
// returns 0 when the condition holds (engine.CustomerPair's two counts, 0
// and 0, when 10 and 12 do). These are PostgreSQL's own; the rest
// are engine.ConditionSQL's common ones. $1 is the array of warehouses an
// expensive condition is restricted to; the others ignore it.
var conditionSQL = engine.ConditionSQL(map[string]string{
	"3.3.2.3": `SELECT count(*) FROM (SELECT 1 FROM new_order GROUP BY no_w_id, no_d_id
		HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)) v`,
	"3.3.2.4": `SELECT count(*) FROM
		(SELECT o_w_id, o_d_id, sum(o_ol_cnt) s FROM orders GROUP BY o_w_id, o_d_id) o
		FULL JOIN (SELECT ol_w_id, ol_d_id, count(*) c FROM order_line GROUP BY ol_w_id, ol_d_id) l
		  ON o_w_id = ol_w_id AND o_d_id = ol_d_id
		WHERE s IS NULL OR c IS NULL OR s <> c`,
	// 6 and 7 in one query (engine.LinesPair), over each order's lines
	// counted once: 6 in both directions (an order whose line count is
	// wrong or that has none, and lines without their order), 7 the lines
	// of an order whose delivery disagrees with its carrier (every
	// delivered line of an undelivered order, every undelivered one of a
	// delivered order).
	engine.LinesPair: `WITH l AS (SELECT ol_w_id, ol_d_id, ol_o_id, count(*) c, count(ol_delivery_d) d FROM order_line
		  GROUP BY ol_w_id, ol_d_id, ol_o_id)
		SELECT count(*) FILTER (WHERE o_id IS NULL OR c IS NULL OR c <> o_ol_cnt),
		  coalesce(sum(CASE WHEN o_carrier_id IS NULL THEN d ELSE c - d END) FILTER (WHERE o_id IS NOT NULL AND c IS NOT NULL), 0)
		FROM orders FULL JOIN l ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id`,
	// 10 and 12 in one query (engine.CustomerPair): the delivered lines
	// are summed per order, then per customer, and joined, rather than two
	// correlated sub-queries per customer; COALESCE keeps customers with no
	// delivered lines (or no payments) checked too. Summing the lines
	// before joining ORDER lets the planner hash them rather than probe
	// ORDER-LINE's index once per order.
	engine.CustomerPair: `WITH l AS (SELECT ol_w_id, ol_d_id, ol_o_id, sum(ol_amount) s FROM order_line
		  WHERE ol_delivery_d IS NOT NULL AND ol_w_id = ANY($1) GROUP BY ol_w_id, ol_d_id, ol_o_id),
		ol AS (SELECT o_w_id, o_d_id, o_c_id, sum(l.s) s FROM orders
		  JOIN l ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
		  WHERE o_w_id = ANY($1) GROUP BY o_w_id, o_d_id, o_c_id),
		h AS (SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) s FROM history
		  WHERE h_c_w_id = ANY($1) GROUP BY h_c_w_id, h_c_d_id, h_c_id)
		SELECT count(*) FILTER (WHERE c_balance <> coalesce(ol.s, 0) - coalesce(h.s, 0)),
		  count(*) FILTER (WHERE c_balance + c_ytd_payment <> coalesce(ol.s, 0))
		FROM customer
		LEFT JOIN ol ON o_w_id = c_w_id AND o_d_id = c_d_id AND o_c_id = c_id
		LEFT JOIN h ON h_c_w_id = c_w_id AND h_c_d_id = c_d_id AND h_c_id = c_id
		WHERE c_w_id = ANY($1)`,
})

// CheckTPCC runs the twelve conditions of 3.3.2 and the cardinality checks
// of 4.2.2 in one repeatable-read transaction, so all see one snapshot.
func (db *DB) CheckTPCC(ctx context.Context, opts engine.CheckOptions) (*tpcc.CheckResult, error) {
	conn, err := db.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	meta, err := readMeta(ctx, conn)
	if err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("starting the check transaction: %w", err)
	}
	defer tx.Rollback(context.Background())

	counts, err := tableCounts(ctx, tx)
	if err != nil {
		return nil, err
	}
	var sumNextOID int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(sum(d_next_o_id - 1), 0) FROM district`).Scan(&sumNextOID); err != nil {
		return nil, fmt.Errorf("reading d_next_o_id: %w", err)
	}
	tables := engine.CheckTables{Warehouses: meta.Warehouses, Counts: counts, SumNextOID: sumNextOID}
	return engine.RunCheck(tables, opts, engine.PairedViolations(func(id string, ws []int, dest ...any) error {
		var args []any
		if ws != nil {
			args = append(args, ws)
		}
		return tx.QueryRow(ctx, conditionSQL[id], args...).Scan(dest...)
	}))
}

func tableCounts(ctx context.Context, tx pgx.Tx) (map[string]int64, error) {
	counts := map[string]int64{}
	for _, t := range tpcc.Tables {
		var n int64
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
			return nil, fmt.Errorf("counting %s: %w", t, err)
		}
		counts[t] = n
	}
	return counts, nil
}
