package space

import (
	"bytes"
	"math"
	"testing"
)

// FuzzScan: for any file, at block sizes 512 to 4096, the scan's counts and
// stored bytes are those of a plain reference: blocks padded, zero ones
// counted, distinct ones found with a map and compressed one by one.
func FuzzScan(f *testing.F) {
	f.Add([]byte("hello"), uint8(0), uint8(0), 0.5)
	f.Add(make([]byte, 4096), uint8(3), uint8(2), 0.5)
	f.Add(randomBlock(1, 1024), uint8(1), uint8(3), 1.0)
	f.Add(append(textBlock(1, 2048), make([]byte, 100)...), uint8(0), uint8(1), 0.01)
	f.Add(bytes.Repeat([]byte{0, 1}, 3000), uint8(2), uint8(0), 0.7)
	f.Fuzz(func(t *testing.T, data []byte, sel, repeat uint8, keep float64) {
		if len(data) > 32<<10 {
			data = data[:32<<10]
		}
		if !(keep > 0 && keep <= 1) {
			keep = 0.5
		}
		bs := 512 << (sel % 4)
		content := bytes.Repeat(data, int(repeat%4)+1)
		file := writeFile(t, t.TempDir(), "f", content)
		r := scan(t, file, Options{BlockSize: bs, KeepBelow: keep, Workers: 2})

		var blocks, zero, dup int64
		var lz, zs algoCounts
		keepMax := int(math.Floor(keep * float64(bs)))
		seen := map[string]bool{}
		for off := 0; off < len(content); off += bs {
			b := make([]byte, bs)
			copy(b, content[off:])
			blocks++
			switch {
			case bytes.Equal(b, make([]byte, bs)):
				zero++
			case seen[string(b)]:
				dup++
			default:
				seen[string(b)] = true
				l, z := compressedSizes(t, b)
				lz.keep(l, keepMax, bs)
				zs.keep(z, keepMax, bs)
			}
		}
		if r.LogicalBytes != int64(len(content)) || r.Blocks != blocks || r.ZeroBlocks != zero ||
			r.UniqueBlocks != int64(len(seen)) || r.DuplicateBlocks != dup {
			t.Fatalf("block %d: logical %d blocks %d zero %d unique %d dup %d; want %d %d %d %d %d", bs, r.LogicalBytes,
				r.Blocks, r.ZeroBlocks, r.UniqueBlocks, r.DuplicateBlocks, len(content), blocks, zero, len(seen), dup)
		}
		for name, a := range map[string]algoCounts{"lz4": lz, "zstd": zs} {
			if c := r.Compression[name]; c.StoredBytes != a.stored || c.CompressedBlocks != a.compressed {
				t.Fatalf("block %d keep-below %v: %s %+v, want %+v", bs, keep, name, c, a)
			}
		}
	})
}
