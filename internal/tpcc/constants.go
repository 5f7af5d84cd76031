// Package tpcc is the TPC-C workload without any engine's SQL: constants,
// random generators (NURand with C-Load/C-Run), initial population, and the
// definitions the checks and the driver share. Clause numbers refer to the
// TPC-C Standard Specification revision 5.11.
package tpcc

// Cardinalities of the initial population (4.2.2 and 4.3.3.1).
const (
	NumItems                  = 100000 // ITEM: fixed, does not scale with W
	DistrictsPerWarehouse     = 10
	CustomersPerDistrict      = 3000
	OrdersPerDistrict         = 3000 // one order per customer
	StockPerWarehouse         = NumItems
	FirstUndeliveredOrder     = 2101                                          // orders 2101..3000 are undelivered (4.3.3.1)
	NewOrdersPerDistrict      = OrdersPerDistrict - FirstUndeliveredOrder + 1 // 900
	CustomersPerWarehouse     = CustomersPerDistrict * DistrictsPerWarehouse  // 30,000
	OrdersPerWarehouse        = OrdersPerDistrict * DistrictsPerWarehouse     // 30,000
	NewOrdersPerWarehouse     = NewOrdersPerDistrict * DistrictsPerWarehouse  // 9,000
	NamedCustomersPerDistrict = 1000                                          // C_LAST of C_ID 1..1000 is syllables(C_ID-1) (4.3.3.1)
	MinOrderLines             = 5
	MaxOrderLines             = 15
)

// Initial values that the consistency conditions rest on (4.3.3.1):
// 10 districts x 30,000.00 = 300,000.00 (3.3.2.1) and 3,000 customers x 10.00
// of history = 30,000.00 per district (3.3.2.8, 3.3.2.9).
const (
	WarehouseYTDCents       = 300000_00
	DistrictYTDCents        = 30000_00
	DistrictNextOID         = OrdersPerDistrict + 1 // 3001
	CustomerBalanceCents    = -10_00
	CustomerYTDPaymentCents = 10_00
	CustomerCreditLimCents  = 50000_00
	HistoryAmountCents      = 10_00
)

// NURand parameter A per field (2.1.6).
const (
	NURandALast = 255  // C_LAST, range 0..999
	NURandACID  = 1023 // C_ID, range 1..3000
	NURandAItem = 8191 // OL_I_ID, range 1..100000
)
