package cli

import (
	"context"
	"errors"

	"github.com/tierbench/tierbench/internal/scenario"
)

// runScenario runs `scenario run`: the scenario's steps through the
// scenario executor, every run in one results group that its report shows
// together.
func runScenario(ctx context.Context, g *Globals, opts ScenarioRunOptions) error {
	if err := checkResultsDir(opts.Results); err != nil {
		return err
	}
	sc, err := opts.load()
	if err != nil {
		var errs scenario.Errors
		if errors.As(err, &errs) {
			return reportScenarioErrors(g, errs)
		}
		return err
	}
	v := scenarioView{newView(g)}
	group, err := scenario.Execute(ctx, sc, opts.Results, v)
	v.done()
	if err != nil && ctx.Err() != nil {
		g.progressf("scenario %s interrupted; its finished runs are in group %s\n", sc.Name, group)
		return &ExitError{Code: ExitInterrupted}
	}
	return err
}
