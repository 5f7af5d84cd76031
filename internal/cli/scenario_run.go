package cli

import (
	"context"
	"errors"
)

// runScenario runs `scenario run`: a stub until the executor lands (its
// author replaces this file). opts.load() reads the scenario, with --data
// applied; reportScenarioErrors prints its problems, one line each, exit 2.
func runScenario(_ context.Context, _ *Globals, _ ScenarioRunOptions) error {
	return errors.New("scenario run: not implemented yet")
}
