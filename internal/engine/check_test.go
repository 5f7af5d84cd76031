package engine

import (
	"errors"
	"fmt"
	"testing"
)

// RunCheck over PairedViolations: conditions 10 and 12 come from one run of
// the CustomerPair query, each its own count, on the sampled warehouses;
// every other condition runs its own query; a failing pair query fails the
// check, naming condition 10.
func TestPairedViolations(t *testing.T) {
	var asked []string
	query := func(fail bool) func(id string, ws []int, dest ...any) error {
		return func(id string, ws []int, dest ...any) error {
			asked = append(asked, fmt.Sprint(id, ws))
			if id != CustomerPair {
				*dest[0].(*int64) = 0
				return nil
			}
			if fail {
				return errors.New("lost connection")
			}
			*dest[0].(*int64), *dest[1].(*int64) = 1, 2
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
	if got["3.3.2.10"] != 1 || got["3.3.2.12"] != 2 || got["3.3.2.1"] != 0 {
		t.Errorf("violations %v; want 10: 1, 12: 2, the others 0", got)
	}
	pairs := 0
	for _, a := range asked {
		if a == CustomerPair+"[1 2]" {
			pairs++
		}
	}
	if pairs != 1 || len(asked) != ran-1 {
		t.Errorf("queries run: %q; want the pair once on warehouses 1 and 2, each other condition once", asked)
	}

	asked = nil
	if _, err := RunCheck(tables, CheckOptions{All: true}, PairedViolations(query(true))); err == nil || err.Error() != "condition 3.3.2.10: lost connection" {
		t.Errorf("a failing pair query: %v; want condition 3.3.2.10's error", err)
	}
}
