package experiment

import (
	"context"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/threshold"
)

// Breached is the error of a run that finished but broke at least one of
// its thresholds: a front end's "failed the gate" (the command line's exit
// code 3), distinct from bad input and from a run that failed.
type Breached struct {
	RunID    string
	Breaches []threshold.Verdict
}

func (e *Breached) Error() string {
	parts := make([]string, 0, len(e.Breaches))
	for _, v := range e.Breaches {
		parts = append(parts, v.Brief())
	}
	n := len(e.Breaches)
	what := "threshold"
	if n > 1 {
		what = "thresholds"
	}
	return fmt.Sprintf("run %s breached %d %s: %s", e.RunID, n, what, strings.Join(parts, "; "))
}

// judge keeps a run's verdicts as its steps or points finish.
type judge struct {
	ts       []threshold.Threshold
	verdicts []threshold.Verdict
	obs      Observer
}

// step judges one finished step or point and tells the observer.
func (j *judge) step(index int, name string, doc any) {
	if len(j.ts) == 0 {
		return
	}
	vs := threshold.Judge(j.ts, index, name, doc)
	j.verdicts = append(j.verdicts, vs...)
	if len(vs) > 0 {
		j.obs.Result(Result{Thresholds: vs})
	}
}

// finish closes the judgement of a run that ended with status: a complete
// run also fails each threshold no step had a figure for. The verdicts are
// stored as the run's thresholds document and returned.
func (j *judge) finish(ctx context.Context, rec *recording, status string) []threshold.Verdict {
	if len(j.ts) == 0 {
		return nil
	}
	if status == results.StatusComplete {
		if un := threshold.Unmatched(j.ts, j.verdicts); len(un) > 0 {
			j.verdicts = append(j.verdicts, un...)
			j.obs.Result(Result{Thresholds: un})
		}
	}
	rec.keep(rec.store.SetDocument(context.WithoutCancel(ctx), rec.run.ID, results.DocThresholds, j.verdicts))
	return j.verdicts
}

// gate turns a finished run's error and verdicts into its error: a run
// that ended well but breached a threshold returns *Breached.
func gate(runID string, err error, verdicts []threshold.Verdict) error {
	if err != nil {
		return err
	}
	if b := threshold.Breaches(verdicts); len(b) > 0 {
		return &Breached{RunID: runID, Breaches: b}
	}
	return nil
}
