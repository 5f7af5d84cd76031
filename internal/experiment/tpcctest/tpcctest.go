// Package tpcctest gives tests a TPC-C schema of their own: a copy of one
// built once per test process on pgtest's shared server, or a build.
package tpcctest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/mariatest"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// templates are the TPC-C schemas built once per test process on the
// shared server, by warehouse count: a test gets its own copy of one in a
// second or so (CREATE DATABASE … TEMPLATE), where a build takes ten or
// more on a 2-core CI host.
var templates struct {
	sync.Mutex
	names map[int]string
}

// Database returns the DSN of a new database of the test's own,
// dropped when it ends, holding a freshly built TPC-C schema of the given
// warehouses. Against TIERBENCH_TEST_DSN, which is not ours to leave
// templates on, it builds the schema in the test's database instead.
func Database(t *testing.T, warehouses int) string {
	t.Helper()
	if os.Getenv(pgtest.EnvDSN) != "" {
		dsn := pgtest.NewDatabase(t)
		Build(t, context.Background(), dsn, warehouses)
		return dsn
	}
	admin := pgtest.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	templates.Lock()
	defer templates.Unlock()
	tmpl, ok := templates.names[warehouses]
	if !ok {
		tmpl = fmt.Sprintf("tb_tpcc%d_%s", warehouses, randomName(t))
		adminExec(t, ctx, admin, "CREATE DATABASE "+pgx.Identifier{tmpl}.Sanitize())
		Build(t, ctx, databaseDSN(t, admin, tmpl), warehouses)
		if templates.names == nil {
			templates.names = map[int]string{}
		}
		templates.names[warehouses] = tmpl
	}
	name := "tb_" + randomName(t)
	adminExec(t, ctx, admin, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{tmpl}.Sanitize()+
		" STRATEGY FILE_COPY")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		adminExec(t, ctx, admin, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	return databaseDSN(t, admin, name)
}

func randomName(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func adminExec(t *testing.T, ctx context.Context, dsn, sql string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// databaseDSN points the shared server's URL DSN at database name.
func databaseDSN(t *testing.T, dsn, name string) string {
	t.Helper()
	if !strings.Contains(dsn, "://") {
		return dsn + " dbname=" + name
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String()
}

// Build builds a TPC-C schema of the given warehouses at dsn.
func Build(t testing.TB, ctx context.Context, dsn string, warehouses int) {
	t.Helper()
	if err := build(ctx, dsn, warehouses); err != nil {
		t.Fatal(err)
	}
}

func build(ctx context.Context, dsn string, warehouses int) error {
	db, err := experiment.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = experiment.Build(ctx, db, engine.BuildOptions{Warehouses: warehouses, Workers: 2}, experiment.Nop{})
	return err
}

// Postgres starts a managed PostgreSQL of the test's own, stopped when the
// test ends, holding a TPC-C schema of the given warehouses: a copy of one
// built once per test process (pgtest.StartCloned), for the tests that
// stop, kill or back up the server itself, which Database's shared server
// is not theirs to do.
func Postgres(t testing.TB, ctx context.Context, warehouses int) server.Info {
	t.Helper()
	return pgtest.StartCloned(t, ctx, fmt.Sprintf("tpcc%d", warehouses), func(ctx context.Context, dsn string) error {
		return build(ctx, dsn, warehouses)
	})
}

// MariaDB starts a managed MariaDB of the test's own, stopped when the test
// ends, holding a TPC-C schema of the given warehouses: a copy of one built
// once per test process (mariatest.StartCloned).
func MariaDB(t testing.TB, ctx context.Context, warehouses int) server.Info {
	t.Helper()
	return mariatest.StartCloned(t, ctx, fmt.Sprintf("tpcc%d", warehouses), func(ctx context.Context, dsn string) error {
		return build(ctx, dsn, warehouses)
	})
}

// StallBackends stops the backends serving the database at dsn (but the
// connection that finds them) for d, as a stalled server would, and
// returns when they stopped and when they went on (zero if they did not).
func StallBackends(t *testing.T, ctx context.Context, dsn string, d time.Duration) (from, to time.Time) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
	if err != nil {
		t.Error(err)
		return
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil || len(pids) == 0 {
		t.Errorf("the backends to stall: %v %v", pids, err)
		return
	}
	for _, p := range pids {
		_ = syscall.Kill(int(p), syscall.SIGSTOP)
	}
	from = time.Now()
	time.Sleep(d)
	to = time.Now()
	for _, p := range pids {
		_ = syscall.Kill(int(p), syscall.SIGCONT)
	}
	return from, to
}
