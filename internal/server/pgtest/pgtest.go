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
// never pass by skipping.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/server"
)

// EnvDSN names the variable that points tests at an existing server.
const EnvDSN = "TIERBENCH_TEST_DSN"

// shared is the one server of this test process. A package variable is the
// point here: every test of the process shares it, and Main stops it.
var shared struct {
	once    sync.Once
	dir     string // the world-searchable directory holding the data directory
	dataDir string
	dsn     string
	missing error // no server binaries: skip (or fail in CI)
	err     error // the server did not start
}

// MissingBinaries skips the test (or, when CI=true, fails it) with the reason.
func MissingBinaries(t testing.TB, reason error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("PostgreSQL is required in CI: %v", reason)
	}
	t.Skipf("skipping: %v", reason)
}

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

// TempDir is a directory for a managed data directory, removed when the test
// ends. Unlike t.TempDir (mode 0700), it is world-searchable, so that when the
// tests run as root the unprivileged user running PostgreSQL can enter it.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := worldDir("tierbench-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// StartManaged starts a managed server of the test's own in a new data
// directory (DIR/data of a TempDir), stopped when the test ends; for tests
// that stop, kill or copy their server.
func StartManaged(t testing.TB, ctx context.Context) server.Info {
	t.Helper()
	RequireBinaries(t)
	dataDir := filepath.Join(TempDir(t), "data")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		server.Stop(ctx, dataDir, "immediate")
	})
	info, err := server.Start(ctx, server.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func worldDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// DSN is the DSN of this process's shared server (a superuser), started on
// first use, or TIERBENCH_TEST_DSN when set.
func DSN(t testing.TB) string {
	t.Helper()
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		return dsn
	}
	shared.once.Do(startShared)
	if shared.missing != nil {
		MissingBinaries(t, shared.missing)
	}
	if shared.err != nil {
		t.Fatalf("starting the shared test server: %v", shared.err)
	}
	return shared.dsn
}

func startShared() {
	if _, err := server.FindBinaries(""); err != nil {
		shared.missing = err
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reapOrphans(ctx)
	dir, err := worldDir(sharedPrefix)
	if err != nil {
		shared.err = err
		return
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		shared.err = err
		return
	}
	info, err := server.Start(ctx, server.Options{
		DataDir: filepath.Join(dir, "data"),
		// Test data is thrown away: durability would only slow the tests.
		Settings: map[string]string{"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"},
	})
	if err != nil {
		os.RemoveAll(dir)
		shared.err = err
		return
	}
	shared.dir, shared.dataDir, shared.dsn = dir, info.DataDir, info.DSN
}

// A shared server's directory is named sharedPrefix* and records the PID of
// the test process that owns it.
const (
	sharedPrefix = "tierbench-pgtest-"
	ownerFile    = "owner.pid"
)

// reapOrphans stops and removes shared servers whose test process died
// without reaching Main's cleanup (a panic, a -timeout, a kill).
func reapOrphans(ctx context.Context) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), sharedPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		if _, err := server.Stop(ctx, filepath.Join(dir, "data"), "immediate"); err != nil {
			var de *server.DataDirError
			if !errors.As(err, &de) { // a directory without a server is just removed
				continue
			}
		}
		os.RemoveAll(dir)
	}
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// NewDatabase creates an empty database on the shared server (or on
// TIERBENCH_TEST_DSN's), returns its DSN and drops it when the test ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	base := DSN(t)
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name := "tb_" + hex.EncodeToString(b)
	ident := pgx.Identifier{name}.Sanitize()
	if err := execAdmin(base, "CREATE DATABASE "+ident); err != nil {
		t.Fatalf("creating test database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := execAdmin(base, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping test database %s: %v", name, err)
		}
	})
	dsn, err := withDatabase(base, name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

func execAdmin(dsn, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
			return "", fmt.Errorf("%s is not a valid DSN: %w", EnvDSN, err)
		}
		u.Path, u.RawPath = "/"+name, ""
		return u.String(), nil
	}
	return dsn + " dbname=" + name, nil // a later keyword wins
}

// Main runs the tests, then stops the shared server if one was started and
// removes its directory. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if _, err := server.Stop(ctx, shared.dataDir, "immediate"); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stopping the shared server: %v\n", err)
		}
		cancel()
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}
