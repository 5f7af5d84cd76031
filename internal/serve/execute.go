package serve

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/results"
)

// execute runs a queue entry to its end and closes its event log with a
// done event: the stored status, the outcome and, unless it succeeded,
// why.
func (s *Server) execute(ctx context.Context, e *entry, raw json.RawMessage) {
	log := s.log(e.ID)
	var req request
	_ = json.Unmarshal(raw, &req)
	if e.Kind == kindScenario {
		s.executeScenario(ctx, e, req, log)
		return
	}
	s.logf("queue: %s run %s started", e.Kind, e.ID)
	var err error
	j, err := s.buildJob(e.ID, req) // validated when posted; a rule may have changed since (a file gone)
	if err == nil {
		obs := experiment.Tee(&observer{log: log}, s.metrics.Observer())
		var res any
		res, err = j.run(ctx, obs)
		kneeNotes(log, res)
	}
	done := doneDoc{Status: s.storedStatus(e.ID), Outcome: experiment.OutcomeOf(err).String(), At: time.Now()}
	if err != nil {
		// The engines redact their own errors; this catches the rest.
		dsn, _ := req.str("dsn")
		done.Error = engine.RedactIn(apiWords(err.Error()), dsn)
	}
	s.logf("queue: %s run %s ended %s (%s)", e.Kind, e.ID, done.Status, done.Outcome)
	log.add("done", done)
}

// kneeNotes notes a rate sweep's knees, in the words `tpcc run` and `disk
// run` print them, before the run's done event.
func kneeNotes(log *eventLog, res any) {
	var knees []string
	switch r := res.(type) {
	case *experiment.TPCCResult:
		knees = r.KneeTexts()
	case *experiment.DiskResult:
		knees = r.KneeTexts()
	}
	note := (&observer{log: log}).Note
	for _, k := range knees {
		note(k)
	}
}

// storedStatus is a run's status in the store: failed when it was never
// recorded.
func (s *Server) storedStatus(id string) string {
	run, err := s.store.Run(context.Background(), id)
	if err != nil {
		return results.StatusFailed
	}
	return run.Status
}
