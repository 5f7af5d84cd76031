package tpch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"runtime"
	"strconv"
	"testing"
)

// dbgenTables are the row count and the SHA-256 of each TABLE.tbl file that
// the reference generator, dbgen 2.14.0, writes at SF 0.01 and SF 0.1: fixed
// values derived once from dbgen itself, so that this test needs no
// reference generator installed (TestTablesMatchReference compares with
// tpchgen-cli, when there is one).
//
// They were derived so (scripts/tpch-checksums.sh does all of it):
//
//	git clone --bare https://github.com/electrum/tpch-dbgen.git repo
//	mkdir src && git --git-dir=repo archive 5eab24a | tar -x -C src
//	    # commit 5eab24a, "Import 2.14.0", is the TPC's dbgen 2.14.0;
//	    # src/release.h: VERSION 2, RELEASE 14, PATCH 0
//	make -C src -f makefile.suite CC=gcc DATABASE=ORACLE MACHINE=LINUX WORKLOAD=TPCH dbgen
//	mkdir sf0.01 && cd sf0.01 && DSS_CONFIG=../src ../src/dbgen -s 0.01 -f
//	wc -l *.tbl && sha256sum *.tbl
//	mkdir ../sf0.1 && cd ../sf0.1 && DSS_CONFIG=../src ../src/dbgen -s 0.1 -f
//	wc -l *.tbl && sha256sum *.tbl
//
// (gcc 12.2 on Debian 12, x86-64; the later commits of that repository, a
// port to Mac OS X, give the same files.) A table's rows are its file's
// lines, and its checksum is the file's: the rows in dbgen's format, each
// field followed by '|', each row by '\n'. NATION and REGION are the same at
// every scale.
var dbgenTables = map[float64]map[string]tableSum{
	0.01: {
		Part:     {2000, "896e14465325110dd9cf05a16972028a58be0010959262176ecd97f4db1702f8"},
		PartSupp: {8000, "5947b5ebab042b49148f82c1324ad122f7e0d98cfadcbef12da0a5e239e09e79"},
		Supplier: {100, "9dc1002ee774699a092ed83ba278caf466d62a15d7e35bb6ed9293475528734b"},
		Customer: {1500, "6b690cce995cb715861ebf2c77aa02c61406e3a0ddcd3326d1ecfa969b9163f8"},
		Orders:   {15000, "07cc8b362fda6d0b503c4d6c5d228817548e0688a3b21b590c52bb47b7b79c0f"},
		LineItem: {60175, "ee411d23efcd2943ef70489799e37dfc24543dbd03b461a88e16fd82a95765e4"},
		Nation:   {25, "66f96949939fa8fdf1c4ffed1e5f6c2842fe11a14b51fdc6ed1e17460031e8c5"},
		Region:   {5, "6022658d673924389b54dcb70fa8c3d6da1b0d7afa3c1c017bab62a019df404f"},
	},
	0.1: {
		Part:     {20000, "f262984f0a5063d20b2aff651c5ac8ca1eea182b3ee75b6a5dab3854eb471997"},
		PartSupp: {80000, "9a50586162af988723fa2c64969454ca34840e9a602bb9fbc974b9c3808f6620"},
		Supplier: {1000, "75d5d11bd57607c5386295e74bb8edec4af5dd08d43c5831b67c224473be9a08"},
		Customer: {15000, "952d7f4ee8787657c94e488aae78524439f904fde9113382943ced58ba7895fa"},
		Orders:   {150000, "5e9fabe33d7f15596225a00da871f8c18b3da76f515c91119840c7115c50d101"},
		LineItem: {600572, "6fe51474be8c04e04737c83f1cea2feaf3179e4f3bd6ba08c5065928d96ee60b"},
		Nation:   {25, "66f96949939fa8fdf1c4ffed1e5f6c2842fe11a14b51fdc6ed1e17460031e8c5"},
		Region:   {5, "6022658d673924389b54dcb70fa8c3d6da1b0d7afa3c1c017bab62a019df404f"},
	},
}

type tableSum struct {
	rows   int64
	sha256 string
}

// Every table at SF 0.01 and SF 0.1 has dbgen 2.14.0's row count and its
// checksum: the generator's output is, line for line and byte for byte,
// dbgen's. The rows are counted, and the bytes hashed, as WriteTable writes
// them, not taken from the Scale.
func TestTablesMatchDbgenChecksums(t *testing.T) {
	t.Parallel()
	for _, sf := range []float64{0.01, 0.1} {
		sc, err := NewScale(sf)
		if err != nil {
			t.Fatal(err)
		}
		for _, table := range Tables {
			want, ok := dbgenTables[sf][table]
			if !ok {
				t.Fatalf("SF %g: no expected values for %s", sf, table)
			}
			t.Run(fmt.Sprintf("SF%s/%s", strconv.FormatFloat(sf, 'g', -1, 64), table), func(t *testing.T) {
				t.Parallel()
				got := digestWriter{h: sha256.New()}
				rows, written, err := WriteTable(context.Background(), &got, sc, table, runtime.GOMAXPROCS(0))
				if err != nil {
					t.Fatal(err)
				}
				if rows != got.lines || written != got.bytes {
					t.Errorf("WriteTable says %d rows, %d bytes; it wrote %d lines, %d bytes", rows, written, got.lines, got.bytes)
				}
				if got.lines != want.rows {
					t.Errorf("%d rows; dbgen 2.14.0 writes %d", got.lines, want.rows)
				}
				if sum := hex.EncodeToString(got.h.Sum(nil)); sum != want.sha256 {
					t.Errorf("SHA-256 %s; dbgen 2.14.0's %s.tbl has %s", sum, table, want.sha256)
				}
			})
		}
	}
}

// digestWriter hashes what is written to it and counts its lines and bytes.
type digestWriter struct {
	h            hash.Hash
	lines, bytes int64
}

func (d *digestWriter) Write(p []byte) (int, error) {
	d.lines += int64(bytes.Count(p, []byte{'\n'}))
	d.bytes += int64(len(p))
	return d.h.Write(p)
}
