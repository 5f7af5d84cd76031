package engine

import (
	"fmt"

	"github.com/tierbench/tierbench/internal/tpcc"
)

// CheckTables is what an engine's check reads before the conditions, in the
// snapshot they run in.
type CheckTables struct {
	Warehouses int              // as tpcc_meta records
	Counts     map[string]int64 // rows per table of tpcc.Tables
	SumNextOID int64            // sum(d_next_o_id - 1) over all districts
}

// RunCheck judges a schema by clauses 3.3.2 and 4.2.2 as every engine does:
// it decides whether the database is as loaded, compares the cardinalities,
// and asks violations for each condition of tpcc.Conditions that applies,
// with the warehouses an expensive one is restricted to (nil for the
// others, which run on every warehouse). Which warehouses are sampled
// follows opts (All, Seed).
func RunCheck(t CheckTables, opts CheckOptions, violations func(id string, warehouses []int) (int64, error)) (*tpcc.CheckResult, error) {
	w := t.Warehouses
	res := &tpcc.CheckResult{OK: true, Warehouses: w}
	districts := int64(w * tpcc.DistrictsPerWarehouse)
	// As loaded: no New-Order has been entered and none delivered.
	res.AsLoaded = t.SumNextOID == districts*(tpcc.DistrictNextOID-1) &&
		t.Counts[tpcc.TableNewOrder] == districts*tpcc.NewOrdersPerDistrict
	res.Cardinalities = Cardinalities(w, t.Counts, t.SumNextOID, res.AsLoaded)

	all := make([]int, w)
	for i := range all {
		all[i] = i + 1
	}
	sample := all
	if !opts.All {
		sample = tpcc.SampleWarehouses(w, tpcc.NewRand(opts.Seed))
	}
	for _, def := range tpcc.Conditions {
		c := tpcc.Condition{ID: def.ID, Title: def.Title, Scope: "all"}
		if def.LoadOnly && !res.AsLoaded {
			c.OK, c.Scope = true, "not-applicable"
			c.Note = "holds only right after the initial load; transactions have run since"
			res.Conditions = append(res.Conditions, c)
			continue
		}
		var ws []int
		if def.Expensive {
			ws = all
			if len(sample) < w {
				ws, c.Scope, c.Warehouses = sample, "sample", sample
				c.Note = "sampled warehouses; use --all to check every one"
			}
		}
		n, err := violations(def.ID, ws)
		if err != nil {
			return nil, fmt.Errorf("condition %s: %w", def.ID, err)
		}
		c.Violations = n
		c.OK = c.Violations == 0
		res.Conditions = append(res.Conditions, c)
	}
	for _, c := range res.Conditions {
		res.OK = res.OK && c.OK
	}
	for _, c := range res.Cardinalities {
		res.OK = res.OK && c.OK
	}
	return res, nil
}

// Pairs of conditions that an engine checks with one query each, named
// here, whose first count is the first condition's violations and whose
// second is the second's:
//   - LinesPair: 6 and 7 both count each order's lines (7 those
//     delivered), one pass over ORDER-LINE;
//   - CustomerPair: 10 and 12 both compare each customer's balance with
//     the sum of its delivered lines, the check's costliest aggregate.
const (
	LinesPair    = "3.3.2.6+7"
	CustomerPair = "3.3.2.10+12"
)

// pairOf maps a paired condition to its pair's query and its count there.
var pairOf = map[string]struct {
	query string
	i     int
}{
	"3.3.2.6": {LinesPair, 0}, "3.3.2.7": {LinesPair, 1},
	"3.3.2.10": {CustomerPair, 0}, "3.3.2.12": {CustomerPair, 1},
}

// PairedViolations is the violations function of RunCheck over query, which
// runs an engine's query for a condition or a pair on warehouses ws and
// scans its counts into dest (each an *int64). A pair's conditions share
// one run of its query: both are expensive or neither, so RunCheck asks for
// them with the same warehouses.
func PairedViolations(query func(id string, ws []int, dest ...any) error) func(id string, ws []int) (int64, error) {
	counted := map[string]*[2]int64{}
	return func(id string, ws []int) (int64, error) {
		p, ok := pairOf[id]
		if !ok {
			var n int64
			err := query(id, ws, &n)
			return n, err
		}
		c := counted[p.query]
		if c == nil {
			c = new([2]int64)
			if err := query(p.query, ws, &c[0], &c[1]); err != nil {
				return 0, err
			}
			counted[p.query] = c
		}
		return c[p.i], nil
	}
}

// Cardinalities compares row counts with 4.2.2. Tables that transactions
// grow or shrink are held to their load-time counts only while the database
// is as loaded; ORDER always has exactly D_NEXT_O_ID - 1 rows per district.
func Cardinalities(w int, counts map[string]int64, sumNextOID int64, asLoaded bool) []tpcc.Cardinality {
	exp := tpcc.ExpectedLoadRows(w)
	var out []tpcc.Cardinality
	for _, t := range tpcc.Tables {
		c := tpcc.Cardinality{Table: t, Found: counts[t], Expected: exp[t]}
		switch t {
		case tpcc.TableOrders:
			c.Expected = sumNextOID
			c.Note = "sum(d_next_o_id - 1)"
		case tpcc.TableOrderLine:
			c.Tolerance = 0.01
			if !asLoaded {
				c.OK, c.Note = true, "changes with every order; sum(o_ol_cnt) is condition 3.3.2.4"
				out = append(out, c)
				continue
			}
		case tpcc.TableHistory:
			// Every Payment adds a row: the load's count is a floor.
			c.OK, c.Note = c.Found >= c.Expected, "at least one row per customer"
			out = append(out, c)
			continue
		case tpcc.TableNewOrder:
			if !asLoaded {
				c.OK, c.Note = true, "changes with every transaction; checked right after the load only"
				out = append(out, c)
				continue
			}
		}
		if c.Tolerance > 0 {
			dev := float64(c.Found-c.Expected) / float64(c.Expected)
			c.OK = dev >= -c.Tolerance && dev <= c.Tolerance
		} else {
			c.OK = c.Found == c.Expected
		}
		out = append(out, c)
	}
	return out
}

// commonConditionSQL are the queries of the conditions of 3.3.2 that
// PostgreSQL, MariaDB and MySQL 8.0 all run as written: each counts the
// violations, 0 when the condition holds, on every warehouse. The others
// differ by engine (arrays, FULL JOIN) and are each engine's own.
var commonConditionSQL = map[string]string{
	"3.3.2.1": `SELECT count(*) FROM warehouse
		JOIN (SELECT d_w_id, sum(d_ytd) s FROM district GROUP BY d_w_id) d ON w_id = d_w_id
		WHERE w_ytd <> s`,
	"3.3.2.2": `SELECT count(*) FROM district
		LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) mo FROM orders GROUP BY o_w_id, o_d_id) o
		  ON o_w_id = d_w_id AND o_d_id = d_id
		LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) mno FROM new_order GROUP BY no_w_id, no_d_id) n
		  ON no_w_id = d_w_id AND no_d_id = d_id
		WHERE mo IS NULL OR d_next_o_id - 1 <> mo OR (mno IS NOT NULL AND mno <> mo)`,
	"3.3.2.5": `SELECT (SELECT count(*) FROM orders
		  LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
		  WHERE (o_carrier_id IS NULL) <> (no_o_id IS NOT NULL))
		+ (SELECT count(*) FROM new_order
		  LEFT JOIN orders ON o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
		  WHERE o_id IS NULL)`,
	"3.3.2.8": `SELECT count(*) FROM warehouse
		LEFT JOIN (SELECT h_w_id, sum(h_amount) s FROM history GROUP BY h_w_id) h ON h_w_id = w_id
		WHERE w_ytd <> coalesce(s, 0)`,
	"3.3.2.9": `SELECT count(*) FROM district
		LEFT JOIN (SELECT h_w_id, h_d_id, sum(h_amount) s FROM history GROUP BY h_w_id, h_d_id) h
		  ON h_w_id = d_w_id AND h_d_id = d_id
		WHERE d_ytd <> coalesce(s, 0)`,
	"3.3.2.11": `SELECT count(*) FROM
		(SELECT o_w_id, o_d_id, count(*) oc FROM orders GROUP BY o_w_id, o_d_id) o
		LEFT JOIN (SELECT no_w_id, no_d_id, count(*) nc FROM new_order GROUP BY no_w_id, no_d_id) n
		  ON no_w_id = o_w_id AND no_d_id = o_d_id
		WHERE oc - coalesce(nc, 0) <> 2100`,
}

// ConditionSQL is an engine's queries of the conditions of 3.3.2: the
// common ones plus its own, which name the conditions the common ones do
// not (an engine's own query of a common condition wins).
func ConditionSQL(own map[string]string) map[string]string {
	all := make(map[string]string, len(commonConditionSQL)+len(own))
	for id, q := range commonConditionSQL {
		all[id] = q
	}
	for id, q := range own {
		all[id] = q
	}
	return all
}
