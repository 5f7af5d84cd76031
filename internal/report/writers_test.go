package report

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// writerStore stores a run of kind with one step per document, marshalled
// as the writers marshal them.
func writerStore(t *testing.T, store *results.Store, kind string, params map[string]any, docs ...any) string {
	t.Helper()
	ctx := context.Background()
	r, err := store.CreateRun(ctx, kind, "", params)
	must(t, err)
	for i, d := range docs {
		doc, err := json.Marshal(d)
		must(t, err)
		must(t, store.AddStep(ctx, results.Step{RunID: r.ID, Index: i, Name: kind, StartedAt: t0, MeasureStart: t0,
			MeasureEnd: t0.Add(time.Minute), Metrics: doc}))
	}
	must(t, store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	return r.ID
}

// The report reads the step documents with their writers' own types: every
// field a writer stores comes back whole, and the tables show figures that
// only the writers' JSON keys carry (client_tpm, usr_cpu_pct, bytes,
// ran_seconds, failed_conditions, ...).
func TestReadsWhatWritersStore(t *testing.T) {
	ctx := context.Background()
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })

	step := stored.TPCCStep{VUs: 3, TPM: 12345, NOPM: 5432, ClientTPM: 12001, ClientNOPM: 5301, Errors: 7,
		ErrorsByKind: map[string]int64{"serialization": 7}, Retries: 3, Reconnects: 2, Rollbacks: 55, Skipped: 1,
		Txn:       map[string]metrics.Summary{"new_order": {Count: 900, MeanMs: 1.25, P50Ms: 1, P95Ms: 3.5, P99Ms: 4.75, P999Ms: 6, MaxMs: 9}},
		NOPMCheck: stored.NOPMCheck{Database: 5432, Client: 5400, Bound: 40, OK: true},
		Audit:     []tpcc.AuditItem{{Name: "remote order-lines", Value: 1.01, Min: 0.95, Max: 1.05, Samples: 9000, Verdict: "pass"}},
		StartedAt: t0, MeasureStart: t0.Add(5 * time.Second), MeasureEnd: t0.Add(22500 * time.Millisecond), Seconds: 17.5,
		ClientCPUPerTxnUs: 41.5, Host: map[string]float64{"cpu_idle_pct": 37, "cpu_iowait_pct": 4},
		Device: map[string]float64{"r_iops": 111, "w_iops": 222}, DB: map[string]float64{"cache_hit_pct": 98.5}}
	point := stored.PointStep{Point: stored.Point{Name: "8k-randrw60-qd4x2", BS: "8k", BSBytes: 8192, RW: "randrw", RWMixRead: 60,
		IODepth: 4, Jobs: 2,
		Read:      &stored.DirStats{IOPS: 6000, MBps: 49.2, MeanMs: 0.5, P50Ms: 0.4, P95Ms: 0.9, P99Ms: 1.5, P999Ms: 2.5, MaxMs: 8, IOs: 360000},
		Write:     &stored.DirStats{IOPS: 4000, MBps: 32.8, MeanMs: 0.75, P50Ms: 0.6, P95Ms: 1.2, P99Ms: 2.25, P999Ms: 3.5, MaxMs: 9, IOs: 240000},
		UsrCPUPct: 12.5, SysCPUPct: 3.25, Seconds: 60,
		SteadyState: &stored.SteadyState{Criterion: "iops_slope:2.000000%", Attained: true, JobsAttained: 2, Jobs: 2, AttainedAfterS: 45},
		Interrupted: true, Host: map[string]float64{"cpu_iowait_pct": 9}, Device: map[string]float64{"r_iops": 6001}},
		JobFile: "[global]\nioengine=libaio\n"}
	phase := stored.PhaseResult{Phase: stored.Phase{Cycle: 2, Phase: "restore", Method: "pg_restore", Seconds: 12.5,
		Bytes: 3<<30 + 512<<20, MBps: 300.6, Verified: true, ColdCache: true},
		Host: map[string]float64{"cpu_idle_pct": 80}, Device: map[string]float64{"w_mbps": 300}}
	cycle := stored.DurabilityCycle{Cycle: 4, Count1: 1000, Count2: 1510, Acknowledged: 512, Committed: 505, RolledBack: 7,
		Found: 503, Lost: 2, RolledBackFound: 1, Excess: 3, ExcessBound: 8,
		Violations:  []tpcc.Ack{{W: 1, D: 2, OID: 3001, Customer: 4, Lines: 5, FirstItem: 6}},
		Consistency: false, Failed: []string{"3.3.2.4"}, StartedAt: t0, FaultAt: t0.Add(40 * time.Second),
		RanSeconds: 42.5, RecoverySeconds: 7.25, Log: "/tmp/durability/cycle-4.log", OK: false,
		Problems: []string{"2 committed New-Orders lost"}}

	ids := []string{
		writerStore(t, store, "tpcc", map[string]any{"warehouses": 2}, step),
		writerStore(t, store, "disk", map[string]any{"profile": "quick", "ioengine": "libaio"}, point),
		writerStore(t, store, "backup", nil, phase),
		writerStore(t, store, "durability", map[string]any{"fault": "kill", "vus": 8, "rate": 12000, "cold_cache": true}, cycle),
	}
	doc, runs, err := Build(ctx, store, Options{Runs: ids})
	must(t, err)

	// Read back as written, given the statistics of one repetition (n = 1).
	if got := runs[0].TPCC; len(got) != 1 {
		t.Errorf("TPC-C steps read as %+v; want one", got)
	} else {
		g := got[0].TPCCStep
		if n := g.Stats["nopm"]; n.N != 1 || n.Mean != 5432 {
			t.Errorf("TPC-C step's NOPM stats %+v; want n = 1, mean 5432", n)
		}
		g.Stats = nil
		if !reflect.DeepEqual(g, step) {
			t.Errorf("TPC-C step read as %+v;\nwant %+v", g, step)
		}
	}
	if got := runs[1].Disk; len(got) != 1 || !reflect.DeepEqual(got[0].PointStep, point) {
		t.Errorf("disk point read as %+v;\nwant %+v", got, point)
	}
	if got := runs[2].Backup; len(got) != 1 || !reflect.DeepEqual(got[0], phase) {
		t.Errorf("backup phase read as %+v;\nwant %+v", got, phase)
	}
	if got := runs[3].Durability; len(got) != 1 || !reflect.DeepEqual(got[0], cycle) {
		t.Errorf("durability cycle read as %+v;\nwant %+v", got, cycle)
	}

	_, tables := contents(doc.Sections...)
	want := map[string][]string{
		"tpcc-steps": {runs[0].Label, "3", "12,345", "5,432", "12,001", "5,301", "4,115", "1.25", "3.50", "4.75", "7",
			"37.0 %", "4.0 %", "333", "–", "–", "–", "–", "–", "98.5 %"},
		"storage-points": {runs[1].Label, "8k-randrw60-qd4x2", "6,000", "49.2", "0.50", "1.50", "2.50",
			"4,000", "32.8", "0.75", "2.25", "3.50", "12.5 / 3.25 %"},
		"backup-cycles":     {runs[2].Label, "2", "restore", "pg_restore", "12.5", "3.5GiB", "301"},
		"durability-cycles": {runs[3].Label, "kill, cold cache", "12,000 TPM offered to 8 VUs", "4", "42.5", "512", "505", "503", "2", "1", "3 (8)", "7.25", "fail 3.3.2.4", "FAILED: 2 committed New-Orders lost"},
	}
	for id, row := range want {
		tab := tables[id]
		if tab == nil || len(tab.Rows) != 1 || !reflect.DeepEqual(tab.Rows[0], row) {
			t.Errorf("table %s: %+v;\nwant the row %q", id, tab, row)
		}
	}
	if got := runParams(runs[1]); got != "profile=quick ioengine=libaio" {
		t.Errorf("disk run parameters %q; want profile=quick ioengine=libaio", got)
	}
}

// Disk runs stored before fio's I/O engine was named "ioengine" keep it
// under "engine"; the runs table shows whichever key the run has.
func TestDiskIOEngineParam(t *testing.T) {
	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"profile": "quick", "ioengine": "io_uring", "duration": "30s"}, "profile=quick ioengine=io_uring duration=30s"},
		{map[string]any{"profile": "quick", "engine": "psync", "duration": "30s"}, "profile=quick engine=psync duration=30s"},
		{map[string]any{"profile": "quick"}, "profile=quick"},
	} {
		raw, err := json.Marshal(tc.params)
		if err != nil {
			t.Fatal(err)
		}
		params, err := stored.DecodeParams(stored.KindDisk, raw)
		if err != nil {
			t.Fatal(err)
		}
		rd := &runData{Run: results.Run{Kind: stored.KindDisk}, Params: params}
		if got := runParams(rd); got != tc.want {
			t.Errorf("parameters %v: %q; want %q", tc.params, got, tc.want)
		}
	}
}
