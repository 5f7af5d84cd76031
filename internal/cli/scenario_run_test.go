package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// groupRuns returns the runs of the store's only scenario group, oldest
// first.
func groupRuns(t *testing.T, res string) []results.Run {
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
	group := ""
	var out []results.Run
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if group == "" {
			group = r.Group
		}
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
// server's memory cap, and the report shows
// the backup section with both tiers.
func TestScenarioBackup(t *testing.T) {
	pgtest.RequireBinaries(t)
	dir := pgtest.TempDir(t)
	res := filepath.Join(dir, "results")
	code, out, errOut := runTierbench(t, "scenario", "run", "paper-4-backup", "--data", filepath.Join(dir, "data"), "--results", res,
		"--set", "warehouses=1", "--set", "cycles=1", "--set", "memory=256MiB", "--set", "repeat=1", "--json")
	if code != 0 {
		t.Fatalf("scenario run: exit %d\n%s\n%s", code, out, errOut)
	}
	// --json prints one document: the scenario's group, its runs, its report.
	var doc struct {
		Name, Status, Group, Report string
		Runs                        []string
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("scenario run --json printed no one JSON document: %v\n%s", err, out)
	}
	runs := groupRuns(t, res)
	if doc.Name != "paper-4-backup" || doc.Status != "complete" || doc.Group != runs[0].Group || len(doc.Runs) != len(runs) ||
		doc.Runs[0] != runs[0].ID || doc.Report != filepath.Join(res, "report.html") {
		t.Errorf("scenario run --json: %+v; want paper-4-backup complete, group %s with %d runs, report in %s", doc, runs[0].Group, len(runs), res)
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
// slow throttled), 3 instances each cloned from one schema: a baseline of
// TPC-C on all three, then TPC-C on two while the third runs a backup loop.
// Every instance has its results, named with its tier; the slow tier's
// servers drew from one shared I/O budget, whose cgroup is gone afterwards;
// the report lines the instances up and compares each tier with its
// baseline.
func TestScenarioNeighbours(t *testing.T) {
	pgtest.RequireBinaries(t)
	dir := pgtest.TempDir(t)
	res := filepath.Join(dir, "results")
	code, out, errOut := runTierbench(t, "scenario", "run", "paper-5-neighbours", "--data", filepath.Join(dir, "data"), "--results", res,
		"--set", "warehouses=1", "--set", "vus=1", "--set", "rampup=2s", "--set", "baseline=5s", "--set", "duration=12s",
		"--set", "cycles=1", "--set", "interval=10s", "--set", "repeat=2")
	if code != 0 {
		t.Fatalf("scenario run: exit %d\n%s\n%s", code, out, errOut)
	}
	count := map[string]int{}
	ioPaths := map[string]bool{}
	for _, r := range groupRuns(t, res) {
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
			steps := stepMetrics(t, res, r.ID)
			if nopm, _ := steps[0]["nopm"].(float64); len(steps) != 1 || nopm <= 0 {
				t.Errorf("%s: steps %v; want one step with NOPM > 0", key, steps)
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
	html, err := os.ReadFile(filepath.Join(res, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	// The report pools each instance's two runs (n 2) and shows the backup
	// seconds that overlapped each measured interval.
	for _, s := range []string{`<section id="neighbours">`, "NOPM per instance", `<section id="backup">`,
		"On fast: TPC-C instances beside backups kept", "On slow: TPC-C instances beside backups kept", "against its own baseline",
		`<th class="num">backup seconds overlapping</th>`, "A step repeated is pooled"} {
		if !strings.Contains(string(html), s) {
			t.Errorf("the report lacks %q", s)
		}
	}
}
