package report

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/tierbench/tierbench/internal/results"
)

// Compare gives, as numbers, what the ratio tables of the report of the
// same runs show: for every row of them, its ratio and verdict cells are
// ratioCI and verdict of the entries for that run, step and figure.
func TestCompareMatchesTables(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	must(t, os.MkdirAll(dir, 0o755))
	src, err := os.Open(filepath.Join("testdata", "store", "tierbench.db"))
	must(t, err)
	defer src.Close()
	dst, err := os.Create(filepath.Join(dir, "tierbench.db"))
	must(t, err)
	_, err = io.Copy(dst, src)
	must(t, err)
	must(t, dst.Close())
	store, err := results.Open(dir)
	must(t, err)
	defer store.Close()
	ctx := context.Background()
	all, err := store.Runs(ctx)
	must(t, err)
	var ids []string
	for _, r := range slices.Backward(all) {
		ids = append(ids, r.ID)
	}
	got, err := Compare(ctx, store, Options{Runs: ids})
	must(t, err)
	doc, _, err := Build(ctx, store, Options{Runs: ids})
	must(t, err)
	rows := 0
	for _, s := range doc.Sections {
		for _, b := range s.Blocks {
			tb := b.Table
			if tb == nil || (tb.ID != "tpcc-ratios" && tb.ID != "storage-ratios") {
				continue
			}
			for _, row := range tb.Rows {
				rows++
				kind, step, cols := "tpcc", row[1]+" VUs", map[int]string{5: "tpm", 6: "nopm", 8: "new_order.p95_ms", 13: "db.wal_sync_latency_ms", 14: "new_order.p99_ms"}
				if n, _ := strconv.Atoi(row[1]); n == 1 {
					step = "1 VU"
				}
				if tb.ID == "storage-ratios" {
					kind, step, cols = "disk", row[1], map[int]string{3: "iops", 5: "mbps", 7: "p99_ms"}
				}
				for col, fig := range cols {
					i := slices.IndexFunc(got, func(c Compared) bool {
						return c.Kind == kind && c.Label == row[0] && c.Step == step && c.Figure == fig
					})
					if i < 0 {
						t.Errorf("%s %s %s: no comparison for the table's cell %q", row[0], step, fig, row[col])
						continue
					}
					c := got[i]
					if want := comparedText(c); want != row[col] {
						t.Errorf("%s %s %s: Compare %+v reads %q; the table shows %q", row[0], step, fig, c, want, row[col])
					}
					// The TPC-C table's verdicts sit right of their ratios.
					if v := map[string]int{"nopm": 7, "new_order.p95_ms": 9, "new_order.p99_ms": 15}; kind == "tpcc" && v[fig] > 0 && c.Verdict != row[v[fig]] {
						t.Errorf("%s %s %s: Compare's verdict %q; the table's %q", row[0], step, fig, c.Verdict, row[v[fig]])
					}
				}
			}
		}
	}
	if rows == 0 || len(got) == 0 {
		t.Fatalf("%d table rows, %d comparisons: the golden store compares nothing", rows, len(got))
	}
}

// comparedText writes a Compared as ratioCI writes its comparison.
func comparedText(c Compared) string {
	if c.Ratio == nil {
		return "–"
	}
	r := strconv.FormatFloat(*c.Ratio, 'f', 2, 64) + "x"
	if c.Low == nil || c.High == nil {
		return r
	}
	return r + " (" + strconv.FormatFloat(*c.Low, 'f', 2, 64) + "–" + strconv.FormatFloat(*c.High, 'f', 2, 64) + ")"
}
