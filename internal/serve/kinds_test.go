package serve_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/fio/fiotest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/serve"
	"github.com/tierbench/tierbench/internal/server/pgtest"
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
	if d := doneOf(t, s.follow(t, p.ID, "", nil)); d["status"] != results.StatusComplete {
		t.Errorf("the run on the managed server: %v", d)
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
