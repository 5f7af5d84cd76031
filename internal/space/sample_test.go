package space

import (
	"encoding/json"
	"math"
	"testing"
)

func TestAutoSample(t *testing.T) {
	for _, tc := range []struct {
		total int64
		block int
		want  int
	}{
		{0, 4096, 1},
		{64<<20 - 1, 4096, 1}, // fewer than 2 × 8192 blocks: every one
		{64 << 20, 4096, 2},   // 16384 blocks: 8192 of them
		{256 << 20, 4096, 8},
		{2 << 30, 4096, 64},
		{1 << 40, 4096, 64}, // the step stops at 64
		{256 << 20, 65536, 1},
		{2 << 30, 512, 64},
	} {
		if got := autoSample(tc.total, tc.block); got != tc.want {
			t.Errorf("autoSample(%d, %d) = %d, want %d", tc.total, tc.block, got, tc.want)
		}
	}
}

// TestEstimate: the arithmetic of a sampled estimate, against values
// worked out here: 4 sampled of 400 unique 4 KiB blocks, stored as 1000,
// 2000 (both kept compressed) and 4096, 4096 (whole).
func TestEstimate(t *testing.T) {
	sizes := []float64{1000, 2000, 4096, 4096}
	var sum, sq float64
	for _, s := range sizes {
		sum += s
		sq += s * s
	}
	c := estimate(algoCounts{blocks: 4, stored: int64(sum), compressed: 2}, sq, 400, 4096, 100)
	// Half of 400 kept compressed at a mean 1500 bytes, half whole.
	if c.CompressedBlocks != 200 || c.StoredBytes != 200*4096+200*1500 || c.SampleEvery != 100 || c.SampleBlocks != 4 {
		t.Errorf("estimate %+v", c)
	}
	if want := 400.0 * 4096 / (200*4096 + 200*1500); !near(c.Ratio, want) {
		t.Errorf("ratio %v, want %v", c.Ratio, want)
	}
	// The interval: mean 2798, sample sd from the deviations, t(0.975, 3)
	// = 3.182446305284263 (tables), finite-population factor 1 − 4/400.
	mean := sum / 4
	var dev float64
	for _, s := range sizes {
		dev += (s - mean) * (s - mean)
	}
	half := 3.182446305284263 * math.Sqrt(dev/3/4*(1-4.0/400))
	if lo, hi := 4096/(mean+half), 4096/max(mean-half, 1); math.Abs(c.RatioCI95Low-lo) > 1e-9 || math.Abs(c.RatioCI95High-hi) > 1e-9 {
		t.Errorf("interval [%v, %v], want [%v, %v]", c.RatioCI95Low, c.RatioCI95High, lo, hi)
	}
	// Every block compressed: exact, no interval, whatever the step asked.
	c = estimate(algoCounts{blocks: 400, stored: 1000 * 400, compressed: 400}, 0, 400, 4096, 1)
	if c != (Compression{Ratio: 4.096, StoredBytes: 400000, CompressedBlocks: 400, SampleEvery: 1, SampleBlocks: 400}) {
		t.Errorf("exact: %+v", c)
	}
}

// TestZstdSample: the same 64 MiB of mixed data scanned with every block
// compressed by zstd, and with 1 in 8: the sample is about an eighth of the
// unique blocks, its interval holds the exact ratio, LZ4 and everything
// else are unchanged, and the sample is the same whatever the workers.
func TestZstdSample(t *testing.T) {
	f := writeFile(t, t.TempDir(), "mixed", mixedData(64<<20))
	exact := scan(t, f, Options{ZstdSample: 1})
	z := exact.Compression["zstd"]
	if z.Sampled() || z.SampleBlocks != exact.UniqueBlocks || z.RatioCI95Low != 0 {
		t.Fatalf("ZstdSample 1: %+v, want every one of %d unique blocks, no interval", z, exact.UniqueBlocks)
	}
	var first []byte
	for _, workers := range []int{1, 3} {
		r := scan(t, f, Options{ZstdSample: 8, Workers: workers})
		s := r.Compression["zstd"]
		// Binomial(unique, 1/8): 5 standard deviations either side.
		u := float64(r.UniqueBlocks)
		if sd := math.Sqrt(u / 8 * 7 / 8); s.SampleEvery != 8 || math.Abs(float64(s.SampleBlocks)-u/8) > 5*sd {
			t.Errorf("sample: every %d, %d blocks of %d unique", s.SampleEvery, s.SampleBlocks, r.UniqueBlocks)
		}
		if !(s.RatioCI95Low < z.Ratio && z.Ratio < s.RatioCI95High) {
			t.Errorf("sampled zstd ratio %v [%v, %v] does not hold the exact %v", s.Ratio, s.RatioCI95Low, s.RatioCI95High, z.Ratio)
		}
		if w := s.RatioCI95High - s.RatioCI95Low; w <= 0 || w > 0.1*z.Ratio {
			t.Errorf("interval [%v, %v]: width %v of a ratio %v", s.RatioCI95Low, s.RatioCI95High, w, z.Ratio)
		}
		if r.Compression["lz4"] != exact.Compression["lz4"] || r.StoredBytes != exact.StoredBytes || r.SavingsRatio != exact.SavingsRatio {
			t.Errorf("lz4 %+v stored %d savings %v, want them as exact: %+v %d %v", r.Compression["lz4"], r.StoredBytes,
				r.SavingsRatio, exact.Compression["lz4"], exact.StoredBytes, exact.SavingsRatio)
		}
		b, _ := json.Marshal(s)
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Errorf("%d workers sampled %s, 1 worker %s", workers, b, first)
		}
	}
	// Automatic on 64 MiB: 1 in 2.
	if a := scan(t, f, Options{}).Compression["zstd"]; a.SampleEvery != 2 {
		t.Errorf("automatic sample on 64 MiB: every %d, want 2", a.SampleEvery)
	}
}

func TestZstdSampleBad(t *testing.T) {
	f := writeFile(t, t.TempDir(), "x", textBlock(1, 4096))
	for _, n := range []int{-1, 3, 96, MaxZstdSample * 2} {
		_, err := Scan(t.Context(), f, Options{ZstdSample: n})
		wantBad(t, err, "zstd sample", "power of two")
	}
}
