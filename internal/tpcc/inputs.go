package tpcc

// InputGen draws the terminal inputs of the five transactions (2.4.1, 2.5.1,
// 2.6.1, 2.7.1, 2.8.1) for one virtual user, and counts what it sent for the
// input audit (5.5.1.5).
//
// The spec's fixed shares (1% rolled-back New-Orders, 1% remote order lines,
// 15% remote Payments, 60% selections by last name) are dealt from shuffled
// decks of 100 cards rather than drawn independently: every hundred draws hold
// exactly the share, so the audit's narrow bounds (e.g. 0.9%..1.1% rollbacks)
// hold over any measured interval, not only over hours.
type InputGen struct {
	r          *Rand
	c          CValues // C-Run
	warehouses int

	rollback, remoteLine, remotePay, payByName, osByName *Deck[bool]
	lines                                                [MaxOrderLines]OrderLineInput

	Audit Audit
}

// NewInputGen returns a generator for a database of the given warehouses,
// drawing NURand with the run's C values.
func NewInputGen(r *Rand, run CValues, warehouses int) *InputGen {
	return &InputGen{
		r: r, c: run, warehouses: warehouses,
		rollback:   newShareDeck(1),  // 2.4.1.4
		remoteLine: newShareDeck(1),  // 2.4.1.5
		remotePay:  newShareDeck(15), // 2.5.1.2
		payByName:  newShareDeck(60), // 2.5.1.2
		osByName:   newShareDeck(60), // 2.6.1.2
	}
}

// otherWarehouse returns a warehouse other than w, uniformly (2.4.1.5, 2.5.1.2).
func (g *InputGen) otherWarehouse(w int) int {
	o := g.r.Range(1, g.warehouses-1)
	if o >= w {
		o++
	}
	return o
}

func (g *InputGen) customerID() int { return g.r.NURand(NURandACID, g.c.CID, 1, CustomersPerDistrict) }

func (g *InputGen) lastName() string {
	return LastName(g.r.NURand(NURandALast, g.c.Last, 0, 999))
}

// NewOrder fills in with a New-Order for home warehouse w. The lines live in
// the generator: in is valid until the next call.
func (g *InputGen) NewOrder(in *NewOrderInput, w int) {
	in.W, in.D, in.C = w, g.r.Range(1, DistrictsPerWarehouse), g.customerID()
	n := g.r.Range(MinOrderLines, MaxOrderLines)
	in.Rollback = g.rollback.Draw(g.r)
	in.AllLocal = true
	for i := range n {
		l := &g.lines[i]
		l.ItemID = int32(g.r.NURand(NURandAItem, g.c.Item, 1, NumItems))
		l.SupplyW = int32(w)
		// 2.4.1.5: 1% of lines are supplied by a remote warehouse, when
		// there is one.
		if g.remoteLine.Draw(g.r) && g.warehouses > 1 {
			l.SupplyW = int32(g.otherWarehouse(w))
			in.AllLocal = false
			g.Audit.RemoteLines++
		}
		l.Quantity = int32(g.r.Range(1, 10))
	}
	if in.Rollback {
		g.lines[n-1].ItemID = UnusedItemID // the last item is not found (2.4.1.4)
		g.Audit.Rollbacks++
	}
	in.Lines = g.lines[:n]
	g.Audit.NewOrders++
	g.Audit.OrderLines += int64(n)
}

// Payment fills in with a Payment from home warehouse w.
func (g *InputGen) Payment(in *PaymentInput, w int) {
	in.W, in.D = w, g.r.Range(1, DistrictsPerWarehouse)
	in.CW, in.CD = w, in.D
	// 2.5.1.2: 85% home, 15% a remote warehouse (any district), when there is one.
	if g.remotePay.Draw(g.r) && g.warehouses > 1 {
		in.CW, in.CD = g.otherWarehouse(w), g.r.Range(1, DistrictsPerWarehouse)
		g.Audit.RemotePayments++
	}
	in.ByName = g.payByName.Draw(g.r)
	if in.ByName {
		in.CLast, in.CID = g.lastName(), 0
		g.Audit.PaymentsByName++
	} else {
		in.CLast, in.CID = "", g.customerID()
	}
	in.AmountCents = int64(g.r.Range(100, 500000)) // 1.00 .. 5,000.00
	g.Audit.Payments++
}

// OrderStatus fills in with an Order-Status at home warehouse w.
func (g *InputGen) OrderStatus(in *OrderStatusInput, w int) {
	in.W, in.D = w, g.r.Range(1, DistrictsPerWarehouse)
	in.ByName = g.osByName.Draw(g.r)
	if in.ByName {
		in.CLast, in.CID = g.lastName(), 0
		g.Audit.OrderStatusByName++
	} else {
		in.CLast, in.CID = "", g.customerID()
	}
	g.Audit.OrderStatuses++
}

// Delivery fills in with a Delivery for warehouse w.
func (g *InputGen) Delivery(in *DeliveryInput, w int) {
	in.W, in.Carrier = w, g.r.Range(1, 10)
	g.Audit.Deliveries++
}

// StockLevel fills in with a Stock-Level for the terminal's fixed (w, d) (2.8.1.1).
func (g *InputGen) StockLevel(in *StockLevelInput, w, d int) {
	in.W, in.D, in.Threshold = w, d, g.r.Range(10, 20)
	g.Audit.StockLevels++
}
