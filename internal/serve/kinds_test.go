package serve_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/fio/fiotest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/serve"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/stored"
)

// The other kinds run from the same options as their commands: a disk
// point with fio, a space scan and a monitor, each to complete with what
// its command stores; what would overwrite a file tierbench did not create
// is refused unless serve allows it, and nothing is queued.
func TestAPIOtherKinds(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	s := startServe(t, serve.Options{})
	target := t.TempDir()
	mine := filepath.Join(target, "theirs.dat")
	if err := os.WriteFile(mine, []byte("not tierbench's"), 0o644); err != nil {
		t.Fatal(err)
	}
	var e struct{ Error, Field string }
	code, body := s.do(t, "POST", "/api/v1/runs", map[string]any{"kind": "disk", "target": mine, "overwrite_file": true, "bs": "4k",
		"rw": "randread", "iodepth": 1, "jobs": 1, "duration": "1s", "ramp": "0s", "size": "8MiB"}, nil)
	if json.Unmarshal([]byte(body), &e); code != 400 || e.Field != "overwrite_file" || !strings.Contains(e.Error, "--allow-destructive") {
		t.Errorf("a destructive disk run: %d %s", code, body)
	}
	for _, c := range []struct {
		req    map[string]any
		result string // the event a step of it sends ("": none)
	}{
		{map[string]any{"kind": "disk", "target": target, "bs": "4k", "rw": "randread", "iodepth": 1, "jobs": 1, "duration": "1s",
			"ramp": "0s", "size": "8MiB", "interval": "500ms"}, `"point"`},
		{map[string]any{"kind": "space", "target": target, "block": "4k"}, ""},
		{map[string]any{"kind": "monitor", "target": target, "duration": "2s", "interval": "500ms"}, ""},
	} {
		var p struct{ ID string }
		if code, body := s.do(t, "POST", "/api/v1/runs", c.req, &p); code != 202 {
			t.Fatalf("%v: %d %s", c.req, code, body)
		}
		evs := s.follow(t, p.ID, "", nil)
		if d := doneOf(t, evs); d["status"] != results.StatusComplete {
			t.Errorf("%s: done %v", c.req["kind"], d)
		}
		if c.result != "" && !strings.Contains(strings.Join(eventData(evs, "result"), "\n"), c.result) {
			t.Errorf("%s: no result event with %s", c.req["kind"], c.result)
		}
		var shown results.Shown
		if s.do(t, "GET", "/api/v1/runs/"+p.ID, nil, &shown); shown.Run.Kind != c.req["kind"] || shown.Run.Status != results.StatusComplete {
			t.Errorf("%s: stored as %s %s", c.req["kind"], shown.Run.Kind, shown.Run.Status)
		}
	}
	if data, err := os.ReadFile(mine); err != nil || string(data) != "not tierbench's" {
		t.Errorf("the file tierbench did not create: %q %v", data, err)
	}
}

// eventData is the data of the events of a name.
func eventData(evs []sseEvent, name string) []string {
	var out []string
	for _, e := range evs {
		if e.Name == name {
			out = append(out, e.Data)
		}
	}
	return out
}

// A TPC-C run on a managed server named by its data directory: the API
// lists the servers running here without their DSNs, and the run gets the
// DSN from the server itself; a directory with no server running is
// refused by name.
func TestAPIRunOnManagedServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	info := pgtest.StartManaged(t, ctx)
	tpcctest.Build(t, ctx, info.DSN, 1)
	s := startServe(t, serve.Options{})
	code, body := s.do(t, "GET", "/api/v1/servers", nil, nil)
	if code != 200 || !strings.Contains(body, `"datadir": "`+info.DataDir+`"`) || strings.Contains(body, "postgres://") {
		t.Errorf("GET /api/v1/servers: %d %s; want %s listed, without a DSN", code, body, info.DataDir)
	}
	var p struct{ ID string }
	if code, body := s.do(t, "POST", "/api/v1/runs", map[string]any{"kind": "tpcc", "server": info.DataDir, "vus": []int{1},
		"rate": 1200, "arrival": "constant", "late_after": "1s", "rampup": "0s", "duration": "2s"}, &p); code != 202 { // open loop: no core spent saturating
		t.Fatalf("POST on a managed server: %d %s", code, body)
	}
	evs := s.follow(t, p.ID, "", nil)
	if d := doneOf(t, evs); d["status"] != results.StatusComplete {
		t.Errorf("the run on the managed server: %v", d)
	}
	// The open loop's ticks carry what it offered, and its result the
	// sentence the CLI prints under the step.
	if ticks := strings.Join(eventData(evs, "tick"), "\n"); !strings.Contains(ticks, `"offered_tpm":1200`) || !strings.Contains(ticks, `"queue":`) {
		t.Errorf("no tick carries the offered rate and the queue:\n%s", ticks)
	}
	if res := strings.Join(eventData(evs, "result"), "\n"); !strings.Contains(res, `"notes":["offered 1,200 TPM (constant arrivals, `) {
		t.Errorf("the step's result event lacks what it offered:\n%s", res)
	}
	var e struct{ Error, Field string }
	code, body = s.do(t, "POST", "/api/v1/runs", map[string]any{"kind": "tpcc", "server": t.TempDir(), "vus": []int{1}}, nil)
	if json.Unmarshal([]byte(body), &e); code != 400 || e.Field != "server" {
		t.Errorf("a directory without a server: %d %s", code, body)
	}
}

// A scenario posted inline runs in the queue: its runs, a space scan and
// a disk profile, are stored in its results group, listed under its id as
// they start, and its event stream ends done and complete.
func TestAPIScenarioRuns(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	s := startServe(t, serve.Options{})
	dir := t.TempDir()
	doc := "name: tiny\ntitle: a space scan and a disk profile\n" +
		"targets:\n  - {name: here, path: " + dir + "}\n" +
		"steps:\n  - space: {target: here}\n  - disk: {target: here, profile: quick, duration: 1s, size: 8MiB}\n"
	var p struct{ ID string }
	if code, body := s.do(t, "POST", "/api/v1/scenarios", map[string]any{"document": doc}, &p); code != 202 || !strings.HasPrefix(p.ID, "tiny-") {
		t.Fatalf("POST /api/v1/scenarios: %d %s", code, body)
	}
	evs := s.follow(t, p.ID, "", nil) // a scenario's stream, under the runs' route too
	if d := doneOf(t, evs); d["status"] != results.StatusComplete {
		t.Fatalf("the scenario ended %v", d)
	}
	var sc struct {
		Status string
		Runs   []string
	}
	if code, body := s.do(t, "GET", "/api/v1/scenarios/"+p.ID, nil, &sc); code != 200 || sc.Status != results.StatusComplete || len(sc.Runs) != 2 {
		t.Fatalf("GET the scenario: %d %s; want complete with 2 runs", code, body)
	}
	var list struct {
		Runs []struct{ ID, Kind, Group string }
	}
	s.do(t, "GET", "/api/v1/runs?group="+p.ID, nil, &list)
	if len(list.Runs) != 2 || list.Runs[0].Kind != "disk" || list.Runs[1].Kind != "space" {
		t.Errorf("the group's runs: %+v; want the disk run and the space scan", list.Runs)
	}
	for _, id := range sc.Runs {
		if d := doneOf(t, s.follow(t, id, "", nil)); d["status"] != results.StatusComplete {
			t.Errorf("run %s of the scenario: %v", id, d)
		}
	}
}

// A TPC-H run posted to the API runs as `tpch run` does: on an SF 0.01
// build, with the validation parameters, its 22 queries come as results
// and its stored document (the one `tpch run --json` prints) has every
// answer checked and right.
func TestAPIRunTPCH(t *testing.T) {
	t.Parallel()
	dsn := tpchDSN(t)
	s := startServe(t, serve.Options{})
	var p struct{ ID string }
	if code, body := s.do(t, "POST", "/api/v1/runs", map[string]any{"kind": "tpch", "dsn": dsn, "validate": true}, &p); code != 202 {
		t.Fatalf("POST a TPC-H run: %d %s", code, body)
	}
	evs := s.follow(t, p.ID, "", nil)
	if d := doneOf(t, evs); d["status"] != results.StatusComplete || d["outcome"] != "succeeded" {
		t.Fatalf("done: %v", d)
	}
	var queries int
	for _, data := range eventData(evs, "result") {
		var r struct {
			TPCH *stored.TPCHQuery `json:"tpch"`
		}
		if json.Unmarshal([]byte(data), &r) == nil && r.TPCH != nil {
			queries++
		}
	}
	if queries != 22 {
		t.Errorf("%d result events of a query; want 22", queries)
	}
	var shown results.Shown
	if code, body := s.do(t, "GET", "/api/v1/runs/"+p.ID, nil, &shown); code != 200 || shown.Run.Kind != "tpch" || shown.Run.Status != results.StatusComplete {
		t.Fatalf("GET the run: %d %s", code, body)
	}
	var doc experiment.TPCHRunResult
	if err := json.Unmarshal(shown.Run.Summary, &doc); err != nil {
		t.Fatalf("the stored document: %v\n%s", err, shown.Run.Summary)
	}
	if doc.RunID != p.ID || !doc.Validate || !doc.AnswersChecked || len(doc.Wrong) > 0 || len(doc.Power) != 1 || len(doc.Power[0].Queries) != 22 {
		t.Fatalf("the stored document: %s; want run %s validated, its 22 power queries' answers checked", shown.Run.Summary, p.ID)
	}
	for _, q := range doc.Power[0].Queries {
		if q.Status != stored.TPCHOK {
			t.Errorf("%s: %s %s; want ok", q.Name(), q.Status, q.Error)
		}
	}
}

// A TPC-H run's bad input is refused with 400 naming its key, in `tpch
// run`'s words without the dashes, by its config's rules; nothing is
// queued or stored.
func TestAPITPCHBadInput(t *testing.T) {
	t.Parallel()
	s := startServe(t, serve.Options{})
	const dsn = "postgres://u@127.0.0.1:1/x"
	for _, c := range []struct {
		req   map[string]any
		field string
		want  string
	}{
		{map[string]any{"kind": "tpch", "dsn": dsn, "streams": -1}, "streams", "streams -1 is out of range"},
		{map[string]any{"kind": "tpch", "dsn": dsn, "streams": 0}, "streams", "streams 0 runs no throughput test"},
		{map[string]any{"kind": "tpch", "dsn": dsn, "seed": 7, "validate": true}, "seed", "but validate uses the specification's own"},
		{map[string]any{"kind": "tpch", "dsn": dsn, "timeout": "soon"}, "timeout", "timeout: "},
		{map[string]any{"kind": "tpch", "dsn": dsn, "timeout": "1ms"}, "timeout", "is too short"},
		{map[string]any{"kind": "tpch", "dsn": dsn, "no_refresh": "maybe"}, "no_refresh", "no_refresh: "},
		{map[string]any{"kind": "tpch", "dsn": dsn, "scale": 1}, "scale", `"scale" is not an option here; give one of: `},
		{map[string]any{"kind": "tpch", "dsn": dsn, "results": "/tmp"}, "results", "results: serve stores every run"},
		{map[string]any{"kind": "tpch", "validate": true}, "dsn", "dsn"},
		{map[string]any{"kind": "tpch", "dsn": dsn, "server": t.TempDir()}, "server", "dsn and server both name the database"},
	} {
		var e struct{ Error, Field string }
		code, body := s.do(t, "POST", "/api/v1/runs", c.req, nil)
		if json.Unmarshal([]byte(body), &e); code != 400 || e.Field != c.field || !strings.Contains(e.Error, c.want) || strings.Contains(e.Error, "--") {
			t.Errorf("%v: %d %s; want 400, field %s, %q", c.req, code, body, c.field, c.want)
		}
	}
	var q struct{ Entries []any }
	if s.do(t, "GET", "/api/v1/queue", nil, &q); len(q.Entries) != 0 {
		t.Errorf("the queue holds %v after bad input", q.Entries)
	}
	var list struct{ Total int }
	if s.do(t, "GET", "/api/v1/runs", nil, &list); list.Total != 0 {
		t.Errorf("the store holds %d runs after bad input", list.Total)
	}
}
