package tpcc

import (
	"strings"
	"testing"
)

func TestParseMix(t *testing.T) {
	m, err := ParseMix("no=45,p=43,os=4,d=4,sl=4", false)
	if err != nil || m != (Mix{45, 43, 4, 4, 4}) {
		t.Fatalf("ParseMix = %v, %v", m, err)
	}
	bad := map[string]string{
		"no=50,p=40,os=4,d=3,sl=3": "minimum",
		"no=45,p=43,os=4,d=4":      "adds up to 96",
		"no=45,p=43,os=4,d=4,x=4":  "keys",
		"no=45,no=43":              "twice",
		"no=abc":                   "whole number",
	}
	for in, want := range bad {
		if _, err := ParseMix(in, false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseMix(%q) = %v, want an error about %q", in, err, want)
		}
	}
	if _, err := ParseMix("no=90,p=10,os=0,d=0,sl=0", true); err != nil {
		t.Errorf("--mix-unchecked refused: %v", err)
	}
}

// Every pass of the deck deals exactly the mix (5.2.4.2).
func TestMixDeckProportions(t *testing.T) {
	r := NewRand(1)
	d := NewMixDeck(DefaultMix)
	var counts [NumKinds]int
	for range 23 * 100 {
		counts[d.Draw(r)]++
	}
	if counts != [NumKinds]int{1000, 1000, 100, 100, 100} {
		t.Fatalf("100 passes dealt %v", counts)
	}
}

func TestInputShares(t *testing.T) {
	r := NewRand(2)
	run := CValues{Last: 200, CID: 300, Item: 4000}
	g := NewInputGen(r, run, 4)
	var in NewOrderInput
	for range 20000 {
		g.NewOrder(&in, 3)
		if in.W != 3 || in.D < 1 || in.D > 10 || in.C < 1 || in.C > 3000 || len(in.Lines) < 5 || len(in.Lines) > 15 {
			t.Fatalf("new order input %+v", in)
		}
		allLocal := true
		for i, l := range in.Lines {
			if l.Quantity < 1 || l.Quantity > 10 || l.SupplyW < 1 || l.SupplyW > 4 {
				t.Fatalf("line %+v", l)
			}
			allLocal = allLocal && l.SupplyW == 3
			last := i == len(in.Lines)-1
			if (l.ItemID == UnusedItemID) != (in.Rollback && last) || (l.ItemID != UnusedItemID && (l.ItemID < 1 || l.ItemID > NumItems)) {
				t.Fatalf("item %d at line %d of %d (rollback %v)", l.ItemID, i, len(in.Lines), in.Rollback)
			}
		}
		if allLocal != in.AllLocal {
			t.Fatalf("AllLocal %v but lines say %v", in.AllLocal, allLocal)
		}
	}
	var p PaymentInput
	var os OrderStatusInput
	for range 20000 {
		g.Payment(&p, 2)
		if p.AmountCents < 100 || p.AmountCents > 500000 || (p.CW == 2) != (p.CD == p.D) && p.CW == 2 {
			t.Fatalf("payment %+v", p)
		}
		if p.ByName != (p.CLast != "") || p.ByName == (p.CID != 0) {
			t.Fatalf("payment selection %+v", p)
		}
		g.OrderStatus(&os, 2)
	}
	// Deck-dealt shares are exact: the audit passes with room to spare.
	for _, item := range g.Audit.Judge(4) {
		if item.Verdict != "pass" {
			t.Errorf("audit %s = %.3f [%v..%v] %s", item.Name, item.Value, item.Min, item.Max, item.Verdict)
		}
	}
	if g.Audit.Rollbacks != 200 || g.Audit.RemotePayments != 3000 || g.Audit.PaymentsByName != 12000 {
		t.Errorf("audit counts %+v", g.Audit)
	}
}

func TestSingleWarehouseHasNoRemote(t *testing.T) {
	g := NewInputGen(NewRand(3), CValues{}, 1)
	var in NewOrderInput
	var p PaymentInput
	for range 5000 {
		g.NewOrder(&in, 1)
		for _, l := range in.Lines {
			if l.SupplyW != 1 {
				t.Fatal("remote line with one warehouse")
			}
		}
		g.Payment(&p, 1)
		if p.CW != 1 {
			t.Fatal("remote payment with one warehouse")
		}
	}
	for _, item := range g.Audit.Judge(1) {
		if strings.HasPrefix(item.Name, "remote") && item.Verdict != "not-applicable" {
			t.Errorf("%s: %s with one warehouse", item.Name, item.Verdict)
		}
	}
}

func TestAuditJudge(t *testing.T) {
	a := Audit{NewOrders: 20000, Rollbacks: 300, OrderLines: 200000, RemoteLines: 2000,
		Payments: 20000, RemotePayments: 3000, PaymentsByName: 12000, OrderStatuses: 100, OrderStatusByName: 90}
	got := map[string]string{}
	for _, it := range a.Judge(2) {
		got[it.Name] = it.Verdict
	}
	want := map[string]string{"new_order_rollbacks_pct": "fail", "lines_per_order": "pass", "remote_order_lines_pct": "pass",
		"remote_payments_pct": "pass", "payment_by_name_pct": "pass", "order_status_by_name_pct": "not-judged"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
}
