// Package pgtest gives integration tests a real PostgreSQL: one managed
// server per test process, started on first use, and a fresh database per
// test. Use it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		dsn := pgtest.NewDatabase(t)
//		...
//	}
//
// TIERBENCH_TEST_DSN points the tests at an existing server instead. Without
// the PostgreSQL server binaries the tests skip, except when CI=true: CI must
// never pass by skipping. mariatest is the same for MariaDB; both are
// servertest underneath.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/servertest"
)

// EnvDSN names the variable that points tests at an existing server.
const EnvDSN = "TIERBENCH_TEST_DSN"

// harness is this process's PostgreSQL: a package variable because every
// test of the process shares its server, and Main stops it.
var harness = &servertest.Harness{
	Engine: "postgres", Display: "PostgreSQL", EnvDSN: EnvDSN,
	Settings: map[string]string{"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"},
	Binaries: func() error { _, err := server.FindBinaries(""); return err },
	CreateDB: func(ctx context.Context, admin, name string) error {
		return execAdmin(ctx, admin, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	},
	DropDB: func(ctx context.Context, admin, name string) error {
		return execAdmin(ctx, admin, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	},
	WithDatabase: withDatabase,
}

// MissingBinaries skips the test (or, when CI=true, fails it) with the reason.
func MissingBinaries(t testing.TB, reason error) { t.Helper(); harness.MissingBinaries(t, reason) }

// RequireBinaries returns the PostgreSQL server binaries, skipping the test
// (failing it in CI) when there are none.
func RequireBinaries(t testing.TB) server.Binaries {
	t.Helper()
	b, err := server.FindBinaries("")
	if err != nil {
		MissingBinaries(t, err)
	}
	return b
}

// TempDir is a world-searchable directory for a managed data directory,
// removed when the test ends (servertest.TempDir).
func TempDir(t testing.TB) string { t.Helper(); return servertest.TempDir(t) }

// StartManaged starts a managed PostgreSQL of the test's own, stopped when
// the test ends; for tests that stop, kill or copy their server.
func StartManaged(t testing.TB, ctx context.Context) server.Info {
	t.Helper()
	return harness.StartManaged(t, ctx)
}

// StartCloned starts a managed PostgreSQL of the test's own, stopped when
// the test ends, from a copy of one that fill filled once per test process
// for name (a TPC-C build, say), then stopped.
func StartCloned(t testing.TB, ctx context.Context, name string, fill func(ctx context.Context, dsn string) error) server.Info {
	t.Helper()
	return harness.StartCloned(t, ctx, name, fill)
}

// DSN is the DSN of this process's shared server (a superuser), started on
// first use, or TIERBENCH_TEST_DSN when set.
func DSN(t testing.TB) string { t.Helper(); return harness.DSN(t) }

// NewDatabase creates an empty database on the shared server (or on
// TIERBENCH_TEST_DSN's), returns its DSN and drops it when the test ends.
func NewDatabase(t testing.TB) string { t.Helper(); return harness.NewDatabase(t) }

// Main runs the tests, then stops the shared servers (of every engine) that
// were started. Call it from TestMain.
func Main(m *testing.M) { servertest.Main(m) }

func execAdmin(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase points a URL or keyword/value DSN at database name.
func withDatabase(dsn, name string) (string, error) {
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("%w", err)
		}
		u.Path, u.RawPath = "/"+name, ""
		return u.String(), nil
	}
	return dsn + " dbname=" + name, nil // a later keyword wins
}
