package tpcc

// Audit counts what the driver sent, for the input checks of 5.5.1.5.
type Audit struct {
	NewOrders, Rollbacks, OrderLines, RemoteLines int64
	Payments, RemotePayments, PaymentsByName      int64
	OrderStatuses, OrderStatusByName              int64
	Deliveries, StockLevels                       int64
}

// Add adds o's counts to a.
func (a *Audit) Add(o Audit) {
	a.NewOrders += o.NewOrders
	a.Rollbacks += o.Rollbacks
	a.OrderLines += o.OrderLines
	a.RemoteLines += o.RemoteLines
	a.Payments += o.Payments
	a.RemotePayments += o.RemotePayments
	a.PaymentsByName += o.PaymentsByName
	a.OrderStatuses += o.OrderStatuses
	a.OrderStatusByName += o.OrderStatusByName
	a.Deliveries += o.Deliveries
	a.StockLevels += o.StockLevels
}

// Sub returns a - o (counts over an interval).
func (a Audit) Sub(o Audit) Audit {
	return Audit{
		NewOrders: a.NewOrders - o.NewOrders, Rollbacks: a.Rollbacks - o.Rollbacks,
		OrderLines: a.OrderLines - o.OrderLines, RemoteLines: a.RemoteLines - o.RemoteLines,
		Payments: a.Payments - o.Payments, RemotePayments: a.RemotePayments - o.RemotePayments,
		PaymentsByName: a.PaymentsByName - o.PaymentsByName, OrderStatuses: a.OrderStatuses - o.OrderStatuses,
		OrderStatusByName: a.OrderStatusByName - o.OrderStatusByName,
		Deliveries:        a.Deliveries - o.Deliveries, StockLevels: a.StockLevels - o.StockLevels,
	}
}

// AuditMinSamples is the sample size below which a share is reported but
// not judged.
const AuditMinSamples = 10000

// AuditItem is one input check of 5.5.1.5.
type AuditItem struct {
	Name    string  `json:"name"`
	Value   float64 `json:"value"` // a percentage, or lines per order
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Samples int64   `json:"samples"`
	// Verdict is "pass", "fail", "not-judged" (fewer than AuditMinSamples)
	// or "not-applicable" (e.g. remote shares with one warehouse).
	Verdict string `json:"verdict"`
}

// Judge checks the counts against the bounds of 5.5.1.5.
func (a Audit) Judge(warehouses int) []AuditItem {
	pct := func(n, d int64) float64 {
		if d == 0 {
			return 0
		}
		return 100 * float64(n) / float64(d)
	}
	items := []AuditItem{
		{Name: "new_order_rollbacks_pct", Value: pct(a.Rollbacks, a.NewOrders), Min: 0.9, Max: 1.1, Samples: a.NewOrders},
		{Name: "lines_per_order", Min: 9.5, Max: 10.5, Samples: a.NewOrders},
		{Name: "remote_order_lines_pct", Value: pct(a.RemoteLines, a.OrderLines), Min: 0.95, Max: 1.05, Samples: a.OrderLines},
		{Name: "remote_payments_pct", Value: pct(a.RemotePayments, a.Payments), Min: 14, Max: 16, Samples: a.Payments},
		{Name: "payment_by_name_pct", Value: pct(a.PaymentsByName, a.Payments), Min: 57, Max: 63, Samples: a.Payments},
		{Name: "order_status_by_name_pct", Value: pct(a.OrderStatusByName, a.OrderStatuses), Min: 57, Max: 63, Samples: a.OrderStatuses},
	}
	if a.NewOrders > 0 {
		items[1].Value = float64(a.OrderLines) / float64(a.NewOrders)
	}
	for i := range items {
		it := &items[i]
		if remote := it.Name == "remote_order_lines_pct" || it.Name == "remote_payments_pct"; remote && warehouses < 2 {
			it.Verdict = "not-applicable"
		}
		it.judge()
	}
	return items
}

// judge sets the verdict of an item not already found not applicable.
func (it *AuditItem) judge() {
	switch {
	case it.Verdict == "not-applicable":
	case it.Samples < AuditMinSamples:
		it.Verdict = "not-judged"
	case it.Value >= it.Min && it.Value <= it.Max:
		it.Verdict = "pass"
	default:
		it.Verdict = "fail"
	}
}

// CombineAudit merges the judged input checks of several intervals (a run's
// steps) into one judgement over all of them: each share is the average of
// the intervals' shares weighted by their samples (their denominators), so
// it is the share the summed counts give, and it is judged again on the
// summed samples. An item not applicable in any interval stays so.
func CombineAudit(steps [][]AuditItem) []AuditItem {
	var out []AuditItem
	index := map[string]int{}
	weighted := map[string]float64{}
	for _, items := range steps {
		for _, it := range items {
			i, ok := index[it.Name]
			if !ok {
				i = len(out)
				index[it.Name] = i
				out = append(out, AuditItem{Name: it.Name, Min: it.Min, Max: it.Max})
			}
			out[i].Samples += it.Samples
			weighted[it.Name] += it.Value * float64(it.Samples)
			if it.Verdict == "not-applicable" {
				out[i].Verdict = it.Verdict
			}
		}
	}
	for i := range out {
		it := &out[i]
		if it.Samples > 0 {
			it.Value = weighted[it.Name] / float64(it.Samples)
		}
		it.judge()
	}
	return out
}
