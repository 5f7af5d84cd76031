package cli

import (
	"context"
	"errors"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/scenario"
	"github.com/tierbench/tierbench/internal/threshold"
)

// scenarioRunOutput is the JSON of `scenario run`: where its runs went.
type scenarioRunOutput struct {
	Name         string   `json:"name"`
	Status       string   `json:"status"` // complete, failed or interrupted
	Group        string   `json:"group"`  // the results group of its runs
	Results      string   `json:"results"`
	Runs         []string `json:"runs"` // the group's run ids, oldest first
	Report       string   `json:"report,omitempty"`
	FailedChecks int      `json:"failed_checks"`
	// Breaches are the thresholds its runs breached (the exit code is 3).
	Breaches []threshold.Verdict `json:"breaches,omitempty"`
}

// runScenario runs `scenario run`: the scenario's steps through the
// scenario executor, every run in one results group that its report shows
// together.
func runScenario(ctx context.Context, g *Globals, opts ScenarioRunOptions) error {
	if err := checkResultsDir(opts.Results); err != nil {
		return err
	}
	if opts.Data == "" {
		if sets, err := opts.sets(); err == nil {
			if _, given := sets["data"]; !given {
				if dir := reachableDataDir(ctx, g, scenario.DefaultDataDir, "--data"); dir != scenario.DefaultDataDir {
					opts.Data = dir
				}
			}
		}
	}
	noisy := opts.Noisy.Judge()
	if err := experiment.CheckNoisy(noisy); err != nil {
		return options.Flagged(err, nil)
	}
	sc, err := opts.load()
	if err == nil {
		err = scenario.CheckHosts(ctx, sc)
	}
	if err != nil {
		var errs scenario.Errors
		if errors.As(err, &errs) {
			return reportScenarioErrors(g, errs)
		}
		return err
	}
	v := &scenarioView{view: newView(g)}
	m, err := opts.metricsOptions.start(g)
	if err != nil {
		return err
	}
	defer m.close(ctx)
	so := m.scenarioOptions()
	so.Noisy = noisy
	group, err := scenario.Execute(ctx, sc, opts.Results, m.scenario(v), so)
	v.done()
	out := scenarioRunOutput{Name: sc.Name, Status: results.StatusComplete, Group: group, Results: opts.Results,
		Runs: groupRunIDs(ctx, opts.Results, group), Report: v.report}
	var failed *scenario.ChecksFailed
	var breached *scenario.ThresholdsBreached
	switch {
	case err != nil && ctx.Err() != nil:
		out.Status = results.StatusInterrupted
		g.progressf("scenario %s interrupted; its finished runs are in group %s\n", sc.Name, group)
		err = &ExitError{Code: ExitInterrupted}
	case errors.As(err, &failed):
		out.FailedChecks = failed.N
		out.Status = results.StatusFailed
	case errors.As(err, &breached):
		for _, r := range breached.Runs {
			out.Breaches = append(out.Breaches, r.Breaches...)
		}
	case err != nil:
		out.Status = results.StatusFailed // the error says why, on stderr
	}
	if g.JSON {
		if perr := g.printJSON(out); perr != nil && err == nil {
			return perr
		}
	}
	return err
}

// groupRunIDs lists the runs of a results group, oldest first (none when
// the store cannot be read).
func groupRunIDs(ctx context.Context, dir, group string) []string {
	ids := []string{}
	store, err := results.OpenReadOnly(dir)
	if err != nil {
		return ids
	}
	defer store.Close()
	runs, _ := store.Runs(context.WithoutCancel(ctx))
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Group == group {
			ids = append(ids, runs[i].ID)
		}
	}
	return ids
}
