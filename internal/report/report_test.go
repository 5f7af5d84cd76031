package report

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/report/chart"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)

// fixture writes runs with known numbers into a fresh store: two TPC-C runs
// (a "fast" and a "slow" tier), one disk run, one backup run.
type fixture struct {
	store                    *results.Store
	dir                      string
	fast, slow, disk, backup string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	s, err := results.Open(filepath.Join(dir, "results"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := &fixture{store: s, dir: dir}
	f.fast = f.tpccRun(t, 1.0)
	f.slow = f.tpccRun(t, 0.4)
	f.disk = f.diskRun(t)
	f.backup = f.backupRun(t)
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func environment(fs string) stored.Environment {
	rot := false
	return stored.Environment{
		CapturedAt: t0,
		Host: stored.Host{Hostname: "bench1", CPUModel: "Test CPU @ 2.50GHz", Cores: 2, Sockets: 1, MemoryBytes: 24 << 30,
			OS: "Debian GNU/Linux 12 (bookworm)", Kernel: "6.1.0", Architecture: "amd64", Virtualization: "kvm"},
		Target: &stored.Target{Path: "/data", MountPoint: "/data", Filesystem: fs, MountSource: "/dev/nvme0n1p1",
			MountOptions: "rw,noatime", Devices: []stored.Device{{Name: "nvme0n1", Model: "Fast NVMe 1TB", Firmware: "1.0",
				Transport: "nvme", CapacityBytes: 1 << 40, Rotational: &rot, Scheduler: "none"}}},
		Database: &stored.Database{Engine: "postgres", Version: "15.18", Settings: []stored.Setting{
			{Name: "shared_buffers", Value: "128MB"}, {Name: "fsync", Value: "on"}}},
		Software: stored.Software{Tierbench: "test", Go: "go1.26"},
	}
}

// tpccRun stores a TPC-C run with steps of 1, 2 and 4 VUs whose
// throughput is scale times a fixed curve.
func (f *fixture) tpccRun(t *testing.T, scale float64) string {
	ctx := context.Background()
	r, err := f.store.CreateRun(ctx, "tpcc", "", map[string]any{"warehouses": 4, "vus": []int{1, 2, 4}, "rampup": "5s", "duration": "10s", "mode": "routines"})
	must(t, err)
	must(t, f.store.SetDocument(ctx, r.ID, results.DocEnvironment, environment("ext4")))
	var pts []results.Point
	for i, vus := range []int{1, 2, 4} {
		start := t0.Add(time.Duration(i) * 15 * time.Second)
		tpm := scale * float64(30000*vus)
		txn := map[string]metrics.Summary{}
		for k, name := range tpcc.KindNames {
			lat := float64(k+1) / scale
			txn[name] = metrics.Summary{Count: int64(1000 * vus), MeanMs: lat, P50Ms: lat, P95Ms: 2 * lat, P99Ms: 3 * lat, P999Ms: 4 * lat, MaxMs: 5 * lat}
		}
		audit := tpcc.Audit{NewOrders: 6000, Rollbacks: 60, OrderLines: 60000, RemoteLines: 600, Payments: 6000, RemotePayments: 900, PaymentsByName: 3600}
		m := map[string]any{"index": i, "vus": vus, "tpm": tpm, "nopm": tpm * 0.44, "client_tpm": tpm, "client_nopm": tpm * 0.44,
			"txn": txn, "audit": audit.Judge(4), "measured_seconds": 10, "nopm_check": map[string]bool{"ok": true},
			"host":   map[string]float64{"cpu_idle_pct": 60 - 10*float64(i), "cpu_iowait_pct": (1 - scale) * 20},
			"device": map[string]float64{"r_iops": 100 * scale, "w_iops": 900 * scale, "r_await_ms": 0.5 / scale, "w_await_ms": 1 / scale, "p99_ms": 4 / scale},
			"db":     map[string]float64{"cache_hit_pct": 99.5, "read_latency_ms": 0.2 / scale, "wal_sync_latency_ms": 0.5 / scale}}
		doc, err := json.Marshal(m)
		must(t, err)
		must(t, f.store.AddStep(ctx, results.Step{RunID: r.ID, Index: i, Name: fmt.Sprintf("vus=%d", vus), StartedAt: start,
			MeasureStart: start.Add(5 * time.Second), MeasureEnd: start.Add(15 * time.Second), Metrics: doc}))
		for sec := range 15 {
			ts := start.Add(time.Duration(sec) * time.Second)
			pts = append(pts,
				results.Point{Name: "tpm", Step: i, T: ts, Value: tpm + float64(sec%3)*100},
				results.Point{Name: "nopm", Step: i, T: ts, Value: tpm*0.44 + float64(sec%3)*40},
				results.Point{Name: "host.cpu_idle_pct", Step: i, T: ts, Value: 50},
				results.Point{Name: "host.cpu_iowait_pct", Step: i, T: ts, Value: 5},
				results.Point{Name: "dev.total.r_iops", Step: i, T: ts, Value: 100 * scale},
				results.Point{Name: "dev.total.w_iops", Step: i, T: ts, Value: 900 * scale},
				results.Point{Name: "dev.total.r_await_ms", Step: i, T: ts, Value: 0.5 / scale},
				results.Point{Name: "dev.total.w_await_ms", Step: i, T: ts, Value: 1 / scale},
				results.Point{Name: "dev.total.r_mbps", Step: i, T: ts, Value: 1},
				results.Point{Name: "dev.total.w_mbps", Step: i, T: ts, Value: 7})
		}
	}
	must(t, f.store.AddPoints(ctx, r.ID, pts))
	check := tpcc.CheckResult{OK: true, Warehouses: 4, Conditions: []tpcc.Condition{
		{ID: "3.3.2.1", Title: "W_YTD = sum(D_YTD)", OK: true, Scope: "all"},
		{ID: "3.3.2.11", Title: "rows in ORDER - rows in NEW-ORDER = 2100", OK: true, Scope: "not-applicable"}}}
	must(t, f.store.SetDocument(ctx, r.ID, results.DocCheck, check))
	must(t, f.store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	return r.ID
}

func (f *fixture) diskRun(t *testing.T) string {
	ctx := context.Background()
	r, err := f.store.CreateRun(ctx, "disk", "", map[string]any{"profile": "quick", "target": "/data"})
	must(t, err)
	must(t, f.store.SetDocument(ctx, r.ID, results.DocEnvironment, environment("xfs")))
	points := []map[string]any{
		{"name": "4k-randrw70-qd1x1", "bs": "4k", "bs_bytes": 4096, "rw": "randrw", "rwmix_read": 70, "iodepth": 1, "jobs": 1,
			"read":  map[string]float64{"iops": 7000, "mbps": 28.7, "mean_ms": 0.1, "p99_ms": 0.3, "p999_ms": 0.5},
			"write": map[string]float64{"iops": 3000, "mbps": 12.3, "mean_ms": 0.2, "p99_ms": 0.6, "p999_ms": 0.9}},
		{"name": "4k-randrw70-qd8x1", "bs": "4k", "bs_bytes": 4096, "rw": "randrw", "rwmix_read": 70, "iodepth": 8, "jobs": 1,
			"read":  map[string]float64{"iops": 35000, "mbps": 143.4, "mean_ms": 0.2, "p99_ms": 0.7, "p999_ms": 1.1},
			"write": map[string]float64{"iops": 15000, "mbps": 61.4, "mean_ms": 0.3, "p99_ms": 0.9, "p999_ms": 1.5}},
		{"name": "64k-read-qd8x1", "bs": "64k", "bs_bytes": 65536, "rw": "read", "iodepth": 8, "jobs": 1,
			"read": map[string]float64{"iops": 9000, "mbps": 589.8, "mean_ms": 0.9, "p99_ms": 2.1, "p999_ms": 3.3}},
		{"name": "256k-read-qd8x1", "bs": "256k", "bs_bytes": 262144, "rw": "read", "iodepth": 8, "jobs": 1,
			"read": map[string]float64{"iops": 3000, "mbps": 786.4, "mean_ms": 2.6, "p99_ms": 5.2, "p999_ms": 7.7}},
	}
	var pts []results.Point
	for i, p := range points {
		start := t0.Add(time.Hour + time.Duration(i)*12*time.Second)
		doc, err := json.Marshal(p)
		must(t, err)
		must(t, f.store.AddStep(ctx, results.Step{RunID: r.ID, Index: i, Name: p["name"].(string), StartedAt: start,
			MeasureStart: start.Add(2 * time.Second), MeasureEnd: start.Add(12 * time.Second), Metrics: doc}))
		for sec := range 10 {
			ts := start.Add(time.Duration(2+sec) * time.Second)
			read := p["read"].(map[string]float64)
			pts = append(pts, results.Point{Name: "read.iops", Step: i, T: ts, Value: read["iops"] * (1 + float64(sec%2)/20)},
				results.Point{Name: "read.clat_ms", Step: i, T: ts, Value: read["mean_ms"]})
		}
	}
	must(t, f.store.AddPoints(ctx, r.ID, pts))
	must(t, f.store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	return r.ID
}

func (f *fixture) backupRun(t *testing.T) string {
	ctx := context.Background()
	r, err := f.store.CreateRun(ctx, "backup", "", nil)
	must(t, err)
	i := 0
	for cycle := 1; cycle <= 2; cycle++ {
		for _, phase := range []string{"backup", "restore"} {
			doc, _ := json.Marshal(stored.PhaseResult{Phase: stored.Phase{Cycle: cycle, Phase: phase, Method: "pg_basebackup",
				Seconds: float64(10 * cycle), Bytes: 1 << 30, MBps: 1073.7 / float64(10*cycle)}})
			must(t, f.store.AddStep(ctx, results.Step{RunID: r.ID, Index: i, Name: fmt.Sprintf("%s %d", phase, cycle),
				StartedAt: t0, MeasureStart: t0, MeasureEnd: t0, Metrics: doc}))
			i++
		}
	}
	must(t, f.store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	return r.ID
}

func (f *fixture) write(t *testing.T, o Options) (Written, string, string) {
	t.Helper()
	if o.Out == "" {
		o.Out = filepath.Join(f.dir, "out", "report.html")
	}
	o.Version, o.Now = "test", t0
	w, err := Write(context.Background(), f.store, o)
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(w.HTML)
	must(t, err)
	md, err := os.ReadFile(w.Markdown)
	must(t, err)
	return w, string(html), string(md)
}

var (
	startedRE  = regexp.MustCompile(`\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}`)
	durationRE = regexp.MustCompile(`\| \d+(ms|s|µs|ns) \|`)
)

// normalize replaces what differs between test runs: run ids and the real
// times CreateRun and FinishRun stamp.
func (f *fixture) normalize(s string) string {
	for name, id := range map[string]string{"FAST": f.fast, "SLOW": f.slow, "DISK": f.disk, "BACKUP": f.backup} {
		s = strings.ReplaceAll(s, id, name)
	}
	s = startedRE.ReplaceAllString(s, "STARTED")
	return durationRE.ReplaceAllString(s, "| DURATION |")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		must(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs from the golden file at line %d:\n got: %s\nwant: %s\n(run with -update if the change is intended)", name, i+1, g, w)
			}
		}
	}
}

// The Markdown of one run of each kind matches the golden file.
func TestMarkdownGolden(t *testing.T) {
	f := newFixture(t)
	_, _, md := f.write(t, Options{Runs: []string{f.fast, f.disk, f.backup}, Labels: map[string]string{f.fast: "nvme"}})
	golden(t, "single.md", f.normalize(md))
}

// Comparing two runs: every chart of a compared metric has a series of
// each run, and a ratio table says how they compare.
func TestCompareTwoRuns(t *testing.T) {
	f := newFixture(t)
	doc, _, err := Build(context.Background(), f.store, Options{Runs: []string{f.fast, f.slow},
		Labels: map[string]string{f.fast: "nvme", f.slow: "sata"}})
	must(t, err)
	var tpccSec *Section
	for _, s := range doc.Sections {
		if s.ID == "tpcc" {
			tpccSec = s
		}
	}
	if tpccSec == nil {
		t.Fatal("no TPC-C section")
	}
	charts := 0
	walk(tpccSec.Blocks, func(b Block) {
		if b.Figure == nil {
			return
		}
		charts++
		var nvme, sata bool
		for _, s := range b.Figure.Chart.Series {
			nvme = nvme || strings.HasPrefix(s.Name, "nvme")
			sata = sata || strings.HasPrefix(s.Name, "sata")
			if len(s.Points) == 0 {
				t.Errorf("chart %q: series %q has no points", b.Figure.Chart.Title, s.Name)
			}
		}
		if !nvme || !sata {
			t.Errorf("chart %q has series %v; want both runs", b.Figure.Chart.Title, seriesNames(b.Figure.Chart.Series))
		}
	})
	if charts < 7 {
		t.Errorf("the TPC-C section has %d charts; want at least 7", charts)
	}
	var ratios *Table
	walk(tpccSec.Blocks, func(b Block) {
		if b.Table != nil && b.Table.ID == "tpcc-ratios" {
			ratios = b.Table
		}
	})
	if ratios == nil {
		t.Fatal("no ratio table")
	}
	if len(ratios.Rows) != 3 {
		t.Fatalf("ratio table has %d rows; want one per common VU count (3)", len(ratios.Rows))
	}
	// sata is 0.4 times nvme's throughput and 2.5 times its latency,
	// each measured once: no interval, nothing told from noise.
	for _, row := range ratios.Rows {
		if row[0] != "sata" || row[2] != "1" || row[5] != "0.40x" || row[6] != "0.40x" || row[7] != "no interval at n=1" ||
			row[8] != "2.50x" || row[9] != "no interval at n=1" {
			t.Errorf("ratio row %v; want sata, n 1, 0.40x TPM, 0.40x NOPM, 2.50x p95, each no interval at n=1", row)
		}
	}
	found := false
	walk(tpccSec.Blocks, func(b Block) {
		found = found || strings.Contains(b.Text, "sata: 0.40x (no interval at n=1) the NOPM of nvme at 4 virtual users")
	})
	if !found {
		t.Error("no sentence comparing NOPM at the largest common step")
	}
}

func seriesNames(xs []chart.Series) []string {
	var names []string
	for _, s := range xs {
		names = append(names, s.Name)
	}
	return names
}

// The HTML is one file with every section, every chart inline, and nothing
// to fetch.
func TestHTMLSelfContained(t *testing.T) {
	f := newFixture(t)
	w, html, _ := f.write(t, Options{Runs: []string{f.fast, f.slow, f.disk, f.backup}})
	// The summary leads, the environment closes.
	sections := []string{"summary", "runs", "storage", "tpcc", "backup", "telemetry", "environment"}
	for _, id := range sections {
		if !strings.Contains(html, `<section id="`+id+`">`) {
			t.Errorf("the HTML has no section %s", id)
		}
	}
	if !slicesEqual(w.Sections, sections) {
		t.Errorf("sections %v; want %v", w.Sections, sections)
	}
	if n := strings.Count(html, `<figure class="chart"`); n < 20 || n != strings.Count(html, "<svg") {
		t.Errorf("%d chart figures, %d svg elements; want every figure to hold one inline svg, at least 20", n, strings.Count(html, "<svg"))
	}
	for _, bad := range []string{"<script", "<link", "src=", "@import", "url("} {
		if strings.Contains(html, bad) {
			t.Errorf("the HTML contains %q: it must not fetch or run anything", bad)
		}
	}
	refs := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`).FindAllString(html, -1)
	for _, r := range refs {
		if !strings.Contains(r, "www.w3.org") {
			t.Errorf("the HTML references %s", r)
		}
	}
	// The data directory: a CSV per table and per stored series.
	entries, err := os.ReadDir(w.DataDir)
	must(t, err)
	var csvs, series int
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".csv") {
			csvs++
			if strings.HasPrefix(e.Name(), "series-") {
				series++
			}
		}
	}
	if series != 2*10+2+0 { // each TPC-C run's 10 series, the disk run's 2
		t.Errorf("%d series CSV files; want 22", series)
	}
	b, err := os.ReadFile(filepath.Join(w.DataDir, seriesFile(f.fast, "tpm")))
	must(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 1+45 || lines[0] != "run,series,step,step_name,time_utc,seconds,value" ||
		!strings.HasPrefix(lines[1], f.fast+",tpm,0,vus=1,2026-11-21T03:00:00Z,0.000,30000") {
		t.Errorf("tpm CSV: %d lines, starting %q / %q", len(lines), lines[0], lines[1])
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// A report never replaces a file it did not write, unless told to.
func TestWriteRefusesForeignFiles(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(f.dir, "mine", "report.html")
	f.write(t, Options{Out: out, Runs: []string{f.fast}})
	f.write(t, Options{Out: out, Runs: []string{f.fast}}) // its own files: rewritten
	md, data := Paths(out)
	for _, path := range []string{out, md} {
		foreign := filepath.Join(f.dir, "foreign", filepath.Base(path))
		must(t, os.MkdirAll(filepath.Dir(foreign), 0o755))
		must(t, os.WriteFile(foreign, []byte("someone's notes\n"), 0o644))
		html := strings.TrimSuffix(foreign, filepath.Ext(foreign)) + ".html"
		_, err := Write(context.Background(), f.store, Options{Out: html, Runs: []string{f.fast}})
		if !errors.Is(err, ErrNotOurs) {
			t.Errorf("writing over %s: %v; want ErrNotOurs", foreign, err)
		}
		if b, _ := os.ReadFile(foreign); string(b) != "someone's notes\n" {
			t.Errorf("%s was changed", foreign)
		}
		must(t, os.RemoveAll(filepath.Dir(foreign)))
	}
	other := filepath.Join(f.dir, "x", "report.html")
	_, otherData := Paths(other)
	must(t, os.MkdirAll(otherData, 0o755))
	must(t, os.WriteFile(filepath.Join(otherData, "keep.csv"), []byte("a\n"), 0o644))
	if _, err := Write(context.Background(), f.store, Options{Out: other, Runs: []string{f.fast}}); !errors.Is(err, ErrNotOurs) {
		t.Errorf("writing into a data directory it did not make: %v; want ErrNotOurs", err)
	}
	if _, err := Write(context.Background(), f.store, Options{Out: other, Runs: []string{f.fast}, Overwrite: true}); err != nil {
		t.Errorf("with Overwrite: %v", err)
	}
	if _, err := os.Stat(data); err != nil {
		t.Errorf("the first report's data directory: %v", err)
	}
}

// Missing facts read as unknown, never as something invented.
func TestEnvironmentUnknowns(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r, err := f.store.CreateRun(ctx, "monitor", "", nil)
	must(t, err)
	must(t, f.store.SetDocument(ctx, r.ID, results.DocEnvironment, stored.Environment{Host: stored.Host{Cores: 2}}))
	old, err := f.store.CreateRun(ctx, "monitor", "", nil) // no environment at all
	must(t, err)
	doc, _, err := Build(ctx, f.store, Options{Runs: []string{r.ID, old.ID}})
	must(t, err)
	env := section(doc, "environment")
	// The run without an environment is named, not compared field by field.
	if texts, _ := contents(env); !slices.Contains(texts, "No environment was captured for "+old.ID+": what it ran on is unknown.") {
		t.Errorf("the environment does not say the old run has none: %q", texts)
	}
	rows := envFacts(t, env, "environment-hardware", 1)
	if got := rows["logical CPUs"]; got[0] != "2" {
		t.Errorf("logical CPUs: %v; want 2", got)
	}
	if got := rows["CPU"]; got[0] != unknown {
		t.Errorf("CPU: %v; want unknown", got)
	}
	if got := rows["memory"]; got[0] != unknown {
		t.Errorf("memory: %v; want unknown", got)
	}
}

// A group's runs are reported together, oldest first, named by the label
// their parameters carry.
func TestGroupAndParamLabels(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var ids []string
	for _, label := range []string{"nvme", "sata"} {
		r, err := f.store.CreateRun(ctx, "monitor", "paper-2-tiers", map[string]string{"label": label})
		must(t, err)
		ids = append(ids, r.ID)
	}
	doc, runs, err := Build(ctx, f.store, Options{Group: "paper-2-tiers"})
	must(t, err)
	if len(runs) != 2 || runs[0].ID != ids[0] || runs[1].ID != ids[1] {
		t.Fatalf("group runs %v; want %v in that order", doc.Runs, ids)
	}
	if runs[0].Label != "nvme" || runs[1].Label != "sata" {
		t.Errorf("labels %q, %q; want nvme, sata", runs[0].Label, runs[1].Label)
	}
	if _, _, err := Build(ctx, f.store, Options{Group: "nope"}); !errors.Is(err, results.ErrNotFound) {
		t.Errorf("an unknown group: %v; want ErrNotFound", err)
	}
}

// Instances side by side: one bar group per phase, instances lined up.
func TestNeighboursSection(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var ids []string
	for _, phase := range []string{"baseline", "beside backups"} {
		for i, inst := range []string{"db-1", "db-2"} {
			r, err := f.store.CreateRun(ctx, "tpcc", "paper-5", map[string]string{"instance": inst, "role": "tpcc", "phase": phase})
			must(t, err)
			nopm := 1000.0 * float64(i+1)
			if phase != "baseline" {
				nopm /= 2
			}
			doc, _ := json.Marshal(map[string]any{"vus": 4, "tpm": 2 * nopm, "nopm": nopm})
			must(t, f.store.AddStep(ctx, results.Step{RunID: r.ID, Name: "vus=4", StartedAt: t0, MeasureStart: t0, MeasureEnd: t0, Metrics: doc}))
			ids = append(ids, r.ID)
		}
	}
	doc, _, err := Build(ctx, f.store, Options{Group: "paper-5"})
	must(t, err)
	var sec *Section
	for _, s := range doc.Sections {
		if s.ID == "neighbours" {
			sec = s
		}
	}
	if sec == nil {
		t.Fatal("no neighbours section")
	}
	var fig *Figure
	var tab *Table
	walk(sec.Blocks, func(b Block) {
		if b.Figure != nil {
			fig = b.Figure
		}
		if b.Table != nil && b.Table.ID == "neighbours-instances" {
			tab = b.Table
		}
	})
	if fig == nil || len(fig.Chart.Series) != 2 || fig.Chart.Series[0].Name != "baseline" || fig.Chart.Series[1].Name != "beside backups" {
		t.Fatalf("neighbour chart series %v; want baseline, beside backups", fig)
	}
	if got := fig.Chart.Series[1].Points; got[0].Y != 500 || got[1].Y != 1000 {
		t.Errorf("beside-backups NOPM per instance %v; want 500, 1000", got)
	}
	if tab == nil || len(tab.Rows) != 4 || tab.Rows[0][0] != "baseline" || tab.Rows[0][1] != "db-1" || tab.Rows[0][2] != "–" {
		t.Errorf("neighbour table %v", tab)
	}
	// Runs that do not name their target still get their ratios.
	var said bool
	walk(sec.Blocks, func(b Block) {
		said = said || b.Text == "TPC-C instances beside backups kept 0.50x (95% CI 0.50–0.50, n=2) their baseline NOPM "+
			"(means of the per-instance ratios of 2 instances, each at its largest step; the intervals are over the instances)."
	})
	if !said {
		t.Errorf("no sentence on the NOPM kept beside backups: %+v", sec.Blocks)
	}
}

// neighbourRun stores a side-by-side TPC-C run of one instance: its largest
// step (4 VUs) has the NOPM and New-Order p95 given; a smaller one has
// numbers that must not be used.
func (f *fixture) neighbourRun(t *testing.T, group, target, inst, phase string, nopm, p95 float64) string {
	t.Helper()
	ctx := context.Background()
	r, err := f.store.CreateRun(ctx, "tpcc", group, map[string]any{"instance": inst, "role": "tpcc", "phase": phase,
		"scenario_target": target, "label": inst})
	must(t, err)
	for i, vus := range []int{1, 4} {
		scale := float64(vus) / 4
		// Whole transactions per minute, as the driver stores them.
		doc, err := json.Marshal(map[string]any{"vus": vus, "tpm": math.Round(2.2 * nopm * scale), "nopm": math.Round(nopm * scale),
			"txn": map[string]metrics.Summary{"new_order": {Count: 100, P95Ms: p95 / scale}}})
		must(t, err)
		must(t, f.store.AddStep(ctx, results.Step{RunID: r.ID, Index: i, Name: fmt.Sprintf("vus=%d", vus), StartedAt: t0, MeasureStart: t0,
			MeasureEnd: t0.Add(40 * time.Second), Metrics: doc}))
	}
	must(t, f.store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	return r.ID
}

// paper-5 on two tiers: the slow tier's TPC-C instances keep less of their
// baseline beside the backups than the fast tier's. The section says so per
// tier, from the per-instance ratios, and the table has each instance's.
func TestNeighboursTwoTiers(t *testing.T) {
	f := newFixture(t)
	const group = "paper-5-neighbours-20261121-030000"
	type run struct {
		target, inst, phase string
		nopm, p95           float64
	}
	runs := []run{
		// Baselines: TPC-C on all three instances of each tier.
		{"fast", "fast-1", "baseline", 1000, 10}, {"fast", "fast-2", "baseline", 1000, 10}, {"fast", "fast-3", "baseline", 1100, 10},
		{"fast", "fast-1", "beside backups", 900, 12}, {"fast", "fast-2", "beside backups", 800, 11}, // fast-3 backs up
		{"slow", "slow-1", "baseline", 500, 20}, {"slow", "slow-2", "baseline", 500, 20}, {"slow", "slow-3", "baseline", 550, 20},
		{"slow", "slow-1", "beside backups", 300, 40}, {"slow", "slow-2", "beside backups", 250, 30},
	}
	for _, r := range runs {
		f.neighbourRun(t, group, r.target, r.inst, r.phase, r.nopm, r.p95)
	}
	doc, _, err := Build(context.Background(), f.store, Options{Group: group})
	must(t, err)
	var sec *Section
	for _, s := range doc.Sections {
		if s.ID == "neighbours" {
			sec = s
		}
	}
	if sec == nil {
		t.Fatal("no neighbours section")
	}
	texts, tables := contents(sec)
	wantSaid(t, texts,
		// fast: 0.90 and 0.80 of the baseline NOPM, 1.20 and 1.10 of its p95;
		// the intervals are t(0.975, 1) = 12.71 standard errors wide.
		"On fast: TPC-C instances beside backups kept 0.85x (95% CI 0.21–1.49, n=2) their baseline NOPM; New-Order p95 1.15x (95% CI 0.51–1.79, n=2) "+
			"(means of the per-instance ratios of 2 instances, each at its largest step; the intervals are over the instances).",
		// slow: 0.60 and 0.50, 2.00 and 1.50.
		"On slow: TPC-C instances beside backups kept 0.55x (95% CI 0.00–1.19, n=2) their baseline NOPM; New-Order p95 1.75x (95% CI 0.00–4.93, n=2) "+
			"(means of the per-instance ratios of 2 instances, each at its largest step; the intervals are over the instances).",
		// Two instances a tier cannot order them: the report says so.
		"TPC-C beside backups kept 0.85x of its baseline NOPM on fast and 0.55x on slow, an order not distinguishable from noise: "+
			"fast against slow is 1.55x (95% CI 0.92–3.01: not distinguishable at n=2).",
		"TPC-C beside backups had 1.75x New-Order p95 against its baseline on slow and 1.15x on fast, an order not distinguishable from noise: "+
			"slow against fast is 1.52x (95% CI 0.00–3.99: not distinguishable at n=2).",
	)
	ratios := tables["neighbours-ratios"]
	if ratios == nil {
		t.Fatal("no ratio table")
	}
	want := [][]string{
		{"beside backups", "fast", "fast-1", "4", "1", "1,000", "900", "0.90x", "no interval at n=1", "10.0", "12.0", "1.20x", "no interval at n=1"},
		{"beside backups", "fast", "fast-2", "4", "1", "1,000", "800", "0.80x", "no interval at n=1", "10.0", "11.0", "1.10x", "no interval at n=1"},
		{"beside backups", "slow", "slow-1", "4", "1", "500", "300", "0.60x", "no interval at n=1", "20.0", "40.0", "2.00x", "no interval at n=1"},
		{"beside backups", "slow", "slow-2", "4", "1", "500", "250", "0.50x", "no interval at n=1", "20.0", "30.0", "1.50x", "no interval at n=1"},
	}
	if !reflect.DeepEqual(ratios.Rows, want) {
		t.Errorf("ratio rows\n%v\nwant\n%v", ratios.Rows, want)
	}
	inst := tables["neighbours-instances"]
	if inst == nil || len(inst.Rows) != 10 {
		t.Fatalf("per-instance table %+v; want 10 rows", inst)
	}
	for _, row := range inst.Rows {
		if !strings.HasPrefix(row[1], row[2]+"-") {
			t.Errorf("instance %s is shown on target %s", row[1], row[2])
		}
	}

	var md strings.Builder
	mdBlocks(&md, sec.Blocks, "DATA")
	golden(t, "neighbours.md", md.String())
}

// The runs table says what a scenario's server really had: its memory cap
// and whether its tier was emulated.
func TestRunParamsLimits(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r, err := f.store.CreateRun(ctx, "tpcc", "", map[string]any{"warehouses": 2, "tier": "emulated: read/write 400/400 IOPS",
		"limits": map[string]any{"cgroup_version": 1, "memory_max_bytes": 256 << 20}})
	must(t, err)
	doc, _, err := Build(ctx, f.store, Options{Runs: []string{r.ID}})
	must(t, err)
	row := section(doc, "runs").Blocks[0].Table.Rows[0]
	if p := row[len(row)-1]; !strings.Contains(p, "memory cap=256MiB (cgroup v1") || !strings.Contains(p, "tier=emulated: read/write 400/400 IOPS") {
		t.Errorf("parameters %q; want the memory cap and the emulated tier", p)
	}
}

// paper-1 on two tiers: the server with a quarter of the memory loses more
// NOPM on the slow tier than on the fast one. The TPC-C section says so per
// target and across them, with a row per virtual-user count; the servers
// ran one after the other, so there is no side-by-side section.
func TestMemoryPerTarget(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const group = "paper-1-memory-20261121-120000"
	type run struct {
		target, label string
		mem           int64
		nopm          [2]float64 // at 1 and 4 VUs
	}
	for _, r := range []run{
		{"fast", "large-fast", 1 << 30, [2]float64{1000, 2000}},
		{"fast", "small-fast", 256 << 20, [2]float64{900, 1400}},
		{"sata", "large-sata", 1 << 30, [2]float64{1000, 1800}},
		{"sata", "small-sata", 256 << 20, [2]float64{500, 450}},
	} {
		rn, err := f.store.CreateRun(ctx, "tpcc", group, map[string]any{"instance": r.label, "scenario_target": r.target, "label": r.label,
			"server_memory_bytes": r.mem})
		must(t, err)
		for i, vus := range []int{1, 4} {
			doc, err := json.Marshal(map[string]any{"vus": vus, "tpm": math.Round(2.2 * r.nopm[i]), "nopm": r.nopm[i],
				"device": map[string]float64{"r_iops": 10 * r.nopm[i]}})
			must(t, err)
			must(t, f.store.AddStep(ctx, results.Step{RunID: rn.ID, Index: i, Name: fmt.Sprintf("vus=%d", vus), StartedAt: t0, MeasureStart: t0,
				MeasureEnd: t0.Add(20 * time.Second), Metrics: doc}))
		}
		must(t, f.store.FinishRun(ctx, rn.ID, results.StatusComplete, nil))
	}
	doc, _, err := Build(ctx, f.store, Options{Group: group})
	must(t, err)
	for _, s := range doc.Sections {
		if s.ID == "neighbours" && len(s.Blocks) > 0 {
			t.Errorf("runs one after the other shown side by side: %+v", s.Blocks)
		}
	}
	texts, tables := contents(doc.Sections...)
	tab := tables["tpcc-memory"]
	wantSaid(t, texts,
		// fast: 0.90 and 0.70; sata: 0.50 and 0.25.
		// Each measured once: every comparison says it cannot be told from noise.
		"On fast, with 256MiB of memory instead of 1GiB, small-fast kept 0.80x the NOPM of large-fast (mean over 2 virtual-user counts; no interval at n=1).",
		"On sata, with 256MiB of memory instead of 1GiB, small-sata kept 0.38x the NOPM of large-sata (mean over 2 virtual-user counts; no interval at n=1).",
		"Less memory left 0.38x the NOPM on sata and 0.80x on fast, an order not distinguishable from noise: fast against sata is 2.13x (not distinguishable at n=2).",
	)
	if tab == nil {
		t.Fatal("no memory table")
	}
	want := [][]string{
		{"fast", "small-fast", "256MiB", "large-fast", "1", "1", "900", "1,000", "0.90x", "no interval at n=1", "–", "0.90x", "–"},
		{"fast", "small-fast", "256MiB", "large-fast", "4", "1", "1,400", "2,000", "0.70x", "no interval at n=1", "–", "0.70x", "–"},
		{"sata", "small-sata", "256MiB", "large-sata", "1", "1", "500", "1,000", "0.50x", "no interval at n=1", "–", "0.50x", "–"},
		{"sata", "small-sata", "256MiB", "large-sata", "4", "1", "450", "1,800", "0.25x", "no interval at n=1", "–", "0.25x", "–"},
	}
	if !reflect.DeepEqual(tab.Rows, want) {
		t.Errorf("memory rows\n%v\nwant\n%v", tab.Rows, want)
	}
}

// Backups on two tiers: the report says how much longer the second run's
// backups and restores took than the first's, from the means over cycles.
func TestBackupComparison(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var ids []string
	for _, secs := range [][2][2]float64{{{1, 3}, {2, 2}}, {{8, 12}, {5, 5}}} { // [cycle][backup, restore]
		r, err := f.store.CreateRun(ctx, "backup", "", nil)
		must(t, err)
		i := 0
		for cycle := 1; cycle <= 2; cycle++ {
			for p, phase := range []string{"backup", "restore"} {
				s := secs[p][cycle-1]
				doc, _ := json.Marshal(stored.PhaseResult{Phase: stored.Phase{Cycle: cycle, Phase: phase, Method: "pg_basebackup", Seconds: s,
					Bytes: 1e9, MBps: 1e3 / s}})
				must(t, f.store.AddStep(ctx, results.Step{RunID: r.ID, Index: i, Name: fmt.Sprintf("%s %d", phase, cycle),
					StartedAt: t0, MeasureStart: t0, MeasureEnd: t0, Metrics: doc}))
				i++
			}
		}
		must(t, f.store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
		ids = append(ids, r.ID)
	}
	doc, _, err := Build(ctx, f.store, Options{Runs: ids, Labels: map[string]string{ids[0]: "fast", ids[1]: "sata"}})
	must(t, err)
	texts, _ := contents(doc.Sections...)
	wantSaid(t, texts, "sata against fast, means over cycles: backups took 5.00x as long (10.0 s against 2.00 s; not distinguishable at n=2); "+
		"restores took 2.50x as long (5.00 s against 2.00 s; 95% CI 2.50–2.50: higher).")
}

// contents gathers the texts of sections' blocks, and their tables by ID.
func contents(secs ...*Section) (texts []string, tables map[string]*Table) {
	tables = map[string]*Table{}
	for _, s := range secs {
		walk(s.Blocks, func(b Block) {
			if b.Text != "" {
				texts = append(texts, b.Text)
			}
			if b.Table != nil {
				tables[b.Table.ID] = b.Table
			}
		})
	}
	return texts, tables
}

// wantSaid fails t for each of wants that is not one of texts.
func wantSaid(t *testing.T, texts []string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !slices.Contains(texts, want) {
			t.Errorf("the report does not say %q; it says:\n%s", want, strings.Join(texts, "\n"))
		}
	}
}

// An interrupted run's finding names the step Ctrl-C cut short, which it
// shows beside the finished ones; a step whose counters were reset says
// so, and what its TPM misses.
func TestInterruptedStepFinding(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, c := range []struct {
		status, lost, want string
	}{
		{results.StatusInterrupted, "", "it shows the steps it finished, and the first 2.4 s of its step of 4 VUs, which Ctrl-C cut short."},
		{results.StatusFailed, "server_lost", "it shows the steps it finished, and the first 2.4 s of its step of 4 VUs, which the server's loss cut short."},
	} {
		r, err := f.store.CreateRun(ctx, "tpcc", "", map[string]any{"warehouses": 2, "vus": []int{1, 4}})
		must(t, err)
		for i, vus := range []int{1, 4} {
			m := map[string]any{"index": i, "vus": vus, "tpm": 1000, "measured_seconds": 10, "interrupted": i == 1,
				"txn": map[string]metrics.Summary{"new_order": {Count: 100, P99Ms: 2}}}
			if i == 1 {
				m["measured_seconds"] = 2.4
				if c.lost != "" {
					m[c.lost] = true
				}
			} else {
				m["counters_reset"] = 2
			}
			doc, err := json.Marshal(m)
			must(t, err)
			must(t, f.store.AddStep(ctx, results.Step{RunID: r.ID, Index: i, Name: fmt.Sprintf("vus=%d", vus), StartedAt: t0, MeasureStart: t0, MeasureEnd: t0.Add(time.Second), Metrics: doc}))
		}
		must(t, f.store.FinishRun(ctx, r.ID, c.status, nil))
		doc, _, err := Build(ctx, f.store, Options{Runs: []string{r.ID}})
		must(t, err)
		if got := strings.Join(section(doc, "runs").findings(), "\n"); !strings.Contains(got, c.want) {
			t.Errorf("findings:\n%s\nwant %q", got, c.want)
		}
		want := "step of 1 VU: the database's transaction counters were reset 2 times in the measured interval"
		got := strings.Join(section(doc, "tpcc").findings(), "\n")
		if !strings.Contains(got, want) || strings.Count(got, "were reset") != 1 {
			t.Errorf("TPC-C findings:\n%s\nwant one saying %q", got, want)
		}
		if lost := strings.Contains(got, "step of 4 VUs: "+stored.LostText); lost != (c.lost != "") {
			t.Errorf("TPC-C findings:\n%s\nsay the server was lost: %v; want %v", got, lost, c.lost != "")
		}
	}
}
