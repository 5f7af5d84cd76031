package threshold_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/threshold"
)

// step is a real TPC-C step document with telemetry, as a run stores it.
func step() *stored.TPCCStep {
	s := &stored.TPCCStep{Index: 1, VUs: 4, TPM: 120000, NOPM: 52000, ClientTPM: 119000, ClientNOPM: 51900, Errors: 0,
		ClientCPUPerTxnUs: 45, Seconds: 30, Txn: map[string]metrics.Summary{},
		Host:         map[string]float64{"cpu_iowait_pct": 12.5, "cpu_idle_pct": 40, "cpu_user_pct": 30, "cpu_system_pct": 17.5, "cpu_steal_pct": 0, "server_cpu_pct": 150, "mem_used_bytes": 1 << 30, "mem_cache_bytes": 2 << 30, "mem_dirty_bytes": 1 << 20},
		Device:       map[string]float64{"r_iops": 100, "w_iops": 2000, "r_mbps": 1, "w_mbps": 20, "r_await_ms": 0.2, "w_await_ms": 0.4, "aqu_sz": 1, "util_pct": 30, "p50_ms": 0.1, "p95_ms": 0.5, "p99_ms": 1.5},
		DB:           map[string]float64{"cache_hit_pct": 99.5, "blocks_read_per_s": 300},
		MeasureStart: time.Unix(0, 0)}
	for _, k := range []string{"new_order", "payment", "order_status", "delivery", "stock_level"} {
		s.Txn[k] = metrics.Summary{Count: 1000, MeanMs: 1, P50Ms: 0.8, P95Ms: 2, P99Ms: 3.2, P999Ms: 9, MaxMs: 20}
	}
	return s
}

// point is a real read-only disk point.
func point() *stored.Point {
	return &stored.Point{Name: "randread-4k-qd32", BS: "4k", RW: "randread", IODepth: 32, Jobs: 1,
		Read:      &stored.DirStats{IOPS: 120000, MBps: 491.5, MeanMs: 0.26, P50Ms: 0.25, P95Ms: 0.4, P99Ms: 0.6, P999Ms: 1.8, MaxMs: 5, IOs: 3600000},
		UsrCPUPct: 20, SysCPUPct: 60, Seconds: 30,
		Host:   map[string]float64{"cpu_iowait_pct": 5, "cpu_idle_pct": 10, "cpu_user_pct": 30, "cpu_system_pct": 55, "cpu_steal_pct": 0, "server_cpu_pct": 0, "mem_used_bytes": 1, "mem_cache_bytes": 1, "mem_dirty_bytes": 1},
		Device: map[string]float64{"r_iops": 120000, "w_iops": 0, "r_mbps": 491, "w_mbps": 0, "r_await_ms": 0.25, "w_await_ms": 0, "aqu_sz": 30, "util_pct": 100, "p50_ms": 0.2, "p95_ms": 0.3, "p99_ms": 0.5}}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		kind, expr, key string
		limit           float64
	}{
		{stored.KindTPCC, "nopm>=50000", "nopm", 50000},
		{stored.KindTPCC, " tpm > 5e4 ", "tpm", 50000},
		{stored.KindTPCC, "errors==0", "errors", 0},
		{stored.KindTPCC, "new_order.p99<=10ms", "txn.new_order.p99_ms", 10},
		{stored.KindTPCC, "payment.p95 < 2000us", "txn.payment.p95_ms", 2},
		{stored.KindTPCC, "new_order.p99.9<=0.05s", "txn.new_order.p999_ms", 50},
		{stored.KindTPCC, "txn.delivery.max_ms<100", "txn.delivery.max_ms", 100},
		{stored.KindTPCC, "txn.delivery.p50<1", "txn.delivery.p50_ms", 1},
		{stored.KindTPCC, "cpu_iowait<=20%", "host.cpu_iowait_pct", 20},
		{stored.KindTPCC, "host.cpu_iowait<=20", "host.cpu_iowait_pct", 20},
		{stored.KindTPCC, "client_cpu_us_per_txn<=0.05ms", "client_cpu_us_per_txn", 50},
		{stored.KindTPCC, "mem_dirty<1GiB", "host.mem_dirty_bytes", 1 << 30},
		{stored.KindTPCC, "db.cache_hit_pct>=95%", "db.cache_hit_pct", 95},
		{stored.KindTPCC, "device.p99<=2ms", "device.p99_ms", 2},
		{stored.KindDisk, "read.iops>=100000", "read.iops", 100000},
		{stored.KindDisk, "read.iops>=1e5", "read.iops", 100000},
		{stored.KindDisk, "read.iops>=100k", "read.iops", 100000},
		{stored.KindDisk, "write.p99.9<=2ms", "write.p999_ms", 2},
		{stored.KindDisk, "write.p99<=500us", "write.p99_ms", 0.5},
		{stored.KindDisk, "read.mbps>=200MB/s", "read.mbps", 200},
		{stored.KindDisk, "cpu_iowait!=100", "host.cpu_iowait_pct", 100},
		{stored.KindTPCH, "geomean<=2s", "geomean_seconds", 2},
		{stored.KindTPCH, "geomean<=1.5min", "geomean_seconds", 90},
		{stored.KindTPCH, "q18.seconds<=30s", "q18.seconds", 30},
		{stored.KindTPCH, "q5.read_await<=2ms", "q5.read_await_ms", 2},
		{stored.KindTPCH, "rf1.seconds<500ms", "rf1.seconds", 0.5},
		{stored.KindTPCH, "throughput_at_size>=1k", "throughput_at_size", 1000},
	} {
		ts, err := threshold.Parse(c.kind, []string{c.expr})
		if err != nil {
			t.Errorf("%s %q: %v", c.kind, c.expr, err)
			continue
		}
		if got := ts[0]; got.Key() != c.key || got.Limit() != c.limit {
			t.Errorf("%s %q: key %q limit %g; want %q %g", c.kind, c.expr, got.Key(), got.Limit(), c.key, c.limit)
		}
	}
}

func TestParseErrors(t *testing.T) {
	bad := []string{"nopm", "nopm=>5", "nopm>=fast", "nopm>=10ms", "new_order.p99<=10%", "cpu_iowait<=20ms",
		"read.iops>=100", "nopm >= 5 extra", "new_order.p42<1ms", "", "nopm>=5k/s"}
	_, err := threshold.Parse(stored.KindTPCC, append([]string{"nopm>=1"}, bad...))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(bad) {
		t.Fatalf("%d error lines for %d bad expressions:\n%s", len(lines), len(bad), err)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, "threshold ") || !strings.Contains(l, strings.TrimSpace(bad[i])) {
			t.Errorf("line %d does not name %q: %s", i, bad[i], l)
		}
	}
	if !strings.Contains(err.Error(), `"read.iops" is not a figure of a TPC-C step`) {
		t.Errorf("a disk name on a TPC-C run is not named as such:\n%s", err)
	}
	if _, err := threshold.Parse(stored.KindDisk, []string{"nopm>=1"}); err == nil || !strings.Contains(err.Error(), "disk point") {
		t.Errorf("nopm on a disk run: %v", err)
	}
	if _, err := threshold.Parse(stored.KindTPCH, []string{"q23.seconds<1s"}); err == nil || !strings.Contains(err.Error(), "not a figure of a TPC-H test") {
		t.Errorf("q23 on a TPC-H run: %v", err)
	}
	if ts, err := threshold.Parse(stored.KindTPCC, nil); ts != nil || err != nil {
		t.Errorf("no expressions: %v, %v", ts, err)
	}
}

func TestJudge(t *testing.T) {
	ts, err := threshold.Parse(stored.KindTPCC, []string{"nopm>=50000", "new_order.p99<=3ms", "cpu_iowait<=20%", "errors==0", "db.cache_hit_pct>=99.9"})
	if err != nil {
		t.Fatal(err)
	}
	vs := threshold.Judge(ts, 1, "4 VUs", step())
	want := map[string]bool{"nopm>=50000": true, "new_order.p99<=3ms": false, "cpu_iowait<=20%": true, "errors==0": true, "db.cache_hit_pct>=99.9": false}
	if len(vs) != len(want) {
		t.Fatalf("%d verdicts: %+v", len(vs), vs)
	}
	for _, v := range vs {
		if v.Pass != want[v.Threshold] || v.Step != 1 || v.Name != "4 VUs" {
			t.Errorf("%+v; want pass=%t", v, want[v.Threshold])
		}
	}
	if got := threshold.Breaches(vs); len(got) != 2 {
		t.Errorf("breaches %+v", got)
	}
	if s := vs[1].String(); s != "FAIL  new_order.p99<=3ms  step 2 (4 VUs): 3.2 ms" {
		t.Errorf("String() = %q", s)
	}
	if s := vs[0].String(); s != "pass  nopm>=50000  step 2 (4 VUs): 52,000" {
		t.Errorf("String() = %q", s)
	}

	// A read-only point has no write figures: no verdict, and Unmatched
	// fails the threshold that judged no point at all.
	ds, err := threshold.Parse(stored.KindDisk, []string{"read.iops>=100k", "write.p99.9<=2ms"})
	if err != nil {
		t.Fatal(err)
	}
	dv := threshold.Judge(ds, 0, "randread-4k-qd32", point())
	if len(dv) != 1 || !dv[0].Pass || dv[0].Key != "read.iops" || dv[0].Value != 120000 {
		t.Fatalf("disk verdicts %+v", dv)
	}
	un := threshold.Unmatched(ds, dv)
	if len(un) != 1 || un[0].Pass || un[0].Step != -1 || un[0].Threshold != "write.p99.9<=2ms" || !strings.Contains(un[0].Note, "write.p999_ms") {
		t.Errorf("unmatched %+v", un)
	}
}

// Every name the vocabulary lists resolves to a key that a real document
// has, so the names cannot drift from the JSON users see.
func TestNamesExist(t *testing.T) {
	full := point()
	full.Write = full.Read
	docs := map[string]any{stored.KindTPCC: step(), stored.KindDisk: full}
	for kind, doc := range docs {
		for _, n := range threshold.Names(kind) {
			ts, err := threshold.Parse(kind, []string{n.Name + ">=0", n.Key + ">=0"})
			if err != nil {
				t.Errorf("%s: %v", kind, err)
				continue
			}
			if ts[0].Key() != n.Key || ts[1].Key() != n.Key {
				t.Errorf("%s %s resolves to %s / %s; want %s", kind, n.Name, ts[0].Key(), ts[1].Key(), n.Key)
			}
			if vs := threshold.Judge(ts[:1], 0, "", doc); len(vs) != 1 {
				t.Errorf("%s: %s (%s) is not in a real %s document", kind, n.Name, n.Key, kind)
			}
		}
	}
}

// docs/thresholds.md lists every name.
func TestNamesDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/thresholds.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, kind := range []string{stored.KindTPCC, stored.KindDisk} {
		for _, n := range threshold.Names(kind) {
			name := n.Name
			for _, k := range []string{"new_order", "payment", "order_status", "delivery", "stock_level", "read", "write"} {
				if rest, ok := strings.CutPrefix(name, k+"."); ok {
					name = "TYPE." + rest // the docs write the per-type and per-direction figures once
					if k == "read" || k == "write" {
						name = "DIR." + rest
					}
				}
			}
			if !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("docs/thresholds.md does not list `%s` (%s)", name, n.Name)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"nopm>=50000", "new_order.p99<=10ms", "read.iops>=1e5", "write.p99.9 <= 2ms", "cpu_iowait<=20%", "x", "<=", "db.a_pct>1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, kind := range []string{stored.KindTPCC, stored.KindDisk} {
			ts, err := threshold.Parse(kind, []string{s})
			if err != nil {
				continue
			}
			again, err := threshold.Parse(kind, []string{ts[0].Expr})
			if err != nil || again[0] != ts[0] {
				t.Fatalf("%q parsed as %+v, its Expr re-parsed as %+v (%v)", s, ts[0], again, err)
			}
		}
	})
}
