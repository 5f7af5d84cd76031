package tpcc

// Table names, in the standard spelling (ORDER is a reserved word, so the
// table is "orders", as in every open implementation).
const (
	TableWarehouse = "warehouse"
	TableDistrict  = "district"
	TableCustomer  = "customer"
	TableHistory   = "history"
	TableNewOrder  = "new_order"
	TableOrders    = "orders"
	TableOrderLine = "order_line"
	TableItem      = "item"
	TableStock     = "stock"
)

// Tables lists the nine tables in load order: the generators below write
// their columns in exactly the order of the engine's DDL (clause 1.3).
var Tables = []string{
	TableItem, TableWarehouse, TableDistrict, TableStock, TableCustomer,
	TableHistory, TableOrders, TableNewOrder, TableOrderLine,
}

// ExpectedLoadRows returns the row count of each table right after loading
// w warehouses (4.2.2). ORDER-LINE is the expected value: O_OL_CNT is random,
// so the real count varies around 10 lines per order.
func ExpectedLoadRows(w int) map[string]int64 {
	w64 := int64(w)
	return map[string]int64{
		TableItem:      NumItems,
		TableWarehouse: w64,
		TableDistrict:  w64 * DistrictsPerWarehouse,
		TableStock:     w64 * StockPerWarehouse,
		TableCustomer:  w64 * CustomersPerWarehouse,
		TableHistory:   w64 * CustomersPerWarehouse,
		TableOrders:    w64 * OrdersPerWarehouse,
		TableNewOrder:  w64 * NewOrdersPerWarehouse,
		TableOrderLine: w64 * OrdersPerWarehouse * (MinOrderLines + MaxOrderLines) / 2,
	}
}
