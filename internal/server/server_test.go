package server_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// stopAtEnd makes sure no test leaves a server running (registered after the
// directory's own cleanup, so it runs first).
func stopAtEnd(t *testing.T, dataDir string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		server.Stop(ctx, dataDir, "immediate")
	})
}

func query(t *testing.T, ctx context.Context, dsn, sql string) string {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

func exec(t *testing.T, ctx context.Context, dsn, sql string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func TestFindBinariesOnThisHost(t *testing.T) {
	b := pgtest.RequireBinaries(t)
	if b.Major < 10 || b.Version == "" || b.Dir == "" {
		t.Fatalf("FindBinaries = %+v", b)
	}
	// This host's image ships exactly PostgreSQL 15.
	if dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(dirs) == 1 && dirs[0] == "/usr/lib/postgresql/15/bin/initdb" && b.Major != 15 {
		t.Errorf("FindBinaries found %s (%s); want 15", b.Dir, b.Version)
	}
	t.Logf("found PostgreSQL %s in %s", b.Version, b.Dir)
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	bins := pgtest.RequireBinaries(t)
	ctx := testContext(t)
	dataDir := filepath.Join(pgtest.TempDir(t), "data")
	stopAtEnd(t, dataDir)

	// First start: initdb, sized to 256MiB, with an override that beats the sizing.
	start := time.Now()
	info, err := server.Start(ctx, server.Options{
		DataDir: dataDir, Memory: 256 << 20, Settings: map[string]string{"work_mem": "7MB"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("initdb + start: %v", time.Since(start))
	if info.Engine != "postgres" || info.DataDir != dataDir || info.Port <= 0 || info.PID <= 0 ||
		info.Version != bins.Version || info.AlreadyRunning {
		t.Errorf("Start = %+v", info)
	}
	wantPrefix := "postgres://tierbench:"
	wantSuffix := "@127.0.0.1:" + strconv.Itoa(info.Port) + "/postgres?sslmode=disable"
	if !strings.HasPrefix(info.DSN, wantPrefix) || !strings.HasSuffix(info.DSN, wantSuffix) {
		t.Errorf("DSN = %q", info.DSN)
	}
	password := strings.TrimSuffix(strings.TrimPrefix(info.DSN, wantPrefix), wantSuffix)
	if len(password) != 24 {
		t.Errorf("password has %d characters; want 24", len(password))
	}

	if got := query(t, ctx, info.DSN, "SELECT current_user"); got != "tierbench" {
		t.Errorf("current_user = %q", got)
	}
	for setting, want := range map[string]string{
		"shared_buffers": "64MB", "effective_cache_size": "192MB", "work_mem": "7MB",
		"max_connections": "300", "max_wal_size": "4GB", "fsync": "on", "listen_addresses": "127.0.0.1",
	} {
		if got := query(t, ctx, info.DSN, "SHOW "+setting); got != want {
			t.Errorf("SHOW %s = %q; want %q", setting, got, want)
		}
	}
	exec(t, ctx, info.DSN, "CREATE TABLE keep (x int); INSERT INTO keep VALUES (42)")

	// A wrong password is refused: logins are SCRAM only.
	if conn, err := pgx.Connect(ctx, strings.Replace(info.DSN, password, "wrong", 1)); err == nil {
		conn.Close(ctx)
		t.Error("a wrong password was accepted")
	}

	// Files: the state file holds the password, so 0600; all of it belongs to the service user.
	fi, err := os.Stat(filepath.Join(dataDir, server.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s mode %v; want 0600", server.StateFile, fi.Mode().Perm())
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup(server.ServiceUser)
		if err != nil {
			u, err = user.Lookup("postgres")
		}
		if err != nil {
			t.Fatalf("no service user after Start: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if fi, err := os.Lstat(p); err == nil && int(fi.Sys().(*syscall.Stat_t).Uid) != uid {
				t.Errorf("%s belongs to uid %d; want %s (%d)", p, fi.Sys().(*syscall.Stat_t).Uid, u.Username, uid)
			}
			return nil
		})
	}
	for _, name := range []string{server.LogFile, server.ConfFile, "postgresql.conf", "pg_hba.conf"} {
		b, err := os.ReadFile(filepath.Join(dataDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), password) {
			t.Errorf("%s contains the password", name)
		}
	}

	// Start on a running server: no error, the same server.
	again, err := server.Start(ctx, server.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	if !again.AlreadyRunning || again.DSN != info.DSN || again.PID != info.PID {
		t.Errorf("second Start = %+v; want already running with the same DSN and PID", again)
	}

	st, err := server.Status(ctx, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Running || st.PID != info.PID || st.Port != info.Port || st.DSN != info.DSN || st.Version != bins.Version {
		t.Errorf("Status = %+v", st)
	}

	was, err := server.Stop(ctx, dataDir, "")
	if err != nil || !was {
		t.Fatalf("Stop = %v, %v", was, err)
	}
	st, err = server.Status(ctx, dataDir)
	if err != nil || st.Running || st.DSN != "" || st.PID != 0 {
		t.Errorf("Status after Stop = %+v, %v", st, err)
	}
	if was, err := server.Stop(ctx, dataDir, "fast"); err != nil || was {
		t.Errorf("Stop of a stopped server = %v, %v; want false, nil", was, err)
	}

	// Restart: same port and password, data kept, no --memory means PostgreSQL's defaults.
	re, err := server.Start(ctx, server.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	if re.AlreadyRunning || re.DSN != info.DSN || re.PID == info.PID {
		t.Errorf("restart = %+v", re)
	}
	if got := query(t, ctx, re.DSN, "SELECT x::text FROM keep"); got != "42" {
		t.Errorf("after restart keep.x = %q", got)
	}
	if got := query(t, ctx, re.DSN, "SHOW shared_buffers"); got != "128MB" {
		t.Errorf("after restart without --memory shared_buffers = %q; want the default 128MB", got)
	}

	// Immediate stop, then a start runs crash recovery and keeps committed data.
	if was, err := server.Stop(ctx, dataDir, "immediate"); err != nil || !was {
		t.Fatalf("Stop immediate = %v, %v", was, err)
	}
	// A start that fails says why, from the server's log.
	_, err = server.Start(ctx, server.Options{DataDir: dataDir, Settings: map[string]string{"shared_buffers": "lots"}})
	if err == nil {
		t.Fatal("Start with shared_buffers=lots succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, `invalid value for parameter "shared_buffers"`) ||
		!strings.Contains(msg, server.LogFile) || strings.Contains(msg, "\n") {
		t.Errorf("error does not show the log on one line: %v", err)
	}
	re, err = server.Start(ctx, server.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	if got := query(t, ctx, re.DSN, "SELECT x::text FROM keep"); got != "42" {
		t.Errorf("after crash recovery keep.x = %q", got)
	}
}

func TestStartRefuses(t *testing.T) {
	ctx := testContext(t)
	var de *server.DataDirError

	foreign := pgtest.TempDir(t)
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := server.Start(ctx, server.Options{DataDir: foreign})
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty foreign directory: err = %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "notes.txt")); string(b) != "mine" {
		t.Error("the foreign directory was touched")
	}

	file := filepath.Join(foreign, "notes.txt")
	if _, err := server.Start(ctx, server.Options{DataDir: file}); !errors.As(err, &de) || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("regular file: err = %v", err)
	}

	if _, err := server.Status(ctx, foreign); !errors.As(err, &de) {
		t.Errorf("Status of a foreign directory: err = %v", err)
	}
	if _, err := server.Stop(ctx, filepath.Join(foreign, "nothing"), ""); !errors.As(err, &de) {
		t.Errorf("Stop of a missing directory: err = %v", err)
	}
}

func TestStartRefusesUnreachableParent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root switches to a service user that may not reach the directory")
	}
	ctx := testContext(t)
	closed := t.TempDir()
	if err := os.Chmod(closed, 0o700); err != nil { // owned by root, closed to others
		t.Fatal(err)
	}
	dataDir := filepath.Join(closed, "data")
	_, err := server.Start(ctx, server.Options{DataDir: dataDir})
	var de *server.DataDirError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "is not reachable by user") ||
		!strings.Contains(err.Error(), closed+" is not searchable") || !strings.Contains(err.Error(), "/var/tmp") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused data directory was left behind: %v", err)
	}
}

func TestLongDataDirUsesShortSocketDir(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	ctx := testContext(t)
	dataDir := filepath.Join(pgtest.TempDir(t), strings.Repeat("long-", 18), "data")
	stopAtEnd(t, dataDir)
	info, err := server.Start(ctx, server.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	dir := query(t, ctx, info.DSN, "SHOW unix_socket_directories")
	if !strings.HasPrefix(dir, "/tmp/tierbench-sock-") {
		t.Fatalf("unix_socket_directories = %q for a %d-character data directory", dir, len(dataDir))
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory %s: %v, %v", dir, fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".s.PGSQL."+strconv.Itoa(info.Port))); err != nil {
		t.Errorf("no socket: %v", err)
	}
	if _, err := server.Stop(ctx, dataDir, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket directory %s left after Stop: %v", dir, err)
	}
}
