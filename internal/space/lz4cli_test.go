package space

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/testenv"
)

// requireLZ4 returns the lz4 tool's path; without it the test skips, or
// fails under CI=true.
func requireLZ4(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("lz4")
	if err != nil {
		testenv.SkipOrFail(t, "%v", err)
	}
	return p
}

// tpccDataDir builds one TPC-C warehouse in a managed PostgreSQL of the
// test's own, checkpoints and stops it, and returns its data directory:
// real database files, which stay as they are while the test reads them.
func tpccDataDir(t *testing.T, ctx context.Context) string {
	t.Helper()
	info := pgtest.StartManaged(t, ctx)
	db, err := all.Open(ctx, info.DSN)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 1, Workers: 2})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, info.DSN)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, "CHECKPOINT")
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.Stop(ctx, info.DataDir, "fast"); err != nil {
		t.Fatal(err)
	}
	return info.DataDir
}

// distinctBlocks is the test's own count of dir's blocks of bs bytes (the
// last of each regular file padded with zeros), by SHA-256, apart from the
// scan: the zero ones, and the distinct non-zero ones in the order first
// seen.
func distinctBlocks(t *testing.T, dir string, bs int) (zero int64, distinct [][]byte) {
	t.Helper()
	seen := map[[32]byte]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		for {
			b := make([]byte, bs)
			n, err := io.ReadFull(f, b)
			if n == 0 {
				return nil
			}
			if bytes.Equal(b, make([]byte, bs)) {
				zero++
			} else if h := sha256.Sum256(b); !seen[h] {
				seen[h] = true
				distinct = append(distinct, b)
			}
			if err != nil {
				return nil // the padded last block
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return zero, distinct
}

// lz4Frame reads an lz4 frame (the format of the lz4 tool): its blocks'
// bytes without the frame's header, block headers and end mark, and how
// many blocks it stored compressed (the others it stored raw, as they do
// not shrink).
func lz4Frame(t *testing.T, b []byte) (payload int64, blocks, compressed int) {
	t.Helper()
	if len(b) < 7 || binary.LittleEndian.Uint32(b) != 0x184D2204 {
		t.Fatalf("not an lz4 frame: % x", b[:min(len(b), 8)])
	}
	flg := b[4]
	i := 6 // magic, FLG, BD
	if flg&0x08 != 0 {
		i += 8 // content size
	}
	if flg&0x01 != 0 {
		i += 4 // dictionary ID
	}
	i++ // header checksum
	for {
		if i+4 > len(b) {
			t.Fatal("lz4 frame cut short")
		}
		v := binary.LittleEndian.Uint32(b[i:])
		i += 4
		if v == 0 {
			break
		}
		size := int(v & 0x7fffffff)
		payload += int64(size)
		blocks++
		if v&0x80000000 == 0 {
			compressed++
		}
		i += size
		if flg&0x10 != 0 {
			i += 4 // block checksum
		}
	}
	return payload, blocks, compressed
}

// TestLZ4AgreesWithCLI: the scan's LZ4 sizes agree with the lz4 tool's on a
// real PostgreSQL data directory holding one TPC-C warehouse.
//
// lz4's smallest block is 64 KiB (-B4), so the scan runs at 64 KiB too, with
// KeepBelow 1: a block is kept compressed when its compressed size is at
// most the block's, which is the lz4 frame's own rule (a block that does not
// shrink is stored raw; at equal sizes both take a block's bytes). lz4
// compresses every block, zero and duplicate ones too, while the scan
// compresses each distinct block once; so the test writes the data
// directory's distinct non-zero blocks (as the test itself finds them, by
// SHA-256) to one file, which both compress, block by block (-BI).
func TestLZ4AgreesWithCLI(t *testing.T) {
	lz4Tool := requireLZ4(t)
	pgtest.RequireBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dataDir := tpccDataDir(t, ctx)
	const bs = 64 << 10
	o := Options{BlockSize: bs, KeepBelow: 1}

	// The data directory: the scan's dedup agrees with the test's own.
	res := scan(t, dataDir, o)
	zero, distinct := distinctBlocks(t, dataDir, bs)
	t.Logf("data directory: %d files, %d bytes, %d blocks: %d zero, %d unique, %d duplicate; lz4 %+v, zstd %+v",
		res.Files, res.LogicalBytes, res.Blocks, res.ZeroBlocks, res.UniqueBlocks, res.DuplicateBlocks,
		res.Compression["lz4"], res.Compression["zstd"])
	if res.LogicalBytes < 50<<20 {
		t.Fatalf("the data directory holds %d bytes: no warehouse in it?", res.LogicalBytes)
	}
	if res.ZeroBlocks != zero || res.UniqueBlocks != int64(len(distinct)) {
		t.Errorf("scan: %d zero, %d unique blocks; the test counts %d and %d", res.ZeroBlocks, res.UniqueBlocks, zero, len(distinct))
	}

	// Its distinct blocks in one file: the same blocks, the same sizes.
	uniq := filepath.Join(t.TempDir(), "distinct.dat")
	writeFile(t, filepath.Dir(uniq), filepath.Base(uniq), distinct...)
	u := scan(t, uniq, o)
	if u.UniqueBlocks != int64(len(distinct)) || u.DuplicateBlocks != 0 || u.ZeroBlocks != 0 ||
		u.Compression["lz4"] != res.Compression["lz4"] || u.Compression["zstd"] != res.Compression["zstd"] {
		t.Errorf("the distinct blocks alone: %+v, the data directory's %+v", u.Compression, res.Compression)
	}
	lz := u.Compression["lz4"]
	if lz.CompressedBlocks == 0 || lz.Ratio < 1.5 {
		t.Errorf("lz4 %+v: a TPC-C data directory should compress", lz)
	}

	out, err := exec.CommandContext(ctx, lz4Tool, "-1", "-B4", "-BI", "--no-frame-crc", "-c", uniq).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("lz4: %v: %s", err, ee.Stderr)
	} else if err != nil {
		t.Fatal(err)
	}
	payload, blocks, compressed := lz4Frame(t, out)
	t.Logf("lz4 -1 -B4 -BI: %d bytes in all, %d of blocks in %d blocks (%d compressed); the scan: %d bytes (%d compressed)",
		len(out), payload, blocks, compressed, lz.StoredBytes, lz.CompressedBlocks)
	if blocks != len(distinct) {
		t.Fatalf("lz4 wrote %d blocks for %d", blocks, len(distinct))
	}
	if d := float64(lz.StoredBytes-payload) / float64(payload); d < -0.02 || d > 0.02 {
		t.Errorf("the scan stores %d bytes, lz4 %d: %.2f%% apart, more than 2%%", lz.StoredBytes, payload, 100*d)
	}
	// lz4 stores raw a block whose compressed size equals its size; the
	// scan keeps it "compressed" at the same size.
	if d := lz.CompressedBlocks - int64(compressed); d < 0 || d > lz.CompressedBlocks/50 {
		t.Errorf("the scan keeps %d blocks compressed, lz4 %d", lz.CompressedBlocks, compressed)
	}
}
