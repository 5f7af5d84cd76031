package live

import (
	"strconv"

	"github.com/tierbench/tierbench/internal/stored"
)

// The TPC-H metrics: per query of the power test, and counts of every
// query and refresh function by test and outcome.
var (
	tpchPowerTest = desc("tierbench_tpch_power_test", "The TPC-H power test running or last run, 1-based.")
	tpchQueries   = desc("tierbench_tpch_queries_total", "TPC-H queries and refresh functions finished, by test (power, throughput) and status (ok, timeout, wrong, failed).", "test", "status")
	tpchQuerySecs = desc("tierbench_tpch_query_seconds", "A query's or refresh function's time in the latest power test, as the client measured it.", "query")
	tpchQueryRead = desc("tierbench_tpch_query_read_throughput_bytes_per_second", "Read throughput on the target's disks while the query ran in the latest power test (with telemetry).", "query")
	tpchGeoMean   = desc("tierbench_tpch_power_geomean_seconds", "The geometric mean of the 22 query times of the latest complete power test.")
)

// tpchState is a TPC-H run's figures so far.
type tpchState struct {
	rep int
	// power is the latest power-test execution of each query and refresh
	// function, by name (Q1 … Q22, RF1, RF2), in the order first heard.
	power   map[string]*stored.TPCHQuery
	order   []string
	counts  map[[2]string]int64 // by test and status
	repSecs []float64           // the running power test's query times
	geoMean float64
}

func (r *runState) tpchState() *tpchState {
	if r.tpch == nil {
		r.tpch = &tpchState{power: map[string]*stored.TPCHQuery{}, counts: map[[2]string]int64{}}
	}
	return r.tpch
}

// finish keeps a finished query or refresh function.
func (t *tpchState) finish(q *stored.TPCHQuery) {
	t.counts[[2]string{q.Test, q.Status}]++
	if q.Test != stored.TPCHPower {
		return
	}
	if q.Rep != t.rep {
		t.rep, t.repSecs = q.Rep, nil
	}
	name := q.Refresh
	if name == "" {
		name = "Q" + strconv.Itoa(q.Query)
		t.repSecs = append(t.repSecs, q.Seconds)
		if len(t.repSecs) == 22 {
			t.geoMean = stored.GeoMean(t.repSecs)
		}
	}
	if _, ok := t.power[name]; !ok {
		t.order = append(t.order, name)
	}
	c := *q
	t.power[name] = &c
}

func (t *tpchState) collect(m emitter) {
	if t.rep > 0 {
		m.gauge(tpchPowerTest, float64(t.rep))
	}
	for k, n := range t.counts {
		m.counter(tpchQueries, float64(n), k[0], k[1])
	}
	for _, name := range t.order {
		q := t.power[name]
		m.gauge(tpchQuerySecs, q.Seconds, name)
		if q.Telemetry != nil {
			m.gauge(tpchQueryRead, q.ReadMBps*1e6, name)
		}
	}
	if t.geoMean > 0 {
		m.gauge(tpchGeoMean, t.geoMean)
	}
}
