package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/report"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/version"
)

// maxBody bounds a posted request (an inline scenario is the largest).
const maxBody = 1 << 20

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("POST /api/v1/runs", s.postRun)
	m.HandleFunc("GET /api/v1/runs", s.listRuns)
	m.HandleFunc("GET /api/v1/runs/{id}", s.showRun)
	m.HandleFunc("GET /api/v1/runs/{id}/events", s.streamEvents)
	m.HandleFunc("POST /api/v1/runs/{id}/cancel", s.cancel)
	m.HandleFunc("POST /api/v1/scenarios", s.postScenario)
	m.HandleFunc("GET /api/v1/scenarios", s.listScenarios)
	m.HandleFunc("GET /api/v1/scenarios/{id}", s.showScenario)
	m.HandleFunc("GET /api/v1/scenarios/{id}/events", s.streamEvents)
	m.HandleFunc("POST /api/v1/scenarios/{id}/cancel", s.cancel)
	m.HandleFunc("GET /api/v1/queue", s.showQueue)
	m.HandleFunc("GET /api/v1/servers", s.listServers)
	m.HandleFunc("GET /api/v1/report", s.report)
	m.HandleFunc("GET /api/v1/compare", s.compare)
	m.HandleFunc("GET /api/v1/version", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"version": version.Version})
	})
	m.Handle("GET /metrics", s.serveMetrics())
	s.console(m)
}

// readRequest decodes a posted JSON object.
func readRequest(w http.ResponseWriter, r *http.Request) (request, bool) {
	var req request
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	if err := dec.Decode(&req); err != nil || req == nil {
		msg := "the body is not a JSON object"
		if err != nil {
			msg += ": " + err.Error()
		}
		writeError(w, http.StatusBadRequest, &apiError{Error: msg + `; post e.g. {"kind":"tpcc","dsn":"postgres://…","vus":[1,2]}`})
		return nil, false
	}
	return req, true
}

// badInput answers 400 with every problem of err, each naming its key.
func badInput(w http.ResponseWriter, err error) {
	var ref *refusal
	if errors.As(err, &ref) {
		writeError(w, http.StatusBadRequest, &ref.body)
		return
	}
	es := options.List(err)
	if len(es) == 0 {
		for _, p := range experiment.Problems(err) {
			es = append(es, &options.Error{Field: p.Field, Msg: p.Error()})
		}
	}
	if len(es) == 0 {
		writeError(w, http.StatusBadRequest, &apiError{Error: apiWords(err.Error())})
		return
	}
	out := &apiError{Error: apiWords(options.Errors(es).Error()), Field: es[0].Field}
	if len(es) > 1 {
		for _, e := range es {
			out.Problems = append(out.Problems, apiError{Error: apiWords(e.Msg), Field: e.Field})
		}
	}
	writeError(w, http.StatusBadRequest, out)
}

// queued is the answer to a post: 202 with the id and where to read it.
func queued(w http.ResponseWriter, path, id string) {
	w.Header().Set("Location", path+id)
	writeJSON(w, http.StatusAccepted, map[string]string{"id": id, "events": path + id + "/events"})
}

// postRun validates an experiment and queues it.
func (s *Server) postRun(w http.ResponseWriter, r *http.Request) {
	req, ok := readRequest(w, r)
	if !ok {
		return
	}
	id := results.NewRunID()
	if _, err := s.buildJob(id, req); err != nil {
		badInput(w, err)
		return
	}
	kind, _ := req.str("kind")
	raw, _ := json.Marshal(req)
	if err := s.queue.add(&entry{ID: id, Kind: kind, Submitted: time.Now(), Request: raw}); err != nil {
		writeError(w, http.StatusInternalServerError, &apiError{Error: err.Error()})
		return
	}
	s.log(id)
	s.logf("queue: %s run %s queued", kind, id)
	queued(w, "/api/v1/runs/", id)
}

// listRuns is `results list --json`, newest first, a page at a time:
// ?offset=N&limit=N (default 100), filtered by ?kind= and ?group=.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, err1 := intParam(q.Get("offset"), 0)
	limit, err2 := intParam(q.Get("limit"), 100)
	if err := errors.Join(err1, err2); err != nil || limit < 1 || offset < 0 {
		writeError(w, http.StatusBadRequest, &apiError{Error: "offset and limit are counts: give e.g. ?offset=100&limit=100", Field: "limit"})
		return
	}
	runs, total, err := s.store.List(r.Context(), results.ListQuery{Kind: q.Get("kind"), Group: q.Get("group"), Offset: offset, Limit: limit})
	if err != nil {
		writeError(w, http.StatusInternalServerError, &apiError{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Runs   []results.Listed `json:"runs"`
		Total  int              `json:"total"`
		Offset int              `json:"offset"`
		Limit  int              `json:"limit"`
	}{runs, total, offset, limit})
}

func intParam(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	return strconv.Atoi(s)
}

// showRun is `results show --json`; a run still queued shows as such,
// with no steps.
func (s *Server) showRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if e, ok := s.queue.find(id); ok && e.State == stateQueued {
		writeJSON(w, http.StatusOK, results.Shown{Run: results.Run{ID: id, Kind: e.Kind, Status: stateQueued, StartedAt: e.Submitted},
			Steps: []results.Step{}, Series: []string{}})
		return
	}
	out, err := s.store.Show(r.Context(), id)
	if !s.found(w, id, err) {
		return
	}
	if out.Series == nil {
		out.Series = []string{}
	}
	writeJSON(w, http.StatusOK, out)
}

// found answers 404 for an unknown id, 400 for an ambiguous prefix, 500
// for the rest, and reports whether err was nil.
func (s *Server) found(w http.ResponseWriter, id string, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, results.ErrNotFound):
		writeError(w, http.StatusNotFound, &apiError{Error: fmt.Sprintf("no run %q; see the ids at /api/v1/runs", id)})
	case errors.Is(err, results.ErrAmbiguous):
		writeError(w, http.StatusBadRequest, &apiError{Error: fmt.Sprintf("%q matches more than one run; give more of the id", id)})
	default:
		writeError(w, http.StatusInternalServerError, &apiError{Error: err.Error()})
	}
	return false
}

// streamEvents is a run's or scenario's events as Server-Sent Events:
// everything after the Last-Event-ID the client sends (from the start
// without one), then each event as it comes, until done. A run this serve
// did not run, or no longer remembers, has one event: done, with its
// stored status.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	l, ok := s.existingLog(id)
	if !ok {
		if _, queued := s.queue.find(id); queued {
			l = s.log(id)
		} else if l, ok = s.storedLog(w, r.Context(), id); !ok {
			return
		}
	}
	last, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
	if v := r.URL.Query().Get("last_event_id"); v != "" {
		last, _ = strconv.Atoi(v)
	}
	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // a reverse proxy must not hold the stream back
	w.WriteHeader(http.StatusOK)
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		evs, done, wake := l.after(last)
		for _, e := range evs {
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Name, e.Data)
			last = e.ID
		}
		if flusher != nil {
			flusher.Flush()
		}
		if done {
			return
		}
		select {
		case <-wake:
		case <-keepAlive.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-r.Context().Done():
			return
		}
	}
}

// storedLog is the one-event log of a stored run: done, with its status.
func (s *Server) storedLog(w http.ResponseWriter, ctx context.Context, id string) (*eventLog, bool) {
	run, err := s.store.Run(ctx, id)
	if !s.found(w, id, err) {
		return nil, false
	}
	l := newEventLog()
	l.add("done", doneDoc{Status: run.Status, Outcome: outcomeOfStatus(run.Status), At: time.Now()})
	return l, true
}

// outcomeOfStatus names the outcome a stored status implies.
func outcomeOfStatus(status string) string {
	switch status {
	case results.StatusComplete:
		return experiment.Succeeded.String()
	case results.StatusInterrupted:
		return experiment.InterruptedRun.String()
	case results.StatusRunning:
		return status
	}
	return experiment.Failed.String()
}

// cancel interrupts a running entry (it keeps what it measured) or removes
// a queued one.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	was, ok := s.queue.cancelEntry(id)
	if !ok {
		writeError(w, http.StatusConflict, &apiError{Error: fmt.Sprintf("%q is neither queued nor running; see /api/v1/queue", id)})
		return
	}
	state := "removed"
	if was == stateRunning {
		state = "interrupting"
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": id, "state": state})
}

// listServers is `server status --json` without a data directory: the
// managed servers running on this host, without their DSNs ({"servers":
// […]}), which a TPC-C or TPC-H run names by their datadir.
func (s *Server) listServers(w http.ResponseWriter, r *http.Request) {
	list, err := server.Running(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, &apiError{Error: err.Error()})
		return
	}
	if list == nil {
		list = []server.RunningServer{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"servers": list})
}

// showQueue lists the queue: the running entry first, then the queued
// ones in the order they will run.
func (s *Server) showQueue(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"entries": s.queue.list()})
}

// runsParam is the runs a report or comparison names: ?run=A,B, or
// ?run=A&run=B.
func runsParam(r *http.Request) []string {
	var runs []string
	for _, v := range r.URL.Query()["run"] {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				runs = append(runs, id)
			}
		}
	}
	return runs
}

// compare is every figure of the runs against the first of their kind, as
// the report's ratio tables compute it: {"comparisons":[…]}.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	runs := runsParam(r)
	group := r.URL.Query().Get("group")
	if len(runs) < 2 && group == "" {
		writeError(w, http.StatusBadRequest, &apiError{Error: "name two runs or more: ?run=A&run=B (the first is the baseline), or a results ?group=", Field: "run"})
		return
	}
	out, err := report.Compare(r.Context(), s.store, report.Options{Runs: runs, Group: group})
	if !s.found(w, strings.Join(runs, ","), err) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"comparisons": out})
}

// report is the HTML report of ?run=A,B (or ?run=A&run=B), or of a
// results ?group=, as `tierbench report` writes it.
func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	runs := runsParam(r)
	group := r.URL.Query().Get("group")
	if len(runs) == 0 && group == "" {
		writeError(w, http.StatusBadRequest, &apiError{Error: "name the runs: ?run=A,B, or a results ?group=", Field: "run"})
		return
	}
	dir, err := os.MkdirTemp("", "tierbench-serve-report-")
	if err != nil {
		writeError(w, http.StatusInternalServerError, &apiError{Error: err.Error()})
		return
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "report.html")
	_, err = report.Write(r.Context(), s.store, report.Options{Runs: runs, Group: group, Out: out, Version: version.Version})
	if !s.found(w, strings.Join(runs, ","), err) {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	http.ServeFile(w, r, out)
}
