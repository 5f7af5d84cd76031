package report

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/report/reporttest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// engineStep is one step of an engine's TPC-C run: its throughput and its
// New-Order latency percentiles.
type engineStep struct {
	vus            int
	tpm, nopm      int64
	p95Ms, p99Ms   float64
	noNewOrderTxns bool // the step has no New-Order latency at all
}

// engineServer is a scenario server's TPC-C run.
type engineServer struct {
	engine, target, label string
	memory                int64
	settings              []stored.Setting
	steps                 []engineStep
}

// postgresSettings and mariadbSettings are what each engine's inventory
// records of the memory it was sized with (MariaDB prints bytes).
var (
	postgresSettings = []stored.Setting{{Name: "shared_buffers", Value: "256MB"}, {Name: "fsync", Value: "on"}}
	mariadbSettings  = []stored.Setting{{Name: "innodb_buffer_pool_size", Value: "671088640"}, {Name: "innodb_flush_log_at_trx_commit", Value: "1"}}
)

// engineRun stores a server's TPC-C run as a scenario does: the parameters
// as stored.TPCCParams marshals them, the environment the inventory
// captures, a stored.TPCCStep per step.
func engineRun(t *testing.T, store *results.Store, group string, sv engineServer) string {
	t.Helper()
	ctx := context.Background()
	var vus []int
	for _, st := range sv.steps {
		vus = append(vus, st.vus)
	}
	r, err := store.CreateRun(ctx, "tpcc", group, stored.TPCCParams{DSN: sv.engine + "://tierbench@localhost/tpcc", Engine: sv.engine,
		Warehouses: 2, VUs: vus, RampUp: "5s", Duration: "20s", Mode: engine.ModeRoutines,
		Placement: stored.Placement{Label: sv.label, Instance: sv.label, Target: sv.target, Memory: sv.memory}})
	must(t, err)
	env := environment("ext4")
	env.Database = &stored.Database{Engine: sv.engine, Version: map[string]string{"postgres": "16.4", "mariadb": "11.4.3-MariaDB"}[sv.engine],
		Settings: sv.settings}
	must(t, store.SetDocument(ctx, r.ID, results.DocEnvironment, env))
	// Each step runs three times, interleaved, at 0.99, 1 and 1.01 times its
	// figures: their means are the step's, with a spread narrow enough that
	// a ratio 5% or more from 1 is told from noise, and one of 1 is not.
	for rep := range 3 {
		f := 1 + 0.01*float64(rep-1)
		for i, st := range sv.steps {
			idx := rep*len(sv.steps) + i
			start := t0.Add(time.Duration(idx) * 25 * time.Second)
			txn := map[string]metrics.Summary{}
			for k, name := range tpcc.KindNames {
				lat := float64(k + 1)
				txn[name] = metrics.Summary{Count: 100, MeanMs: lat, P50Ms: lat, P95Ms: 2 * lat, P99Ms: 3 * lat}
			}
			txn["new_order"] = metrics.Summary{Count: 1000, MeanMs: f * st.p95Ms / 2, P50Ms: f * st.p95Ms / 2, P95Ms: f * st.p95Ms, P99Ms: f * st.p99Ms}
			if st.noNewOrderTxns {
				delete(txn, "new_order")
			}
			tpm, nopm := int64(math.Round(f*float64(st.tpm))), int64(math.Round(f*float64(st.nopm)))
			doc, err := json.Marshal(stored.TPCCStep{Index: idx, VUs: st.vus, Repetition: rep + 1, TPM: tpm, NOPM: nopm, ClientTPM: tpm, ClientNOPM: nopm,
				Txn: txn, StartedAt: start, MeasureStart: start.Add(5 * time.Second), MeasureEnd: start.Add(25 * time.Second), Seconds: 20})
			must(t, err)
			must(t, store.AddStep(ctx, results.Step{RunID: r.ID, Index: idx, Name: fmt.Sprintf("vus=%d", st.vus), StartedAt: start,
				MeasureStart: start.Add(5 * time.Second), MeasureEnd: start.Add(25 * time.Second), Metrics: doc}))
		}
	}
	must(t, store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	return r.ID
}

// postgresSteps is PostgreSQL's run in every case below.
var postgresSteps = []engineStep{
	{vus: 1, tpm: 2300, nopm: 1000, p95Ms: 10, p99Ms: 15},
	{vus: 2, tpm: 4600, nopm: 2000, p95Ms: 12, p99Ms: 20},
	{vus: 4, tpm: 9200, nopm: 4000, p95Ms: 20, p99Ms: 30},
}

// enginesStore is a fresh store with the engines scenario's two runs: the
// PostgreSQL server's, then the MariaDB server's, on one target with the
// same memory.
func enginesStore(t *testing.T, mariadb []engineStep) (*results.Store, string) {
	t.Helper()
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	const group = "engines-20261121-030000"
	engineRun(t, store, group, engineServer{"postgres", "storage", "postgres", 1 << 30, postgresSettings, postgresSteps})
	engineRun(t, store, group, engineServer{"mariadb", "storage", "mariadb", 1 << 30, mariadbSettings, mariadb})
	return store, group
}

// section returns the document's section of this id, nil when it has none.
func section(doc *Document, id string) *Section {
	for _, s := range doc.Sections {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// PostgreSQL and MariaDB on the same target: a ratio row per virtual-user
// count (MariaDB over PostgreSQL), and a sentence on which kept more
// throughput and lower latency.
func TestEnginesRatios(t *testing.T) {
	store, group := enginesStore(t, []engineStep{
		{vus: 1, tpm: 1380, nopm: 600, p95Ms: 18, p99Ms: 30},
		{vus: 2, tpm: 2990, nopm: 1300, p95Ms: 21, p99Ms: 35},
		{vus: 4, tpm: 5520, nopm: 2400, p95Ms: 36, p99Ms: 60},
	})
	doc, _, err := Build(context.Background(), store, Options{Group: group})
	must(t, err)
	sec := section(doc, "engines")
	if sec == nil {
		t.Fatal("no engines section")
	}
	texts, tables := contents(sec)
	// NOPM 600/1000, 1300/2000, 2400/4000 = 0.60, 0.65, 0.60 (mean 0.617);
	// p95 18/10, 21/12, 36/20 = 1.80, 1.75, 1.80 (mean 1.783).
	wantSaid(t, texts, "On storage, MariaDB kept 0.62x PostgreSQL's NOPM and had 1.78x its New-Order p95 latency: "+
		"PostgreSQL kept more throughput and lower latency (means over 3 virtual-user counts both ran, 3 repetitions each; an engine leads only where every count's 95% interval says so).")
	want := [][]string{
		{"storage", "1", "mariadb", "MariaDB", "postgres", "600", "1,000", "0.60x (0.59–0.61)", "0.60x (0.59–0.61)", "18.0", "10.0", "1.80x (1.76–1.84)", "2.00x (1.96–2.05)"},
		{"storage", "2", "mariadb", "MariaDB", "postgres", "1,300", "2,000", "0.65x (0.64–0.66)", "0.65x (0.64–0.66)", "21.0", "12.0", "1.75x (1.71–1.79)", "1.75x (1.71–1.79)"},
		{"storage", "4", "mariadb", "MariaDB", "postgres", "2,400", "4,000", "0.60x (0.59–0.61)", "0.60x (0.59–0.61)", "36.0", "20.0", "1.80x (1.76–1.84)", "2.00x (1.96–2.05)"},
	}
	if got := tables["engines-ratios"]; got == nil || !reflect.DeepEqual(got.Rows, want) {
		t.Errorf("engines ratio table %+v;\nwant rows %v", got, want)
	}
	runsTab := tables["engines-runs"]
	if runsTab == nil || len(runsTab.Rows) != 2 {
		t.Fatalf("engines runs table %+v; want a row per run", runsTab)
	}
	for i, want := range [][]string{
		{"postgres", "PostgreSQL", "16.4", "storage", "1GiB", "shared_buffers = 256MB", "2", "1, 2, 4"},
		{"mariadb", "MariaDB", "11.4.3-MariaDB", "storage", "1GiB", "innodb_buffer_pool_size = 671088640 (640MiB)", "2", "1, 2, 4"},
	} {
		if !reflect.DeepEqual(runsTab.Rows[i], want) {
			t.Errorf("engines runs row %d: %q; want %q", i, runsTab.Rows[i], want)
		}
	}

	// Both engines are drawn on the same axes, each line named by its
	// engine and target: in the section's charts and in the TPC-C section's.
	charts := map[string]bool{}
	for _, s := range []*Section{sec, section(doc, "tpcc")} {
		walk(s.Blocks, func(b Block) {
			if b.Figure == nil {
				return
			}
			charts[b.Figure.ID] = true
			var pg, maria bool
			for _, sr := range b.Figure.Chart.Series {
				pg = pg || strings.HasPrefix(sr.Name, "PostgreSQL on storage")
				maria = maria || strings.HasPrefix(sr.Name, "MariaDB on storage")
			}
			if !pg || !maria {
				t.Errorf("chart %q has series %v; want both engines named", b.Figure.Chart.Title, seriesNames(b.Figure.Chart.Series))
			}
		})
	}
	for _, id := range []string{"engines-throughput", "engines-latency"} {
		if !charts[id] {
			t.Errorf("no chart %s", id)
		}
	}
	var lat *Figure
	walk(sec.Blocks, func(b Block) {
		if b.Figure != nil && b.Figure.ID == "engines-latency" {
			lat = b.Figure
		}
	})
	if lat != nil {
		for _, sr := range lat.Chart.Series {
			if sr.Name == "MariaDB on storage p99" && (len(sr.Points) != 3 || sr.Points[2].Y != 60) {
				t.Errorf("MariaDB's p99 line %v; want 3 points ending at 60 ms", sr.Points)
			}
		}
	}
}

// The sentence names the engine the data favours, whichever it is, and
// says which steps it could not compare.
func TestEnginesSentence(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mariadb []engineStep
		want    string
		rows    int
		na      []string // VUs whose ratios must be n/a
	}{
		{
			name: "MariaDB ahead, a step missing",
			// NOPM 1500/1000, 2600/2000 = 1.50, 1.30; p95 8/10, 10.8/12 = 0.80, 0.90.
			mariadb: []engineStep{{vus: 1, tpm: 3300, nopm: 1500, p95Ms: 8, p99Ms: 12}, {vus: 2, tpm: 5720, nopm: 2600, p95Ms: 10.8, p99Ms: 16}},
			want: "On storage, MariaDB kept 1.40x PostgreSQL's NOPM and had 0.85x its New-Order p95 latency: " +
				"MariaDB kept more throughput and lower latency (means over 2 virtual-user counts both ran, 3 repetitions each; only PostgreSQL ran 4 VUs; an engine leads only where every count's 95% interval says so).",
			rows: 3, na: []string{"4"},
		},
		{
			name: "MariaDB faster but slower New-Orders",
			// NOPM 1.10 at every step; p95 1.20.
			mariadb: []engineStep{{vus: 1, tpm: 2530, nopm: 1100, p95Ms: 12, p99Ms: 18}, {vus: 2, tpm: 5060, nopm: 2200, p95Ms: 14.4, p99Ms: 24},
				{vus: 4, tpm: 10120, nopm: 4400, p95Ms: 24, p99Ms: 36}},
			want: "On storage, MariaDB kept 1.10x PostgreSQL's NOPM and had 1.20x its New-Order p95 latency: " +
				"MariaDB kept more throughput, PostgreSQL lower latency (means over 3 virtual-user counts both ran, 3 repetitions each; an engine leads only where every count's 95% interval says so).",
			rows: 3,
		},
		{
			name:    "a tie",
			mariadb: postgresSteps,
			want: "On storage, MariaDB kept 1.00x PostgreSQL's NOPM and had 1.00x its New-Order p95 latency: " +
				"neither their throughputs nor their latencies were distinguishable at the 95% level (means over 3 virtual-user counts both ran, 3 repetitions each; an engine leads only where every count's 95% interval says so).",
			rows: 3,
		},
		{
			name: "a step of its own, a step without New-Orders, a PostgreSQL step missing",
			// NOPM 1800/2000, 3200/4000 = 0.90, 0.80; p95 only at 4 VUs: 30/20.
			mariadb: []engineStep{{vus: 2, tpm: 4000, nopm: 1800, noNewOrderTxns: true}, {vus: 4, tpm: 7000, nopm: 3200, p95Ms: 30, p99Ms: 40},
				{vus: 8, tpm: 9000, nopm: 4000, p95Ms: 50, p99Ms: 80}},
			want: "On storage, MariaDB kept 0.85x PostgreSQL's NOPM and had 1.50x its New-Order p95 latency: " +
				"PostgreSQL kept more throughput and lower latency (means over 2 virtual-user counts both ran, " +
				"3 repetitions each, the latency's over 1 of them (the others lack New-Order latency on one side); only PostgreSQL ran 1 VU; only MariaDB ran 8 VUs; " +
				"an engine leads only where every count's 95% interval says so).",
			rows: 4, na: []string{"1", "8"},
		},
		{
			name:    "nothing in common",
			mariadb: []engineStep{{vus: 3, tpm: 3000, nopm: 1300, p95Ms: 12, p99Ms: 20}},
			want:    "On storage, MariaDB (mariadb) and PostgreSQL (postgres) ran no virtual-user count in common: their ratios are n/a.",
			rows:    4, na: []string{"1", "2", "3", "4"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, group := enginesStore(t, tc.mariadb)
			doc, _, err := Build(context.Background(), store, Options{Group: group})
			must(t, err)
			sec := section(doc, "engines")
			if sec == nil {
				t.Fatal("no engines section")
			}
			texts, tables := contents(sec)
			wantSaid(t, texts, tc.want)
			tab := tables["engines-ratios"]
			if tab == nil || len(tab.Rows) != tc.rows {
				t.Fatalf("ratio table %+v; want %d rows, one per virtual-user count either ran", tab, tc.rows)
			}
			for _, row := range tab.Rows {
				na := row[7] == "n/a" && row[8] == "n/a" && row[11] == "n/a" && row[12] == "n/a"
				if want := contains(tc.na, row[1]); na != want {
					t.Errorf("row %q: ratios n/a %v; want %v", row, na, want)
				}
			}
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Runs of one engine get no engines section, and their legends stay their
// labels.
func TestOneEngineNoEnginesSection(t *testing.T) {
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	const group = "memory"
	engineRun(t, store, group, engineServer{"postgres", "storage", "large", 1 << 30, postgresSettings, postgresSteps})
	engineRun(t, store, group, engineServer{"postgres", "storage", "small", 256 << 20, postgresSettings, postgresSteps})
	doc, runs, err := Build(context.Background(), store, Options{Group: group})
	must(t, err)
	if s := section(doc, "engines"); s != nil {
		t.Errorf("one engine got an engines section: %+v", s.Blocks)
	}
	for _, rd := range runs {
		if rd.legend() != rd.Label {
			t.Errorf("run %s is drawn as %q; want its label", rd.Label, rd.legend())
		}
	}
	_, tables := contents(section(doc, "environment"))
	if tables["environment-database-settings"] == nil {
		t.Error("one engine's settings are not in one table")
	}
}

// The environment shows each engine's own settings, and the setting that
// sizes its cache in the software table, whichever engine it is.
func TestEnginesEnvironment(t *testing.T) {
	store, group := enginesStore(t, postgresSteps)
	doc, _, err := Build(context.Background(), store, Options{Group: group})
	must(t, err)
	_, tables := contents(section(doc, "environment"))
	pg, maria := tables["environment-database-settings-postgres"], tables["environment-database-settings-mariadb"]
	if pg == nil || maria == nil {
		t.Fatalf("settings tables %v; want one per engine", keys(tables))
	}
	if want := [][]string{{"shared_buffers", "256MB"}, {"fsync", "on"}}; !reflect.DeepEqual(pg.Rows, want) || len(pg.Header) != 2 {
		t.Errorf("PostgreSQL settings %v %v; want %v for its run alone", pg.Header, pg.Rows, want)
	}
	if want := [][]string{{"innodb_buffer_pool_size", "671088640"}, {"innodb_flush_log_at_trx_commit", "1"}}; !reflect.DeepEqual(maria.Rows, want) ||
		len(maria.Header) != 2 || !strings.Contains(maria.Caption, "MariaDB") {
		t.Errorf("MariaDB settings %q %v %v; want %v for its run alone", maria.Caption, maria.Header, maria.Rows, want)
	}
	cache := envFacts(t, section(doc, "environment"), "environment-software", 2)["database cache"]
	if want := []string{"shared_buffers = 256MB", "innodb_buffer_pool_size = 671088640 (640MiB)"}; !reflect.DeepEqual(cache, want) {
		t.Errorf("database cache %q; want %q", cache, want)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// With servers of two engines at two memories, less memory is measured
// against the same engine's run with more, never against the other engine.
func TestMemoryWithinEngine(t *testing.T) {
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	const group = "engines-memory"
	half := func(steps []engineStep) []engineStep {
		out := make([]engineStep, len(steps))
		for i, s := range steps {
			s.nopm, s.tpm = s.nopm/2, s.tpm/2
			out[i] = s
		}
		return out
	}
	engineRun(t, store, group, engineServer{"postgres", "storage", "pg-large", 1 << 30, postgresSettings, postgresSteps})
	engineRun(t, store, group, engineServer{"mariadb", "storage", "maria-large", 1 << 30, mariadbSettings, half(postgresSteps)})
	engineRun(t, store, group, engineServer{"postgres", "storage", "pg-small", 256 << 20, postgresSettings, half(postgresSteps)})
	engineRun(t, store, group, engineServer{"mariadb", "storage", "maria-small", 256 << 20, mariadbSettings, half(half(postgresSteps))})
	doc, _, err := Build(context.Background(), store, Options{Group: group})
	must(t, err)
	texts, tables := contents(doc.Sections...)
	mem := tables["tpcc-memory"]
	if mem == nil || len(mem.Rows) != 6 {
		t.Fatalf("memory table %+v; want 3 rows per engine", mem)
	}
	for _, row := range mem.Rows {
		if strings.Split(row[1], "-")[0] != strings.Split(row[3], "-")[0] || row[8] != "0.50x (0.49–0.51)" || row[9] != "lower" {
			t.Errorf("memory row %q: want a run against its own engine's, at 0.50x", row)
		}
	}
	wantSaid(t, texts,
		"On storage, with 256MiB of memory instead of 1GiB, PostgreSQL pg-small kept 0.50x the NOPM of pg-large (mean over 3 virtual-user counts; lower at all 3 counts, at 95% confidence).",
		"On storage, with 256MiB of memory instead of 1GiB, MariaDB maria-small kept 0.50x the NOPM of maria-large (mean over 3 virtual-user counts; lower at all 3 counts, at 95% confidence).")
	// Each MariaDB run is paired with the PostgreSQL run of its memory.
	ratios := tables["engines-ratios"]
	if ratios == nil || len(ratios.Rows) != 6 {
		t.Fatalf("engines ratio table %+v; want 3 rows per MariaDB run", ratios)
	}
	for _, row := range ratios.Rows {
		if strings.Split(row[2], "-")[1] != strings.Split(row[4], "-")[1] || row[7] != "0.50x (0.49–0.51)" {
			t.Errorf("engines row %q: want MariaDB against the PostgreSQL run of its memory, at 0.50x", row)
		}
	}
}

// The report names engines as the engines' own table does.
func TestEngineDisplayNames(t *testing.T) {
	for _, e := range all.Engines {
		if got := engineDisplay(e.Name); got != e.Display {
			t.Errorf("engine %s is shown as %q; internal/engine/all calls it %q", e.Name, got, e.Display)
		}
	}
}

// The engines report renders in a real browser: every chart, the engines'
// among them, draws something.
func TestEnginesInBrowser(t *testing.T) {
	t.Parallel()
	store, group := enginesStore(t, []engineStep{
		{vus: 1, tpm: 1380, nopm: 600, p95Ms: 18, p99Ms: 30},
		{vus: 2, tpm: 2990, nopm: 1300, p95Ms: 21, p99Ms: 35},
	})
	out := filepath.Join(t.TempDir(), "report.html")
	w, err := Write(context.Background(), store, Options{Group: group, Out: out, Version: "test", Now: t0})
	must(t, err)
	if !contains(w.Sections, "engines") {
		t.Fatalf("sections %v; want engines", w.Sections)
	}
	html, err := os.ReadFile(w.HTML)
	must(t, err)
	for _, id := range []string{`id="engines-throughput"`, `id="engines-latency"`, `id="engines-ratios"`} {
		if !strings.Contains(string(html), id) {
			t.Errorf("the report has no %s", id)
		}
	}
	charts := strings.Count(string(html), `<figure class="chart"`)
	reporttest.CheckInBrowser(t, w.HTML, charts, "")
}
