package mariadb

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// conditionSQL counts the violations of each condition of 3.3.2: every query
// returns 0 when the condition holds (engine.CustomerPair's two counts, 0
// and 0, when 10 and 12 do). {W} stands for the list of warehouses
// an expensive condition is restricted to; the others have none.
//
// These are MariaDB's own; the rest are engine.ConditionSQL's common ones.
// They are the postgres engine's queries in SQL that MariaDB 10.6+ and
// MySQL 8.0 both accept: neither has FULL JOIN, so 4 and 6 stack both sides
// with UNION ALL and group once (a key missing from one side has that
// side's marker 0); neither has arrays, so the warehouses are a literal IN
// list (tierbench's own integers).
var conditionSQL = engine.ConditionSQL(map[string]string{
	"3.3.2.3": `SELECT count(*) FROM (SELECT 1 x FROM new_order GROUP BY no_w_id, no_d_id
		HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)) v`,
	"3.3.2.4": `SELECT count(*) FROM (
		  SELECT sum(s) s, sum(c) c, max(has_o) has_o, max(has_ol) has_ol FROM (
		    SELECT o_w_id w, o_d_id d, sum(o_ol_cnt) s, 0 c, 1 has_o, 0 has_ol FROM orders GROUP BY o_w_id, o_d_id
		    UNION ALL
		    SELECT ol_w_id, ol_d_id, 0, count(*), 0, 1 FROM order_line GROUP BY ol_w_id, ol_d_id) u
		  GROUP BY w, d) v
		WHERE has_o = 0 OR has_ol = 0 OR s <> c`,
	// 6 and 7 in one query (engine.LinesPair), over each order's lines
	// counted once: 6 in both directions (an order whose line count is
	// wrong or that has none, and lines without their order), 7 the lines
	// of an order whose delivery disagrees with its carrier (every
	// delivered line of an undelivered order, every undelivered one of a
	// delivered order).
	engine.LinesPair: `SELECT CAST(coalesce(sum(has_o = 0 OR c = 0 OR c <> n), 0) AS SIGNED),
		  CAST(coalesce(sum(CASE WHEN has_o = 0 OR c = 0 THEN 0 WHEN undelivered = 1 THEN dl ELSE c - dl END), 0) AS SIGNED)
		FROM (
		  SELECT sum(n) n, sum(c) c, sum(dl) dl, max(has_o) has_o, max(undelivered) undelivered FROM (
		    SELECT o_w_id w, o_d_id d, o_id o, o_ol_cnt n, 0 c, 0 dl, 1 has_o, o_carrier_id IS NULL undelivered FROM orders
		    UNION ALL
		    SELECT ol_w_id, ol_d_id, ol_o_id, 0, count(*), count(ol_delivery_d), 0, 0 FROM order_line
		    GROUP BY ol_w_id, ol_d_id, ol_o_id) u
		  GROUP BY w, d, o) v`,
	// 10 and 12 in one query (engine.CustomerPair): the delivered lines
	// are summed per customer once and joined, rather than two correlated
	// sub-queries per customer; COALESCE keeps customers with no delivered
	// lines (or no payments) checked too. A comparison is 0 or 1, so each
	// SUM counts its condition's violations. (Summing the lines per order
	// first, as PostgreSQL's query does, costs MariaDB more.)
	engine.CustomerPair: `WITH ol AS (
		  SELECT o_w_id, o_d_id, o_c_id, sum(ol_amount) s FROM orders
		  JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
		  WHERE ol_delivery_d IS NOT NULL AND o_w_id IN ({W}) GROUP BY o_w_id, o_d_id, o_c_id),
		h AS (SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) s FROM history
		  WHERE h_c_w_id IN ({W}) GROUP BY h_c_w_id, h_c_d_id, h_c_id)
		SELECT CAST(coalesce(sum(c_balance <> coalesce(ol.s, 0) - coalesce(h.s, 0)), 0) AS SIGNED),
		  CAST(coalesce(sum(c_balance + c_ytd_payment <> coalesce(ol.s, 0)), 0) AS SIGNED)
		FROM customer
		LEFT JOIN ol ON o_w_id = c_w_id AND o_d_id = c_d_id AND o_c_id = c_id
		LEFT JOIN h ON h_c_w_id = c_w_id AND h_c_d_id = c_d_id AND h_c_id = c_id
		WHERE c_w_id IN ({W})`,
})

// CheckTPCC runs the twelve conditions of 3.3.2 and the cardinality checks
// of 4.2.2 in one read-only repeatable-read transaction with a consistent
// snapshot taken at its start, so all see one state of the database.
func (db *DB) CheckTPCC(ctx context.Context, opts engine.CheckOptions) (*tpcc.CheckResult, error) {
	conn, err := db.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	meta, err := readMeta(ctx, conn)
	if err != nil {
		return nil, err
	}
	// SET TRANSACTION (without SESSION) applies to the next transaction only.
	for _, s := range []string{"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return nil, fmt.Errorf("starting the check transaction: %s", db.redact(err))
		}
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")

	counts, err := tableCounts(ctx, conn)
	if err != nil {
		return nil, err
	}
	var sumNextOID int64
	if err := conn.QueryRowContext(ctx, `SELECT CAST(coalesce(sum(d_next_o_id - 1), 0) AS SIGNED) FROM district`).Scan(&sumNextOID); err != nil {
		return nil, fmt.Errorf("reading d_next_o_id: %w", err)
	}
	tables := engine.CheckTables{Warehouses: meta.Warehouses, Counts: counts, SumNextOID: sumNextOID}
	return engine.RunCheck(tables, opts, engine.PairedViolations(func(id string, ws []int, dest ...any) error {
		return conn.QueryRowContext(ctx, conditionQuery(id, ws)).Scan(dest...)
	}))
}

// conditionQuery returns condition id's query restricted to warehouses ws.
func conditionQuery(id string, ws []int) string {
	list := make([]string, len(ws))
	for i, w := range ws {
		list[i] = strconv.Itoa(w)
	}
	return strings.ReplaceAll(conditionSQL[id], "{W}", strings.Join(list, ","))
}

func tableCounts(ctx context.Context, conn *sql.Conn) (map[string]int64, error) {
	counts := map[string]int64{}
	for _, t := range tpcc.Tables {
		var n int64
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
			return nil, fmt.Errorf("counting %s: %w", t, err)
		}
		counts[t] = n
	}
	return counts, nil
}
