package scenario

import (
	"context"
	"errors"
	"fmt"
)

// Executor does the work of each step kind; the CLI implements it. The
// runner decides the order, this does the work.
type Executor interface {
	// PrepareTarget makes a target usable (directories, loop images,
	// throttles) and returns the path to use for it.
	PrepareTarget(ctx context.Context, t Target) (path string, err error)
	// StartServers starts (or clones) the instances of a server, on the
	// prepared target.
	StartServers(ctx context.Context, s Server, t Target, instances []string) error
	Disk(ctx context.Context, st *DiskStep) error
	TPCCBuild(ctx context.Context, st *TPCCBuildStep) error
	TPCCRun(ctx context.Context, st *TPCCRunStep) error
	TPCHBuild(ctx context.Context, st *TPCHBuildStep) error
	TPCHRun(ctx context.Context, st *TPCHRunStep) error
	Backup(ctx context.Context, st *BackupStep) error
	Neighbours(ctx context.Context, st *NeighboursStep) error
	Check(ctx context.Context, st *CheckStep) error
	Durability(ctx context.Context, st *DurabilityStep) error
	Space(ctx context.Context, st *SpaceStep) error
	// Stop stops a server's instances (those running; not an error when
	// none is).
	Stop(ctx context.Context, st *StopStep) error
	Report(ctx context.Context, st *ReportStep) error
	// Cleanup undoes what the scenario set up. It is always called, with a
	// context that is not cancelled even when the run's was.
	Cleanup(ctx context.Context) error
}

// Run runs a scenario's steps in order. Targets are prepared first; a server
// is started just before the first step that needs it. progress (may be nil)
// is told of each step (1-based) before it starts. The first failing step
// stops the run; when ctx is cancelled the error wraps ctx.Err(). Cleanup is
// always called and its error joined to the run's.
func Run(ctx context.Context, sc *Scenario, ex Executor, progress func(step int, total int, st Step)) (err error) {
	defer func() {
		if cerr := ex.Cleanup(context.WithoutCancel(ctx)); cerr != nil {
			err = errors.Join(err, fmt.Errorf("scenario %s: cleaning up: %w", sc.Name, cerr))
		}
	}()
	total := len(sc.Steps)
	prepared := make(map[string]Target, len(sc.Targets))
	for _, t := range sc.Targets {
		if ctx.Err() != nil {
			return fmt.Errorf("scenario %s interrupted while preparing targets: %w", sc.Name, ctx.Err())
		}
		path, err := ex.PrepareTarget(ctx, t)
		if err != nil {
			return fmt.Errorf("scenario %s: preparing target %s (%s): %w", sc.Name, t.Name, t.Path, stopped(ctx, err))
		}
		if path != "" {
			t.Path = path
		}
		prepared[t.Name] = t
	}
	started := map[string]bool{}
	for i, st := range sc.Steps {
		where := fmt.Sprintf("scenario %s, step %d of %d (%s, line %d)", sc.Name, i+1, total, st.Kind, st.Line)
		if ctx.Err() != nil {
			return fmt.Errorf("%s: interrupted before it started: %w", where, ctx.Err())
		}
		if progress != nil {
			progress(i+1, total, st)
		}
		for _, name := range st.Servers() {
			if started[name] {
				continue
			}
			s, ok := sc.Server(name)
			if !ok {
				return fmt.Errorf("%s: server %s is not defined", where, name)
			}
			t, ok := prepared[s.Target]
			if !ok {
				return fmt.Errorf("%s: server %s: target %s is not defined", where, name, s.Target)
			}
			if err := ex.StartServers(ctx, s, t, s.Instances()); err != nil {
				return fmt.Errorf("%s: starting server %s: %w", where, name, stopped(ctx, err))
			}
			started[name] = true
		}
		if err := runStep(ctx, ex, st); err != nil {
			return fmt.Errorf("%s: %w", where, stopped(ctx, err))
		}
		switch {
		case st.Stop != nil:
			started[st.Stop.Server] = false // a later step starts it again
		case st.Space != nil && st.Space.Server != "":
			started[st.Space.Server] = false // stopped for a consistent scan
		}
	}
	return nil
}

// stopped makes an error that a cancellation caused wrap ctx.Err(), so
// callers can tell an interrupted run from a failed one.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() == nil || errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("interrupted: %w (%v)", ctx.Err(), err)
}

func runStep(ctx context.Context, ex Executor, st Step) error {
	switch {
	case st.Disk != nil:
		return ex.Disk(ctx, st.Disk)
	case st.TPCCBuild != nil:
		return ex.TPCCBuild(ctx, st.TPCCBuild)
	case st.TPCCRun != nil:
		return ex.TPCCRun(ctx, st.TPCCRun)
	case st.TPCHBuild != nil:
		return ex.TPCHBuild(ctx, st.TPCHBuild)
	case st.TPCHRun != nil:
		return ex.TPCHRun(ctx, st.TPCHRun)
	case st.Backup != nil:
		return ex.Backup(ctx, st.Backup)
	case st.Neighbours != nil:
		return ex.Neighbours(ctx, st.Neighbours)
	case st.Check != nil:
		return ex.Check(ctx, st.Check)
	case st.Durability != nil:
		return ex.Durability(ctx, st.Durability)
	case st.Space != nil:
		return ex.Space(ctx, st.Space)
	case st.Stop != nil:
		return ex.Stop(ctx, st.Stop)
	case st.Report != nil:
		return ex.Report(ctx, st.Report)
	}
	return fmt.Errorf("step kind %q has nothing to run", st.Kind)
}
