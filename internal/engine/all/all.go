// Package all maps a DSN's scheme to the engine that serves it: the one
// explicit table of engines (no init-time registration).
package all

import (
	"context"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/postgres"
)

// Constructor opens a database of one engine.
type Constructor func(ctx context.Context, dsn string) (engine.DB, error)

// Engines lists every engine tierbench can drive, by name.
var Engines = map[string]Constructor{
	"postgres": func(ctx context.Context, dsn string) (engine.DB, error) { return postgres.Open(ctx, dsn) },
}

// Open connects to the database named by dsn, choosing the engine by the
// DSN's scheme.
func Open(ctx context.Context, dsn string) (engine.DB, error) {
	name, err := engine.SchemeOf(dsn)
	if err != nil {
		return nil, err
	}
	open, ok := Engines[name]
	if !ok {
		return nil, engine.InputErrorf("engine %q is not supported yet; use a postgres:// DSN", name)
	}
	return open(ctx, dsn)
}
