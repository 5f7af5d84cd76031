package cli_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSpaceCommand: `tierbench space --json` on a directory of known
// blocks prints the document the issue names (run_id, block counts, the
// ratios, the capacity table), with zstd exact at --zstd-sample 1 and
// estimated with an interval at 2; the text view says which.
func TestSpaceCommand(t *testing.T) {
	t.Parallel()
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
