package live

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stored"
)

// A TPC-H run's queries as they finish: the latest power test's time per
// query (a second power test replaces the first's), its read throughput in
// bytes, the geometric mean once all 22 are in, and counts by test and
// status, throughput-test queries included.
func TestExporterTPCH(t *testing.T) {
	e := New()
	o := e.Observer()
	o.Started(experiment.Started{RunID: "h1", Kind: stored.KindTPCH, Params: &stored.TPCHParams{Engine: "mariadb",
		Placement: stored.Placement{Instance: "maria-slow", Target: "slow"}}})
	result := func(q stored.TPCHQuery) { o.Result(experiment.Result{TPCHQuery: &q}) }
	for rep := 1; rep <= 2; rep++ {
		result(stored.TPCHQuery{Test: stored.TPCHPower, Rep: rep, Refresh: "RF1", Seconds: 0.25, Status: stored.TPCHOK})
		for n := 1; n <= 22; n++ {
			q := stored.TPCHQuery{Test: stored.TPCHPower, Rep: rep, Query: n, Seconds: float64(rep), Status: stored.TPCHOK}
			if n == 9 {
				q.Seconds, q.ReadMBps, q.Telemetry = 4*float64(rep), 48.5, &stored.Aggregate{Samples: 3}
			}
			if rep == 2 && n == 18 {
				q.Status = stored.TPCHTimeout
			}
			result(q)
		}
	}
	result(stored.TPCHQuery{Test: stored.TPCHThroughput, Stream: 1, Query: 3, Seconds: 9, Status: stored.TPCHOK})

	got := gatherText(t, e)
	// Labels in the exposition's order, extra ones in their place.
	labels := `engine="mariadb",instance="maria-slow",run="h1",target="slow"`
	query := func(q string) string {
		return `engine="mariadb",instance="maria-slow",query="` + q + `",run="h1",target="slow"`
	}
	count := func(status, test string) string {
		return `engine="mariadb",instance="maria-slow",run="h1",status="` + status + `",target="slow",test="` + test + `"`
	}
	geo := 2 * math.Exp(math.Log(4)/22) // 21 queries at 2 s, Q9 at 8 s
	for _, line := range []string{
		`tierbench_tpch_power_test{` + labels + `} 2`,
		`tierbench_tpch_query_seconds{` + query("Q1") + `} 2`,
		`tierbench_tpch_query_seconds{` + query("Q9") + `} 8`,
		`tierbench_tpch_query_seconds{` + query("RF1") + `} 0.25`,
		`tierbench_tpch_query_read_throughput_bytes_per_second{` + query("Q9") + `} 4.85e+07`,
		`tierbench_tpch_queries_total{` + count("ok", "power") + `} 45`,
		`tierbench_tpch_queries_total{` + count("timeout", "power") + `} 1`,
		`tierbench_tpch_queries_total{` + count("ok", "throughput") + `} 1`,
		`tierbench_tpch_power_geomean_seconds{` + labels + `} ` + strconv.FormatFloat(geo, 'g', -1, 64),
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("missing %s\nin\n%s", line, grepLines(got, "tierbench_tpch_"))
		}
	}
	if strings.Contains(got, `tierbench_tpch_query_read_throughput_bytes_per_second{`+query("Q1")+`}`) {
		t.Error("Q1 had no telemetry but exports a read throughput")
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
