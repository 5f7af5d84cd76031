package report

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/results"
)

// The store in testdata/store was written by tierbench itself, not by a
// fixture: the scenario beside it (scenario.yaml: a disk profile, a TPC-C
// build, TPC-C at 1 and 2 VUs repeated twice on two instances, TPC-C beside
// a backup, backups, checks and space scans), then a durability cycle, a disk
// run repeated twice, a monitor and a TPC-C run with thresholds, each against
// the scenario's servers, all at the smallest sizes. Its report must come out
// the same from every later version: stores written earlier stay readable,
// and the types that decode them may move but not change meaning.
//
// go test ./internal/report -run TestStoreGolden -update rewrites the golden
// report in testdata/store-report (never the store): the HTML, the
// Markdown and the CSV files; the SVG files beside them are left out, since
// the HTML holds the same figures inline.
func TestStoreGolden(t *testing.T) {
	dir := t.TempDir()
	src, err := os.Open(filepath.Join("testdata", "store", "tierbench.db"))
	must(t, err)
	defer src.Close()
	must(t, os.MkdirAll(filepath.Join(dir, "results"), 0o755))
	dst, err := os.Create(filepath.Join(dir, "results", "tierbench.db"))
	must(t, err)
	_, err = io.Copy(dst, src)
	must(t, err)
	must(t, dst.Close())
	store, err := results.Open(filepath.Join(dir, "results"))
	must(t, err)
	defer store.Close()

	ctx := context.Background()
	all, err := store.Runs(ctx)
	must(t, err)
	if len(all) != 13 {
		t.Fatalf("the golden store has %d runs, want 13", len(all))
	}
	var ids []string
	for _, r := range slices.Backward(all) { // oldest first: the order they ran in
		ids = append(ids, r.ID)
	}
	out := filepath.Join(dir, "report", "report.html")
	_, err = Write(ctx, store, Options{Runs: ids, Out: out, Version: "golden",
		Now: time.Date(2026, 11, 27, 23, 10, 0, 0, time.UTC)})
	must(t, err)

	got := map[string]string{}
	must(t, filepath.WalkDir(filepath.Join(dir, "report"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".svg") { // the figures are inline in report.html too
			return err
		}
		rel, err := filepath.Rel(filepath.Join(dir, "report"), path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	}))
	goldenDir := filepath.Join("testdata", "store-report")
	if *update {
		must(t, os.RemoveAll(goldenDir))
		for name, text := range got {
			path := filepath.Join(goldenDir, filepath.FromSlash(name))
			must(t, os.MkdirAll(filepath.Dir(path), 0o755))
			must(t, os.WriteFile(path, []byte(text), 0o644))
		}
		return
	}
	want := map[string]string{}
	must(t, filepath.WalkDir(goldenDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(goldenDir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		want[filepath.ToSlash(rel)] = string(b)
		return err
	}))
	var names []string
	for name := range got {
		names = append(names, name)
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		g, inGot := got[name]
		w, inWant := want[name]
		switch {
		case !inWant:
			t.Errorf("the report wrote %s, which the golden report does not have (run with -update if intended)", name)
		case !inGot:
			t.Errorf("the report no longer writes %s", name)
		case g != w:
			gl, wl := strings.Split(g, "\n"), strings.Split(w, "\n")
			for i := range max(len(gl), len(wl)) {
				var a, b string
				if i < len(gl) {
					a = gl[i]
				}
				if i < len(wl) {
					b = wl[i]
				}
				if a != b {
					t.Errorf("%s differs from the golden file at line %d:\n got: %.300s\nwant: %.300s\n(run with -update if the change is intended)", name, i+1, a, b)
					break
				}
			}
		}
	}
}
