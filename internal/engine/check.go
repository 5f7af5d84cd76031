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
