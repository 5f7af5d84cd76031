package cli_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
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

// TestSpaceCommand: `tierbench space --json` on a directory of known
// blocks prints the document the issue names (run_id, block counts, the
// ratios, the capacity table), with zstd exact at --zstd-sample 1 and
// estimated with an interval at 2; the text view says which.
func TestSpaceCommand(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	// 64 zero blocks, then 4,096 distinct blocks of repeated text, each twice.
	var b []byte
	b = append(b, make([]byte, 64*4096)...)
	for range 2 {
		for i := range 4096 {
			line := []byte("row " + strconv.Itoa(i) + ": the quick brown fox jumps over the lazy dog; ")
			blk := make([]byte, 0, 4096)
			for len(blk) < 4096 {
				blk = append(blk, line...)
			}
			b = append(b, blk[:4096]...)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "f"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	type compression struct {
		Ratio       float64  `json:"ratio"`
		SampleEvery int      `json:"sample_every"`
		Sample      int64    `json:"sample_blocks"`
		Low         *float64 `json:"ratio_ci95_low"`
		High        *float64 `json:"ratio_ci95_high"`
	}
	type scanDoc struct {
		RunID       string                 `json:"run_id"`
		BlockBytes  int                    `json:"block_bytes"`
		Logical     int64                  `json:"logical_bytes"`
		Blocks      int64                  `json:"blocks"`
		Zero        int64                  `json:"zero_blocks"`
		Unique      int64                  `json:"unique_blocks"`
		Dedup       float64                `json:"dedup_ratio"`
		Savings     float64                `json:"savings_ratio"`
		Compression map[string]compression `json:"compression"`
		Capacity    []map[string]any       `json:"capacity"`
		Partial     bool                   `json:"partial"`
	}
	var docs []scanDoc
	for _, sample := range []string{"1", "2"} {
		code, out, errOut := runTierbench(t, "space", "--target", data, "--results", res, "--zstd-sample", sample, "--json")
		if code != 0 {
			t.Fatalf("space --zstd-sample %s: exit %d\n%s\n%s", sample, code, out, errOut)
		}
		var d scanDoc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("space --json: %v\n%s", err, out)
		}
		docs = append(docs, d)
	}
	for i, d := range docs {
		if d.RunID == "" || d.BlockBytes != 4096 || d.Logical != int64(len(b)) || d.Blocks != 64+2*4096 || d.Zero != 64 || d.Unique != 4096 ||
			d.Dedup != 2 || d.Partial || len(d.Capacity) != 5 {
			t.Errorf("scan %d: %+v", i, d)
		}
		for _, c := range d.Capacity {
			for _, k := range []string{"policy", "raw_bytes", "raw_bytes_reduced"} {
				if _, ok := c[k]; !ok {
					t.Errorf("scan %d: capacity row %v has no %s", i, c, k)
				}
			}
		}
		lz := d.Compression["lz4"]
		if lz.Ratio < 10 || lz.SampleEvery != 1 || lz.Sample != 4096 || lz.Low != nil {
			t.Errorf("scan %d: lz4 %+v; want exact, every one of 4,096 blocks, well compressed", i, lz)
		}
		// Blocks of text shrink by far more than lz4's 10x: savings is
		// logical / (zero-free, deduplicated, lz4-compressed) bytes.
		if want := float64(len(b)) / (float64(4096*4096) / lz.Ratio); math.Abs(d.Savings-want) > 1e-9*want {
			t.Errorf("scan %d: savings %v, want %v", i, d.Savings, want)
		}
	}
	exact, sampled := docs[0].Compression["zstd"], docs[1].Compression["zstd"]
	if exact.SampleEvery != 1 || exact.Sample != 4096 || exact.Low != nil {
		t.Errorf("--zstd-sample 1: zstd %+v; want every block, no interval", exact)
	}
	if sampled.SampleEvery != 2 || sampled.Sample < 1800 || sampled.Sample > 2300 || sampled.Low == nil || sampled.High == nil ||
		!(*sampled.Low <= exact.Ratio && exact.Ratio <= *sampled.High) {
		t.Errorf("--zstd-sample 2: zstd %+v (interval %v–%v); want about 2,048 blocks sampled and an interval holding the exact %v",
			sampled, deref(sampled.Low), deref(sampled.High), exact.Ratio)
	}

	code, out, errOut := runTierbench(t, "space", "--target", data, "--results", res, "--zstd-sample", "2")
	if code != 0 {
		t.Fatalf("space: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"zero 64, unique 4,096, duplicate 4,096 blocks", "dedup 2.00x", "(95% CI ", ", 1 in 2 blocks)", "RAID-6 (4+2)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the text view has no %q:\n%s", want, out)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
