package tpch

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// referenceGenerator finds tpchgen-cli, the reference generator the tests
// compare with: a generator independent of dbgen's C code whose output is
// dbgen's byte for byte (version 4.0.0 is, at SF 0.01, against dbgen
// 2.14.0). scripts/setup.sh --test installs it from PyPI under the user's
// cache directory. Without it a test skips, or fails when CI=true.
func referenceGenerator(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TIERBENCH_TPCHGEN"); p != "" {
		return p
	}
	if p, err := exec.LookPath("tpchgen-cli"); err == nil {
		return p
	}
	if cache, err := os.UserCacheDir(); err == nil {
		p := filepath.Join(cache, "tierbench", "tpchgen-cli", "bin", "tpchgen-cli")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	const why = "tpchgen-cli (the reference TPC-H generator) is not installed; scripts/setup.sh --test installs it"
	testenv.SkipOrFail(t, "%s", why)
	return ""
}

// The eight tables at SF 0.01 are the reference generator's, byte for
// byte; so is SUPPLIER at SF 1, whose 10,000 suppliers include the ten with
// a Better Business Bureau comment (SF 0.01's 100 have none).
func TestTablesMatchReference(t *testing.T) {
	compareWithReference(t, 0.01, Tables)
	compareWithReference(t, 1, []string{Supplier})
}

func compareWithReference(t *testing.T, sf float64, tables []string) {
	ref := referenceGenerator(t)
	dir := t.TempDir()
	args := []string{"tbl", "-s", strconv.FormatFloat(sf, 'g', -1, 64), "--output-dir", dir}
	for _, table := range tables {
		args = append(args, "-T", table)
	}
	if out, err := exec.Command(ref, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", ref, err, out)
	}
	sc, err := NewScale(sf)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		want, err := os.ReadFile(filepath.Join(dir, table+".tbl"))
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		rows, _, err := WriteTable(context.Background(), &got, sc, table, 2)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if bytes.Equal(got.Bytes(), want) {
			t.Logf("%s: %d rows, %d bytes, the same", table, rows, got.Len())
			continue
		}
		g, w := bufio.NewScanner(&got), bufio.NewScanner(bytes.NewReader(want))
		for line := 1; ; line++ {
			gok, wok := g.Scan(), w.Scan()
			if !gok || !wok || g.Text() != w.Text() {
				t.Errorf("%s.tbl differs from the reference at line %d:\n got  %q\n want %q", table, line, g.Text(), w.Text())
				break
			}
		}
	}
}
