package experiment

import (
	"errors"

	"github.com/tierbench/tierbench/internal/engine"
)

// Outcome is how a run or a front end's job ended, in the words every front
// end maps to its own codes: the command line to exit codes, an HTTP API to
// statuses.
type Outcome int

const (
	// Succeeded: finished, and every verdict passed.
	Succeeded Outcome = iota
	// Failed: a runtime failure (a server that died, a tool that failed).
	Failed
	// BadInput: the config cannot run as given; nothing was recorded.
	BadInput
	// ThresholdsBreached: finished, but broke at least one threshold.
	ThresholdsBreached
	// InterruptedRun: stopped before its end, keeping what it measured.
	InterruptedRun
	// VerdictFailed: finished, and what it measured fails its test, e.g.
	// committed New-Orders lost in a durability test, or a consistency
	// check that does not hold.
	VerdictFailed
)

// String names the outcome as documents and logs show it.
func (o Outcome) String() string {
	switch o {
	case Succeeded:
		return "succeeded"
	case BadInput:
		return "bad input"
	case ThresholdsBreached:
		return "thresholds breached"
	case InterruptedRun:
		return "interrupted"
	case VerdictFailed:
		return "verdict failed"
	}
	return "failed"
}

// Verdict is the error of a run that finished and whose measurements fail
// their test: a durability test that lost committed New-Orders, a
// consistency check with violations. Msg says what failed ("" when the
// front end already showed the verdict).
type Verdict struct {
	RunID string
	Msg   string
}

func (e *Verdict) Error() string { return e.Msg }

// OutcomeOf classifies the error a run or a job returned. An interruption
// wins over everything it may wrap; bad input is ErrInvalid or the engines'
// ErrBadInput.
func OutcomeOf(err error) Outcome {
	var interrupted *Interrupted
	var breached *Breached
	var verdict *Verdict
	switch {
	case err == nil:
		return Succeeded
	case errors.As(err, &interrupted):
		return InterruptedRun
	case errors.As(err, &breached):
		return ThresholdsBreached
	case errors.As(err, &verdict):
		return VerdictFailed
	case errors.Is(err, ErrInvalid), errors.Is(err, engine.ErrBadInput):
		return BadInput
	}
	return Failed
}
