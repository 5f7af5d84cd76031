package space

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/zeebo/xxh3"
	"golang.org/x/sys/unix"
)

// The scan streams: one reader goroutine reads the sources in order, in
// chunks of chunkBytes (a whole number of blocks, since every block size
// divides it), into a fixed set of 2 × Workers + 2 buffers; the workers cut
// each chunk into blocks, test, hash and compress them, and hand the buffer
// back. Memory is those buffers, each worker's compressors and buffers
// (about 630 KiB at 4 KiB blocks, mostly zstd's), and the index (index.go).
// No block allocates.
//
// The choices, measured on a 2-core AMD EPYC VM with BenchmarkHash and
// BenchmarkCompressors (bench_test.go), 4 KiB blocks, one core:
//   - the hash is XXH3-128 (github.com/zeebo/xxh3): 42–48 GB/s, against
//     1.4–1.7 GB/s for SHA-256 with SHA-NI (crypto/sha256). Every non-zero
//     block is hashed, so SHA-256 alone would cost twice LZ4. 128 bits make
//     a collision among even 2^40 blocks (4 PiB at 4 KiB) a 2^-49 chance,
//     and nobody feeds an estimate adversarial collisions, so a
//     cryptographic hash buys nothing here.
//   - LZ4 is pierrec/lz4's CompressorCCompat: a port of the reference
//     LZ4_compress_fast (acceleration 1), the code arrays and the lz4 tool
//     run, so its sizes are theirs (TestLZ4AgreesWithCLI finds them equal to
//     the byte). On TPC-C rows it is faster than the package's own fast
//     Compressor (790 against 640 MB/s) and compresses repeated text better.
//   - zstd is klauspost/compress at SpeedFastest (zstd's level 1 peer, not a
//     port: it hashes 6 bytes where the C level 1 matches from 5, so its
//     ratio is 0.1–0.5% below the C library's on PostgreSQL pages, measured
//     with bench/space-reference.py in docs/space.md), one
//     Encoder per worker, EncodeAll into a reused buffer, no checksum.
//     SpeedDefault gets 10–20% more out of database pages but at a sixth of
//     the speed on TPC-C rows (160 against 1000 MB/s), and every unique
//     block pays it; arrays that offer zstd inline use its fast levels for
//     the same reason. Even so zstd costs about 24 µs per 4 KiB PostgreSQL
//     page against LZ4's 6, its entropy stage (Huffman and FSE tables built
//     for every block) being a fixed cost per block: three quarters of a
//     scan that compresses every block with both. So on large data zstd
//     compresses a hash-chosen sample of the unique blocks (sample.go).

const chunkBytes = 1 << 20

// chunk is one buffer of the pipeline: n bytes of data, a whole number of
// blocks, the last one padded with zeros.
type chunk struct {
	buf []byte
	n   int
}

// counts are the blocks' tallies; each worker keeps its own, summed at the end.
type counts struct {
	blocks, zero, unique, dup int64
	lz4, zstd                 algoCounts
	// zstdSq is the sum of the squares of the zstd-sampled blocks' stored
	// sizes (float: with 1 MiB blocks the squares overflow int64 quickly),
	// for the interval of the estimate (sample.go).
	zstdSq float64
}

type algoCounts struct {
	blocks     int64 // unique blocks compressed: all of them, or zstd's sample
	stored     int64 // bytes: compressed size when kept compressed, else the block size
	compressed int64 // blocks kept compressed
}

func (c *counts) add(o counts) {
	c.blocks += o.blocks
	c.zero += o.zero
	c.unique += o.unique
	c.dup += o.dup
	c.lz4.add(o.lz4)
	c.zstd.add(o.zstd)
	c.zstdSq += o.zstdSq
}

func (a *algoCounts) add(o algoCounts) {
	a.blocks += o.blocks
	a.stored += o.stored
	a.compressed += o.compressed
}

// keep applies the rule: a block that compresses to at most keepMax bytes
// is stored compressed, any other whole.
// It returns the size stored.
func (a *algoCounts) keep(size, keepMax, block int) int {
	a.blocks++
	if size > keepMax {
		size = block
	} else {
		a.compressed++
	}
	a.stored += int64(size)
	return size
}

// scanner is one scan's state.
type scanner struct {
	o       Options
	plan    *plan
	keepMax int    // floor(KeepBelow × BlockSize): sizes up to it are kept compressed
	zmask   uint64 // zstd compresses the unique blocks whose hash has these bits clear (ZstdSample − 1)
	zeros   []byte // one block of zeros, to compare blocks with
	idx     *index

	free chan *chunk // buffers to fill; a nil buf is allocated on first use
	work chan *chunk // buffers to process

	bytes      atomic.Int64 // read so far
	files      atomic.Int64 // files opened so far
	unreadable []string     // files that could not be opened (permission), skipped; the reader's own
	total      counts       // summed when the workers end
}

func newScanner(o Options, p *plan) *scanner {
	n := 2*o.Workers + 2
	s := &scanner{o: o, plan: p, keepMax: int(math.Floor(o.KeepBelow * float64(o.BlockSize))), zmask: uint64(o.ZstdSample - 1),
		zeros: make([]byte, o.BlockSize), idx: newIndex(),
		free: make(chan *chunk, n), work: make(chan *chunk, n)}
	for range n {
		s.free <- &chunk{}
	}
	return s
}

// run reads every source and processes it; it returns ctx's error when ctx
// ended before the reading did, with the counts of what was read.
func (s *scanner) run(ctx context.Context) error {
	workers := make([]*worker, s.o.Workers)
	for i := range workers {
		w, err := newWorker(s)
		if err != nil {
			return err
		}
		workers[i] = w
	}
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			for c := range s.work {
				w.process(c)
				s.free <- c
			}
		})
	}
	stop := make(chan struct{})
	var pg sync.WaitGroup
	if s.o.Progress != nil {
		pg.Go(func() { s.report(stop) })
	}
	err := s.read(ctx)
	close(s.work)
	wg.Wait()
	close(stop)
	pg.Wait()
	for _, w := range workers {
		s.total.add(w.counts)
		w.zenc.Close()
	}
	return err
}

// report calls Progress every progressEvery until stop closes.
func (s *scanner) report(stop <-chan struct{}) {
	t := time.NewTicker(s.o.progressEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.o.Progress(Progress{Bytes: s.bytes.Load(), Total: s.plan.total, Files: int(s.files.Load())})
		}
	}
}

// read feeds the sources to the workers, chunk by chunk, until they are
// read or ctx ends.
func (s *scanner) read(ctx context.Context) error {
	for _, src := range s.plan.sources {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.readSource(ctx, src); err != nil {
			return err
		}
	}
	return nil
}

// readSource reads one file or device: up to its size at the walk, less if
// it shrank since. A file of a directory that cannot be opened for lack of
// permission is noted and skipped; one that vanished since the walk, or was
// replaced by something else than a file, is skipped.
func (s *scanner) readSource(ctx context.Context, src source) error {
	f, err := openRead(src.path)
	if err != nil {
		if s.plan.kind == "directory" {
			switch {
			case errors.Is(err, fs.ErrPermission):
				s.unreadable = append(s.unreadable, src.path)
				return nil
			case errors.Is(err, fs.ErrNotExist):
				return nil
			}
		}
		return openError(src.path, err)
	}
	defer f.Close()
	if s.plan.kind != "device" {
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			return nil // replaced since the walk by something that is not a file
		}
		s.files.Add(1)
	}
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL) // a hint: readahead
	bs := s.o.BlockSize
	for left := src.size; left > 0; {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := <-s.free
		if c.buf == nil {
			c.buf = make([]byte, chunkBytes)
		}
		n, err := io.ReadFull(f, c.buf[:min(int64(chunkBytes), left)])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			left = 0 // shrank since the walk
		} else if err != nil {
			s.free <- c
			return fmt.Errorf("read %s: %w", src.path, err)
		} else {
			left -= int64(n)
		}
		if n == 0 {
			s.free <- c
			break
		}
		c.n = (n + bs - 1) / bs * bs
		clear(c.buf[n:c.n])
		s.bytes.Add(int64(n))
		s.work <- c
	}
	return nil
}

// worker hashes and compresses blocks with compressors of its own.
type worker struct {
	s     *scanner
	lzc   lz4.CompressorCCompat
	lzBuf []byte
	zenc  *zstd.Encoder
	zBuf  []byte
	counts
}

func newWorker(s *scanner) (*worker, error) {
	bs := s.o.BlockSize
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true))
	if err != nil {
		return nil, fmt.Errorf("zstd encoder: %w", err)
	}
	// zBuf holds a block stored raw (incompressible) with its frame and block headers.
	return &worker{s: s, lzBuf: make([]byte, lz4.CompressBlockBound(bs)), zenc: enc, zBuf: make([]byte, 0, bs+bs/64+64)}, nil
}

// process tallies the blocks of c: zero, duplicate, or unique, and then
// compressed by LZ4 and, when its hash picks it for the sample, by zstd
// (first occurrences only: a duplicate is stored once, whatever its
// compressed size).
func (w *worker) process(c *chunk) {
	s := w.s
	bs := s.o.BlockSize
	for off := 0; off < c.n; off += bs {
		b := c.buf[off : off+bs]
		w.blocks++
		if bytes.Equal(b, s.zeros) {
			w.zero++
			continue
		}
		h := xxh3.Hash128(b)
		if !s.idx.add(hash128{lo: h.Lo, hi: h.Hi}) {
			w.dup++
			continue
		}
		w.unique++
		n, _ := w.lzc.CompressBlock(b, w.lzBuf) // never fails: lzBuf has CompressBlockBound bytes
		w.lz4.keep(n, s.keepMax, bs)
		if h.Lo&s.zmask != 0 {
			continue
		}
		w.zBuf = w.zenc.EncodeAll(b, w.zBuf[:0])
		z := float64(w.zstd.keep(len(w.zBuf), s.keepMax, bs))
		w.zstdSq += z * z
	}
}
