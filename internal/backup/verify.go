package backup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/tpcc"
)

// Counts are the row counts of the nine TPC-C tables.
type Counts map[string]int64

// CountTPCC counts the rows of the nine TPC-C tables of the database at dsn,
// in one snapshot (PostgreSQL: a repeatable-read, read-only transaction;
// MariaDB: START TRANSACTION WITH CONSISTENT SNAPSHOT). The engine is the
// DSN's.
func CountTPCC(ctx context.Context, dsn string) (Counts, error) {
	m, err := methodOf("", dsn)
	if err != nil {
		return nil, err
	}
	return m.countTPCC(ctx, dsn)
}

// growOnly are the tables TPC-C's transactions only ever add rows to.
var growOnly = []string{tpcc.TableHistory, tpcc.TableOrders, tpcc.TableOrderLine}

// CompareCounts checks a restored database's counts against the source's,
// counted before and after its backup. A table whose count did not change
// meanwhile must match exactly; one that only grows must lie between the
// two (the backup is a snapshot taken in between); NEW-ORDER, which
// transactions grow and shrink, is left to the consistency conditions once
// orders were added meanwhile (New-Order grows it, Delivery shrinks it: its
// counts before and after can be equal and the snapshot's another).
func CompareCounts(restored, before, after Counts) error {
	var bad []string
	for _, t := range tpcc.Tables {
		got, lo, hi := restored[t], before[t], after[t]
		switch {
		case t == tpcc.TableNewOrder && before[tpcc.TableOrders] != after[tpcc.TableOrders]:
		case lo == hi:
			if got != lo {
				bad = append(bad, fmt.Sprintf("%s has %d rows, the source %d", t, got, lo))
			}
		case slices.Contains(growOnly, t):
			lo, hi = min(lo, hi), max(lo, hi)
			if got < lo || got > hi {
				bad = append(bad, fmt.Sprintf("%s has %d rows, the source %d..%d during the backup", t, got, lo, hi))
			}
		case t == tpcc.TableNewOrder:
		default:
			bad = append(bad, fmt.Sprintf("%s changed on the source during the backup (%d, then %d rows)", t, lo, hi))
		}
	}
	if len(bad) > 0 {
		return errors.New("row counts differ: " + strings.Join(bad, "; "))
	}
	return nil
}
