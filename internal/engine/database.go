package engine

import (
	"context"
	"net/url"
)

// DatabaseCreator is a DB that can make another database on its server:
// for a workload whose tables must not share one with another's (TPC-H's
// ORDERS beside TPC-C's).
type DatabaseCreator interface {
	// CreateDatabase makes database name on the server unless it is
	// there already, and returns the DSN of it (the DB's own, pointed at
	// name).
	CreateDatabase(ctx context.Context, name string) (dsn string, err error)
}

// WithDatabase is dsn, a URL, pointed at database name.
func WithDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", InputErrorf("DSN %s is not a URL", Redact(dsn))
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String(), nil
}
