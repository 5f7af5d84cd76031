package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"net/http"

	"github.com/tierbench/tierbench/internal/cli"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/serve"
)

// A TPC-C run posted to the API runs, its events come live to done, a
// client that reconnects gets what it missed, and its document is what
// `results show --json` prints for it.
func TestAPIRunTPCC(t *testing.T) {
	t.Parallel()
	dsn := tpccDSN(t)
	s := startServe(t, serve.Options{})
	var posted struct{ ID, Events string }
	code, body := s.do(t, "POST", "/api/v1/runs", map[string]any{"kind": "tpcc", "dsn": dsn, "vus": []int{1, 2},
		"rampup": "1s", "duration": "3s", "all_warehouses": true}, &posted)
	if code != 202 || posted.ID == "" || posted.Events != "/api/v1/runs/"+posted.ID+"/events" {
		t.Fatalf("POST /api/v1/runs: %d %s", code, body)
	}
	evs := s.follow(t, posted.ID, "", nil)
	count := map[string]int{}
	for _, e := range evs {
		count[e.Name]++
	}
	if d := doneOf(t, evs); d["status"] != results.StatusComplete || d["outcome"] != "succeeded" {
		t.Fatalf("done: %v", d)
	}
	if count["tick"] < 4 || count["result"] != 2 {
		t.Errorf("events %v; want at least 4 ticks and a result per step", count)
	}
	var tick struct {
		TPCC struct {
			VUs   int     `json:"vus"`
			Phase string  `json:"phase"`
			TPM   float64 `json:"tpm"`
		} `json:"tpcc"`
	}
	for _, e := range evs {
		if e.Name == "tick" && json.Unmarshal([]byte(e.Data), &tick) == nil && tick.TPCC.Phase == "measure" && tick.TPCC.TPM > 0 {
			break
		}
	}
	if tick.TPCC.TPM <= 0 || tick.TPCC.VUs < 1 {
		t.Errorf("no measured tick with a TPM: last %+v", tick)
	}

	// A client that saw up to the fifth event gets the rest, from the sixth.
	again := s.follow(t, posted.ID, evs[4].ID, nil)
	if len(again) != len(evs)-5 || again[0].ID != evs[5].ID {
		t.Errorf("after Last-Event-ID %s: %d events from %s; want %d from %s", evs[4].ID, len(again), again[0].ID, len(evs)-5, evs[5].ID)
	}

	var shown map[string]any
	if code, body := s.do(t, "GET", "/api/v1/runs/"+posted.ID, nil, &shown); code != 200 {
		t.Fatalf("GET run: %d %s", code, body)
	}
	var out, errOut bytes.Buffer
	if c := cli.Execute(context.Background(), []string{"results", "show", posted.ID, "--results", s.results, "--json"}, os.Getenv, strings.NewReader(""), &out, &errOut); c != 0 {
		t.Fatalf("results show: exit %d: %s", c, errOut.String())
	}
	var cliShown map[string]any
	if err := json.Unmarshal(out.Bytes(), &cliShown); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(shown, cliShown) {
		t.Errorf("GET /api/v1/runs/%s differs from results show --json:\n%v\n%v", posted.ID, shown, cliShown)
	}
	var list struct {
		Runs []struct {
			ID       string   `json:"id"`
			Steps    int      `json:"steps"`
			BestNOPM *float64 `json:"best_nopm"`
		} `json:"runs"`
		Total int `json:"total"`
	}
	if code, body := s.do(t, "GET", "/api/v1/runs?kind=tpcc", nil, &list); code != 200 || list.Total != 1 || list.Runs[0].ID != posted.ID ||
		list.Runs[0].Steps != 2 || list.Runs[0].BestNOPM == nil {
		t.Errorf("GET /api/v1/runs: %d %s", code, body)
	}
	if code, body := s.do(t, "GET", "/api/v1/report?run="+posted.ID, nil, nil); code != 200 || !strings.Contains(body, "<html") ||
		!strings.Contains(body, posted.ID) {
		t.Errorf("GET /api/v1/report: %d, %d bytes", code, len(body))
	}
	if code, body := s.do(t, "GET", "/metrics", nil, nil); code != 200 || !strings.Contains(body, `run="`+posted.ID+`"`) {
		t.Errorf("GET /metrics: %d; no series of run %s", code, posted.ID)
	}
}

// Bad input is refused with 400 naming the key, in the command line's
// words without the dashes, and nothing is stored or queued.
func TestAPIBadInput(t *testing.T) {
	t.Parallel()
	s := startServe(t, serve.Options{})
	for _, c := range []struct {
		req   map[string]any
		field string
		want  string
	}{
		{map[string]any{"kind": "tpcc", "dsn": "postgres://u@127.0.0.1:1/x", "vus": []int{20000}}, "vus", "vus 20000 is out of range; give 1 to 10000"},
		{map[string]any{"kind": "tpcc", "dsn": "postgres://u@127.0.0.1:1/x", "duration": "soon"}, "duration", "duration: "},
		{map[string]any{"kind": "tpcc", "dsn": "postgres://u@127.0.0.1:1/x", "all_warehouses": "maybe"}, "all_warehouses", "all_warehouses: "},
		{map[string]any{"kind": "tpcc", "dsn": "postgres://u@127.0.0.1:1/x", "vu": 1}, "vu", `"vu" is not an option here; give one of: `},
		{map[string]any{"kind": "tpcc", "dsn": "postgres://u@127.0.0.1:1/x", "results": "/tmp"}, "results", "results: serve stores every run"},
		{map[string]any{"kind": "tpcc", "vus": []int{1}}, "dsn", "dsn"},
		{map[string]any{"kind": "tpcc", "dsn": "postgres://u@127.0.0.1:1/x", "rate": []int{6000, 0}}, "rate", "rate 0 is out of range; give above 0"},
		{map[string]any{"kind": "tpcc", "dsn": "postgres://u@127.0.0.1:1/x", "rate": 6000, "arrival": "uniform"}, "arrival",
			`arrival "uniform" is unknown; use poisson or constant`},
		{map[string]any{"kind": "tpcc", "dsn": "postgres://u@127.0.0.1:1/x", "rate": 6000, "vus": 2, "think_time": "5ms"}, "think_time",
			"think_time 5ms paces each VU of a closed loop and cannot be combined with rate, which paces"},
		{map[string]any{"kind": "fio"}, "kind", `kind "fio" is not an experiment serve runs`},
	} {
		var e struct{ Error, Field string }
		code, body := s.do(t, "POST", "/api/v1/runs", c.req, nil)
		if json.Unmarshal([]byte(body), &e); code != 400 || e.Field != c.field || !strings.Contains(e.Error, c.want) || strings.Contains(e.Error, "--") {
			t.Errorf("%v: %d %s; want 400, field %s, %q", c.req, code, body, c.field, c.want)
		}
	}
	if code, body := s.do(t, "POST", "/api/v1/runs", "not an object", nil); code != 400 || !strings.Contains(body, "JSON object") {
		t.Errorf("a string body: %d %s", code, body)
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

// With a token every API request needs it; a page of another origin or
// site is refused whatever it sends; the console's page loads without.
func TestAPIGuard(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef0123"
	s := startServe(t, serve.Options{Token: token})
	get := func(path string, header ...string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", s.url+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	host := strings.TrimPrefix(s.url, "http://")
	for _, c := range []struct {
		path   string
		header []string
		want   int
	}{
		{"/api/v1/runs", nil, 401},
		{"/api/v1/runs", []string{"Authorization", "Bearer wrong-token-wrong-token"}, 401},
		{"/api/v1/runs", []string{"Authorization", "Bearer " + token}, 200},
		{"/metrics", nil, 401},
		{"/", nil, 200},
		{"/api/v1/runs", []string{"Authorization", "Bearer " + token, "Origin", "http://evil.example"}, 403},
		{"/api/v1/runs", []string{"Authorization", "Bearer " + token, "Sec-Fetch-Site", "cross-site"}, 403},
		{"/api/v1/runs", []string{"Authorization", "Bearer " + token, "Origin", "http://" + host, "Sec-Fetch-Site", "same-origin"}, 200},
	} {
		if got := get(c.path, c.header...); got != c.want {
			t.Errorf("GET %s %v: %d; want %d", c.path, c.header, got, c.want)
		}
	}
	// Without a token, another origin is refused all the same.
	open := startServe(t, serve.Options{})
	req, _ := http.NewRequest("POST", open.url+"/api/v1/runs", strings.NewReader(`{"kind":"tpcc"}`))
	req.Header.Set("Origin", "http://127.0.0.1:9")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("a post from another origin: %v %v", resp, err)
	}
}

// A non-loopback address needs a token: the command refuses it with exit
// 2 and one line, before it listens.
func TestServeListenNeedsToken(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	code := cli.Execute(context.Background(), []string{"serve", "--listen", "0.0.0.0:0", "--results", t.TempDir()}, os.Getenv, strings.NewReader(""), &out, &errOut)
	msg := errOut.String()
	if code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "--listen 0.0.0.0:0 is reachable from other hosts") ||
		!strings.Contains(msg, "--token-file") {
		t.Errorf("exit %d: %q", code, msg)
	}
	if err := (serve.Options{Listen: "10.1.2.3:80", Results: t.TempDir(), Token: "0123456789abcdef"}).Validate(); err != nil {
		t.Errorf("with a token: %v", err)
	}
	if err := (serve.Options{Listen: "[::1]:80", Results: t.TempDir()}).Validate(); err != nil {
		t.Errorf("::1: %v", err)
	}
}

// Cancel: a queued entry is removed; the running one is interrupted and
// keeps the steps it finished. Two entries never overlap: the second
// starts after the first is stored as finished. A sweep of rates notes its
// knee before it is done.
func TestAPICancelAndQueue(t *testing.T) {
	t.Parallel()
	dsn := tpccDSN(t)
	s := startServe(t, serve.Options{})
	first := s.postTPCCAt(t, dsn, []float64{1200, 1200, 1200}, "2s")
	second := s.postTPCCAt(t, dsn, []float64{1200}, "2s")
	third := s.postTPCCAt(t, dsn, []float64{600, 1200}, "1s")
	var q struct {
		Entries []struct{ ID, State string }
	}
	if s.do(t, "GET", "/api/v1/queue", nil, &q); len(q.Entries) != 3 || q.Entries[1].ID != second || q.Entries[1].State != "queued" {
		t.Fatalf("queue %+v", q.Entries)
	}
	if code, body := s.do(t, "POST", "/api/v1/runs/"+second+"/cancel", nil, nil); code != 202 || !strings.Contains(body, "removed") {
		t.Fatalf("cancel queued: %d %s", code, body)
	}
	// The first run's first step ends: cancel it then.
	s.follow(t, first, "", func(e sseEvent) bool { return e.Name == "result" })
	if code, body := s.do(t, "POST", "/api/v1/runs/"+first+"/cancel", nil, nil); code != 202 || !strings.Contains(body, "interrupting") {
		t.Fatalf("cancel running: %d %s", code, body)
	}
	if d := doneOf(t, s.follow(t, first, "", nil)); d["status"] != results.StatusInterrupted {
		t.Errorf("the cancelled run ended %v", d)
	}
	evs := s.follow(t, third, "", nil)
	if d := doneOf(t, evs); d["status"] != results.StatusComplete {
		t.Errorf("the third run ended %v", d)
	}
	// Its sweep of two rates ends with the knee, as `tpcc run` prints it.
	if !slices.ContainsFunc(evs, func(e sseEvent) bool {
		return e.Name == "note" && strings.Contains(e.Data, `"msg":"knee: `) && strings.Contains(e.Data, "TPM offered")
	}) {
		t.Errorf("the third run's events lack its knee: %v", evs)
	}
	var a, c results.Shown
	s.do(t, "GET", "/api/v1/runs/"+first, nil, &a)
	s.do(t, "GET", "/api/v1/runs/"+third, nil, &c)
	if a.Run.Status != results.StatusInterrupted || len(a.Steps) < 1 || len(a.Steps) > 2 {
		t.Errorf("the interrupted run: %s with %d steps; want 1 or 2 finished steps", a.Run.Status, len(a.Steps))
	}
	if a.Run.FinishedAt == nil || c.Run.StartedAt.Before(*a.Run.FinishedAt) {
		t.Errorf("the runs overlap: the first finished %v, the third started %v", a.Run.FinishedAt, c.Run.StartedAt)
	}
	if code, _ := s.do(t, "GET", "/api/v1/runs/"+second, nil, nil); code != 404 {
		t.Errorf("the removed run: %d; want 404", code)
	}
	var cmp struct {
		Comparisons []struct {
			Run, Base, Figure, Verdict string
			Ratio                      *float64
		}
	}
	if code, body := s.do(t, "GET", "/api/v1/compare?run="+first+"&run="+third, nil, &cmp); code != 200 {
		t.Errorf("compare: %d %s", code, body)
	}
	nopm := slices.IndexFunc(cmp.Comparisons, func(c struct {
		Run, Base, Figure, Verdict string
		Ratio                      *float64
	}) bool {
		return c.Figure == "nopm"
	})
	if nopm < 0 || cmp.Comparisons[nopm].Run != third || cmp.Comparisons[nopm].Base != first || cmp.Comparisons[nopm].Ratio == nil ||
		cmp.Comparisons[nopm].Verdict == "" {
		t.Errorf("compare: %+v; want the third run's NOPM against the first's with a ratio and a verdict", cmp.Comparisons)
	}
	if code, body := s.do(t, "POST", "/api/v1/runs/"+third+"/cancel", nil, nil); code != 409 {
		t.Errorf("cancel a finished run: %d %s; want 409", code, body)
	}
}

// A scenario posted inline with a mistake gets its line and column; a
// bundled one validates and shows its variables at the scale.
func TestAPIScenarioErrors(t *testing.T) {
	t.Parallel()
	s := startServe(t, serve.Options{})
	doc := "name: inline\ntitle: t\nsteps:\n  - tpcc-run: {server: nowhere, vus: \"1\"}\n"
	var e struct {
		Error     string
		Line, Col int
	}
	code, body := s.do(t, "POST", "/api/v1/scenarios", map[string]any{"document": doc}, nil)
	if json.Unmarshal([]byte(body), &e); code != 400 || e.Line != 4 || e.Col == 0 || e.Error == "" {
		t.Errorf("inline scenario: %d %s; want 400 at line 4", code, body)
	}
	var ok struct {
		Scenario struct {
			Name   string
			Scales []string
			Vars   map[string]string
		}
	}
	if code, body := s.do(t, "POST", "/api/v1/scenarios?validate=1", map[string]any{"name": "quick", "scale": "laptop"}, &ok); code != 200 ||
		ok.Scenario.Name != "quick" || len(ok.Scenario.Vars) == 0 || len(ok.Scenario.Scales) == 0 {
		t.Errorf("validate quick: %d %s", code, body)
	}
	if code, body := s.do(t, "POST", "/api/v1/scenarios", map[string]any{"name": "quick", "scale": "huge"}, nil); code != 400 ||
		!strings.Contains(body, "scale huge") || strings.Contains(body, "--scale") {
		t.Errorf("an unknown scale: %d %s", code, body)
	}
	var q struct{ Entries []any }
	if s.do(t, "GET", "/api/v1/queue", nil, &q); len(q.Entries) != 0 {
		t.Errorf("the queue holds %v", q.Entries)
	}
}

// One results directory has one serve: a second one on it is refused, as
// it would run the same queue beside the first.
func TestServeOnePerResults(t *testing.T) {
	t.Parallel()
	s := startServe(t, serve.Options{})
	_, err := serve.New(serve.Options{Listen: "127.0.0.1:0", Results: s.results})
	if err == nil || !strings.Contains(err.Error(), "is another serve's") || !errors.Is(err, experiment.ErrInvalid) {
		t.Errorf("a second serve on %s: %v", s.results, err)
	}
}
