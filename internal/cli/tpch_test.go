package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/server/mariatest"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// `tpch generate`: the tables as files with their rows counted, one JSON
// document with --json, and bad input refused in one line before anything
// is written.
func TestTPCHGenerate(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "sf0.001")
	code, stdout, stderr := runTierbench(t, "tpch", "generate", "--scale", "0.01", "--out", out, "--tables", "nation,orders,lineitem", "--refresh", "1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Scale  float64 `json:"scale"`
		Tables []struct {
			Table string `json:"table"`
			File  string `json:"file"`
			Rows  int64  `json:"rows"`
			Bytes int64  `json:"bytes"`
		} `json:"tables"`
		Refresh []struct {
			Table string `json:"table"`
			Rows  int64  `json:"rows"`
		} `json:"refresh"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || doc.Scale != 0.01 || len(doc.Tables) != 3 || len(doc.Refresh) != 3 ||
		doc.Refresh[0].Table != "orders.tbl.u1" || doc.Refresh[0].Rows != 10 || doc.Refresh[2].Table != "delete.1" {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	for _, tb := range doc.Tables {
		b, err := os.ReadFile(tb.File)
		if err != nil || int64(len(b)) != tb.Bytes || int64(strings.Count(string(b), "\n")) != tb.Rows || filepath.Base(tb.File) != tb.Table+".tbl" {
			t.Errorf("%s: %d rows, %d bytes in %s: %v", tb.Table, tb.Rows, tb.Bytes, tb.File, err)
		}
	}
	// 15,000 orders at SF 0.01, 1 to 7 lines each; 25 nations.
	if r := doc.Tables[1].Rows; r != 15000 {
		t.Errorf("orders: %d rows, want 15000", r)
	}
	if r := doc.Tables[2].Rows; r < 15000 || r > 7*15000 {
		t.Errorf("lineitem: %d rows, want 1 to 7 per order", r)
	}
	if doc.Tables[0].Rows != 25 {
		t.Errorf("nation: %d rows, want 25", doc.Tables[0].Rows)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--scale", "0.001", "--out", out}, `--out "` + out + `" is not empty`},
		{[]string{"--scale", "1.5", "--out", t.TempDir()}, `--scale "1.5" is not a whole number`},
		{[]string{"--scale", "0", "--out", t.TempDir()}, `--scale "0" is not above 0`},
		{[]string{"--scale", "0.01"}, "--out is required"},
		{[]string{"--scale", "0.01", "--out", t.TempDir(), "--tables", "lineitems"}, `--tables "lineitems" is not a TPC-H table`},
		{[]string{"--scale", "0.01", "--out", "/etc/hostname"}, "is a file"},
		{[]string{"--scale", "0.01", "--out", t.TempDir(), "--refresh", "1000"}, "--refresh 1000 is out of range"},
	} {
		code, stdout, stderr := runTierbench(t, append([]string{"tpch", "generate"}, tc.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 6 {
		t.Errorf("%s has %d files after the refusals; want the 6 written", out, len(ents))
	}
}

// `tpch build` builds SF 0.01 on PostgreSQL and says what it loaded; a
// second build without --drop, a scale whose PARTSUPP keys collide and too
// few loaders are refused, each on one line with exit 2.
func TestTPCHBuild(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	if code, stdout, stderr := runTierbench(t, "tpch", "run", "--dsn", dsn, "--results", t.TempDir()); code != 2 || stdout != "" ||
		!strings.Contains(stderr, "no TPC-H build found in this database; make one with `tierbench tpch build") {
		t.Errorf("a run without a build: exit %d, %q %q; want exit 2 naming tpch build", code, stdout, stderr)
	}
	code, stdout, stderr := runTierbench(t, "tpch", "build", "--dsn", dsn, "--scale", "0.01", "--build-vus", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Scale    float64          `json:"scale"`
		Rows     map[string]int64 `json:"rows"`
		Bytes    int64            `json:"bytes"`
		BuildVUs int              `json:"build_vus"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || doc.Scale != 0.01 || doc.Rows["lineitem"] != 60175 || doc.Rows["region"] != 5 ||
		doc.Bytes == 0 || doc.BuildVUs != 2 {
		t.Errorf("--json: %+v (%v)\n%s", doc, err, stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dsn", dsn, "--scale", "0.01"}, "already holds a TPC-H build; add --drop"},
		{[]string{"--dsn", dsn, "--scale", "0.001"}, `--scale "0.001" gives some parts the same supplier twice`},
		{[]string{"--dsn", dsn, "--scale", "0.01", "--build-vus", "0"}, "--build-vus 0 is out of range"},
		{[]string{"--dsn", dsn, "--scale", "0"}, `--scale "0" is not above 0`},
		{[]string{"--dsn", dsn, "--scale", "abc"}, `--scale "abc" is not a number, e.g. 0.1 or 10`},
	} {
		code, stdout, stderr := runTierbench(t, append([]string{"tpch", "build"}, tc.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args[2:], code, stdout, stderr, tc.want)
		}
	}
}

// `tpch run --validate` on MariaDB checks every answer of an SF 0.01
// build; `tpch queries` prints what it runs; bad options are refused on
// one line each, before anything runs.
func TestTPCHRunMariaDB(t *testing.T) {
	t.Parallel()
	dsn := mariatest.NewDatabase(t)
	if code, _, stderr := runTierbench(t, "tpch", "build", "--dsn", dsn, "--scale", "0.01"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	res := t.TempDir()
	code, stdout, stderr := runTierbench(t, "tpch", "run", "--dsn", dsn, "--validate", "--results", res, "--interval", "0s", "--json",
		"--threshold", "geomean<=1h", "--threshold", "q1.rows==4", "--metrics-listen", "127.0.0.1:0", "--metrics-grace", "0s")
	var doc struct {
		Thresholds []struct {
			Threshold string `json:"threshold"`
			Pass      bool   `json:"pass"`
		} `json:"thresholds"`
		Status         string `json:"status"`
		Engine         string `json:"engine"`
		AnswersChecked bool   `json:"answers_checked"`
		Power          []struct {
			GeoMean float64 `json:"geomean_seconds"`
			Queries []struct {
				Query  int    `json:"query"`
				Status string `json:"status"`
			} `json:"queries"`
		} `json:"power"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil || doc.Status != "complete" || doc.Engine != "mariadb" || !doc.AnswersChecked ||
		len(doc.Power) != 1 || len(doc.Power[0].Queries) != 22 || doc.Power[0].Queries[0].Query != 14 || doc.Power[0].GeoMean <= 0 ||
		len(doc.Thresholds) != 2 || !doc.Thresholds[0].Pass || !doc.Thresholds[1].Pass {
		t.Fatalf("exit %d, %v: %s\n%s", code, err, stdout, stderr)
	}
	code, stdout, _ = runTierbench(t, "tpch", "queries", "--dialect", "mariadb", "--stream", "1", "--seed", "7")
	if code != 0 || !strings.HasPrefix(stdout, "-- Q21: ") || strings.Count(stdout, "-- Q") != 22 || !strings.Contains(stdout, "create view revenue1 ") ||
		!strings.Contains(stdout, "interval 3 month") || strings.Contains(stdout, "interval '") {
		t.Errorf("tpch queries: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := runTierbench(t, "tpch", "queries", "--seed", "0"); code != 2 || !strings.Contains(stderr, "--seed 0 is out of range; give 1 to ") {
		t.Errorf("tpch queries --seed 0: exit %d, %q; want it refused", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--streams", "65"}, "--streams 65 is out of range"},
		{[]string{"--streams", "0"}, "--streams 0 runs no throughput test; give 1 to 64 query streams, or leave streams out"},
		{[]string{"--timeout", "5ms"}, "--timeout 5ms is too short"},
		{[]string{"--validate", "--seed", "3"}, "--seed 3 draws parameters, but --validate uses the specification's own"},
		{[]string{"--repeat", "0"}, "--repeat 0 is out of range"},
		{[]string{"--threshold", "q23.seconds<1s"}, `"q23.seconds" is not a figure of a TPC-H test`},
	} {
		code, stdout, stderr := runTierbench(t, append([]string{"tpch", "run", "--dsn", dsn, "--results", res}, tc.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}
