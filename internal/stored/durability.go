package stored

import (
	"time"

	"github.com/tierbench/tierbench/internal/tpcc"
)

// DurabilityCycle is the outcome of one cycle of the durability test
// (TPC-C 3.5.4): a run's step document, and the `cycles` entries of
// `durability --json`.
type DurabilityCycle struct {
	Cycle int `json:"cycle"`
	// Count1 and Count2 are sum(d_next_o_id) before the run and after
	// recovery.
	Count1 int64 `json:"count1"`
	Count2 int64 `json:"count2"`
	// Acknowledged New-Orders: Committed + RolledBack.
	Acknowledged int64 `json:"acknowledged"`
	Committed    int64 `json:"committed"`
	RolledBack   int64 `json:"rolled_back"`
	// Found committed New-Orders whose order is there; Lost those whose
	// order is not (must be 0).
	Found int64 `json:"found"`
	Lost  int64 `json:"lost"`
	// RolledBackFound: rolled-back New-Orders whose order is there (must
	// be 0).
	RolledBackFound int64 `json:"rolled_back_found"`
	// Excess is count2 - count1 - committed: orders committed but never
	// acknowledged (in flight at the fault). It must be between 0 and
	// ExcessBound, the number of virtual users.
	Excess      int64 `json:"excess"`
	ExcessBound int64 `json:"excess_bound"`
	// Violations lists some of the contradicted acknowledgements.
	Violations []tpcc.Ack `json:"violations,omitempty"`
	// Consistency is the verdict of the consistency conditions after
	// recovery; Failed names the conditions that do not hold.
	Consistency bool     `json:"consistency"`
	Failed      []string `json:"failed_conditions,omitempty"`

	StartedAt       time.Time `json:"started_at"`
	FaultAt         time.Time `json:"fault_at"`
	RanSeconds      float64   `json:"ran_seconds"`      // TPC-C before the fault
	RecoverySeconds float64   `json:"recovery_seconds"` // from the fault's end until the database answered
	Log             string    `json:"log"`
	OK              bool      `json:"ok"`
	Problems        []string  `json:"problems,omitempty"` // why not OK, in words
}
