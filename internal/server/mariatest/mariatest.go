// Package mariatest gives integration tests a real MariaDB: one managed
// server per test process, started on first use, and a fresh database per
// test, as pgtest does for PostgreSQL:
//
//	func TestMain(m *testing.M) { mariatest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		dsn := mariatest.NewDatabase(t) // mysql://tierbench:…@127.0.0.1:PORT/tb_…
//		...
//	}
//
// TIERBENCH_TEST_MARIADB_DSN points the tests at an existing server instead
// (its user must be able to create databases). Without mariadbd the tests
// skip, except when CI=true.
package mariatest

import (
	"context"
	"database/sql"
	"net/url"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/engine/mariadb"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/servertest"
)

// EnvDSN names the variable that points tests at an existing server.
const EnvDSN = "TIERBENCH_TEST_MARIADB_DSN"

var harness = &servertest.Harness{
	Engine: "mariadb", Display: "MariaDB", EnvDSN: EnvDSN,
	Settings: map[string]string{"innodb_flush_log_at_trx_commit": "0", "innodb_doublewrite": "0", "sync_binlog": "0"},
	Binaries: func() error { _, err := server.FindMariaDB(); return err },
	CreateDB: func(ctx context.Context, admin, name string) error {
		return execAdmin(ctx, admin, "CREATE DATABASE `"+name+"`")
	},
	DropDB: func(ctx context.Context, admin, name string) error {
		return execAdmin(ctx, admin, "DROP DATABASE IF EXISTS `"+name+"`")
	},
	WithDatabase: func(dsn, name string) (string, error) {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", err
		}
		u.Path, u.RawPath = "/"+name, ""
		return u.String(), nil
	},
}

// MissingBinaries skips the test (or, when CI=true, fails it) with the reason.
func MissingBinaries(t testing.TB, reason error) { t.Helper(); harness.MissingBinaries(t, reason) }

// RequireBinaries skips the test (fails it in CI) without mariadbd.
func RequireBinaries(t testing.TB) { t.Helper(); harness.RequireBinaries(t) }

// TempDir is a world-searchable directory for a managed data directory,
// removed when the test ends.
func TempDir(t testing.TB) string { t.Helper(); return servertest.TempDir(t) }

// StartManaged starts a managed MariaDB of the test's own, stopped when the
// test ends; for tests that stop, kill or copy their server.
func StartManaged(t testing.TB, ctx context.Context) server.Info {
	t.Helper()
	return harness.StartManaged(t, ctx)
}

// StartCloned starts a managed MariaDB of the test's own, stopped when the
// test ends, from a copy of one that fill filled once per test process for
// name (a TPC-C build, say), then stopped: a copy takes a second or two
// where a build of one warehouse takes ten of CPU.
func StartCloned(t testing.TB, ctx context.Context, name string, fill func(ctx context.Context, dsn string) error) server.Info {
	t.Helper()
	return harness.StartCloned(t, ctx, name, fill)
}

// DSN is the DSN of this process's shared server (all privileges), started
// on first use, or TIERBENCH_TEST_MARIADB_DSN when set.
func DSN(t testing.TB) string { t.Helper(); return harness.DSN(t) }

// NewDatabase creates an empty database on the shared server, returns its
// DSN and drops it when the test ends.
func NewDatabase(t testing.TB) string { t.Helper(); return harness.NewDatabase(t) }

// Main runs the tests, then stops the shared servers (of every engine) that
// were started. Call it from TestMain.
func Main(m *testing.M) { servertest.Main(m) }

func execAdmin(ctx context.Context, dsn, stmt string) error {
	cfg, err := mariadb.ParseDSN(dsn)
	if err != nil {
		return err
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}
