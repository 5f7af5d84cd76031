package tpcc

import "time"

// Kind is one of the five transaction types.
type Kind int

// The five transactions (clauses 2.4 to 2.8), in the order of the mix.
const (
	NewOrder Kind = iota
	Payment
	OrderStatus
	Delivery
	StockLevel
	NumKinds
)

// KindNames are the names used in flags, JSON and the results store.
var KindNames = [NumKinds]string{"new_order", "payment", "order_status", "delivery", "stock_level"}

func (k Kind) String() string { return KindNames[k] }

// OrderLineInput is one line of a New-Order (2.4.1.5).
type OrderLineInput struct {
	ItemID   int32
	SupplyW  int32
	Quantity int32
}

// NewOrderInput is the terminal input of a New-Order (2.4.1).
type NewOrderInput struct {
	W, D, C int
	Lines   []OrderLineInput
	// Rollback marks the 1% of orders whose last item is unused (2.4.1.4):
	// its ItemID is UnusedItemID, the item is not found and the transaction
	// rolls back.
	Rollback bool
	AllLocal bool // every line is supplied by the home warehouse
}

// UnusedItemID is an item number that does not exist (2.4.1.4).
const UnusedItemID = NumItems + 1

// NewOrderOutput is what a New-Order returns.
type NewOrderOutput struct {
	OID        int   // the order number (also for a rolled-back order)
	RolledBack bool  // the unused item was met and the transaction rolled back
	TotalCents int64 // sum(OL_AMOUNT) x (1 - C_DISCOUNT) x (1 + W_TAX + D_TAX), rounded to cents
}

// PaymentInput is the terminal input of a Payment (2.5.1).
type PaymentInput struct {
	W, D   int // the terminal's warehouse and the district paid to
	CW, CD int // the customer's warehouse and district (remote in 15%)
	ByName bool
	CID    int    // when !ByName
	CLast  string // when ByName
	// AmountCents is H_AMOUNT in cents, 100..500000.
	AmountCents int64
}

// PaymentOutput is what a Payment returns.
type PaymentOutput struct {
	CID int // the customer paid for (chosen by name: row ceil(n/2) by C_FIRST)
}

// OrderStatusInput is the terminal input of an Order-Status (2.6.1).
type OrderStatusInput struct {
	W, D   int
	ByName bool
	CID    int
	CLast  string
}

// OrderStatusOutput is what an Order-Status returns.
type OrderStatusOutput struct {
	CID   int
	OID   int // the customer's latest order, 0 when there is none
	Lines int // its order lines
}

// DeliveryInput is the input of a (deferred) Delivery (2.7.1).
type DeliveryInput struct {
	W       int
	Carrier int // 1..10
}

// DeliveryOutput is what a Delivery returns.
type DeliveryOutput struct {
	// Delivered[d-1] is the order delivered in district d, 0 when the
	// district had no undelivered order and was skipped (2.7.4.2).
	Delivered [DistrictsPerWarehouse]int
	Skipped   int
}

// StockLevelInput is the terminal input of a Stock-Level (2.8.1).
type StockLevelInput struct {
	W, D      int
	Threshold int // 10..20
}

// StockLevelOutput is what a Stock-Level returns.
type StockLevelOutput struct {
	LowStock int // distinct items of the district's last 20 orders below the threshold
}

// SchemaInfo is what the driver needs to know of a built schema.
type SchemaInfo struct {
	Warehouses int
	CLoad      CValues
	BuiltAt    time.Time
}
