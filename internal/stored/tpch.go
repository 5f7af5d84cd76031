package stored

import (
	"math"
	"strconv"
)

// TPCHParams is what the store keeps of a TPC-H run's parameters: all that
// is needed to repeat it, the DSN without its password.
type TPCHParams struct {
	DSN    string  `json:"dsn"`
	Engine string  `json:"engine"`
	Scale  float64 `json:"scale"`
	// Seed draws the queries' substitution parameters as qgen's -r does;
	// with Validate, the specification's validation parameters are used
	// instead and every answer is checked where reference answers exist.
	Seed     int64  `json:"seed"`
	Validate bool   `json:"validate,omitempty"`
	Refresh  bool   `json:"refresh"`           // RF1 and RF2 ran
	Streams  int    `json:"streams,omitempty"` // the throughput test's query streams (0: none)
	Repeat   int    `json:"repeat"`            // power tests
	Timeout  string `json:"timeout,omitempty"` // per query ("": none)
	// Settings are the analytic settings the power test's session ran
	// with, as the server shows them (engine.TPCHRunner.TPCHSettings):
	// PostgreSQL's work_mem, hash_mem_multiplier and parallel workers,
	// MariaDB's join and sort buffers and temporary tables' sizes.
	Settings map[string]string `json:"settings,omitempty"`
	// ThroughputSettings are those of the throughput test's sessions,
	// sized for its S+1 sessions at once (none without one).
	ThroughputSettings map[string]string `json:"throughput_settings,omitempty"`
	Placement
}

// The two tests of a TPC-H run.
const (
	TPCHPower      = "power"
	TPCHThroughput = "throughput"
)

// A TPC-H query's or refresh function's outcome.
const (
	TPCHOK      = "ok"
	TPCHTimeout = "timeout" // cancelled on the server at the run's timeout
	TPCHWrong   = "wrong"   // an answer that differs from the reference
	TPCHFailed  = "failed"  // the database refused it
)

// TPCHQuery is one query's or refresh function's execution in a test: a
// step of a TPC-H run, its interval the query's.
type TPCHQuery struct {
	Test    string  `json:"test"` // TPCHPower or TPCHThroughput
	Rep     int     `json:"rep"`  // the power test's repetition, from 1
	Stream  int     `json:"stream"`
	Query   int     `json:"query,omitempty"`   // 1 to 22; 0 for a refresh function
	Refresh string  `json:"refresh,omitempty"` // "RF1" or "RF2"
	Seconds float64 `json:"seconds"`           // as the client measured it
	// ServerSeconds is the server's own time of the answer statement,
	// where the engine reports it (MariaDB's profiling, PostgreSQL's
	// pg_stat_activity; docs/tpch.md), 0 where it does not.
	ServerSeconds float64 `json:"server_seconds,omitempty"`
	Rows          int     `json:"rows"`
	Status        string  `json:"status"`
	Error         string  `json:"error,omitempty"` // why it failed, timed out or was wrong
	// Params are its substitution parameters, as qgen writes them.
	Params []string `json:"params,omitempty"`
	// What the storage did meanwhile (with telemetry): read MB/s, the
	// read await and the p99 of I/O latency of the target's devices.
	ReadMBps  float64    `json:"read_mbps,omitempty"`
	ReadAwait float64    `json:"read_await_ms,omitempty"`
	DeviceP99 float64    `json:"device_p99_ms,omitempty"`
	Telemetry *Aggregate `json:"telemetry,omitempty"`
}

// Name is the query's step name, e.g. "power 1 Q14", "throughput 2 Q3",
// "power 1 RF1": the test, the power test's repetition or the throughput
// test's stream, and what ran.
func (q TPCHQuery) Name() string {
	what := q.Refresh
	if what == "" {
		what = "Q" + strconv.Itoa(q.Query)
	}
	n := q.Stream
	if q.Test == TPCHPower {
		n = q.Rep
	}
	return q.Test + " " + strconv.Itoa(n) + " " + what
}

// GeoMean is the geometric mean of xs (0 for none, or when one is not
// above 0).
func GeoMean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		if x <= 0 {
			return 0
		}
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs)))
}
