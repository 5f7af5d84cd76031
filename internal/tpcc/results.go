package tpcc

// BuildResult is what a schema build reports (the --json of `tpcc build`).
type BuildResult struct {
	Warehouses int              `json:"warehouses"`
	Seconds    float64          `json:"seconds"`
	Rows       map[string]int64 `json:"rows"`
	Bytes      int64            `json:"bytes"`      // size of tables and indexes on disk
	CopyBytes  int64            `json:"copy_bytes"` // bytes streamed into COPY
	LoadSec    float64          `json:"load_seconds"`
	IndexSec   float64          `json:"index_seconds"`
	CLoad      CValues          `json:"c_load"`
	Workers    int              `json:"build_vus"`
}

// BuildProgress is a snapshot of a running build.
type BuildProgress struct {
	Phase          string // "load", "index", "analyze"
	WarehousesDone int
	Warehouses     int
	Rows           int64
	Bytes          int64
	Fraction       float64 // of the load phase, 0..1
}

// CheckResult is the verdict of `tpcc check`.
type CheckResult struct {
	OK            bool          `json:"ok"`
	Warehouses    int           `json:"warehouses"`
	AsLoaded      bool          `json:"as_loaded"` // no transaction has changed orders since the load
	Conditions    []Condition   `json:"conditions"`
	Cardinalities []Cardinality `json:"cardinalities"`
}

// Condition is the outcome of one consistency condition of 3.3.2.
type Condition struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	OK         bool   `json:"ok"`
	Violations int64  `json:"violations"`
	// Scope says how it ran: "all" warehouses, "sample" (see Warehouses),
	// or "not-applicable" for a load-only condition after a run.
	Scope      string `json:"scope"`
	Warehouses []int  `json:"warehouses,omitempty"`
	Note       string `json:"note,omitempty"`
}

// Cardinality compares a table's row count with clause 4.2.2.
type Cardinality struct {
	Table    string `json:"table"`
	Found    int64  `json:"found"`
	Expected int64  `json:"expected"`
	// Tolerance is the allowed relative deviation (0.01 for ORDER-LINE).
	Tolerance float64 `json:"tolerance,omitempty"`
	OK        bool    `json:"ok"`
	Note      string  `json:"note,omitempty"`
}

// ConditionDef names a consistency condition of clause 3.3.2.
type ConditionDef struct {
	ID    string
	Title string
	// Expensive conditions run on sampled warehouses unless asked for all.
	Expensive bool
	// LoadOnly conditions hold only right after the initial load.
	LoadOnly bool
}

// Conditions are the twelve consistency conditions of 3.3.2.
var Conditions = []ConditionDef{
	{ID: "3.3.2.1", Title: "W_YTD = sum(D_YTD)"},
	{ID: "3.3.2.2", Title: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)"},
	{ID: "3.3.2.3", Title: "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER per district"},
	{ID: "3.3.2.4", Title: "sum(O_OL_CNT) = rows in ORDER-LINE per district"},
	{ID: "3.3.2.5", Title: "O_CARRIER_ID is null exactly when a NEW-ORDER row exists"},
	{ID: "3.3.2.6", Title: "O_OL_CNT = number of the order's ORDER-LINE rows"},
	{ID: "3.3.2.7", Title: "OL_DELIVERY_D is null exactly when O_CARRIER_ID is null"},
	{ID: "3.3.2.8", Title: "W_YTD = sum(H_AMOUNT) per warehouse"},
	{ID: "3.3.2.9", Title: "D_YTD = sum(H_AMOUNT) per district"},
	{ID: "3.3.2.10", Title: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer", Expensive: true},
	{ID: "3.3.2.11", Title: "rows in ORDER - rows in NEW-ORDER = 2100 per district", LoadOnly: true},
	{ID: "3.3.2.12", Title: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) per customer", Expensive: true},
}

// SampleWarehouses picks the warehouses an expensive check samples: the
// first, the last and two others at random (as 3.3.3 allows for conditions
// 2 and 4), or all of them when there are four or fewer.
func SampleWarehouses(w int, r *Rand) []int {
	if w <= 4 {
		out := make([]int, w)
		for i := range out {
			out[i] = i + 1
		}
		return out
	}
	out := []int{1}
	seen := map[int]bool{1: true, w: true}
	for len(out) < 3 {
		x := r.Range(2, w-1)
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return append(out, w)
}
