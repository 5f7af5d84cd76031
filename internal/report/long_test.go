package report

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/report/reporttest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/threshold"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// longSecond is what a TPC-C run stores for second sec of step i of n: the
// series the experiment writes from the driver's tick (tpm, nopm, ...) and
// those a telemetry session samples (telemetry.Sample.Values: host.*,
// dev.NAME.*, dev.total.*, dev.p99_ms, db.*). They wave, with a spike of
// one second now and then, as a real run's do.
func longSecond(i, n, sec int) map[string]float64 {
	x := float64(sec)
	wave := 1 + 0.1*math.Sin(x/37) + 0.05*math.Sin(x*1.3)
	spike := 1.0
	if sec%997 == 0 {
		spike = 8
	}
	load := float64(i+1) / float64(n)
	dev := stored.DeviceRates{Name: "nvme0n1", RIOPS: 3000 * load * wave, WIOPS: 9000 * load * wave, RMBps: 24 * load, WMBps: 70 * load * wave,
		RAwaitMs: 0.3 * wave * spike, WAwaitMs: 0.6 * wave, AquSz: 4 * load, UtilPct: 60 * load}
	total := dev
	total.Name = "total"
	s := telemetry.Sample{
		CPU:          telemetry.CPU{UserPct: 50 * load * wave, SystemPct: 12 * load, IOWaitPct: 5 * wave, IdlePct: 100 - 67*load*wave},
		Memory:       telemetry.Memory{UsedBytes: 6 << 30, CacheBytes: 12 << 30, DirtyBytes: int64(200e6 * wave), WritebackBytes: 1 << 20},
		ServerCPUPct: 300 * load * wave,
		Devices:      []stored.DeviceRates{dev},
		Total:        &total,
		Latency:      &telemetry.Latency{Count: 12000, P50Ms: 0.2 * wave, P95Ms: 0.9 * wave, P99Ms: 2 * wave * spike},
		DB: map[string]float64{"commits_per_s": 900 * load * wave, "rollbacks_per_s": 9 * load, "blocks_read_per_s": 3000 * load,
			"blocks_hit_per_s": 90000 * load, "cache_hit_pct": 96.8 * wave, "read_latency_ms": 0.31 * wave * spike,
			"wal_sync_latency_ms": 0.8 * wave, "wal_bytes_per_s": 9e6 * load, "active.CPU": 8 * load, "active.IO": 3 * load},
	}
	v := s.Values()
	tpm := 54000 * load * wave / spike
	for name, value := range map[string]float64{"tpm": tpm, "nopm": 0.44 * tpm, "client_tpm": tpm,
		"new_order.p50_ms": 2 * wave, "new_order.p95_ms": 6 * wave * spike, "new_order.p99_ms": 9 * wave * spike} {
		v[name] = value
	}
	return v
}

// longStore stores a TPC-C run of n steps of the given length as a real run
// stores it: its parameters, environment, a stored.TPCCStep per step,
// every second of every series, a consistency check and thresholds.
func longStore(t *testing.T, n int, perStep time.Duration) (*results.Store, string) {
	t.Helper()
	ctx := context.Background()
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	var vus []int
	for i := range n {
		vus = append(vus, 4*(i+1))
	}
	r, err := store.CreateRun(ctx, "tpcc", "", map[string]any{"engine": "postgres", "warehouses": 100, "vus": vus, "rampup": "2m0s",
		"duration": (perStep - 2*time.Minute).String(), "mode": "routines", "label": "long"})
	must(t, err)
	must(t, store.SetDocument(ctx, r.ID, results.DocEnvironment, environment("xfs")))
	seconds := int(perStep / time.Second)
	var verdicts []threshold.Verdict
	for i := range n {
		start := t0.Add(time.Duration(i) * perStep)
		pts := make([]results.Point, 0, seconds*64)
		for sec := range seconds {
			for name, v := range longSecond(i, n, sec) {
				pts = append(pts, results.Point{Name: name, Step: i, T: start.Add(time.Duration(sec) * time.Second), Value: v})
			}
		}
		must(t, store.AddPoints(ctx, r.ID, pts))
		sum := longSecond(i, n, seconds/2)
		txn := map[string]metrics.Summary{}
		for k, name := range tpcc.KindNames {
			lat := float64(k+1) * sum["new_order.p50_ms"]
			txn[name] = metrics.Summary{Count: int64(20000 * (i + 1)), MeanMs: lat, P50Ms: lat, P95Ms: 3 * lat, P99Ms: 4.5 * lat, P999Ms: 8 * lat, MaxMs: 30 * lat}
		}
		tpm := int64(sum["tpm"])
		step := stored.TPCCStep{Index: i, VUs: vus[i], TPM: tpm, NOPM: tpm * 44 / 100, ClientTPM: tpm, ClientNOPM: tpm * 44 / 100, Txn: txn,
			NOPMCheck: stored.NOPMCheck{Database: tpm * 44 / 100, Client: tpm * 44 / 100, Bound: int64(vus[i]), OK: true},
			StartedAt: start, MeasureStart: start.Add(2 * time.Minute), MeasureEnd: start.Add(perStep), Seconds: (perStep - 2*time.Minute).Seconds(),
			Host:   map[string]float64{"cpu_idle_pct": sum["host.cpu_idle_pct"], "cpu_iowait_pct": sum["host.cpu_iowait_pct"]},
			Device: map[string]float64{"r_iops": sum["dev.total.r_iops"], "w_iops": sum["dev.total.w_iops"], "p99_ms": sum["dev.p99_ms"]},
			DB:     map[string]float64{"cache_hit_pct": sum["db.cache_hit_pct"], "read_latency_ms": sum["db.read_latency_ms"]}}
		doc, err := json.Marshal(step)
		must(t, err)
		must(t, store.AddStep(ctx, results.Step{RunID: r.ID, Index: i, Name: fmt.Sprintf("vus=%d", vus[i]), StartedAt: start,
			MeasureStart: step.MeasureStart, MeasureEnd: step.MeasureEnd, Metrics: doc}))
		verdicts = append(verdicts, threshold.Verdict{Threshold: "nopm>=10000", Step: i, Name: plural(vus[i], "VU", "VUs"), Key: "nopm",
			Value: float64(step.NOPM), Limit: 10000, Pass: step.NOPM >= 10000})
	}
	must(t, store.SetDocument(ctx, r.ID, results.DocThresholds, verdicts))
	must(t, store.SetDocument(ctx, r.ID, results.DocCheck, checkOf()))
	must(t, store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	return store, r.ID
}

// A run of 10 steps of 20 minutes: 12,000 seconds of some 50 series. Its
// report stays small enough to mail and to open at once, because every
// chart draws at most a point or two per pixel column of a series however
// long it is; and it opens in a real browser, summary first.
func TestLongRunReport(t *testing.T) {
	t.Parallel()
	const steps, perStep = 10, 20 * time.Minute
	built := time.Now()
	store, id := longStore(t, steps, perStep)
	t.Logf("stored %d steps of %s in %s", steps, perStep, time.Since(built).Round(time.Millisecond))

	wrote := time.Now()
	w, err := Write(context.Background(), store, Options{Runs: []string{id}, Out: filepath.Join(t.TempDir(), "report.html"),
		Version: "test", Now: t0})
	must(t, err)
	html, err := os.ReadFile(w.HTML)
	must(t, err)
	t.Logf("wrote the report in %s: %d bytes of HTML", time.Since(wrote).Round(time.Millisecond), len(html))
	if len(html) >= 5_000_000 {
		t.Errorf("the report of a %d-step run of %s per step is %d bytes; want under 5 MB", steps, perStep, len(html))
	}

	// A chart drawing every second of a step would have a path of as many
	// points as the step has seconds.
	perStepPoints := int(perStep / time.Second)
	paths := reporttest.PathPoints(html)
	if most := slices.Max(paths); most >= perStepPoints {
		t.Errorf("a chart path has %d points; want fewer than a step's %d seconds: long series must be drawn as envelopes", most, perStepPoints)
	}
	figures := strings.Count(string(html), `<figure class="chart"`)
	if envelopes := strings.Count(string(html), envelopeNote); envelopes < 4*steps+5 {
		t.Errorf("%d of %d charts say they draw envelopes; want every timeline's (at least %d)", envelopes, figures, 4*steps+5)
	}

	opened := reporttest.CheckInBrowserOpened(t, w.HTML, figures, "")
	t.Logf("%d charts, %d paths; the browser opened the report in %s", figures, len(paths), opened.Load.Round(time.Millisecond))
	if len(opened.Sections) == 0 || opened.Sections[0] != "summary" || opened.Sections[len(opened.Sections)-1] != "environment" {
		t.Errorf("the browser shows the sections %v; want the summary first and the environment last", opened.Sections)
	}
}
