package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/live"
	"github.com/tierbench/tierbench/internal/report"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/scenario"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// scenarioRequest is a posted scenario: a bundled one by name, or a whole
// document (YAML as a string, or a JSON object), at a scale, with
// variables set.
type scenarioRequest struct {
	Name     string            `json:"name"`
	Document json.RawMessage   `json:"document"`
	Scale    string            `json:"scale"`
	Set      map[string]string `json:"set"`
}

// parse reads and validates the scenario with the scenario parser's rules.
func (r scenarioRequest) parse() (*scenario.Scenario, error) {
	switch {
	case r.Name != "" && len(r.Document) > 0:
		return nil, &refusal{apiError{Error: "give name (a bundled scenario) or document, not both", Field: "document"}}
	case r.Name != "":
		src, ok := scenario.BundledSource(r.Name)
		if !ok {
			var names []string
			for _, b := range scenario.Bundled() {
				names = append(names, b.Name)
			}
			return nil, &refusal{apiError{Error: fmt.Sprintf("no bundled scenario %q; give one of: %v", experiment.Quote(r.Name), names), Field: "name"}}
		}
		return scenario.Parse("scenarios/"+r.Name+".yaml", src, r.Scale, r.Set)
	case len(r.Document) > 0:
		doc := []byte(r.Document)
		var text string
		if json.Unmarshal(doc, &text) == nil {
			doc = []byte(text) // YAML in a string; a JSON object is YAML as it is
		}
		return scenario.Parse("document", doc, r.Scale, r.Set)
	}
	return nil, &refusal{apiError{Error: `give name (a bundled scenario, see GET /api/v1/scenarios) or document (the scenario's YAML or JSON)`, Field: "name"}}
}

// refusal is a request refused before it reaches a parser, as its answer.
type refusal struct{ body apiError }

func (r *refusal) Error() string { return r.body.Error }

// scenarioError answers 400 with a scenario's problems, the first one's
// line and column beside the message.
func scenarioError(w http.ResponseWriter, err error) {
	var ref *refusal
	if errors.As(err, &ref) {
		writeError(w, http.StatusBadRequest, &ref.body)
		return
	}
	var es scenario.Errors
	if !errors.As(err, &es) || len(es) == 0 {
		writeError(w, http.StatusBadRequest, &apiError{Error: apiWords(err.Error())})
		return
	}
	out := &apiError{Error: apiWords(es[0].Error()), Line: es[0].Line, Col: es[0].Col}
	if len(es) > 1 {
		for _, e := range es {
			out.Problems = append(out.Problems, apiError{Error: apiWords(e.Error()), Line: e.Line, Col: e.Col})
		}
	}
	writeError(w, http.StatusBadRequest, out)
}

func readScenario(w http.ResponseWriter, r *http.Request) (scenarioRequest, []byte, bool) {
	var req scenarioRequest
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody)); err != nil {
		writeError(w, http.StatusBadRequest, &apiError{Error: "reading the body: " + err.Error()})
		return req, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, &apiError{Error: "the body is not a scenario request: " + err.Error() +
			`; post e.g. {"name":"quick","scale":"laptop","set":{"vus":"1,2"}}`})
		return req, nil, false
	}
	return req, buf.Bytes(), true
}

// postScenario validates a scenario and queues it; with ?validate=1 it only
// validates, answering the scenario as parsed (its variables at the
// scale).
func (s *Server) postScenario(w http.ResponseWriter, r *http.Request) {
	req, raw, ok := readScenario(w, r)
	if !ok {
		return
	}
	sc, err := req.parse()
	if err != nil {
		scenarioError(w, err)
		return
	}
	if r.URL.Query().Get("validate") != "" {
		writeJSON(w, http.StatusOK, map[string]any{"scenario": sc})
		return
	}
	id := sc.Name + "-" + results.NewRunID()
	if err := s.queue.add(&entry{ID: id, Kind: kindScenario, Submitted: time.Now(), Request: raw}); err != nil {
		writeError(w, http.StatusInternalServerError, &apiError{Error: err.Error()})
		return
	}
	s.log(id)
	s.logf("queue: scenario %s queued", id)
	queued(w, "/api/v1/scenarios/", id)
}

// listScenarios lists the bundled scenarios.
func (s *Server) listScenarios(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"scenarios": scenario.Bundled()})
}

// scenarioDoc is a scenario entry's state: queued, running, or its end,
// with its runs as they start.
type scenarioDoc struct {
	ID     string   `json:"id"`
	Status string   `json:"status"`
	Runs   []string `json:"runs"`
}

// showScenario is a scenario's state and its runs (the runs of its results
// group, oldest first).
func (s *Server) showScenario(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	doc := scenarioDoc{ID: id, Runs: []string{}}
	list, _, err := s.store.List(r.Context(), results.ListQuery{Group: id})
	if err != nil {
		writeError(w, http.StatusInternalServerError, &apiError{Error: err.Error()})
		return
	}
	for _, run := range slices.Backward(list) { // oldest first
		doc.Runs = append(doc.Runs, run.ID)
	}
	// The done event is written before the queue lets the entry go: once
	// a client has seen it, the entry's own state is stale.
	l, logged := s.existingLog(id)
	if logged {
		if evs, _, _ := l.after(0); len(evs) > 0 && evs[len(evs)-1].Name == "done" {
			var d doneDoc
			_ = json.Unmarshal(evs[len(evs)-1].Data, &d)
			doc.Status = d.Status
		}
	}
	if e, ok := s.queue.find(id); ok && doc.Status == "" {
		doc.Status = e.State
	}
	if doc.Status == "" {
		if !logged && len(doc.Runs) == 0 {
			writeError(w, http.StatusNotFound, &apiError{Error: fmt.Sprintf("no scenario %q", id)})
			return
		}
		doc.Status = "finished"
	}
	writeJSON(w, http.StatusOK, doc)
}

// executeScenario runs a queued scenario: every run in the results group
// named by the entry's id. Its events go to the scenario's log and to the
// log of the run each belongs to.
func (s *Server) executeScenario(ctx context.Context, e *entry, raw request, log *eventLog) {
	var req scenarioRequest
	data, _ := json.Marshal(raw)
	_ = json.Unmarshal(data, &req)
	s.logf("queue: scenario %s started", e.ID)
	done := doneDoc{Status: results.StatusComplete}
	sc, err := req.parse()
	if err == nil {
		err = scenario.CheckHosts(ctx, sc)
	}
	l := &scenarioListener{s: s, scenario: &observer{log: log}}
	if err == nil {
		_, err = scenario.Execute(ctx, sc, s.opts.Results, l, scenario.Options{Group: e.ID, Noisy: experiment.DefaultNoisy(),
			Background: s.metrics.Observer, LatencyBuckets: live.LatencyBuckets})
	}
	l.endRun()
	var failed *scenario.ChecksFailed
	switch {
	case err != nil && ctx.Err() != nil:
		done.Status = results.StatusInterrupted
	case errors.As(err, &failed), err != nil && experiment.OutcomeOf(err) != experiment.ThresholdsBreached:
		done.Status = results.StatusFailed
	}
	done.Outcome, done.Runs, done.At = experiment.OutcomeOf(err).String(), l.runs, time.Now()
	if err != nil {
		done.Error = apiWords(err.Error())
	}
	s.logf("queue: scenario %s ended %s", e.ID, done.Status)
	log.add("done", done)
}

// scenarioListener hears a scenario: every event goes to the scenario's
// log and to the current run's, which is done when the next run starts or
// the scenario ends.
type scenarioListener struct {
	s        *Server
	scenario *observer
	mu       sync.Mutex
	run      *observer // the current run's
	runID    string
	runs     []string
}

func (l *scenarioListener) current() *observer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.run
}

func (l *scenarioListener) each(f func(experiment.Observer)) {
	f(l.scenario)
	if r := l.current(); r != nil {
		f(r)
	}
	f(l.s.metrics.Observer())
}

func (l *scenarioListener) Note(msg string) { l.each(func(o experiment.Observer) { o.Note(msg) }) }
func (l *scenarioListener) Started(st experiment.Started) {
	l.endRun()
	l.mu.Lock()
	l.run, l.runID = &observer{log: l.s.log(st.RunID)}, st.RunID
	l.runs = append(l.runs, st.RunID)
	l.mu.Unlock()
	l.each(func(o experiment.Observer) { o.Started(st) })
}
func (l *scenarioListener) Progress(p experiment.Progress) {
	l.each(func(o experiment.Observer) { o.Progress(p) })
}
func (l *scenarioListener) Tick(t experiment.Tick) { l.each(func(o experiment.Observer) { o.Tick(t) }) }
func (l *scenarioListener) Result(r experiment.Result) {
	l.each(func(o experiment.Observer) { o.Result(r) })
}
func (l *scenarioListener) Step(i, n int, st scenario.Step) {
	l.scenario.log.add("progress", map[string]any{"scenario_step": map[string]any{"step": i, "steps": n, "kind": st.Kind}})
}
func (l *scenarioListener) Checked(instance string, c *tpcc.CheckResult) {
	l.scenario.log.add("result", map[string]any{"instance": instance, "check": c})
}
func (l *scenarioListener) Neighbour(instance string, st *stored.TPCCStep) {
	l.scenario.log.add("result", map[string]any{"instance": instance, "tpcc": st})
}
func (l *scenarioListener) Reported(w report.Written) {
	l.scenario.log.add("note", map[string]any{"msg": "report written", "report": w})
}

// endRun closes the current run's log with its stored status.
func (l *scenarioListener) endRun() {
	l.mu.Lock()
	r, id := l.run, l.runID
	l.run, l.runID = nil, ""
	l.mu.Unlock()
	if r != nil {
		status := l.s.storedStatus(id)
		r.log.add("done", doneDoc{Status: status, Outcome: outcomeOfStatus(status), At: time.Now()})
	}
}
