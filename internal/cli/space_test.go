package cli_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// The shortened space-efficiency scenario: one warehouse on two loop-backed
// btrfs tiers, plain (no compression, no checksums) and packed (zstd,
// checksums), each scanned after its build and after its run. Every scan
// finds the TPC-C data compressible; btrfs really stored the packed tier's
// data compressed and the plain one's not; TPC-C ran on both; the report
// sets the estimates beside what btrfs stored; the images are gone after.
func TestScenarioSpaceEfficiency(t *testing.T) {
	pgtest.RequireBinaries(t)
	dir := pgtest.TempDir(t)
	res := filepath.Join(dir, "results")
	code, out, errOut := runTierbench(t, "scenario", "run", "space-efficiency", "--data", filepath.Join(dir, "data"), "--results", res,
		"--set", "warehouses=1", "--set", "loop=1GiB", "--set", "vus=1", "--set", "rampup=2s", "--set", "duration=5s", "--json")
	if code != 0 {
		t.Fatalf("scenario run: exit %d\n%s\n%s", code, out, errOut)
	}
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
	for _, r := range groupRuns(t, res) {
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
