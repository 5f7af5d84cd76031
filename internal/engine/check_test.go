package engine

import (
	"errors"
	"fmt"
	"testing"
)

// RunCheck over PairedViolations: conditions 6 and 7 come from one run of
// the LinesPair query, 10 and 12 from one of the CustomerPair query on the
// sampled warehouses, each its own count; every other condition runs its
// own query; a failing pair query fails the check, naming the pair's first
// condition.
func TestPairedViolations(t *testing.T) {
	var asked []string
	query := func(fail bool) func(id string, ws []int, dest ...any) error {
		return func(id string, ws []int, dest ...any) error {
			asked = append(asked, fmt.Sprint(id, ws))
			switch id {
			case LinesPair:
				*dest[0].(*int64), *dest[1].(*int64) = 3, 4
			case CustomerPair:
				if fail {
					return errors.New("lost connection")
				}
				*dest[0].(*int64), *dest[1].(*int64) = 1, 2
			default:
				*dest[0].(*int64) = 0
			}
			return nil
		}
	}
	tables := CheckTables{Warehouses: 2, Counts: map[string]int64{}}
	res, err := RunCheck(tables, CheckOptions{All: true}, PairedViolations(query(false)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	ran := 0 // conditions that applied (11 does not: the tables are not as loaded)
	for _, c := range res.Conditions {
		got[c.ID] = c.Violations
		if c.Scope != "not-applicable" {
			ran++
		}
	}
	if got["3.3.2.6"] != 3 || got["3.3.2.7"] != 4 || got["3.3.2.10"] != 1 || got["3.3.2.12"] != 2 || got["3.3.2.1"] != 0 {
		t.Errorf("violations %v; want 6: 3, 7: 4, 10: 1, 12: 2, the others 0", got)
	}
	pairs := 0
	for _, a := range asked {
		if a == LinesPair+"[]" || a == CustomerPair+"[1 2]" {
			pairs++
		}
	}
	if pairs != 2 || len(asked) != ran-2 {
		t.Errorf("queries run: %q; want each pair once (10 and 12 on warehouses 1 and 2), each other condition once", asked)
	}

	asked = nil
	if _, err := RunCheck(tables, CheckOptions{All: true}, PairedViolations(query(true))); err == nil || err.Error() != "condition 3.3.2.10: lost connection" {
		t.Errorf("a failing pair query: %v; want condition 3.3.2.10's error", err)
	}
}
