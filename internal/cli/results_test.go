package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/results"
)

// populateResults writes a finished disk run, then a finished two-step tpcc
// run with series, and returns the tpcc run's id.
func populateResults(t *testing.T, dir string) string {
	t.Helper()
	ctx := context.Background()
	s, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	disk, err := s.CreateRun(ctx, "disk", "", map[string]string{"profile": "randrw"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, disk.ID, results.StatusComplete, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // the tpcc run is the newer one
	run, err := s.CreateRun(ctx, "tpcc", "", map[string]any{"vus": []int{1, 4}, "warehouses": 2})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Minute)
	for i, vus := range []int{1, 4} {
		doc := fmt.Sprintf(`{"vus":%d,"tpm":%d,"nopm":%d,"client_tpm":%d,"client_nopm":%d,"errors":0,"extra":"ignored",
			"txn":{"new_order":{"count":100,"p50_ms":1.2,"p95_ms":3.4,"p99_ms":5.6,"p999_ms":7,"max_ms":9.9}}}`,
			vus, 1000*vus+1, 4321*vus, 1000*vus, 4320*vus)
		err := s.AddStep(ctx, results.Step{RunID: run.ID, Index: i, Name: fmt.Sprintf("vus=%d", vus),
			StartedAt: t0, MeasureStart: t0.Add(time.Second), MeasureEnd: t0.Add(11 * time.Second), Metrics: json.RawMessage(doc)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddPoints(ctx, run.ID, []results.Point{
			{Name: "nopm", Step: i, T: t0, Value: 4321},
			{Name: "tpm", Step: i, T: t0, Value: 1000},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.FinishRun(ctx, run.ID, results.StatusComplete, map[string]int{"steps": 2}); err != nil {
		t.Fatal(err)
	}
	return run.ID
}

func TestResultsListAndShow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	id := populateResults(t, dir)

	code, out, errOut := runTierbench(t, "results", "list", "--results", dir, "--json")
	if code != 0 {
		t.Fatalf("list --json: exit %d, stderr %q", code, errOut)
	}
	var list struct {
		Runs []struct {
			results.Run
			Steps    int      `json:"steps"`
			BestNOPM *float64 `json:"best_nopm"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("list --json is not JSON: %v\n%s", err, out)
	}
	if len(list.Runs) != 2 || list.Runs[0].ID != id || list.Runs[0].Steps != 2 || list.Runs[0].Status != "complete" ||
		list.Runs[0].BestNOPM == nil || *list.Runs[0].BestNOPM != 17284 || list.Runs[1].Kind != "disk" || list.Runs[1].Steps != 0 {
		t.Errorf("list --json = %s", out)
	}

	code, out, errOut = runTierbench(t, "results", "list", "--results", dir)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "best NOPM 17,284") || !strings.Contains(out, "disk") {
		t.Errorf("list: exit %d, stdout %q, stderr %q; want both runs and the best NOPM 17,284 as the headline", code, out, errOut)
	}

	code, out, errOut = runTierbench(t, "results", "show", "latest", "--results", dir, "--json")
	if code != 0 {
		t.Fatalf("show --json: exit %d, stderr %q", code, errOut)
	}
	var show struct {
		Run    results.Run    `json:"run"`
		Steps  []results.Step `json:"steps"`
		Series []string       `json:"series"`
	}
	if err := json.Unmarshal([]byte(out), &show); err != nil {
		t.Fatalf("show --json is not JSON: %v\n%s", err, out)
	}
	var params struct{ Warehouses int }
	if err := json.Unmarshal(show.Run.Params, &params); err != nil {
		t.Errorf("show --json params: %v", err)
	}
	if show.Run.ID != id || len(show.Steps) != 2 || show.Steps[1].Name != "vus=4" ||
		strings.Join(show.Series, ",") != "nopm,tpm" || params.Warehouses != 2 {
		t.Errorf("show --json = %s", out)
	}

	// A prefix of the tpcc run's id that the disk run's does not share: both
	// runs were made in the same second, and their random digits may begin
	// alike.
	n := len(id) - 2
	for n < len(id) && strings.HasPrefix(list.Runs[1].ID, id[:n]) {
		n++
	}
	code, out, errOut = runTierbench(t, "results", "show", id[:n], "--results", dir)
	if code != 0 {
		t.Fatalf("show by prefix: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{id, "tpcc", "complete", "4321", "17284", "3.40", "5.60", `"warehouses": 2`, "series: nopm, tpm"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
}

func TestResultsErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothing-here")
	dir := filepath.Join(t.TempDir(), "results")
	populateResults(t, dir)
	empty := filepath.Join(t.TempDir(), "empty")
	s, err := results.Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"results", "list", "--results", missing}, "no results store in " + missing},
		{[]string{"results", "show", "latest", "--results", missing, "--json"}, "no results store"},
		{[]string{"results", "show", "19990101-000000-dead", "--results", dir}, "tierbench results list"},
		{[]string{"results", "show", "latest", "--results", empty}, "no runs"},
		{[]string{"results", "show", "--results", dir}, "one run"},
		{[]string{"results"}, "needs a command"},
	} {
		code, out, errOut := runTierbench(t, tc.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "tierbench: ") || strings.Count(errOut, "\n") != 1 ||
			!strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, errOut, tc.want)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("results list created %s", missing)
	}
	code, out, _ := runTierbench(t, "results", "list", "--results", empty, "--json")
	if code != 0 || strings.TrimSpace(out) != `{
  "runs": []
}` {
		t.Errorf("list of an empty store: exit %d, %q", code, out)
	}
}
