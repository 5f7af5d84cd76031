package space

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/zeebo/xxh3"
)

// BenchmarkScan scans 256 MiB of mixedData (2/16 zero, 4/16 duplicates, the
// rest TPC-C rows, text and random) with every CPU; MB/s is the scan's
// throughput from the page cache.
func BenchmarkScan(b *testing.B) {
	dir := b.TempDir()
	file := writeFile(b, dir, "mixed.dat", mixedData(256<<20))
	b.SetBytes(256 << 20)
	for b.Loop() {
		res, err := Scan(context.Background(), file, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.DedupRatio, "dedup")
		b.ReportMetric(res.SavingsRatio, "savings")
	}
}

// BenchmarkHash is the hash choice (scan.go): XXH3-128 against SHA-256
// (SHA-NI where the CPU has it) over 4 KiB blocks of TPC-C rows.
func BenchmarkHash(b *testing.B) {
	data := tpccRows(4 << 20)
	b.Run("xxh3-128", func(b *testing.B) {
		b.SetBytes(4096)
		for i := 0; b.Loop(); i++ {
			_ = xxh3.Hash128(data[i*4096%len(data):][:4096])
		}
	})
	b.Run("sha256", func(b *testing.B) {
		b.SetBytes(4096)
		for i := 0; b.Loop(); i++ {
			_ = sha256.Sum256(data[i*4096%len(data):][:4096])
		}
	})
}

// BenchmarkCompressors is the compressors' choice (scan.go): pierrec/lz4's
// Compressor and CompressorCCompat, klauspost's zstd at its fastest and
// default levels, over 4 KiB blocks of TPC-C rows, text and random bytes;
// "ratio" is what each makes of the data.
func BenchmarkCompressors(b *testing.B) {
	const bs = 4096
	var text []byte
	for i := range 1024 {
		text = append(text, textBlock(uint64(i), bs)...)
	}
	sets := []struct {
		name string
		data []byte
	}{{"tpcc", tpccRows(4 << 20)}, {"text", text}, {"random", randomBlock(1, 4<<20)}}
	dst := make([]byte, lz4.CompressBlockBound(bs))
	each := func(b *testing.B, data []byte, compress func([]byte) int) {
		var in, out int
		b.SetBytes(bs)
		for i := 0; b.Loop(); i++ {
			out += compress(data[i*bs%len(data):][:bs])
			in += bs
		}
		b.ReportMetric(float64(in)/float64(out), "ratio")
	}
	for _, set := range sets {
		b.Run(set.name+"/lz4-fast", func(b *testing.B) {
			var c lz4.Compressor
			each(b, set.data, func(p []byte) int { n, _ := c.CompressBlock(p, dst); return n })
		})
		b.Run(set.name+"/lz4-ccompat", func(b *testing.B) {
			var c lz4.CompressorCCompat
			each(b, set.data, func(p []byte) int { n, _ := c.CompressBlock(p, dst); return n })
		})
		for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault} {
			b.Run(fmt.Sprintf("%s/zstd-%s", set.name, level), func(b *testing.B) {
				enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1),
					zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true))
				if err != nil {
					b.Fatal(err)
				}
				buf := make([]byte, 0, 2*bs)
				each(b, set.data, func(p []byte) int { buf = enc.EncodeAll(p, buf[:0]); return len(buf) })
			})
		}
	}
}
