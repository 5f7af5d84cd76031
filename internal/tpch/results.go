package tpch

// BuildResult is what a TPC-H build made.
type BuildResult struct {
	Scale      float64          `json:"scale"`
	Seconds    float64          `json:"seconds"`
	Rows       map[string]int64 `json:"rows"`
	Bytes      int64            `json:"bytes"`      // tables and indexes on disk
	CopyBytes  int64            `json:"copy_bytes"` // bytes streamed into COPY or LOAD DATA
	LoadSec    float64          `json:"load_seconds"`
	IndexSec   float64          `json:"index_seconds"`   // primary keys and foreign-key indexes
	AnalyzeSec float64          `json:"analyze_seconds"` // fresh statistics
	Workers    int              `json:"build_vus"`
}

// BuildProgress is a snapshot of a running build.
type BuildProgress struct {
	Phase    string  // "load", "index", "analyze"
	Rows     int64   // loaded so far
	Bytes    int64   // streamed so far
	Fraction float64 // of the load phase's tasks, 0..1
}
