// Package space estimates what deduplication, compression and erasure
// coding would save on some data, by reading it once, read-only: a
// directory's files, one file, or a block device. It cuts the data into
// fixed blocks as an array would, finds the zero blocks and the distinct
// ones (by a 128-bit hash), compresses each distinct block with LZ4 and
// zstd, and applies the rule that decides whether a block is kept
// compressed. The figures are an estimate from the blocks, not a
// measurement of a particular array: arrays differ in hash granularity,
// compression unit and metadata overhead (docs/space.md).
package space

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"time"
)

// ErrBadInput marks input the caller can fix: a missing or unreadable
// target, one that is neither a directory, a file nor a block device, or
// options out of range. Its text is one line naming what was wrong and what
// would be right.
var ErrBadInput = errors.New("bad input")

// badInput is an ErrBadInput whose text is only the reason, so it reads as one line.
type badInput struct{ msg string }

func (e *badInput) Error() string { return e.msg }
func (e *badInput) Unwrap() error { return ErrBadInput }

func badf(format string, a ...any) error { return &badInput{fmt.Sprintf(format, a...)} }

// Limits and defaults of the options.
const (
	MinBlockSize     = 512
	MaxBlockSize     = 1 << 20
	DefaultBlockSize = 4096
	// MaxWorkers bounds Options.Workers: each holds compressors of its own
	// (about 630 KiB) and two read buffers' worth of the pipeline.
	MaxWorkers = 1024
	// DefaultKeepBelow is vSAN's rule: a 4 KiB block is kept compressed only
	// when it compresses to 2 KiB or less, since a block that saves less is
	// not worth decompressing on every read.
	DefaultKeepBelow = 0.5
)

// Options of a scan.
type Options struct {
	BlockSize int     // bytes; a power of two from 512 to 1 MiB; 0 means 4096
	KeepBelow float64 // a block is stored compressed only when its compressed size is at most KeepBelow × BlockSize, else whole; 0 means 0.5; must be in (0, 1]
	Workers   int     // goroutines hashing and compressing; 0 means runtime.NumCPU()
	// ZstdSample: zstd compresses 1 in ZstdSample unique blocks, chosen by
	// their hash, and its figures are estimated from them (sample.go). A
	// power of two up to MaxZstdSample; 1 is every block (exact); 0 means
	// automatic: 1 for small data, up to 1 in 64 for large.
	ZstdSample int
	// Progress, when set, is called about once a second (from one goroutine)
	// and once at the end, never twice at once.
	Progress func(Progress)

	// progressEvery replaces the second between Progress calls; tests
	// shorten it.
	progressEvery time.Duration
}

// Progress is how far a scan has come.
type Progress struct {
	Bytes int64 // read so far
	Total int64 // to read (0 when unknown)
	Files int   // files read so far, the one being read included
}

// Result is what a scan found, and the JSON document of `tierbench space`
// (with the run's "run_id" beside it). Every ratio is finite: see the
// fields for the edge cases.
type Result struct {
	Target          string                 `json:"target"`
	Kind            string                 `json:"target_kind"` // "directory", "file", "device"
	BlockBytes      int                    `json:"block_bytes"`
	LogicalBytes    int64                  `json:"logical_bytes"` // the bytes of the files (or device) scanned
	Files           int                    `json:"files"`         // regular files read (a device: 0)
	Blocks          int64                  `json:"blocks"`        // blocks scanned (a file's last partial block counts as one, padded with zeros)
	ZeroBlocks      int64                  `json:"zero_blocks"`
	UniqueBlocks    int64                  `json:"unique_blocks"`    // distinct non-zero blocks
	DuplicateBlocks int64                  `json:"duplicate_blocks"` // non-zero blocks that repeat one already seen
	DedupRatio      float64                `json:"dedup_ratio"`      // (blocks − zero_blocks) / unique_blocks (1 when there are no non-zero blocks)
	Compression     map[string]Compression `json:"compression"`      // keys "lz4" and "zstd"
	// SavingsRatio is logical_bytes / stored_bytes: 1 when nothing was
	// scanned, and 0 when there is something but nothing to store (every
	// block zero), which stands for "unbounded" since JSON has no infinity.
	SavingsRatio float64    `json:"savings_ratio"`
	StoredBytes  int64      `json:"stored_bytes"` // after zero elimination, dedup and lz4 under the KeepBelow rule
	KeepBelow    float64    `json:"compress_keep_below"`
	Capacity     []Capacity `json:"capacity"`
	IndexBytes   int64      `json:"index_bytes"` // memory the unique-block index held at its largest (estimate)
	// Live: a device in use (mounted, itself or a partition; swap; held by
	// device-mapper or md). The scan read a file system in use, an
	// inconsistent snapshot. LiveReason says what uses it.
	Live       bool   `json:"live,omitempty"`
	LiveReason string `json:"live_reason,omitempty"`
	Partial    bool   `json:"partial,omitempty"` // stopped early (ctx ended): the counts cover what was read
	// Unreadable lists files and directories inside a directory target that
	// could not be read (permission) and were skipped, at most
	// MaxUnreadableListed; UnreadableCount counts all of them.
	Unreadable      []string `json:"unreadable,omitempty"`
	UnreadableCount int      `json:"unreadable_count,omitempty"`
	Seconds         float64  `json:"seconds"` // the scan's wall time, the walk of a directory included
}

// MaxUnreadableListed bounds Result.Unreadable: a tree of thousands of
// unreadable files would otherwise fill the document with them.
const MaxUnreadableListed = 20

// Compression is what one compressor makes of the unique blocks.
type Compression struct {
	Ratio            float64 `json:"ratio"`             // the unique blocks' bytes / their stored bytes under the rule (1 without unique blocks)
	StoredBytes      int64   `json:"stored_bytes"`      // the unique blocks as stored: compressed size when kept compressed, else the block size
	CompressedBlocks int64   `json:"compressed_blocks"` // unique blocks kept compressed under the rule
	// SampleEvery is 1 when every unique block was compressed (the figures
	// are exact), else N when 1 in N was: the figures above are then
	// estimated from the SampleBlocks sampled, and the ratio's 95% interval
	// is [RatioCI95Low, RatioCI95High].
	SampleEvery   int     `json:"sample_every"`
	SampleBlocks  int64   `json:"sample_blocks"`
	RatioCI95Low  float64 `json:"ratio_ci95_low,omitempty"`
	RatioCI95High float64 `json:"ratio_ci95_high,omitempty"`
}

// Sampled reports whether c is estimated from a sample of the blocks.
func (c Compression) Sampled() bool { return c.SampleEvery > 1 }

// Capacity is the raw space a protection policy needs for the data, as it
// is and as reduced.
type Capacity struct {
	Policy          string  `json:"policy"`            // "mirror FTT=1", "mirror FTT=2", "mirror FTT=3", "RAID-5 (3+1)", "RAID-6 (4+2)"
	Factor          float64 `json:"factor"`            // raw bytes per logical byte: 2, 3, 4, 4/3, 1.5
	RawBytes        int64   `json:"raw_bytes"`         // logical_bytes × factor, rounded to whole bytes
	RawBytesReduced int64   `json:"raw_bytes_reduced"` // stored_bytes × factor, rounded to whole bytes
}

// policy is a protection policy's factor as a fraction, so that raw bytes
// are computed exactly (4/3 has no exact float).
type policy struct {
	name     string
	num, den uint64
}

// policies are vSAN's storage policies (failures to tolerate by mirroring,
// and erasure coding), in the order the report shows them.
var policies = [...]policy{
	{"mirror FTT=1", 2, 1},
	{"mirror FTT=2", 3, 1},
	{"mirror FTT=3", 4, 1},
	{"RAID-5 (3+1)", 4, 3},
	{"RAID-6 (4+2)", 3, 2},
}

// Scan reads target — a directory (every regular file below it, symlinks
// not followed, other file systems' mounts below it not entered), a regular
// file, or a block device opened read-only — and returns what dedup,
// compression and protection policies make of it.
//
// Bad input (a target missing or unreadable, or neither a directory, a
// regular file nor a block device; options out of range) returns an error
// wrapping ErrBadInput. When ctx ends during the scan, Scan returns the
// partial Result (Partial true) and ctx's error.
func Scan(ctx context.Context, target string, o Options) (*Result, error) {
	start := time.Now()
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	p, err := resolve(ctx, target)
	if err != nil && p == nil {
		return nil, err
	}
	res := &Result{Target: target, Kind: p.kind, BlockBytes: o.BlockSize, KeepBelow: o.KeepBelow,
		Live: p.liveReason != "", LiveReason: p.liveReason}
	var c counts
	var peak int64
	if o.ZstdSample == 0 {
		o.ZstdSample = autoSample(p.total, o.BlockSize)
	}
	if err == nil { // err is ctx's when the walk was cut short
		s := newScanner(o, p)
		err = s.run(ctx)
		c, peak = s.total, s.idx.peakBytes()
		res.LogicalBytes, res.Files = s.bytes.Load(), int(s.files.Load())
		p.unreadable = append(p.unreadable, s.unreadable...)
	}
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	res.Partial = err != nil
	res.UnreadableCount = len(p.unreadable)
	res.Unreadable = p.unreadable[:min(len(p.unreadable), MaxUnreadableListed)]
	res.fill(c, peak, o.ZstdSample)
	res.Seconds = time.Since(start).Seconds()
	if o.Progress != nil {
		o.Progress(Progress{Bytes: res.LogicalBytes, Total: p.total, Files: res.Files})
	}
	return res, err
}

// withDefaults fills in the zero values and checks the options.
// Validate checks the options' values (a zero one is its default): the
// rules the space command and a scenario's space step share.
func (o Options) Validate() error {
	_, err := o.withDefaults()
	return err
}

func (o Options) withDefaults() (Options, error) {
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	switch bs := o.BlockSize; {
	case bs < MinBlockSize || bs > MaxBlockSize:
		return o, badf("block size %d bytes is out of range; give a power of two from 512 bytes to 1 MiB, such as 4096", bs)
	case bs&(bs-1) != 0:
		return o, badf("block size %d bytes is not a power of two; give one from 512 bytes to 1 MiB, such as 4096", bs)
	}
	if o.KeepBelow == 0 {
		o.KeepBelow = DefaultKeepBelow
	}
	if !(o.KeepBelow > 0 && o.KeepBelow <= 1) { // NaN too
		return o, badf("keep-below %v is out of range; give a fraction of the block size above 0 and at most 1, such as 0.5", o.KeepBelow)
	}
	if o.Workers < 0 || o.Workers > MaxWorkers {
		return o, badf("workers %d is out of range; give 0 (one per CPU) to %d", o.Workers, MaxWorkers)
	}
	if o.Workers == 0 {
		o.Workers = runtime.NumCPU()
	}
	if z := o.ZstdSample; z < 0 || z > MaxZstdSample || z&(z-1) != 0 {
		return o, badf("zstd sample %d is out of range; give a power of two from 1 (every block) to %d, or 0 (automatic)", z, MaxZstdSample)
	}
	if o.progressEvery <= 0 {
		o.progressEvery = time.Second
	}
	return o, nil
}

// fill derives the result's counts, ratios and capacities from the
// blocks' counts c, the index's peak memory and zstd's sample step.
func (r *Result) fill(c counts, indexPeak int64, zstdEvery int) {
	r.Blocks, r.ZeroBlocks, r.UniqueBlocks, r.DuplicateBlocks = c.blocks, c.zero, c.unique, c.dup
	r.DedupRatio = ratio(c.blocks-c.zero, c.unique)
	r.Compression = map[string]Compression{
		"lz4":  estimate(c.lz4, 0, c.unique, r.BlockBytes, 1),
		"zstd": estimate(c.zstd, c.zstdSq, c.unique, r.BlockBytes, zstdEvery),
	}
	r.StoredBytes = c.lz4.stored
	switch {
	case r.LogicalBytes == 0:
		r.SavingsRatio = 1
	case r.StoredBytes == 0:
		r.SavingsRatio = 0 // all zero: unbounded
	default:
		r.SavingsRatio = float64(r.LogicalBytes) / float64(r.StoredBytes)
	}
	r.Capacity = make([]Capacity, 0, len(policies))
	for _, p := range policies {
		r.Capacity = append(r.Capacity, Capacity{Policy: p.name, Factor: float64(p.num) / float64(p.den),
			RawBytes: mulDivRound(r.LogicalBytes, p.num, p.den), RawBytesReduced: mulDivRound(r.StoredBytes, p.num, p.den)})
	}
	r.IndexBytes = indexPeak
}

// ratio is a/b, or 1 when b is 0 (nothing to compare: nothing saved).
func ratio(a, b int64) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// mulDivRound is x × num / den rounded to the nearest whole number (halves
// up), exact in 128 bits; it saturates at MaxInt64.
func mulDivRound(x int64, num, den uint64) int64 {
	if x <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(x), num)
	lo, carry := bits.Add64(lo, den/2, 0)
	hi += carry
	if hi >= den {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, den)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}
