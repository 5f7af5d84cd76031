package report

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/report/reporttest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/space"
	"github.com/tierbench/tierbench/internal/stored"
)

// spaceDoc is a scan's document with the counts given and every figure
// derived from them as space.Scan derives them (docs/space.md).
func spaceDoc(target string, block int, blocks, zero, unique int64, logical, lz4, zstd int64) space.Document {
	uniqueBytes := unique * int64(block)
	r := space.Result{Target: target, Kind: "directory", BlockBytes: block, LogicalBytes: logical, Files: 3,
		Blocks: blocks, ZeroBlocks: zero, UniqueBlocks: unique, DuplicateBlocks: blocks - zero - unique,
		DedupRatio: float64(blocks-zero) / float64(unique),
		Compression: map[string]space.Compression{
			"lz4":  {Ratio: float64(uniqueBytes) / float64(lz4), StoredBytes: lz4, CompressedBlocks: unique / 2},
			"zstd": {Ratio: float64(uniqueBytes) / float64(zstd), StoredBytes: zstd, CompressedBlocks: unique},
		},
		SavingsRatio: float64(logical) / float64(lz4), StoredBytes: lz4, KeepBelow: 0.5, Seconds: 2}
	for _, p := range []struct {
		name   string
		factor float64
	}{{"mirror FTT=1", 2}, {"mirror FTT=2", 3}, {"mirror FTT=3", 4}, {"RAID-5 (3+1)", 4.0 / 3}, {"RAID-6 (4+2)", 1.5}} {
		r.Capacity = append(r.Capacity, space.Capacity{Policy: p.name, Factor: p.factor,
			RawBytes: int64(math.Round(float64(logical) * p.factor)), RawBytesReduced: int64(math.Round(float64(lz4) * p.factor))})
	}
	return space.Document{Result: r}
}

// spaceStore stores what the space-efficiency scenario leaves, and a scan
// from the command line: a TPC-C run of PostgreSQL on each of the instances
// db-plain and db-packed (the latter on an emulated btrfs tier compressing
// with zstd), a scan of each instance's data directory, and a scan of a
// mounted device stopped early (no label: the report names it by its id).
func spaceStore(t *testing.T) (*results.Store, []string) {
	t.Helper()
	ctx := context.Background()
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	const group = "space-efficiency-20261121-030000"
	var ids []string
	for _, inst := range []struct{ name, target string }{{"db-plain", "plain"}, {"db-packed", "packed"}} {
		r, err := store.CreateRun(ctx, "tpcc", group, stored.TPCCParams{DSN: "postgres://tierbench@localhost/tpcc", Engine: "postgres",
			Warehouses: 2, VUs: []int{4}, RampUp: "5s", Duration: "20s", Mode: engine.ModeRoutines,
			Placement: stored.Placement{Label: inst.name, Instance: inst.name, Target: inst.target}})
		must(t, err)
		step := stored.TPCCStep{Index: 0, VUs: 4, TPM: 2200, NOPM: 1000, StartedAt: t0, MeasureStart: t0.Add(5 * time.Second),
			MeasureEnd: t0.Add(25 * time.Second), Seconds: 20}
		doc, err := json.Marshal(step)
		must(t, err)
		must(t, store.AddStep(ctx, results.Step{RunID: r.ID, Index: 0, Name: "vus=4", StartedAt: t0, MeasureStart: step.MeasureStart,
			MeasureEnd: step.MeasureEnd, Metrics: doc}))
		must(t, store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
		ids = append(ids, r.ID)
	}

	// db-plain: 1,000 blocks of 4 KiB, 100 zero, 600 unique (dedup 900/600),
	// lz4 keeps them in 300 blocks' worth (2x), zstd in 200 (3x).
	plain := spaceDoc("/srv/plain/db-plain", 4096, 1000, 100, 600, 4_096_000, 1_228_800, 819_200)
	// db-packed: 2,000 blocks of 8 KiB, 500 zero, 500 unique (dedup 3x),
	// lz4 2.5x, zstd 3.5x; btrfs really stored it 3.1x smaller.
	packed := spaceDoc("/srv/packed/db-packed", 8192, 2000, 500, 500, 16_384_000, 1_638_400, 1_170_286)
	// Its zstd ratio is an estimate from 1 in 32 blocks, 3.40–3.60 at 95%.
	z := packed.Compression["zstd"]
	z.SampleEvery, z.SampleBlocks, z.RatioCI95Low, z.RatioCI95High = 32, 16, 3.4, 3.6
	packed.Compression["zstd"] = z
	packed.Actual = &space.Actual{FS: "btrfs", Compress: "zstd", Tool: "compsize", Uncompressed: 16_384_000, Disk: 5_285_161, Ratio: 3.1}
	// A mounted device, stopped early: 256 blocks, 16 zero, 200 unique.
	live := spaceDoc("/dev/sdb", 4096, 256, 16, 200, 1_048_576, 655_360, 409_600)
	live.Kind, live.Files = "device", 0
	live.Live, live.LiveReason, live.Partial, live.LiveNote = true, "mounted on /srv", true, space.LiveNote

	for _, s := range []struct {
		group  string
		doc    space.Document
		place  stored.Placement
		status string
	}{
		{group, plain, stored.Placement{Label: "db-plain", Instance: "db-plain", Target: "plain"}, results.StatusComplete},
		{group, packed, stored.Placement{Label: "db-packed", Instance: "db-packed", Target: "packed", Tier: "btrfs zstd"}, results.StatusComplete},
		{"", live, stored.Placement{}, results.StatusInterrupted},
	} {
		r, err := store.CreateRun(ctx, "space", s.group, stored.SpaceParams{Target: s.doc.Target, Block: s.doc.BlockBytes,
			KeepBelow: s.doc.KeepBelow, Placement: s.place})
		must(t, err)
		doc, err := json.Marshal(s.doc)
		must(t, err)
		start := t0.Add(time.Hour)
		must(t, store.AddStep(ctx, results.Step{RunID: r.ID, Index: 0, Name: "scan", StartedAt: start, MeasureStart: start,
			MeasureEnd: start.Add(2 * time.Second), Metrics: doc}))
		must(t, store.FinishRun(ctx, r.ID, s.status, nil))
		ids = append(ids, r.ID)
	}
	return store, ids
}

// The space section: a bar chart of the four ratios per scan, the scans'
// blocks and ratios, the raw capacity per policy plain and reduced, the
// estimate beside what btrfs really stored, and one finding per scan. A
// scan is named by its label and, when a TPC-C run of its instance says
// it, the engine; a scan without a label by its run id.
func TestSpaceSection(t *testing.T) {
	store, ids := spaceStore(t)
	doc, _, err := Build(context.Background(), store, Options{Runs: ids})
	must(t, err)
	sec := section(doc, "space")
	if sec == nil {
		t.Fatalf("no space section; sections %v", sectionIDs(doc))
	}
	if sec.Title != "Space efficiency" {
		t.Errorf("the space section's title is %q; want Space efficiency", sec.Title)
	}
	liveID := ids[4]
	names := []string{"db-plain (postgres)", "db-packed (postgres)", liveID}

	var fig *Figure
	walk(sec.Blocks, func(b Block) {
		if b.Figure != nil && b.Figure.ID == "space-savings" {
			fig = b.Figure
		}
	})
	if fig == nil {
		t.Fatal("no space-savings chart")
	}
	if !reflect.DeepEqual(fig.Chart.Categories, names) {
		t.Errorf("chart categories %q; want %q", fig.Chart.Categories, names)
	}
	wantSeries := map[string][]float64{
		"dedup":                       {1.5, 3, 1.2},
		"lz4":                         {2, 2.5, 1.25},
		"zstd":                        {3, 4_096_000.0 / 1_170_286, 2},
		"savings (zeros, dedup, lz4)": {4_096_000.0 / 1_228_800, 10, 1.6},
	}
	if got := seriesNames(fig.Chart.Series); !reflect.DeepEqual(got, []string{"dedup", "lz4", "zstd", "savings (zeros, dedup, lz4)"}) {
		t.Errorf("chart series %q; want dedup, lz4, zstd, savings", got)
	}
	for _, s := range fig.Chart.Series {
		want := wantSeries[s.Name]
		if len(s.Points) != len(want) {
			t.Errorf("series %s has %d points; want %d", s.Name, len(s.Points), len(want))
			continue
		}
		for i, p := range s.Points {
			if p.X != float64(i) || math.Abs(p.Y-want[i]) > 1e-9 {
				t.Errorf("series %s point %d = (%v, %v); want (%d, %v)", s.Name, i, p.X, p.Y, i, want[i])
			}
		}
	}

	texts, tables := contents(sec)
	scans := tables["space-scans"]
	if scans == nil {
		t.Fatalf("no space-scans table; tables %v", keys(tables))
	}
	wantScans := [][]string{
		{"db-plain (postgres)", "3.9MiB", "4KiB", "100", "600", "300", "1.50x", "2.00x", "3.00x", "3.33x", "1.2MiB", ""},
		{"db-packed (postgres)", "15.6MiB", "8KiB", "500", "500", "1,000", "3.00x", "2.50x", "3.50x (3.40–3.60)", "10.00x", "1.6MiB", ""},
		{liveID, "1MiB", "4KiB", "16", "200", "40", "1.20x", "1.25x", "2.00x", "1.60x", "640KiB", "partial (stopped early); " + space.LiveNote},
	}
	if !reflect.DeepEqual(scans.Rows, wantScans) {
		t.Errorf("space-scans rows\n%q\nwant\n%q", scans.Rows, wantScans)
	}
	if len(scans.Header) != len(scans.Numeric) || len(scans.Header) != len(wantScans[0]) {
		t.Errorf("space-scans: %d header cells, %d numeric flags; want %d of each", len(scans.Header), len(scans.Numeric), len(wantScans[0]))
	}

	capacity := tables["space-capacity"]
	if capacity == nil {
		t.Fatal("no space-capacity table")
	}
	if want := []string{"scan", "mirror FTT=1", "mirror FTT=2", "mirror FTT=3", "RAID-5 (3+1)", "RAID-6 (4+2)"}; !reflect.DeepEqual(capacity.Header, want) {
		t.Errorf("space-capacity header %q; want %q", capacity.Header, want)
	}
	// RAW / REDUCED: logical and stored bytes times 2, 3, 4, 4/3 and 1.5.
	wantCapacity := [][]string{
		{"db-plain (postgres)", "7.8MiB / 2.3MiB", "11.7MiB / 3.5MiB", "15.6MiB / 4.7MiB", "5.2MiB / 1.6MiB", "5.9MiB / 1.8MiB"},
		{"db-packed (postgres)", "31.2MiB / 3.1MiB", "46.9MiB / 4.7MiB", "62.5MiB / 6.2MiB", "20.8MiB / 2.1MiB", "23.4MiB / 2.3MiB"},
		{liveID, "2MiB / 1.2MiB", "3MiB / 1.9MiB", "4MiB / 2.5MiB", "1.3MiB / 853.3KiB", "1.5MiB / 960KiB"},
	}
	if !reflect.DeepEqual(capacity.Rows, wantCapacity) {
		t.Errorf("space-capacity rows\n%q\nwant\n%q", capacity.Rows, wantCapacity)
	}

	actual := tables["space-actual"]
	if actual == nil {
		t.Fatal("no space-actual table, though db-packed's scan says what btrfs stored")
	}
	wantActual := [][]string{{"db-packed (postgres)", "btrfs", "zstd", "2.50x", "3.50x (3.40–3.60)", "3.10x", "5MiB", "15.6MiB", "compsize"}}
	if !reflect.DeepEqual(actual.Rows, wantActual) {
		t.Errorf("space-actual rows\n%q\nwant\n%q", actual.Rows, wantActual)
	}

	wantFindings := []string{
		"db-plain (postgres): 3.9MiB would take 3.33x less space (zeros, dedup 1.50x, lz4 2.00x): 1.2MiB stored of 3.9MiB.",
		"db-packed (postgres): 15.6MiB would take 10.00x less space (zeros, dedup 3.00x, lz4 2.50x): 1.6MiB stored of 15.6MiB; " +
			"btrfs with zstd compression really stored it 3.10x smaller.",
		liveID + ": 1MiB would take 1.60x less space (zeros, dedup 1.20x, lz4 1.25x): 640KiB stored of 1MiB (partial: the scan stopped early; live: the data was in use).",
	}
	if got := sec.findings(); !reflect.DeepEqual(got, wantFindings) {
		t.Errorf("space findings\n%q\nwant\n%q", got, wantFindings)
	}
	var estimate, byDesign, sampled bool
	for _, s := range texts {
		sampled = sampled || strings.Contains(s, "(1 in 32, chosen by their hash, so a simple random sample)")
		estimate = estimate || strings.HasPrefix(s, "An estimate from the blocks, not a measurement of a particular array")
		byDesign = byDesign || strings.Contains(s, "so they differ from the block estimate by design")
	}
	if !estimate {
		t.Error("the section does not say that its figures are an estimate from the blocks, not a measurement of an array")
	}
	if !byDesign {
		t.Error("the section does not say why the file system's own figures differ from the estimate")
	}
	if !sampled {
		t.Error("the section does not say that zstd's ratio of db-packed was estimated from 1 in 32 blocks")
	}

	// The summary repeats the findings under the section's title.
	var summarised []string
	if sum := section(doc, "summary"); sum != nil {
		walk(sum.Blocks, func(b Block) {
			if b.List != nil && b.List.Anchor == "space" {
				summarised = b.List.Items
			}
		})
	}
	if !reflect.DeepEqual(summarised, wantFindings) {
		t.Errorf("the summary's space findings %q; want %q", summarised, wantFindings)
	}
}

// Without an emulated tier's figures there is no estimated-against-actual
// table, and with a tier that does not compress the finding says nothing of
// what the file system stored.
func TestSpaceSectionWithoutActual(t *testing.T) {
	store, ids := spaceStore(t)
	ctx := context.Background()
	d := spaceDoc("/srv/ext4/db", 4096, 10, 0, 10, 40_960, 20_480, 10_240)
	d.Actual = &space.Actual{FS: "ext4", Compress: "none", Tool: "stat", Uncompressed: 40_960, Disk: 40_960, Ratio: 1}
	r, err := store.CreateRun(ctx, "space", "", stored.SpaceParams{Target: d.Target, Block: 4096, KeepBelow: 0.5,
		Placement: stored.Placement{Label: "db-ext4", Instance: "db-ext4"}})
	must(t, err)
	b, err := json.Marshal(d)
	must(t, err)
	must(t, store.AddStep(ctx, results.Step{RunID: r.ID, Index: 0, Name: "scan", StartedAt: t0, MeasureStart: t0, MeasureEnd: t0, Metrics: b}))
	must(t, store.FinishRun(ctx, r.ID, results.StatusComplete, nil))

	doc, _, err := Build(ctx, store, Options{Runs: []string{ids[2], r.ID}}) // db-plain's scan, without its TPC-C run
	must(t, err)
	sec := section(doc, "space")
	if sec == nil {
		t.Fatalf("no space section; sections %v", sectionIDs(doc))
	}
	_, tables := contents(sec)
	if a := tables["space-actual"]; a == nil || !reflect.DeepEqual(a.Rows, [][]string{{"db-ext4", "ext4", "none", "2.00x", "4.00x", "1.00x", "40KiB", "40KiB", "stat"}}) {
		t.Errorf("space-actual table %+v; want only db-ext4's row", a)
	}
	want := []string{
		"db-plain: 3.9MiB would take 3.33x less space (zeros, dedup 1.50x, lz4 2.00x): 1.2MiB stored of 3.9MiB.",
		"db-ext4: 40KiB would take 2.00x less space (zeros, dedup 1.00x, lz4 2.00x): 20KiB stored of 40KiB.",
	}
	if got := sec.findings(); !reflect.DeepEqual(got, want) {
		t.Errorf("findings\n%q\nwant\n%q", got, want)
	}

	// db-plain alone: no emulated tier's figures, no such table.
	doc, _, err = Build(ctx, store, Options{Runs: []string{ids[2]}})
	must(t, err)
	if _, tables := contents(section(doc, "space")); tables["space-actual"] != nil {
		t.Errorf("a scan without the file system's figures has a space-actual table: %+v", tables["space-actual"])
	}
}

// A report without space runs has no space section (and its golden files,
// TestMarkdownGolden's, do not change).
func TestNoSpaceSection(t *testing.T) {
	f := newFixture(t)
	doc, _, err := Build(context.Background(), f.store, Options{Runs: []string{f.fast, f.slow, f.disk, f.backup}})
	must(t, err)
	if s := section(doc, "space"); s != nil {
		t.Errorf("a report without space runs has a space section: %+v", s.Blocks)
	}
	// A space run that stored no scan (stopped before it read anything)
	// makes none either.
	ctx := context.Background()
	r, err := f.store.CreateRun(ctx, "space", "", stored.SpaceParams{Target: "/srv", Block: 4096, KeepBelow: 0.5})
	must(t, err)
	must(t, f.store.FinishRun(ctx, r.ID, results.StatusInterrupted, nil))
	doc, _, err = Build(ctx, f.store, Options{Runs: []string{f.fast, r.ID}})
	must(t, err)
	if s := section(doc, "space"); s != nil {
		t.Errorf("a space run without a scan made a space section: %+v", s.Blocks)
	}
}

// The space report is written (HTML, Markdown, a CSV per table) and opens
// in a real browser with its chart drawn.
func TestSpaceInBrowser(t *testing.T) {
	t.Parallel()
	store, ids := spaceStore(t)
	w, err := Write(context.Background(), store, Options{Runs: ids, Out: filepath.Join(t.TempDir(), "report.html"), Version: "test", Now: t0})
	must(t, err)
	if !contains(w.Sections, "space") {
		t.Fatalf("sections %v; want space", w.Sections)
	}
	html, err := os.ReadFile(w.HTML)
	must(t, err)
	for _, id := range []string{`<section id="space">`, `id="space-savings"`, `id="space-scans"`, `id="space-capacity"`, `id="space-actual"`} {
		if !strings.Contains(string(html), id) {
			t.Errorf("the report has no %s", id)
		}
	}
	md, err := os.ReadFile(w.Markdown)
	must(t, err)
	if !strings.Contains(string(md), "\n## Space efficiency\n") ||
		!strings.Contains(string(md), "| db-packed (postgres) | btrfs | zstd | 2.50x | 3.50x (3.40–3.60) | 3.10x | 5MiB | 15.6MiB | compsize |") {
		t.Error("the Markdown has no space section with the estimated-against-actual table")
	}
	for _, table := range []string{"space-scans", "space-capacity", "space-actual"} {
		if _, err := os.Stat(filepath.Join(w.DataDir, "table-"+table+".csv")); err != nil {
			t.Errorf("the %s table's CSV: %v", table, err)
		}
	}
	charts := strings.Count(string(html), `<figure class="chart"`)
	if !strings.Contains(string(html), `<figure class="chart" id="space-savings">`) {
		t.Error("the savings chart is not a chart figure")
	}
	reporttest.CheckInBrowser(t, w.HTML, charts, "")
}

// Data whose every block is zero takes nothing to store: its savings ratio
// is 0, which stands for unbounded (docs/space.md), and its stored bytes
// are 0, a known size. The report must say neither "0.00x less space" nor
// "unknown".
func TestSpaceAllZero(t *testing.T) {
	store, _ := spaceStore(t)
	ctx := context.Background()
	d := spaceDoc("/dev/sdc", 4096, 256, 256, 0, 1_048_576, 0, 0)
	d.Kind, d.Files = "device", 0
	d.DedupRatio, d.SavingsRatio = 1, 0
	d.Compression = map[string]space.Compression{"lz4": {Ratio: 1}, "zstd": {Ratio: 1}}
	r, err := store.CreateRun(ctx, "space", "", stored.SpaceParams{Target: d.Target, Block: 4096, KeepBelow: 0.5,
		Placement: stored.Placement{Label: "blank"}})
	must(t, err)
	b, err := json.Marshal(d)
	must(t, err)
	must(t, store.AddStep(ctx, results.Step{RunID: r.ID, Index: 0, Name: "scan", StartedAt: t0, MeasureStart: t0, MeasureEnd: t0, Metrics: b}))
	must(t, store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	doc, _, err := Build(ctx, store, Options{Runs: []string{r.ID}})
	must(t, err)
	sec := section(doc, "space")
	if sec == nil {
		t.Fatalf("no space section; sections %v", sectionIDs(doc))
	}
	_, tables := contents(sec)
	want := [][]string{{"blank", "1MiB", "4KiB", "256", "0", "0", "1.00x", "1.00x", "1.00x", "unbounded", "0B", ""}}
	if got := tables["space-scans"].Rows; !reflect.DeepEqual(got, want) {
		t.Errorf("space-scans rows\n%q\nwant\n%q", got, want)
	}
	if got := tables["space-capacity"].Rows[0][1]; got != "2MiB / 0B" {
		t.Errorf("mirror FTT=1 capacity %q; want 2MiB / 0B", got)
	}
	wantFinding := []string{"blank: 1MiB would take no space: every block is zero."}
	if got := sec.findings(); !reflect.DeepEqual(got, wantFinding) {
		t.Errorf("findings %q; want %q", got, wantFinding)
	}
	var fig *Figure
	walk(sec.Blocks, func(b Block) {
		if b.Figure != nil && b.Figure.ID == "space-savings" {
			fig = b.Figure
		}
	})
	if fig == nil {
		t.Fatal("no space-savings chart")
	}
	for _, s := range fig.Chart.Series {
		if s.Name == "savings (zeros, dedup, lz4)" && (len(s.Points) != 1 || !math.IsNaN(s.Points[0].Y)) {
			t.Errorf("the savings bar of all-zero data is %v; want none (NaN): it is unbounded, not 0", s.Points)
		}
	}
}
