package server_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/engine/mariadb"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/mariatest"
)

func mariaQuery(t *testing.T, dsn, q string) string {
	t.Helper()
	cfg, err := mariadb.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	var v string
	if err := db.QueryRow(q).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// TestMariaDBStartStopStatus starts a managed MariaDB (as the tierbench user
// when root), sized by --memory, and reads the sizing back from the server.
func TestMariaDBStartStopStatus(t *testing.T) {
	mariatest.RequireBinaries(t)
	ctx := context.Background()
	dir := filepath.Join(mariatest.TempDir(t), "maria")
	t.Cleanup(func() { server.Stop(context.Background(), dir, "immediate") })
	info, err := server.Start(ctx, server.Options{Engine: "mariadb", DataDir: dir, Memory: 512 << 20,
		Settings: map[string]string{"innodb_io_capacity": "1234"}})
	if err != nil {
		t.Fatal(err)
	}
	if info.Engine != "mariadb" || !strings.HasPrefix(info.DSN, "mariadb://tierbench:") || info.PID == 0 {
		t.Fatalf("info %+v", info)
	}
	if got := mariaQuery(t, info.DSN, "SELECT @@innodb_buffer_pool_size"); got != "335544320" { // 5/8 of 512 MiB
		t.Errorf("innodb_buffer_pool_size = %s, want 320 MiB", got)
	}
	if got := mariaQuery(t, info.DSN, "SELECT @@innodb_io_capacity"); got != "1234" {
		t.Errorf("--set innodb_io_capacity: %s", got)
	}
	if got := mariaQuery(t, info.DSN, "SELECT @@innodb_flush_log_at_trx_commit"); got != "1" {
		t.Errorf("innodb_flush_log_at_trx_commit = %s, want the safe 1", got)
	}
	if got := mariaQuery(t, info.DSN, "SELECT @@bind_address"); got != "127.0.0.1" {
		t.Errorf("bind_address = %s", got)
	}
	if os.Geteuid() == 0 {
		if u := mariaQuery(t, info.DSN, "SELECT @@datadir"); u == "" {
			t.Error("no datadir")
		}
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(info.PID) + "/status")
		if !strings.Contains(string(b), "Uid:\t") || strings.Contains(string(b), "Uid:\t0\t") {
			t.Errorf("mariadbd runs as root:\n%s", b)
		}
	}
	// Temporary files go to a directory of the server's own, private to its
	// user, not to the shared /tmp; the stop removes it.
	tmp := mariaQuery(t, info.DSN, "SELECT @@tmpdir")
	if fi, err := os.Stat(tmp); tmp == os.TempDir() || !strings.HasPrefix(tmp, os.TempDir()) || err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("tmpdir %q (%v): want a 0700 directory of its own in %s", tmp, err, os.TempDir())
	} else if pidStatus, _ := os.ReadFile("/proc/" + strconv.Itoa(info.PID) + "/status"); !strings.Contains(string(pidStatus),
		"Uid:\t"+strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid))+"\t") {
		t.Errorf("tmpdir %s is not the server's user's", tmp)
	}
	st, err := server.Status(ctx, dir)
	if err != nil || !st.Running || st.Engine != "mariadb" || st.DSN != info.DSN {
		t.Fatalf("status %+v, %v", st, err)
	}
	list, err := server.Running(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rs := range list {
		found = found || rs.DataDir == info.DataDir && rs.Engine == "mariadb" && rs.PID == info.PID
	}
	if !found {
		t.Errorf("server.Running does not list %s: %+v", info.DataDir, list)
	}
	// A second start finds it running.
	again, err := server.Start(ctx, server.Options{DataDir: dir})
	if err != nil || !again.AlreadyRunning {
		t.Fatalf("second start: %+v %v", again, err)
	}
	// The wrong engine for a managed directory is refused.
	if _, err := server.Start(ctx, server.Options{Engine: "postgres", DataDir: dir}); err == nil || !strings.Contains(err.Error(), "MariaDB") {
		t.Errorf("postgres start on a MariaDB directory: %v", err)
	}
	was, err := server.Stop(ctx, dir, "fast")
	if err != nil || !was {
		t.Fatalf("stop: %v %v", was, err)
	}
	if st, _ := server.Status(ctx, dir); st.Running {
		t.Fatal("still running after stop")
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the stopped server's tmpdir %s is still there (%v)", tmp, err)
	}
	// Restart after a kill: crash recovery, same port and password.
	info2, err := server.Start(ctx, server.Options{DataDir: dir, StartTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if info2.DSN != info.DSN {
		t.Errorf("restart changed the DSN")
	}
	if got := mariaQuery(t, info2.DSN, "SELECT @@innodb_buffer_pool_size"); got == "335544320" {
		t.Errorf("a start without --memory kept the last start's sizing")
	}
}

func TestMariaDBRefusesForeignDirectory(t *testing.T) {
	mariatest.RequireBinaries(t)
	dir := filepath.Join(mariatest.TempDir(t), "foreign")
	for _, d := range []string{dir, filepath.Join(dir, "mysql")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "ibdata1"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := server.Start(context.Background(), server.Options{Engine: "mariadb", DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "MariaDB/MySQL data directory that tierbench did not create") {
		t.Fatalf("got %v", err)
	}
}
