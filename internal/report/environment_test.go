package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/report/reporttest"
	"github.com/tierbench/tierbench/internal/results"
)

// envFacts reads an environment table (environment-hardware, …) back as a
// column per run, fact -> the runs' values in order, from its part shared
// by all runs and its part by run.
func envFacts(t *testing.T, env *Section, id string, runs int) map[string][]string {
	t.Helper()
	_, tables := contents(env)
	out := map[string][]string{}
	if shared := tables[id]; shared != nil {
		for _, row := range shared.Rows {
			for range runs {
				out[row[0]] = append(out[row[0]], row[1])
			}
		}
	}
	if byRun := tables[id+"-by-run"]; byRun != nil {
		if len(byRun.Rows) != runs {
			t.Fatalf("%s has %d rows; want one per run, %d", byRun.ID, len(byRun.Rows), runs)
		}
		for j, fact := range byRun.Header[1:] {
			if out[fact] != nil {
				t.Errorf("%s is both shared and by run", fact)
			}
			for _, row := range byRun.Rows {
				out[fact] = append(out[fact], row[j+1])
			}
		}
	}
	return out
}

// Six runs on one host, one of them on another file system: the facts
// they share are shown once, and what differs, the file system, in a row
// per run. Nothing is lost: every run's every fact reads back as before.
func TestEnvironmentSharedOnce(t *testing.T) {
	ctx := context.Background()
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	must(t, err)
	t.Cleanup(func() { store.Close() })
	var labels []string
	for i := range 6 {
		label := fmt.Sprintf("neighbour-%d", i+1)
		labels = append(labels, label)
		r, err := store.CreateRun(ctx, "monitor", "paper-5-neighbours", map[string]string{"label": label})
		must(t, err)
		fs := "ext4"
		if i == 3 {
			fs = "xfs"
		}
		must(t, store.SetDocument(ctx, r.ID, results.DocEnvironment, environment(fs)))
		must(t, store.FinishRun(ctx, r.ID, results.StatusComplete, nil))
	}
	doc, _, err := Build(ctx, store, Options{Group: "paper-5-neighbours"})
	must(t, err)
	env := section(doc, "environment")
	_, tables := contents(env)

	hw := tables["environment-hardware"]
	if hw == nil || !reflect.DeepEqual(hw.Header, []string{"fact", "all 6 runs"}) {
		t.Fatalf("shared hardware table %+v; want a fact and one value for all 6 runs", hw)
	}
	byRun := tables["environment-hardware-by-run"]
	if byRun == nil || !reflect.DeepEqual(byRun.Header, []string{"run", "filesystem"}) {
		t.Fatalf("hardware by run %+v; want only the file system, which differs", byRun)
	}
	for i, row := range byRun.Rows {
		fs := "ext4"
		if i == 3 {
			fs = "xfs"
		}
		if want := []string{labels[i], fs + " on /dev/nvme0n1p1 (mounted at /data)"}; !reflect.DeepEqual(row, want) {
			t.Errorf("run %d: %q; want %q", i+1, row, want)
		}
	}
	if tables["environment-software-by-run"] != nil || tables["environment-database-settings-by-run"] != nil {
		t.Errorf("software or settings by run, though every run has the same: %v", keys(tables))
	}
	for _, id := range []string{"environment-hardware", "environment-software", "environment-database-settings"} {
		facts := envFacts(t, env, id, 6)
		if len(facts) == 0 {
			t.Errorf("%s: no facts", id)
		}
		for fact, vals := range facts {
			if len(vals) != 6 {
				t.Errorf("%s: %s has %d values; want 6", id, fact, len(vals))
			}
		}
	}
	if got := envFacts(t, env, "environment-software", 6)["kernel"]; !reflect.DeepEqual(got, []string{"6.1.0", "6.1.0", "6.1.0", "6.1.0", "6.1.0", "6.1.0"}) {
		t.Errorf("kernel %q; want 6.1.0 for every run", got)
	}

	// The HTML and the Markdown name the kernel and the device once, and
	// the page opens in a real browser without problems.
	w, err := Write(ctx, store, Options{Group: "paper-5-neighbours", Out: filepath.Join(t.TempDir(), "report.html"), Version: "test", Now: t0})
	must(t, err)
	for _, file := range []string{w.HTML, w.Markdown} {
		text, err := os.ReadFile(file)
		must(t, err)
		envPart := string(text[strings.Index(string(text), "Hardware and storage: alike in all 6 runs"):])
		for _, fact := range []string{"6.1.0", "Fast NVMe 1TB", "Test CPU @ 2.50GHz", "rw,noatime"} {
			if n := strings.Count(envPart, fact); n != 1 {
				t.Errorf("%s: %q appears %d times in the environment; want once", filepath.Base(file), fact, n)
			}
		}
	}
	reporttest.CheckInBrowser(t, w.HTML, 0, filepath.Join(reporttest.ArtifactDir(t), "report-environment.png"))
}
