package cli

import (
	"context"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/inventory"
	"github.com/tierbench/tierbench/internal/results"
)

// captureEnvironment stores the inventory of what a run runs on (host,
// the target's devices and filesystem, the database's version and
// settings) in the run. What cannot be found is stored as unknown and said
// once on stderr; a store that refuses it fails the run's start.
func captureEnvironment(ctx context.Context, g *Globals, store *results.Store, runID, target string,
	db engine.DB, engineName, fioVersion string) error {
	target, _ = localTarget(ctx, target, db)
	o := inventory.Options{Target: target, DB: db, Engine: engineName, TierbenchVersion: Version, FioVersion: fioVersion}
	env, notes := inventory.Collect(ctx, o)
	for _, n := range notes {
		g.progressf("%s\n", n)
	}
	return store.SetDocument(ctx, runID, results.DocEnvironment, env)
}
