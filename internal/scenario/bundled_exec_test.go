package scenario

// Two bundled scenarios, shortened, run through Execute where they used to
// run through `tierbench scenario run` in internal/cli (TestScenarioBackup
// and TestScenarioNeighbours there). What they check is what the executor
// does: the runs it records, their placement and limits, the tiers' I/O
// groups, the report. internal/cli keeps `scenario run --json`'s document.

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/fio/fiotest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/mariatest"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/testenv"
)

// executeBundled loads a bundled scenario with the given variables, data
// under dir, and executes it into dir/results; it returns the results
// directory, the group and the observer.
func executeBundled(t *testing.T, name, dir string, sets map[string]string) (string, string, *scenarioRecorder) {
	t.Helper()
	sets["data"] = filepath.Join(dir, "data")
	sc, err := Load(name, "", sets)
	if err == nil {
		err = CheckHosts(context.Background(), sc)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range sc.Targets {
		if tg.Emulate != nil && tg.Local() {
			testenv.NeedRoot(t, "target "+tg.Name+" is an emulated tier: losetup, mount and cgroups")
		}
	}
	res := filepath.Join(dir, "results")
	rec := &scenarioRecorder{checked: map[string]bool{}}
	group, err := Execute(context.Background(), sc, res, rec, Options{})
	if err != nil {
		t.Fatalf("executing %s: %v", name, err)
	}
	return res, group, rec
}

// reportHas reads a report file and wants each of wants in it; it returns
// the file's text for the caller's other checks.
func reportHas(t *testing.T, path string, wants ...string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the scenario's report: %v", err)
	}
	for _, want := range wants {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	return string(b)
}

// groupRuns returns the runs of the store's only scenario group, oldest
// first, checking that it is group.
func groupRuns(t *testing.T, res, group string) []results.Run {
	t.Helper()
	store, err := results.OpenReadOnly(res)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runs, err := store.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []results.Run
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if r.Group != group || group == "" {
			t.Fatalf("run %s is in group %q; want every run in the scenario's one group %q", r.ID, r.Group, group)
		}
		out = append(out, r)
	}
	return out
}

func param(r results.Run, key string) string {
	var m map[string]any
	json.Unmarshal(r.Params, &m)
	s, _ := m[key].(string)
	return s
}

func stepMetrics(t *testing.T, res, runID string) []map[string]any {
	t.Helper()
	store, err := results.OpenReadOnly(res)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	steps, err := store.Steps(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, st := range steps {
		var m map[string]any
		if err := json.Unmarshal(st.Metrics, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// A shortened paper-4-backup: on a plain and an emulated tier (loop images,
// the second throttled), a 1-warehouse schema is backed up and restored;
// the restored server passes the checks, MB/s > 0, every phase ran in the
// server's memory cap, and the report shows the backup section with both
// tiers.
func TestExecuteBackupScenario(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	dir := pgtest.TempDir(t)
	res, group, rec := executeBundled(t, "paper-4-backup", dir,
		map[string]string{"warehouses": "1", "cycles": "1", "memory": "256MiB", "repeat": "1"})
	runs := groupRuns(t, res, group)
	if rec.reported.HTML != filepath.Join(res, "report.html") {
		t.Errorf("report %q; want it in %s", rec.reported.HTML, res)
	}
	var backups []results.Run
	for _, r := range runs {
		if r.Kind == "backup" {
			backups = append(backups, r)
		}
	}
	if len(backups) != 2 || param(backups[0], "label") != "db-fast" || param(backups[1], "label") != "db-sata (emulated)" {
		t.Fatalf("backup runs %v; want db-fast, then db-sata (emulated)", backups)
	}
	for _, r := range backups {
		// The phases, the restored server's among them, ran in the
		// instance's memory cap.
		var p struct {
			MemoryMax int64 `json:"memory_max_bytes"`
		}
		if err := json.Unmarshal(r.Params, &p); err != nil || p.MemoryMax != 256<<20 {
			t.Errorf("%s: memory_max_bytes %d (%v); want 256 MiB, the server's cap", param(r, "label"), p.MemoryMax, err)
		}
		steps := stepMetrics(t, res, r.ID)
		if len(steps) != 2 || steps[0]["phase"] != "backup" || steps[1]["phase"] != "restore" {
			t.Fatalf("run %s steps %v; want a backup and a restore", r.ID, steps)
		}
		for _, st := range steps {
			if mbps, _ := st["mbps"].(float64); mbps <= 0 {
				t.Errorf("%s %s: %v MB/s", param(r, "label"), st["phase"], st["mbps"])
			}
		}
		if v, _ := steps[1]["verified"].(bool); !v {
			t.Errorf("%s: the restored database was not verified: %v", param(r, "label"), steps[1])
		}
	}
	html, err := os.ReadFile(filepath.Join(res, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<section id="backup">`, "Backup and restore times", "db-sata (emulated)"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the scenario's report lacks %q", want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "data", "paper-4-backup", "sata")); len(entries) != 0 {
		t.Errorf("the emulated tier's image is still there after the scenario: %v", entries)
	}
}

// A shortened paper-5-neighbours on its two loop-backed tiers (fast, and
// slow throttled), 3 instances each, all with the one schema built on the
// fast tier: a baseline of
// TPC-C on all three, then TPC-C on two while the third runs a backup loop,
// each TPC-C instance open-loop at 900 TPM.
// Every instance has its results, named with its tier; the slow tier's
// servers drew from one shared I/O budget, whose cgroup is gone afterwards;
// the report lines the instances up and compares each tier with its
// baseline.
func TestExecuteNeighboursScenario(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	dir := pgtest.TempDir(t)
	// The slow tier keeps its shared I/O limit, but at 400 MB/s rather than
	// 50: the 1-warehouse backups then end within the step instead of
	// doubling the slow tier's steps (96 s alone against 70 s).
	res, group, _ := executeBundled(t, "paper-5-neighbours", dir, map[string]string{"warehouses": "1", "vus": "1", "rampup": "1s",
		"baseline": "3s", "duration": "6s", "cycles": "1", "interval": "5s", "repeat": "2", "rate": "900", "slow_mbps": "400"})
	count := map[string]int{}
	ioPaths := map[string]bool{}
	for _, r := range groupRuns(t, res, group) {
		key := r.Kind + " " + param(r, "instance") + " " + param(r, "phase")
		count[key]++
		if r.Status != results.StatusComplete {
			t.Errorf("run %s (%s) is %s", r.ID, key, r.Status)
		}
		if r.Kind == "disk" {
			continue
		}
		tier := strings.SplitN(param(r, "instance"), "-", 2)[0]
		// The slow tier's backups and restores draw from its I/O budget.
		if r.Kind == "backup" && (param(r, "io_group") != "") != (tier == "slow") {
			t.Errorf("%s: io_group %q; want the I/O group on slow alone", key, param(r, "io_group"))
		}
		if got := param(r, "scenario_target"); got != tier {
			t.Errorf("%s: scenario_target %q; want %q", key, got, tier)
		}
		if r.Kind == "tpcc" {
			// The slow tier's instances got the fast tier's schema copied
			// cold (and kept saying so after the stop step that let the
			// fast tier run alone); the fast tier's own were built there.
			from := param(r, "schema_from")
			if tier == "slow" && !strings.HasPrefix(from, "copied cold from fast-1 (fast)") || tier == "fast" && from != "" {
				t.Errorf("%s: schema_from %q; want the slow tier's copied cold from fast-1, the fast tier's empty", key, from)
			}
			steps := stepMetrics(t, res, r.ID)
			// Open-loop at the rate given, each instance its own. Beside
			// an unthrottled backup, a loaded host can hold one VU's
			// commit for the whole 6-second interval (a CI run's fast-2
			// had 640 MB dirty ahead of its fsync): the step then measures
			// no NOPM but must show the stall: a transaction held a second
			// or more at its end, and the arrivals it could not serve. (A
			// VU that stopped serving outside a transaction, the driver's
			// fault, would show neither.)
			nopm, _ := steps[0]["nopm"].(float64)
			held, _ := steps[0]["oldest_in_flight_ms"].(float64)
			unserved, _ := steps[0]["unserved"].(float64)
			if len(steps) != 1 || steps[0]["offered_tpm"] != 900.0 || (nopm <= 0 && (held < 1000 || unserved < 1)) {
				t.Errorf("%s: steps %v; want one step offered 900 TPM, with NOPM > 0 or, if it stalled, a transaction held at its end and arrivals unserved", key, steps)
			}
			var p struct {
				Limits struct {
					MemoryMax int64  `json:"memory_max_bytes"`
					IOShared  bool   `json:"io_shared"`
					IOPath    string `json:"io_path"`
					IO        []any  `json:"io"`
				} `json:"limits"`
			}
			json.Unmarshal(r.Params, &p)
			if p.Limits.MemoryMax <= 0 {
				t.Errorf("%s: limits %+v; want the instance's memory cap", key, p.Limits)
			}
			if shared := tier == "slow"; p.Limits.IOShared != shared || (len(p.Limits.IO) > 0) != shared {
				t.Errorf("%s: limits %+v; want a shared I/O limit on slow alone", key, p.Limits)
			}
			if p.Limits.IOShared {
				ioPaths[p.Limits.IOPath] = true
			}
		}
	}
	var want []string
	for _, tier := range []string{"fast", "slow"} {
		want = append(want, "tpcc "+tier+"-1 baseline", "tpcc "+tier+"-2 baseline",
			"tpcc "+tier+"-1 beside backups", "tpcc "+tier+"-2 beside backups", "backup "+tier+"-3 ")
		// At laptop scale the instance that backs up is idle in the baseline.
		if n := count["tpcc "+tier+"-3 baseline"]; n != 0 {
			t.Errorf("%d baseline runs of TPC-C on %s-3; want none", n, tier)
		}
	}
	// Each neighbours step ran twice: a run per repetition and instance.
	for _, k := range want {
		if count[k] != 2 {
			t.Errorf("%d runs of %q; want 2, one per repetition (all: %v)", count[k], k, count)
		}
	}
	// One I/O group for the whole slow tier, removed with the scenario.
	if len(ioPaths) != 1 {
		t.Errorf("the slow tier's instances were throttled in %v; want one shared group", ioPaths)
	}
	for p := range ioPaths {
		if !strings.Contains(p, "/tierbench/tier-slow-") {
			t.Errorf("I/O group %s is not the slow tier's", p)
		}
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("the tier's I/O group %s is still there after the scenario: %v", p, err)
		}
	}
	// The report pools each instance's two runs (n 2) and shows the backup
	// seconds that overlapped each measured interval.
	reportHas(t, filepath.Join(res, "report.html"), `<section id="neighbours">`, "NOPM per instance", `<section id="backup">`,
		"On fast: TPC-C instances beside backups kept", "On slow: TPC-C instances beside backups kept", "against its own baseline",
		`<th class="num">backup seconds overlapping</th>`, "A step repeated is pooled", "They ran open-loop, offered 900 TPM each")
}

// The bundled engines scenario, shortened: a TPC-C run on each engine's
// managed server, and a report that compares the two and names both.
func TestExecuteEnginesScenario(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	mariatest.RequireBinaries(t)
	base := mariatest.TempDir(t)
	data := filepath.Join(base, "data")
	stopAtCleanup(t, filepath.Join(data, "engines", "postgres"), filepath.Join(data, "engines", "mariadb"))
	res, group, _ := executeBundled(t, "engines", base, map[string]string{"warehouses": "1", "vus": "1,2", "rampup": "0s",
		"duration": "2s", "memory": "512MiB"})
	engines := map[string]int{}
	for _, r := range groupRuns(t, res, group) {
		if r.Kind == "tpcc" {
			engines[param(r, "engine")]++
		}
	}
	if engines["postgres"] != 1 || engines["mariadb"] != 1 {
		t.Fatalf("TPC-C runs by engine: %v", engines)
	}
	html := reportHas(t, filepath.Join(res, "report.html"), `id="engines-ratios"`, `id="engines-throughput"`)
	if !strings.Contains(html, "MariaDB") || !strings.Contains(html, "PostgreSQL") {
		t.Error("the report does not name both engines")
	}
}

// The shortened space-efficiency scenario: one warehouse on two loop-backed
// btrfs tiers, plain (no compression, no checksums) and packed (zstd,
// checksums), each scanned after its build and after its run. Every scan
// finds the TPC-C data compressible; btrfs really stored the packed tier's
// data compressed and the plain one's not; TPC-C ran on both; the report
// sets the estimates beside what btrfs stored; the images are gone after.
// (This was the CLI's TestScenarioSpaceEfficiency.)
func TestExecuteSpaceEfficiencyScenario(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	dir := pgtest.TempDir(t)
	res, group, _ := executeBundled(t, "space-efficiency", dir, map[string]string{"warehouses": "1", "loop": "1GiB", "vus": "1",
		"rampup": "0s", "duration": "3s"})
	type doc struct {
		Blocks       int64   `json:"blocks"`
		Unique       int64   `json:"unique_blocks"`
		DedupRatio   float64 `json:"dedup_ratio"`
		SavingsRatio float64 `json:"savings_ratio"`
		Compression  map[string]struct {
			Ratio float64 `json:"ratio"`
		} `json:"compression"`
		Capacity []struct {
			Policy          string `json:"policy"`
			RawBytes        int64  `json:"raw_bytes"`
			RawBytesReduced int64  `json:"raw_bytes_reduced"`
		} `json:"capacity"`
		LiveNote string `json:"live_note"`
		Actual   *struct {
			FS, Compress string
			Ratio        float64
			Disk         int64 `json:"disk_bytes"`
		} `json:"actual"`
	}
	scans := map[string][]doc{}
	tpcc := map[string]float64{}
	for _, r := range groupRuns(t, res, group) {
		switch r.Kind {
		case "space":
			steps := stepMetrics(t, res, r.ID)
			if len(steps) != 1 {
				t.Fatalf("space run %s: %d steps; want the scan", r.ID, len(steps))
			}
			b, _ := json.Marshal(steps[0])
			var d doc
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			scans[param(r, "instance")] = append(scans[param(r, "instance")], d)
		case "tpcc":
			steps := stepMetrics(t, res, r.ID)
			if len(steps) > 0 {
				tpcc[param(r, "instance")], _ = steps[0]["nopm"].(float64)
			}
		}
	}
	for _, in := range []string{"db-plain", "db-packed"} {
		if len(scans[in]) != 2 {
			t.Fatalf("%s: %d scans; want one after the build and one after the run", in, len(scans[in]))
		}
		if tpcc[in] <= 0 {
			t.Errorf("%s: TPC-C NOPM %v", in, tpcc[in])
		}
		for i, d := range scans[in] {
			// TPC-C pages: filler text and free space compress (here lz4
			// 1.15x and zstd 1.45x at 4 KiB under the 2-KiB rule, savings
			// 1.2-1.3x with zeros and dedup); the server was stopped, so
			// the copy was consistent.
			if d.Blocks == 0 || d.Unique == 0 || d.Compression["lz4"].Ratio <= 1.05 || d.Compression["zstd"].Ratio <= d.Compression["lz4"].Ratio ||
				d.SavingsRatio <= 1.05 || d.LiveNote != "" || len(d.Capacity) != 5 {
				t.Errorf("%s scan %d: %+v", in, i+1, d)
			}
			if d.Actual != nil {
				t.Logf("%s scan %d: estimate lz4 %.2fx, zstd %.2fx, savings %.2fx; btrfs %s stored %.2fx", in, i+1,
					d.Compression["lz4"].Ratio, d.Compression["zstd"].Ratio, d.SavingsRatio, d.Actual.Compress, d.Actual.Ratio)
			}
			if c := d.Capacity[3]; c.Policy != "RAID-5 (3+1)" || c.RawBytesReduced >= c.RawBytes {
				t.Errorf("%s scan %d: RAID-5 row %+v; want the reduced raw bytes below the plain ones", in, i+1, c)
			}
			a := d.Actual
			if a == nil || a.FS != "btrfs" || a.Disk <= 0 {
				t.Fatalf("%s scan %d: no btrfs figures beside the estimate: %+v", in, i+1, a)
			}
			switch in {
			case "db-plain":
				if a.Compress != "none" || math.Abs(a.Ratio-1) > 0.01 {
					t.Errorf("db-plain: btrfs without compression stored %+v; want ratio 1", a)
				}
			case "db-packed":
				if a.Compress != "zstd" || a.Ratio <= 1.5 {
					t.Errorf("db-packed: btrfs with zstd stored %+v; want the data compressed well beyond 1.5x", a)
				}
			}
		}
	}
	html, err := os.ReadFile(filepath.Join(res, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	// What compression and checksums cost: the packed tier's NOPM against
	// the plain one's (and the ratio table's New-Order p95), and what they
	// saved, beside each other.
	for _, want := range []string{`<section id="space">`, `id="space-capacity"`, `id="space-actual"`, "An estimate from the blocks, not a measurement",
		"with zstd compression really stored it", "the NOPM of db-plain", "NO p95 ratio"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the scenario's report lacks %q", want)
		}
	}
	for _, tier := range []string{"plain", "packed"} {
		if entries, _ := os.ReadDir(filepath.Join(dir, "data", "space-efficiency", tier)); len(entries) != 0 {
			t.Errorf("the %s tier's image is still there after the scenario: %v", tier, entries)
		}
	}
}

// A shortened tiers-at-load with its TPC-C rates as fractions: the schema
// is built on the fast tier and copied cold onto the slow one (100 IOPS),
// each tier's sweep first measures its own maximum and then finds its
// knee, the slow tier's below the fast one's in transactions a minute; the
// storage profile at two rates a point finds the points' knees; each knee
// is noted as its sweep ends; the report draws latency against the rate
// served and says how the slow tier got its data.
func TestExecuteTiersAtLoadScenario(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	fiotest.Require(t)
	// The probe is 6 s: the slow tier's copy starts cold at 100 IOPS, and a
	// loaded CI host's 3 s probe completed no transaction there (run 43).
	// A CI host with no core to spare can stall the fast tier's server
	// for most of a 2 s step at half its maximum (44.6% served in one
	// run, 90.6% in another with other packages' tests busy): the sweep's
	// lower rate is a quarter of the maximum, and one that says nothing
	// of the knee is run again, twice in all at most. The knees' one bound
	// is 1 s, not the scenario's 50 ms: 2 s steps on a host whose other
	// packages' tests take its cores put the fast tier's New-Order p99 at
	// its lowest rate at 59 and 74 ms in one CI run.
	var rec *scenarioRecorder
	var knees map[string]float64
	var disks int
	for try := 1; try <= 2; try++ {
		rec, knees, disks = tiersAtLoad(t)
		if knees["db-fast"] > 0 {
			break
		}
		t.Logf("try %d: the fast tier held no rate; running the scenario again", try)
	}
	fast, slow := knees["db-fast"], knees["db-slow (emulated)"]
	if len(knees) != 2 || disks != 2 || slow >= fast {
		t.Errorf("knees %v from %d disk runs; want the slow tier's knee below the fast one's, and two disk runs", knees, disks)
	}
	tiersAtLoadReport(t, rec)
}

// tiersAtLoad runs the shortened tiers-at-load scenario and returns its
// recorder, each TPC-C run's knee by label, and how many disk runs it
// made.
func tiersAtLoad(t *testing.T) (rec *scenarioRecorder, knees map[string]float64, disks int) {
	t.Helper()
	dir := pgtest.TempDir(t)
	res, group, rec := executeBundled(t, "tiers-at-load", dir, map[string]string{"warehouses": "1", "loop": "1GiB", "memory": "256MiB",
		"slow_iops": "100", "slow_mbps": "10", "disk_rates": "20,40", "disk_duration": "1s",
		"pool": "4", "rates": "25%,200%", "probe": "6s", "rampup": "1s", "duration": "2s", "knee_p99": "1s"})
	knees = map[string]float64{}
	for _, r := range groupRuns(t, res, group) {
		var doc struct {
			RateProbe *struct {
				ClientTPM int64 `json:"client_tpm"`
			} `json:"rate_probe"`
			Knee *struct {
				OfferedTPM float64 `json:"offered_tpm"`
				P99BoundMs float64 `json:"p99_bound_ms"`
				Why        string  `json:"why"`
			} `json:"knee"`
			Knees []struct{ Point string } `json:"knees"`
		}
		if err := json.Unmarshal(r.Summary, &doc); err != nil {
			t.Fatalf("run %s: %v", r.ID, err)
		}
		switch r.Kind {
		case "tpcc":
			if doc.RateProbe == nil || doc.Knee == nil {
				t.Fatalf("run %s (%s): no probe or knee: %s", r.ID, param(r, "label"), r.Summary)
			}
			knees[param(r, "label")] = doc.Knee.OfferedTPM
			if doc.Knee.P99BoundMs != 1000 { // the scenario's knee_p99, as set
				t.Errorf("run %s (%s): knee judged against a %g ms bound; want the 1 s set", r.ID, param(r, "label"), doc.Knee.P99BoundMs)
			}
			t.Logf("%s: maximum %d TPM, knee %.0f TPM offered: %s", param(r, "label"), doc.RateProbe.ClientTPM, doc.Knee.OfferedTPM, doc.Knee.Why)
		case "disk":
			if len(doc.Knees) == 0 {
				t.Errorf("disk run %s: no knee of its points' rates: %s", r.ID, r.Summary)
			}
			disks++
		}
	}
	return rec, knees, disks
}

// tiersAtLoadReport checks what the scenario said and reported.
func tiersAtLoadReport(t *testing.T, rec *scenarioRecorder) {
	t.Helper()
	if !slices.ContainsFunc(rec.notes, func(n string) bool {
		return strings.Contains(n, "server db-slow: the 1-warehouse schema built on db-fast copied cold")
	}) {
		t.Errorf("no note says the slow tier's schema was copied: %q", rec.notes)
	}
	// Each sweep's knee is said as it ends, in tpcc run's and disk run's words.
	for _, knee := range []string{"knee: ", "knee of "} {
		if !slices.ContainsFunc(rec.notes, func(n string) bool { return strings.Contains(n, knee) }) {
			t.Errorf("no note gives a knee as %q does: %q", knee, rec.notes)
		}
	}
	reportHas(t, rec.reported.Markdown, "schema=copied cold from db-fast (fast)", "the knee is at", "New-Order p99 against the rate served")
}

// The shortened analytic-tiers scenario: TPC-H at SF 0.01 on a fast and a
// throttled tier, on both engines. Each server gets its tables in a
// database of its own (tpch), every run has its power test (RF1, the 22
// queries, RF2) and a 2-stream throughput test beside two refresh pairs,
// the report compares the tiers on each engine, not the engines, and its
// environment lists the sessions' analytic settings.
func TestExecuteAnalyticTiersScenario(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	mariatest.RequireBinaries(t)
	base := mariatest.TempDir(t)
	data := filepath.Join(base, "data")
	var dirs []string // each tier's image is mounted at tierbench-tier-NAME under its path
	for _, d := range []string{"fast/tierbench-tier-fast/pg-fast", "slow/tierbench-tier-slow/pg-slow", "fast/tierbench-tier-fast/maria-fast",
		"slow/tierbench-tier-slow/maria-slow"} {
		dirs = append(dirs, filepath.Join(data, "analytic-tiers", d))
	}
	stopAtCleanup(t, dirs...)
	res, group, _ := executeBundled(t, "analytic-tiers", base, map[string]string{"scale": "0.01", "streams": "2", "loop": "2GiB",
		"memory": "256MiB", "slow_mbps": "20", "timeout": "2m"})
	engines := map[string]int{}
	for _, r := range groupRuns(t, res, group) {
		if r.Kind != "tpch" {
			continue
		}
		engines[param(r, "engine")]++
		if dsn := param(r, "dsn"); !strings.Contains(dsn, "/tpch") || r.Status != results.StatusComplete {
			t.Errorf("run %s: %s on %s; want a complete run in database tpch", r.ID, r.Status, dsn)
		}
		var doc struct {
			Power []struct {
				Queries []struct{ Status string } `json:"queries"`
			} `json:"power"`
			Throughput *struct {
				Queries []struct{ Status string } `json:"queries"`
			} `json:"throughput"`
		}
		if err := json.Unmarshal(r.Summary, &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Power) != 1 || len(doc.Power[0].Queries) != 24 || doc.Throughput == nil || len(doc.Throughput.Queries) != 2*22+2*2 {
			t.Errorf("run %s: %+v; want RF1, 22 queries and RF2, then two streams beside two refresh pairs", r.ID, doc)
		}
	}
	if engines["postgres"] != 2 || engines["mariadb"] != 2 {
		t.Fatalf("TPC-H runs by engine: %v; want two tiers on each", engines)
	}
	// The environment lists the analytic settings each engine's sessions
	// ran with, sized from the servers' memory.
	reportHas(t, filepath.Join(res, "report.html"), `id="tpch-queries"`, "pg-slow (emulated)&#39;s geometric mean query time is",
		"maria-slow (emulated)&#39;s geometric mean query time is", "work_mem (TPC-H power test)", "join_buffer_size (TPC-H throughput test, 2 streams)")
}

// stopAtCleanup stops the servers in dirs, should a scenario that failed
// have left them running, and removes their limits.
func stopAtCleanup(t *testing.T, dirs ...string) {
	t.Cleanup(func() {
		for _, dir := range dirs {
			server.Stop(context.Background(), dir, "immediate")
			server.RemoveLimits(dir)
		}
	})
}

// A shortened crash-tiers: one kill cycle on each of two tiers, the slow
// one throttled and holding a cold copy of the fast one's schema, the data
// directory dropped from the page cache after each fault. Both durability
// runs pass and are labelled with their tier, the checks after them hold,
// and the report has every cycle and compares the slow tier's recovery
// with the fast one's.
func TestExecuteCrashTiersScenario(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	dir := pgtest.TempDir(t)
	res, group, rec := executeBundled(t, "crash-tiers", dir, map[string]string{"warehouses": "1", "loop": "1GiB", "memory": "256MiB",
		"slow_iops": "200", "slow_mbps": "20", "cycles": "1", "vus": "1", "rate": "1200", "run_before_fault": "2s"})
	labels := map[string]bool{}
	for _, r := range groupRuns(t, res, group) {
		if r.Kind != stored.KindDurability {
			t.Errorf("run %s is a %s run; want durability runs alone", r.ID, r.Kind)
			continue
		}
		var doc experiment.DurabilityResult
		if err := json.Unmarshal(r.Summary, &doc); err != nil || r.Status != results.StatusComplete || !doc.Total.OK || doc.Total.Cycles != 1 ||
			doc.Rate != 1200 {
			t.Errorf("durability run %s (%s): %s, %v; want one passed cycle at 1,200 TPM", r.ID, param(r, "label"), r.Summary, err)
		}
		if p, err := stored.DecodeParams(r.Kind, r.Params); err != nil || !p.Durability.ColdCache {
			t.Errorf("durability run %s: parameters %s (%v); want the cold cache the scenario sets", r.ID, r.Params, err)
		}
		labels[param(r, "label")] = true
	}
	if !labels["db-fast"] || !labels["db-slow (emulated)"] || len(labels) != 2 {
		t.Errorf("durability runs labelled %v; want db-fast and db-slow (emulated)", labels)
	}
	if !rec.checked["db-fast"] || !rec.checked["db-slow"] {
		t.Errorf("checks %v; want both servers' to hold after their crashes", rec.checked)
	}
	reportHas(t, rec.reported.Markdown, "All 2 cycles passed", "on db-fast (1 cycle); relative to it: db-slow (emulated) ", "| kill, cold cache |")
}
