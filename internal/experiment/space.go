package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/space"
	"github.com/tierbench/tierbench/internal/stored"
)

// SpaceConfig scans Target, a directory (a server's data directory), a
// file or a block device, read-only.
type SpaceConfig struct {
	Record
	Target  string
	Options space.Options // its Progress is the observer's
	// Actual, when set, says what the file system really stored of the
	// target (an emulated tier), recorded beside the estimate.
	Actual func(ctx context.Context) (*space.Actual, error)
}

// SpaceResult is a space run's document: what `space --json` prints and
// the store keeps as the run's summary. Its space.Document is also the
// run's one step, which the report reads.
type SpaceResult struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	space.Document
}

// SpaceProgress is a scan's progress.
type SpaceProgress = space.Progress

// RunSpace scans and records a space run. Progress events carry the scan's
// progress (Progress.Scan). Interrupted, it keeps what it read, marked
// partial.
func RunSpace(ctx context.Context, cfg SpaceConfig, obs Observer) (*SpaceResult, error) {
	obs = serial(obs)
	o := cfg.Options
	if err := space.Check(cfg.Target, &o); err != nil {
		return nil, Invalid(err)
	}
	rec, err := start(ctx, begin{Record: cfg.Record, kind: stored.KindSpace, target: cfg.Target,
		params: &stored.SpaceParams{Target: cfg.Target, Block: o.BlockSize, KeepBelow: o.KeepBelow, ZstdSample: o.ZstdSample, Placement: cfg.Placement}}, obs)
	if err != nil {
		return nil, err
	}
	o.Progress = func(p space.Progress) { obs.Progress(Progress{Scan: &p}) }
	began := time.Now()
	res, scanErr := space.Scan(ctx, cfg.Target, o)
	out := &SpaceResult{RunID: rec.run.ID, Status: results.StatusComplete}
	if res != nil {
		out.Result = *res
	}
	if out.Live {
		out.LiveNote = space.LiveNote
		obs.Note("the scan read data in use: " + space.LiveNote)
	}
	if scanErr == nil && cfg.Actual != nil {
		if a, err := cfg.Actual(ctx); err != nil {
			obs.Note(fmt.Sprintf("what the file system really stored is unknown: %v", err))
		} else {
			out.Actual = a
		}
	}
	if res != nil {
		doc, err := json.Marshal(out.Document)
		if err == nil {
			rec.addStep(ctx, results.Step{Index: 0, Name: "scan", StartedAt: began, MeasureStart: began, MeasureEnd: time.Now(), Metrics: doc})
		}
		rec.keep(err)
	}
	switch {
	case ctx.Err() != nil:
		out.Status = results.StatusInterrupted
		return out, rec.finish(ctx, end{status: out.Status, out: out, kept: "a partial scan"})
	case scanErr != nil:
		out.Status = results.StatusFailed
		if errors.Is(scanErr, space.ErrBadInput) {
			scanErr = Invalid(scanErr)
		}
		return out, rec.finish(ctx, end{status: out.Status, out: out, runErr: scanErr, done: "part of the scan"})
	}
	return out, rec.finish(ctx, end{status: out.Status, out: out})
}
