package space

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/testenv"
)

// TestMain stops the managed PostgreSQL that TestLZ4AgreesWithCLI starts.
func TestMain(m *testing.M) { pgtest.Main(m) }

func scan(t testing.TB, target string, o Options) *Result {
	t.Helper()
	res, err := Scan(context.Background(), target, o)
	if err != nil {
		t.Fatalf("Scan(%s): %v", target, err)
	}
	checkInvariants(t, res)
	return res
}

// checkInvariants holds for every result, partial or not.
func checkInvariants(t testing.TB, r *Result) {
	t.Helper()
	if r.Blocks != r.ZeroBlocks+r.UniqueBlocks+r.DuplicateBlocks {
		t.Errorf("blocks %d != zero %d + unique %d + duplicate %d", r.Blocks, r.ZeroBlocks, r.UniqueBlocks, r.DuplicateBlocks)
	}
	bs := int64(r.BlockBytes)
	if r.LogicalBytes > r.Blocks*bs || r.LogicalBytes <= (r.Blocks-int64(max(r.Files, 1)))*bs && r.Blocks > 0 {
		t.Errorf("logical bytes %d do not fit %d blocks of %d in %d files", r.LogicalBytes, r.Blocks, bs, r.Files)
	}
	for _, name := range []string{"lz4", "zstd"} {
		c, ok := r.Compression[name]
		if !ok {
			t.Fatalf("no %s in %v", name, r.Compression)
		}
		if c.StoredBytes > r.UniqueBlocks*bs || c.CompressedBlocks > r.UniqueBlocks || c.StoredBytes < 0 {
			t.Errorf("%s: stored %d bytes, %d compressed, of %d unique blocks", name, c.StoredBytes, c.CompressedBlocks, r.UniqueBlocks)
		}
		// Blocks stored whole take a block each; the ones kept compressed at most KeepBelow of one.
		whole := (r.UniqueBlocks - c.CompressedBlocks) * bs
		if c.StoredBytes < whole || float64(c.StoredBytes-whole) > r.KeepBelow*float64(c.CompressedBlocks*bs) {
			t.Errorf("%s: stored %d bytes with %d of %d unique blocks compressed at keep-below %v", name,
				c.StoredBytes, c.CompressedBlocks, r.UniqueBlocks, r.KeepBelow)
		}
		if c.Sampled() && !(c.RatioCI95Low <= c.Ratio && c.Ratio <= c.RatioCI95High) || !c.Sampled() && c.SampleBlocks != r.UniqueBlocks {
			t.Errorf("%s: %+v of %d unique blocks", name, c, r.UniqueBlocks)
		}
	}
	if r.StoredBytes != r.Compression["lz4"].StoredBytes {
		t.Errorf("stored %d != lz4's %d", r.StoredBytes, r.Compression["lz4"].StoredBytes)
	}
	if len(r.Capacity) != 5 {
		t.Errorf("capacity: %d policies", len(r.Capacity))
	}
	if _, err := json.Marshal(r); err != nil { // NaN or Inf would fail here
		t.Errorf("JSON: %v", err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestZeroBlocks(t *testing.T) {
	f := writeFile(t, t.TempDir(), "zero", make([]byte, 10*4096))
	r := scan(t, f, Options{})
	if r.Kind != "file" || r.Files != 1 || r.LogicalBytes != 40960 || r.BlockBytes != 4096 || r.KeepBelow != 0.5 {
		t.Errorf("result %+v", r)
	}
	if r.Blocks != 10 || r.ZeroBlocks != 10 || r.UniqueBlocks != 0 || r.DuplicateBlocks != 0 {
		t.Errorf("blocks %d zero %d unique %d dup %d, want 10 10 0 0", r.Blocks, r.ZeroBlocks, r.UniqueBlocks, r.DuplicateBlocks)
	}
	// Nothing to store: the ratios without a denominator are 1, the savings 0 ("unbounded").
	if r.DedupRatio != 1 || r.StoredBytes != 0 || r.SavingsRatio != 0 || r.Compression["lz4"] != (Compression{Ratio: 1, SampleEvery: 1}) ||
		r.Compression["zstd"] != (Compression{Ratio: 1, SampleEvery: 1}) {
		t.Errorf("dedup %v stored %d savings %v compression %+v", r.DedupRatio, r.StoredBytes, r.SavingsRatio, r.Compression)
	}
	if c := r.Capacity[0]; c.RawBytes != 81920 || c.RawBytesReduced != 0 {
		t.Errorf("capacity %+v", c)
	}
}

func TestEmpty(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "empty")
	r := scan(t, dir, Options{})
	if r.Kind != "directory" || r.Files != 1 || r.LogicalBytes != 0 || r.Blocks != 0 || r.SavingsRatio != 1 || r.DedupRatio != 1 {
		t.Errorf("result %+v", r)
	}
	r = scan(t, t.TempDir(), Options{})
	if r.Files != 0 || r.Blocks != 0 || r.SavingsRatio != 1 {
		t.Errorf("an empty directory: %+v", r)
	}
}

// TestDuplicates: M random blocks, each written twice (apart, in one file),
// dedup to exactly 2; random blocks do not compress, so each is stored whole.
func TestDuplicates(t *testing.T) {
	const m = 50
	var parts [][]byte
	for i := range 2 * m {
		parts = append(parts, randomBlock(uint64(i%m), 4096))
	}
	r := scan(t, writeFile(t, t.TempDir(), "dup", parts...), Options{})
	if r.Blocks != 2*m || r.ZeroBlocks != 0 || r.UniqueBlocks != m || r.DuplicateBlocks != m || r.DedupRatio != 2 {
		t.Errorf("blocks %d zero %d unique %d dup %d dedup %v", r.Blocks, r.ZeroBlocks, r.UniqueBlocks, r.DuplicateBlocks, r.DedupRatio)
	}
	for name, c := range r.Compression {
		if c != (Compression{Ratio: 1, StoredBytes: m * 4096, SampleEvery: 1, SampleBlocks: m}) {
			t.Errorf("%s: %+v, want every random block stored whole", name, c)
		}
	}
	if r.StoredBytes != m*4096 || r.SavingsRatio != 2 {
		t.Errorf("stored %d savings %v, want %d and 2", r.StoredBytes, r.SavingsRatio, m*4096)
	}
}

// compressedSizes is what the scan's compressors make of b, computed here
// apart from the scan.
func compressedSizes(t testing.TB, b []byte) (lz4Size, zstdSize int) {
	t.Helper()
	var c lz4.CompressorCCompat
	dst := make([]byte, lz4.CompressBlockBound(len(b)))
	n, err := c.CompressBlock(b, dst)
	if err != nil || n == 0 {
		t.Fatalf("lz4: %d, %v", n, err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true))
	if err != nil {
		t.Fatal(err)
	}
	return n, len(enc.EncodeAll(b, nil))
}

// TestCompressible: distinct blocks of repeated text are all kept
// compressed, and stored at exactly their compressed sizes.
func TestCompressible(t *testing.T) {
	const k = 40
	var parts [][]byte
	var wantLZ4, wantZstd int64
	for i := range k {
		b := textBlock(uint64(i), 4096)
		parts = append(parts, b)
		l, z := compressedSizes(t, b)
		if l > 2048 || z > 2048 {
			t.Fatalf("text block %d compresses to %d (lz4), %d (zstd): not compressible enough for the test", i, l, z)
		}
		wantLZ4 += int64(l)
		wantZstd += int64(z)
	}
	r := scan(t, writeFile(t, t.TempDir(), "text", parts...), Options{})
	if r.UniqueBlocks != k || r.DuplicateBlocks != 0 || r.ZeroBlocks != 0 || r.DedupRatio != 1 {
		t.Errorf("unique %d dup %d zero %d", r.UniqueBlocks, r.DuplicateBlocks, r.ZeroBlocks)
	}
	want := map[string]Compression{
		"lz4":  {Ratio: float64(k*4096) / float64(wantLZ4), StoredBytes: wantLZ4, CompressedBlocks: k},
		"zstd": {Ratio: float64(k*4096) / float64(wantZstd), StoredBytes: wantZstd, CompressedBlocks: k},
	}
	for name, w := range want {
		if g := r.Compression[name]; g.StoredBytes != w.StoredBytes || g.CompressedBlocks != k || !near(g.Ratio, w.Ratio) {
			t.Errorf("%s: %+v, want %+v", name, g, w)
		}
	}
	if r.Compression["lz4"].Ratio < 20 {
		t.Errorf("lz4 ratio %v: repeated text should shrink far more", r.Compression["lz4"].Ratio)
	}
	if r.StoredBytes != wantLZ4 || !near(r.SavingsRatio, float64(k*4096)/float64(wantLZ4)) {
		t.Errorf("stored %d savings %v", r.StoredBytes, r.SavingsRatio)
	}
}

// TestIncompressible: random blocks are never kept compressed, at any
// keep-below: they do not shrink at all.
func TestIncompressible(t *testing.T) {
	var parts [][]byte
	for i := range 30 {
		parts = append(parts, randomBlock(uint64(1000+i), 4096))
	}
	f := writeFile(t, t.TempDir(), "random", parts...)
	for _, keep := range []float64{0.5, 1} {
		r := scan(t, f, Options{KeepBelow: keep})
		for name, c := range r.Compression {
			if c != (Compression{Ratio: 1, StoredBytes: 30 * 4096, SampleEvery: 1, SampleBlocks: 30}) {
				t.Errorf("keep-below %v: %s: %+v, want all 30 blocks stored whole", keep, name, c)
			}
		}
		if r.SavingsRatio != 1 {
			t.Errorf("savings %v, want 1", r.SavingsRatio)
		}
	}
}

// TestKeepBelowRule: a block is kept compressed exactly when its
// compressed size is at most KeepBelow × BlockSize.
func TestKeepBelowRule(t *testing.T) {
	// Half text, half random: LZ4 makes about 2 KiB + a little of it.
	b := append(textBlock(7, 2048), randomBlock(7, 2048)...)
	l, z := compressedSizes(t, b)
	f := writeFile(t, t.TempDir(), "half", b)
	for _, tc := range []struct {
		keep       float64
		lz4, zstd  bool // kept compressed
		lz4Stored  int64
		zstdStored int64
	}{
		{float64(l) / 4096, true, z <= l, int64(l), map[bool]int64{true: int64(z), false: 4096}[z <= l]},
		{float64(l-1) / 4096, false, z <= l-1, 4096, map[bool]int64{true: int64(z), false: 4096}[z <= l-1]},
		{1, true, true, int64(l), int64(z)},
		{0.25, false, false, 4096, 4096},
	} {
		r := scan(t, f, Options{KeepBelow: tc.keep})
		for name, w := range map[string]struct {
			kept   bool
			stored int64
		}{"lz4": {tc.lz4, tc.lz4Stored}, "zstd": {tc.zstd, tc.zstdStored}} {
			c := r.Compression[name]
			if (c.CompressedBlocks == 1) != w.kept || c.StoredBytes != w.stored {
				t.Errorf("keep-below %v (lz4 %d, zstd %d bytes): %s %+v, want kept %v, stored %d", tc.keep, l, z, name, c, w.kept, w.stored)
			}
		}
	}
}

// TestMix: a directory of every kind of block, in several files, with a
// copy of a file and files ending in partial blocks; the totals are exact.
func TestMix(t *testing.T) {
	dir := t.TempDir()
	zero := make([]byte, 4096)
	var rnd, txt [][]byte
	for i := range 8 {
		rnd = append(rnd, randomBlock(uint64(2000+i), 4096))
		txt = append(txt, textBlock(uint64(2000+i), 4096))
	}
	writeFile(t, dir, "a/zeros", zero, zero, zero)                              // 3 zero
	writeFile(t, dir, "a/random", rnd[0], rnd[1], rnd[2], rnd[3], zero, rnd[0]) // 4 unique, 1 zero, 1 duplicate
	writeFile(t, dir, "b/c/copy", rnd[0], rnd[1], rnd[2], rnd[3], zero, rnd[0]) // 1 zero, 5 duplicates
	writeFile(t, dir, "b/text", txt[0], txt[1], txt[2], txt[3], txt[0])         // 4 unique, 1 duplicate
	writeFile(t, dir, "tail-short", rnd[4][:100])                               // 1 unique, padded
	writeFile(t, dir, "tail-padded", rnd[4][:100], make([]byte, 50))            // the same block once padded: a duplicate
	writeFile(t, dir, "tail-long", txt[4], txt[5][:1000])                       // 2 unique
	writeFile(t, dir, "empty")
	r := scan(t, dir, Options{})
	logical := int64(3+6+6+5)*4096 + 100 + 150 + 4096 + 1000
	if r.Files != 8 || r.LogicalBytes != logical {
		t.Errorf("files %d logical %d, want 8 and %d", r.Files, r.LogicalBytes, logical)
	}
	if r.Blocks != 24 || r.ZeroBlocks != 5 || r.UniqueBlocks != 11 || r.DuplicateBlocks != 8 {
		t.Errorf("blocks %d zero %d unique %d dup %d, want 24 5 11 8", r.Blocks, r.ZeroBlocks, r.UniqueBlocks, r.DuplicateBlocks)
	}
	if !near(r.DedupRatio, 19.0/11) {
		t.Errorf("dedup %v, want 19/11", r.DedupRatio)
	}
	// Stored by lz4: 4 random blocks whole; the 6 text ones (the last padded)
	// and the short random tail, mostly padding, at their compressed sizes.
	want := int64(4 * 4096)
	pad := func(b []byte) []byte { return append(b[:len(b):len(b)], make([]byte, 4096-len(b))...) }
	for _, b := range [][]byte{txt[0], txt[1], txt[2], txt[3], txt[4], pad(txt[5][:1000]), pad(rnd[4][:100])} {
		l, _ := compressedSizes(t, b)
		want += int64(l)
	}
	if c := r.Compression["lz4"]; c.StoredBytes != want || c.CompressedBlocks != 7 || r.StoredBytes != want {
		t.Errorf("lz4 %+v, stored %d; want %d bytes, 7 compressed", c, r.StoredBytes, want)
	}
	if !near(r.SavingsRatio, float64(logical)/float64(want)) {
		t.Errorf("savings %v, want %v", r.SavingsRatio, float64(logical)/float64(want))
	}
	for i, w := range []Capacity{
		{"mirror FTT=1", 2, 2 * logical, 2 * want},
		{"mirror FTT=2", 3, 3 * logical, 3 * want},
		{"mirror FTT=3", 4, 4 * logical, 4 * want},
		{"RAID-5 (3+1)", 4.0 / 3, int64(math.Round(float64(logical) * 4 / 3)), int64(math.Round(float64(want) * 4 / 3))},
		{"RAID-6 (4+2)", 1.5, int64(math.Round(float64(logical) * 1.5)), int64(math.Round(float64(want) * 1.5))},
	} {
		if r.Capacity[i] != w {
			t.Errorf("capacity %d: %+v, want %+v", i, r.Capacity[i], w)
		}
	}
}

// TestBlockSizes: the same data at 512, 4096 and 8192 bytes. The data is
// A B A B A B A B, A and B random 4 KiB, then 2 KiB of zeros and 2 KiB of
// random C.
func TestBlockSizes(t *testing.T) {
	a, b, c := randomBlock(3001, 4096), randomBlock(3002, 4096), randomBlock(3003, 2048)
	f := writeFile(t, t.TempDir(), "abab", a, b, a, b, a, b, a, b, make([]byte, 2048), c)
	for _, tc := range []struct {
		bs                     int
		blocks, zero, uniq, du int64
	}{
		// 8 of A, 8 of B (each distinct), 4 zero, 4 of C: 72 blocks.
		{512, 72, 4, 20, 48},
		// A, B, then 6 copies; the last block is zeros and C.
		{4096, 9, 0, 3, 6},
		// AB four times; then zeros and C, half a block, padded.
		{8192, 5, 0, 2, 3},
	} {
		r := scan(t, f, Options{BlockSize: tc.bs})
		if r.BlockBytes != tc.bs || r.Blocks != tc.blocks || r.ZeroBlocks != tc.zero || r.UniqueBlocks != tc.uniq || r.DuplicateBlocks != tc.du {
			t.Errorf("block %d: blocks %d zero %d unique %d dup %d; want %d %d %d %d", tc.bs,
				r.Blocks, r.ZeroBlocks, r.UniqueBlocks, r.DuplicateBlocks, tc.blocks, tc.zero, tc.uniq, tc.du)
		}
		if r.LogicalBytes != 9*4096 {
			t.Errorf("block %d: logical %d", tc.bs, r.LogicalBytes)
		}
	}
}

// TestWorkersAgree: the counts do not depend on how many workers share the
// index, nor on which of them sees a block first.
func TestWorkersAgree(t *testing.T) {
	f := writeFile(t, t.TempDir(), "mixed", mixedData(12<<20))
	one := scan(t, f, Options{Workers: 1})
	for _, w := range []int{2, 8} {
		r := scan(t, f, Options{Workers: w})
		one.Seconds, r.Seconds = 0, 0
		one.IndexBytes, r.IndexBytes = 0, 0 // the peak's moment depends on which shard grows last
		a, _ := json.Marshal(one)
		b, _ := json.Marshal(r)
		if string(a) != string(b) {
			t.Errorf("1 worker: %s\n%d workers: %s", a, w, b)
		}
	}
	// mixedData: per 16 blocks, 2 zero and 4 copies.
	if one.ZeroBlocks != one.Blocks/8 || one.DuplicateBlocks != one.Blocks/4 {
		t.Errorf("mixed data: %d blocks, %d zero, %d duplicates", one.Blocks, one.ZeroBlocks, one.DuplicateBlocks)
	}
}

func TestMulDivRound(t *testing.T) {
	for _, tc := range []struct {
		x        int64
		num, den uint64
		want     int64
	}{
		{10, 4, 3, 13}, {11, 4, 3, 15}, {1, 3, 2, 2}, {3, 3, 2, 5}, {0, 4, 3, 0}, {7, 2, 1, 14},
		{math.MaxInt64 / 2, 2, 1, math.MaxInt64 - 1}, {math.MaxInt64, 4, 3, math.MaxInt64}, // saturates
		{3 << 60, 4, 3, 4 << 60}, // exact where float64 is not
	} {
		if got := mulDivRound(tc.x, tc.num, tc.den); got != tc.want {
			t.Errorf("mulDivRound(%d, %d/%d) = %d, want %d", tc.x, tc.num, tc.den, got, tc.want)
		}
	}
}

// wantBad fails unless err wraps ErrBadInput in one line holding every one of want.
func wantBad(t *testing.T, err error, want ...string) {
	t.Helper()
	if !errors.Is(err, ErrBadInput) {
		t.Fatalf("got error %v, want bad input", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not mention %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("%q is not one line", err)
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := writeFile(t, dir, "f", randomBlock(1, 5000))
	_, err := Scan(ctx, filepath.Join(dir, "missing"), Options{})
	wantBad(t, err, "missing does not exist", "give a directory, a file or a block device")
	_, err = Scan(ctx, filepath.Join(file, "below"), Options{})
	wantBad(t, err, "does not exist")
	_, err = Scan(ctx, "", Options{})
	wantBad(t, err, "no target")
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Scan(ctx, fifo, Options{})
	wantBad(t, err, "fifo is a named pipe", "give a directory, a regular file or a block device")
	_, err = Scan(ctx, "/dev/null", Options{})
	wantBad(t, err, "character device")
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	_, err = Scan(ctx, loop, Options{})
	wantBad(t, err, "symlink loop")

	for _, tc := range []struct {
		o    Options
		want []string
	}{
		{Options{BlockSize: 3000}, []string{"3000", "not a power of two", "512 bytes to 1 MiB"}},
		{Options{BlockSize: 2 << 20}, []string{"2097152", "out of range", "512 bytes to 1 MiB"}},
		{Options{BlockSize: 256}, []string{"256", "out of range"}},
		{Options{BlockSize: -4096}, []string{"-4096", "out of range"}},
		{Options{KeepBelow: 1.5}, []string{"keep-below 1.5", "at most 1"}},
		{Options{KeepBelow: -0.5}, []string{"keep-below -0.5"}},
		{Options{KeepBelow: math.NaN()}, []string{"keep-below NaN"}},
		{Options{Workers: -1}, []string{"workers -1", "0 (one per CPU) to 1024"}},
		{Options{Workers: 5000}, []string{"workers 5000"}},
	} {
		_, err := Scan(ctx, file, tc.o)
		wantBad(t, err, tc.want...)
	}
	// The defaults and the limits themselves are fine: 0 means 4096 and 0.5.
	for _, o := range []Options{{}, {BlockSize: 512}, {BlockSize: 1 << 20}, {KeepBelow: 1}, {KeepBelow: 1e-9}} {
		r := scan(t, file, o)
		if want := max(o.BlockSize, 0); (want == 0 && r.BlockBytes != 4096) || (want != 0 && r.BlockBytes != want) {
			t.Errorf("%+v: block %d", o, r.BlockBytes)
		}
		if o.KeepBelow == 0 && r.KeepBelow != 0.5 {
			t.Errorf("%+v: keep-below %v", o, r.KeepBelow)
		}
	}
}

// TestPermission: a file inside a directory that cannot be read is skipped
// and listed; a target that cannot be read is bad input. Root reads
// anything, so as root the test drops its effective user to nobody for the
// scans (Go applies setresuid to every thread of the process) and takes
// root back after; no other test runs meanwhile (none is parallel). The
// two are closed to their owner too (mode 0), so that an ordinary user's
// test cannot read them either.
func TestPermission(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} { // t.TempDir's are 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, dir, "ok", randomBlock(1, 4096))
	secret := writeFile(t, dir, "secret", randomBlock(2, 4096))
	writeFile(t, dir, "closed/inside", randomBlock(3, 4096))
	closed := filepath.Join(dir, "closed")
	for _, p := range []string{secret, closed} {
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = os.Chmod(closed, 0o700) }) // before t.TempDir's removal, which must list it
	var res *Result
	var errDir, errFile, errClosed error
	asNobody(t, func() {
		res, errDir = Scan(context.Background(), dir, Options{})
		_, errFile = Scan(context.Background(), secret, Options{})
		_, errClosed = Scan(context.Background(), filepath.Join(dir, "closed"), Options{})
	})
	if errDir != nil {
		t.Fatal(errDir)
	}
	checkInvariants(t, res)
	want := []string{filepath.Join(dir, "closed"), secret}
	if strings.Join(res.Unreadable, "|") != strings.Join(want, "|") || res.UnreadableCount != 2 {
		t.Errorf("unreadable %q (%d), want %q", res.Unreadable, res.UnreadableCount, want)
	}
	if res.Files != 1 || res.Blocks != 1 || res.UniqueBlocks != 1 {
		t.Errorf("files %d blocks %d unique %d: only ok is readable", res.Files, res.Blocks, res.UniqueBlocks)
	}
	wantBad(t, errFile, "secret cannot be read: permission denied")
	wantBad(t, errClosed, "closed cannot be read: permission denied")
}

// asNobody runs f with the effective user nobody (65534) when root, as
// itself otherwise.
func asNobody(t *testing.T, f func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		f()
		return
	}
	if err := syscall.Setresuid(-1, 65534, -1); err != nil {
		t.Fatalf("seteuid nobody: %v", err)
	}
	defer func() {
		if err := syscall.Setresuid(-1, 0, -1); err != nil {
			panic("cannot take root back: " + err.Error())
		}
	}()
	f()
}

// TestWalk: symlinks are not followed, pipes and sockets are skipped, and a
// symlink given as the target is followed; as root, a file system mounted
// below is not entered.
func TestWalk(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, outside, "big", randomBlock(9, 8192))
	dir := t.TempDir()
	f := writeFile(t, dir, "sub/real", randomBlock(10, 4096))
	for link, to := range map[string]string{"link-file": f, "link-dir": outside, "link-missing": filepath.Join(dir, "nowhere")} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := scan(t, dir, Options{})
	if r.Files != 1 || r.LogicalBytes != 4096 || r.UniqueBlocks != 1 {
		t.Errorf("files %d logical %d unique %d, want only sub/real", r.Files, r.LogicalBytes, r.UniqueBlocks)
	}
	link := filepath.Join(t.TempDir(), "to-outside")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if r := scan(t, link, Options{}); r.Kind != "directory" || r.Files != 1 || r.LogicalBytes != 8192 {
		t.Errorf("a symlink to a directory as the target: %+v", r)
	}

	if os.Geteuid() != 0 {
		t.Log("not root: the mount below the target is not tested")
		return
	}
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tierbench-space-test", mnt, "tmpfs", 0, "size=1m"); err != nil {
		testenv.SkipOrFail(t, "mount tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, 0) })
	writeFile(t, mnt, "on-tmpfs", randomBlock(11, 4096))
	if r := scan(t, dir, Options{}); r.Files != 1 || r.LogicalBytes != 4096 {
		t.Errorf("files %d logical %d: the tmpfs mounted below was entered", r.Files, r.LogicalBytes)
	}
	if r := scan(t, mnt, Options{}); r.Files != 1 {
		t.Errorf("the mount itself as the target: %d files", r.Files)
	}
}

// TestProgress: calls never overlap, Bytes only grows up to Total, and
// the last call has the result's counts.
func TestProgress(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		writeFile(t, dir, n, mixedData(4<<20))
	}
	var calls []Progress
	var busy atomic.Bool
	r := scan(t, dir, Options{progressEvery: time.Millisecond, Workers: 1, Progress: func(p Progress) {
		if !busy.CompareAndSwap(false, true) {
			t.Error("Progress called twice at once")
		}
		time.Sleep(100 * time.Microsecond)
		calls = append(calls, p)
		busy.Store(false)
	}})
	if len(calls) == 0 {
		t.Fatal("no progress")
	}
	for i, p := range calls {
		if p.Total != 12<<20 || p.Bytes > p.Total || i > 0 && (p.Bytes < calls[i-1].Bytes || p.Files < calls[i-1].Files) {
			t.Errorf("call %d: %+v after %+v", i, p, calls[max(i-1, 0)])
		}
	}
	if last := calls[len(calls)-1]; last != (Progress{Bytes: r.LogicalBytes, Total: 12 << 20, Files: 3}) {
		t.Errorf("last call %+v", last)
	}
}

// TestCancel: a scan whose context ends after the first progress call
// returns what it read, marked partial, with the context's error.
func TestCancel(t *testing.T) {
	f := writeFile(t, t.TempDir(), "big", mixedData(64<<20))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first atomic.Bool
	r, err := Scan(ctx, f, Options{progressEvery: 5 * time.Millisecond, Progress: func(p Progress) {
		if p.Bytes > 0 && first.CompareAndSwap(false, true) {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if r == nil || !r.Partial {
		t.Fatalf("result %+v, want a partial one", r)
	}
	checkInvariants(t, r)
	if r.LogicalBytes <= 0 || r.LogicalBytes >= 64<<20 || r.Blocks <= 0 || r.UniqueBlocks <= 0 || r.Files != 1 {
		t.Errorf("partial result: logical %d blocks %d unique %d files %d", r.LogicalBytes, r.Blocks, r.UniqueBlocks, r.Files)
	}
	if r.Blocks*4096 != r.LogicalBytes {
		t.Errorf("logical %d bytes but %d blocks: the workers did not finish what was read", r.LogicalBytes, r.Blocks)
	}

	// Ended before the scan began: nothing read, still a result.
	r, err = Scan(ctx, filepath.Dir(f), Options{})
	if !errors.Is(err, context.Canceled) || r == nil || !r.Partial || r.Blocks != 0 {
		t.Errorf("a cancelled context: %+v, %v", r, err)
	}
}

func TestJSON(t *testing.T) {
	r := scan(t, writeFile(t, t.TempDir(), "x", textBlock(1, 4096)), Options{})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"target", "target_kind", "block_bytes", "logical_bytes", "files", "blocks", "zero_blocks",
		"unique_blocks", "duplicate_blocks", "dedup_ratio", "compression", "savings_ratio", "stored_bytes",
		"compress_keep_below", "capacity", "index_bytes"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, b)
		}
	}
	for _, k := range []string{"live", "partial", "unreadable"} {
		if _, ok := m[k]; ok {
			t.Errorf("%q present when false or empty: %s", k, b)
		}
	}
	c := m["capacity"].([]any)[3].(map[string]any)
	if c["policy"] != "RAID-5 (3+1)" || c["raw_bytes"] != float64(5461) { // 4096 × 4/3 = 5461.33
		t.Errorf("capacity[3] = %v", c)
	}
	if z := m["compression"].(map[string]any)["zstd"].(map[string]any); z["compressed_blocks"] != float64(1) {
		t.Errorf("compression.zstd = %v", z)
	}
}

// TestCheck: Check refuses what Scan refuses, before reading, and fills in
// the defaults a run records.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "f", randomBlock(1, 100))
	o := Options{Workers: 3}
	if err := Check(dir, &o); err != nil || o.BlockSize != 4096 || o.KeepBelow != 0.5 || o.Workers != 3 {
		t.Errorf("Check = %v, options %+v", err, o)
	}
	o = Options{BlockSize: 8192, KeepBelow: 0.75}
	if err := Check(file, &o); err != nil || o.BlockSize != 8192 || o.KeepBelow != 0.75 {
		t.Errorf("Check = %v, options %+v", err, o)
	}
	o = Options{BlockSize: 3000}
	wantBad(t, Check(file, &o), "3000 bytes is not a power of two")
	if o.BlockSize != 3000 || o.KeepBelow != 0 {
		t.Errorf("a refused Check changed the options: %+v", o)
	}
	wantBad(t, Check(filepath.Join(dir, "missing"), &Options{}), "missing does not exist")
	wantBad(t, Check("/dev/null", &Options{}), "character device")
}

// TestDocument: a run's document is the Result's keys with the run's beside them.
func TestDocument(t *testing.T) {
	r := scan(t, writeFile(t, t.TempDir(), "x", textBlock(1, 4096)), Options{})
	b, err := json.Marshal(Document{Result: *r, LiveNote: LiveNote,
		Actual: &Actual{FS: "btrfs", Compress: "zstd", Tool: "compsize", Uncompressed: 4096, Disk: 512, Ratio: 8}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["unique_blocks"] != float64(1) || m["live_note"] != LiveNote || m["actual"].(map[string]any)["disk_bytes"] != float64(512) {
		t.Errorf("document %s", b)
	}
	var back Document
	if err := json.Unmarshal(b, &back); err != nil || back.UniqueBlocks != 1 || back.Actual.Ratio != 8 || back.Compression["lz4"] != r.Compression["lz4"] {
		t.Errorf("decoded %+v, %v", back, err)
	}
}
