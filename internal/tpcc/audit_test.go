package tpcc

import (
	"math"
	"testing"
)

// Combining the judgements of two steps gives the judgement of their summed
// counts.
func TestCombineAudit(t *testing.T) {
	a := Audit{NewOrders: 6000, Rollbacks: 60, OrderLines: 60000, RemoteLines: 600, Payments: 6000, RemotePayments: 900, PaymentsByName: 3600}
	b := Audit{NewOrders: 5000, Rollbacks: 55, OrderLines: 50500, RemoteLines: 505, Payments: 5000, RemotePayments: 700, PaymentsByName: 3000}
	var sum Audit
	sum.Add(a)
	sum.Add(b)
	got := CombineAudit([][]AuditItem{a.Judge(4), b.Judge(4)})
	want := sum.Judge(4)
	if len(got) != len(want) {
		t.Fatalf("CombineAudit gave %d items; want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.Samples != w.Samples || g.Verdict != w.Verdict || math.Abs(g.Value-w.Value) > 1e-9 {
			t.Errorf("item %d: %+v; want %+v", i, g, w)
		}
	}
	// Each step alone is under the sample threshold; together they are judged.
	if a.Judge(4)[0].Verdict != "not-judged" || got[0].Verdict != "pass" {
		t.Errorf("rollbacks: step verdict %s, combined %s; want not-judged, then pass", a.Judge(4)[0].Verdict, got[0].Verdict)
	}
	one := CombineAudit([][]AuditItem{a.Judge(1)})
	if one[2].Verdict != "not-applicable" {
		t.Errorf("remote lines with one warehouse: %s; want not-applicable", one[2].Verdict)
	}
}
