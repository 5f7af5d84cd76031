package space

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/gonum/stat/distuv"
)

// zstd is the scan's main cost: about four times LZ4's per 4 KiB database
// page (scan.go). So that the whole scan keeps up with the lz4 tool alone,
// zstd compresses a sample of the unique blocks, 1 in ZstdSample, and its
// figures are estimated from the sample, with a 95% interval. The sample is
// chosen by the blocks' hash (its low bits clear), not by their order: the
// same data gives the same sample whatever the number of workers or the
// order of the files, and since the hash is uniform over contents, the
// sample is a simple random sample of the unique blocks. LZ4, the savings
// ratio and the capacity table are always exact.
const (
	// MaxZstdSample bounds Options.ZstdSample.
	MaxZstdSample = 1 << 20
	// autoSampleMin is the fewest blocks the automatic choice samples
	// (when the data holds that many): a ratio from 8192 PostgreSQL pages
	// is good to about ±1% at 95% (docs/space.md).
	autoSampleMin = 8192
	// autoSampleMax is the automatic choice's largest step: at 1 in 64,
	// zstd costs a few percent of the scan, and larger steps save little.
	autoSampleMax = 64
)

// autoSample is the sample step the scan takes for a target of total bytes
// at block bytes a block: the largest power of two up to autoSampleMax that
// still samples autoSampleMin blocks of it, or 1 (every block) for data of
// fewer than twice that many blocks.
func autoSample(total int64, block int) int {
	n := 1
	for n < autoSampleMax && total/int64(block)/int64(2*n) >= autoSampleMin {
		n *= 2
	}
	return n
}

// estimate fills a Compression from a sample: a.blocks of the unique
// blocks, whose stored sizes sum to a.stored with squares summing to sq.
// With every block compressed (a.blocks == unique) it is exact; otherwise
// the stored bytes and compressed blocks are scaled up to the unique blocks,
// and the ratio gets a 95% interval from Student's t over the sample's
// stored sizes, with the finite-population correction (a sample of most of
// the blocks is nearly exact).
func estimate(a algoCounts, sq float64, unique int64, block, every int) Compression {
	uniqueBytes := unique * int64(block)
	if a.blocks == unique || a.blocks == 0 {
		return Compression{Ratio: ratio(uniqueBytes, a.stored), StoredBytes: a.stored, CompressedBlocks: a.compressed,
			SampleEvery: 1, SampleBlocks: a.blocks}
	}
	n, u := float64(a.blocks), float64(unique)
	// Scaled in two parts, blocks kept compressed and blocks stored whole,
	// so that the estimate obeys the rule as an exact count does: whole
	// blocks take a block each, compressed ones at most KeepBelow of one.
	wholeSampled := a.blocks - a.compressed
	c := Compression{SampleEvery: every, SampleBlocks: a.blocks,
		CompressedBlocks: int64(math.Round(float64(a.compressed) / n * u))}
	c.StoredBytes = (unique - c.CompressedBlocks) * int64(block)
	if a.compressed > 0 {
		perCompressed := float64(a.stored-wholeSampled*int64(block)) / float64(a.compressed)
		c.StoredBytes += int64(math.Round(perCompressed * float64(c.CompressedBlocks)))
	}
	c.Ratio = ratio(uniqueBytes, c.StoredBytes)
	if a.blocks < 2 {
		return c // no spread to speak of: no interval
	}
	mean := float64(a.stored) / n
	variance := max(0, (sq-n*mean*mean)/(n-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975)
	half := t * math.Sqrt(variance/n*(1-n/u))
	// A stored block is never below zstd's smallest frame (about 10 bytes),
	// so the upper end stays finite however wide the interval. The two-part
	// scaling above can round the estimate a hair outside an interval of
	// no width: the interval is widened to hold it.
	c.RatioCI95Low = min(float64(block)/(mean+half), c.Ratio)
	c.RatioCI95High = max(float64(block)/max(mean-half, 1), c.Ratio)
	return c
}

// ParseZstdSample reads the zstd sample step as a user gives it: "auto"
// (0: the scan chooses), or N, a power of two from 1 (every block, exact)
// to MaxZstdSample.
func ParseZstdSample(s string) (int, error) {
	if s == "auto" || s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxZstdSample || n&(n-1) != 0 {
		return 0, badf("zstd sample %q is not auto or a power of two from 1 (every block, exact) to %d; give e.g. auto, 1 or 32", s, MaxZstdSample)
	}
	return n, nil
}

// Text is c's ratio as the text views print it: "1.43x", and for an
// estimate from a sample its interval, "1.43x (95% CI 1.42–1.45, 1 in 32
// blocks)".
func (c Compression) Text() string {
	if !c.Sampled() {
		return fmt.Sprintf("%.2fx", c.Ratio)
	}
	return fmt.Sprintf("%.2fx (95%% CI %.2f–%.2f, 1 in %d blocks)", c.Ratio, c.RatioCI95Low, c.RatioCI95High, c.SampleEvery)
}
