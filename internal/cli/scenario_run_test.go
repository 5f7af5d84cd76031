package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tierbench/tierbench/internal/fio/fiotest"
	"github.com/tierbench/tierbench/internal/results"
)

// groupRuns returns the runs of the store's only scenario group, oldest
// first.
func groupRuns(t *testing.T, res string) []results.Run {
	t.Helper()
	store, err := results.OpenReadOnly(res)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runs, err := store.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	group := ""
	var out []results.Run
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if group == "" {
			group = r.Group
		}
		if r.Group != group || group == "" {
			t.Fatalf("run %s is in group %q; want every run in the scenario's one group %q", r.ID, r.Group, group)
		}
		out = append(out, r)
	}
	return out
}

// The contract of `scenario run --json`, cheaply: exit 0 and one document
// naming the scenario, its status, its results group with every run in it,
// and its report. A scenario of one brief disk step and the report: what
// the bundled scenarios record is tested where they are executed
// (internal/scenario, bundled_exec_test.go).
func TestScenarioRunJSON(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	file := filepath.Join(dir, "brief.yaml")
	if err := os.WriteFile(file, []byte(`name: brief
title: one disk point and the report
targets:
  - {name: local, path: `+filepath.Join(dir, "data")+`}
steps:
  - disk: {target: local, profile: quick, duration: 1s, size: 16MiB}
  - report: {}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runTierbench(t, "scenario", "run", file, "--results", res, "--json")
	if code != 0 {
		t.Fatalf("scenario run: exit %d\n%s\n%s", code, out, errOut)
	}
	// --json prints one document: the scenario's group, its runs, its report.
	var doc struct {
		Name, Status, Group, Report string
		Runs                        []string
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("scenario run --json printed no one JSON document: %v\n%s", err, out)
	}
	runs := groupRuns(t, res)
	if doc.Name != "brief" || doc.Status != "complete" || doc.Group != runs[0].Group || len(doc.Runs) != len(runs) ||
		doc.Runs[0] != runs[0].ID || doc.Report != filepath.Join(res, "report.html") {
		t.Errorf("scenario run --json: %+v; want brief complete, group %s with %d runs, report in %s", doc, runs[0].Group, len(runs), res)
	}
}
