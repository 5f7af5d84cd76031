package space

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/tpcc"
)

// The tests' data is made by the tests, deterministic: the same seed gives
// the same bytes on every run.

// randomBlock is n incompressible bytes, distinct for every seed.
func randomBlock(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24), 's', 'p'})
	r.Read(b)
	return b
}

// textBlock is n bytes of one sentence repeated, distinct for every seed
// (its number leads): LZ4 and zstd shrink it to a few dozen bytes.
func textBlock(seed uint64, n int) []byte {
	b := fmt.Appendf(nil, "block %d: ", seed)
	for len(b) < n {
		b = append(b, "the quick brown fox jumps over the lazy dog; "...)
	}
	return b[:n]
}

// tpccRows is n bytes of TPC-C STOCK and CUSTOMER rows as the loader
// writes them (internal/tpcc): random letters and digits, which LZ4 barely
// shrinks and zstd's entropy coding does a little.
func tpccRows(n int) []byte {
	r := tpcc.NewRand(1)
	g := tpcc.NewGen(r, tpcc.NewLoadC(r), time.Unix(0, 0))
	var b []byte
	for w := 1; len(b) < n; w++ {
		b = g.Stock(b, w, 1, 2000)
		b = g.Customers(b, w, 1, 300)
	}
	return b[:n]
}

// mixedData is size bytes cut in 4 KiB blocks, in a repeating pattern of 16:
// 2 zero, 4 TPC-C rows, 3 repeated text, 3 random, and 4 copies of earlier
// blocks of the same pattern (one of rows, one of text, two random). Every
// non-zero block but the copies is distinct.
func mixedData(size int) []byte {
	const bs = 4096
	rows := tpccRows(size)
	out := make([]byte, 0, size)
	for i := 0; len(out) < size; i++ {
		var b []byte
		switch k := i % 16; {
		case k < 2:
			b = make([]byte, bs)
		case k < 6:
			b = rows[i*bs%len(rows):][:bs]
		case k < 9:
			b = textBlock(uint64(i), bs)
		case k < 12:
			b = randomBlock(uint64(i), bs)
		default:
			j := len(out) - []int{9, 6, 4, 4}[k-12]*bs // back to pattern blocks 3, 7, 10 and 11
			b = out[j : j+bs]
		}
		out = append(out, b...)
	}
	return out[:size]
}

// writeFile writes the concatenated parts to dir/name and returns its path.
func writeFile(t testing.TB, dir, name string, parts ...[]byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	var b []byte
	for _, x := range parts {
		b = append(b, x...)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
