package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/report/reporttest"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// The main job ends by writing the report. Two runs of `tierbench run`
// (1 warehouse, steps of 1 and 2 VUs; the second reuses the schema) give
// a report of each, with every section that has data, charts with data,
// nothing fetched from the network, and a browser that renders it without
// an error; then `tierbench report` compares the two.
func TestRunWritesReport(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	dir := pgtest.TempDir(t)
	data, res := filepath.Join(dir, "data"), filepath.Join(dir, "results")
	t.Cleanup(func() { server.Stop(context.Background(), data, "immediate") })
	runIDs := make([]string, 2)
	for i := range runIDs {
		code, out, errOut := runTierbench(t, "run", "--json", "--datadir", data, "--results", res, "--warehouses", "1",
			"--vus", "1,2", "--rampup", "0s", "--duration", "2s")
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", i+1, code, errOut)
		}
		var sum struct {
			TPCC struct {
				RunID string `json:"run_id"`
			} `json:"tpcc"`
			Report string `json:"report"`
		}
		if err := json.Unmarshal([]byte(out), &sum); err != nil {
			t.Fatalf("run --json: %v\n%s", err, out)
		}
		if want := filepath.Join(res, "report.html"); sum.Report != want {
			t.Errorf("run %d: report %q; want %q", i+1, sum.Report, want)
		}
		runIDs[i] = sum.TPCC.RunID
	}
	htmlPath := filepath.Join(res, "report.html")
	b, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if !strings.Contains(html, runIDs[1]) || strings.Contains(html, runIDs[0]) {
		t.Errorf("the report of the second run shows the wrong run")
	}
	for _, id := range []string{"runs", "environment", "tpcc", "telemetry"} {
		if !strings.Contains(html, `<section id="`+id+`">`) {
			t.Errorf("the report has no %s section", id)
		}
	}
	for _, chart := range []string{"TPM and NOPM by virtual users", "TPM per virtual user", "CPU idle and iowait by virtual users",
		"New-Order latency by virtual users", "TPM and NOPM per second, with step boundaries",
		"Latency percentiles per transaction type", "Host CPU of the TPC-C run"} {
		if !strings.Contains(html, chart) {
			t.Errorf("the report has no chart %q", chart)
		}
	}
	for _, table := range []string{`id="tpcc-steps"`, `id="tpcc-audit"`, `id="tpcc-consistency"`, `id="environment-hardware"`,
		`id="environment-database-settings"`} {
		if !strings.Contains(html, table) {
			t.Errorf("the report has no table %s", table)
		}
	}
	// Every chart draws data: each figure's svg has at least one path
	// with more than one point.
	figures := regexp.MustCompile(`(?s)<figure class="chart".*?</figure>`).FindAllString(html, -1)
	if len(figures) < 10 {
		t.Errorf("%d charts; want at least 10", len(figures))
	}
	for _, f := range figures {
		if !regexp.MustCompile(`<path[^>]* d="M[^"]*L`).MatchString(f) {
			t.Errorf("a chart draws no line: %.200s", f)
		}
	}
	if strings.Contains(html, "<script") || regexp.MustCompile(`(?i)(src|href)="https?:`).MatchString(html) {
		t.Error("the report runs scripts or references the network")
	}
	for _, unknownFact := range []string{"<td>logical CPUs</td><td>unknown</td>", "<td>database</td><td>unknown</td>"} {
		if strings.Contains(html, unknownFact) {
			t.Errorf("the environment has %s", unknownFact)
		}
	}
	reporttest.CheckInBrowser(t, htmlPath, 10, filepath.Join(reporttest.ArtifactDir(t), "report-tpcc.png"))

	// Comparing the two runs.
	out := filepath.Join(dir, "compare", "compare.html")
	code, stdout, errOut := runTierbench(t, "report", "--json", "--results", res, "--run", runIDs[0]+","+runIDs[1],
		"--label", runIDs[0]+"=first", "--label", runIDs[1]+"=second", "--out", out)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	var w struct {
		HTML, Markdown string
		Runs           []string `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &w); err != nil {
		t.Fatalf("report --json: %v\n%s", err, stdout)
	}
	if w.HTML != out || len(w.Runs) != 2 {
		t.Errorf("report --json = %s", stdout)
	}
	md, err := os.ReadFile(w.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Ratios against the baseline first", "| second | 2 |", "the NOPM of first at 2 virtual users"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the comparison's Markdown lacks %q", want)
		}
	}
}

func TestReportRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--results", dir}, "no results store in"},
		{[]string{"report", "--results", dir, "--label", "nolabel"}, "give ID=NAME"},
		{[]string{"report", "--results", dir, "--out", filepath.Join(dir, "r.pdf")}, "give an .html file name"},
	} {
		code, _, errOut := runTierbench(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line with %q", tc.args, code, errOut, tc.want)
		}
	}
}
