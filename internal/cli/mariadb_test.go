package cli_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/clustertest"
	"github.com/tierbench/tierbench/internal/engine/mariadb"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/mariatest"
)

// startMariaDB runs `server start --engine mariadb` in a new data directory
// of the test's own and returns its JSON; the server is stopped when the
// test ends.
func startMariaDB(t *testing.T, dataDir string, more ...string) serverStartDoc {
	t.Helper()
	mariatest.RequireBinaries(t)
	t.Cleanup(func() {
		server.Stop(context.Background(), dataDir, "immediate")
		server.RemoveLimits(dataDir)
	})
	args := append([]string{"server", "start", "--json", "--engine", "mariadb", "--datadir", dataDir}, more...)
	code, out, errOut := runTierbench(t, args...)
	if code != 0 {
		t.Fatalf("server start --engine mariadb: exit %d: %s", code, errOut)
	}
	var doc serverStartDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.DSN == "" {
		t.Fatalf("server start --json: %v\n%s", err, out)
	}
	return doc
}

type serverStartDoc struct {
	Engine  string `json:"engine"`
	DSN     string `json:"dsn"`
	DataDir string `json:"datadir"`
	Port    int    `json:"port"`
	PID     int    `json:"pid"`
	Limits  *struct {
		MemoryMax int64    `json:"memory_max_bytes"`
		Notes     []string `json:"notes"`
	} `json:"limits"`
}

// The managed MariaDB through the CLI: start with --memory (the buffer pool
// sized from it and, where cgroups allow, the cap read back), status, a
// second start, stop, and a refusal to start PostgreSQL in its directory.
func TestMariaDBServerCommands(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(mariatest.TempDir(t), "maria")
	doc := startMariaDB(t, dataDir, "--memory", "512MiB", "--set", "innodb_io_capacity=777")
	if doc.Engine != "mariadb" || !strings.HasPrefix(doc.DSN, "mariadb://tierbench:") || doc.PID == 0 {
		t.Fatalf("server start: %+v", doc)
	}
	if os.Geteuid() == 0 {
		if doc.Limits == nil || doc.Limits.MemoryMax != 512<<20 {
			t.Errorf("the memory cap read back: %+v", doc.Limits)
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(doc.PID) + "/status")
		if err != nil || strings.Contains(string(b), "\nUid:\t0\t") {
			t.Errorf("mariadbd runs as root (%v)", err)
		}
	}
	code, out, errOut := runTierbench(t, "server", "status", "--datadir", dataDir)
	if code != 0 || !strings.Contains(out, "MariaDB ") || !strings.Contains(out, "running (pid "+strconv.Itoa(doc.PID)) {
		t.Errorf("server status: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "dsn") {
		t.Errorf("server status without --json shows the DSN:\n%s", out)
	}
	code, out, errOut = runTierbench(t, "server", "start", "--datadir", dataDir)
	if code != 0 || !strings.Contains(out, "MariaDB ") || !strings.Contains(out, "was already running") {
		t.Errorf("second server start: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = runTierbench(t, "server", "start", "--engine", "postgres", "--datadir", dataDir)
	if code != 2 || !strings.Contains(errOut, "holds a managed MariaDB server") {
		t.Errorf("server start --engine postgres on a MariaDB directory: exit %d, %s", code, errOut)
	}
	code, _, errOut = runTierbench(t, "server", "start", "--engine", "mariadb", "--datadir", filepath.Join(dataDir, "x"), "--set", "bad name=1")
	if code != 2 || !strings.Contains(errOut, "not a MariaDB option name") {
		t.Errorf("a bad --set name: exit %d, %s", code, errOut)
	}
	code, out, errOut = runTierbench(t, "server", "stop", "--json", "--datadir", dataDir)
	if code != 0 || !strings.Contains(out, `"engine": "mariadb"`) || !strings.Contains(out, `"was_running": true`) {
		t.Errorf("server stop: exit %d\n%s%s", code, out, errOut)
	}
}

// Connecting fails with one line that says why: a wrong password names the
// user and what to check, never the password; a closed port asks whether
// the server runs.
func TestMariaDBConnectErrors(t *testing.T) {
	t.Parallel()
	dsn := mariatest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "wrong-password-42")
	args := []string{"tpcc", "check", "--dsn", u.String()}
	code, out, errOut := runTierbench(t, args...)
	badInputLine(t, args, code, out, errOut, 1, "Access denied", "check the user and password")
	if strings.Contains(errOut, "wrong-password-42") {
		t.Errorf("the password shows: %s", errOut)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	args = []string{"tpcc", "check", "--dsn", "mysql://u:pw-secret-9@" + closed + "/db"}
	code, out, errOut = runTierbench(t, args...)
	badInputLine(t, args, code, out, errOut, 1, closed, "is the server running")
	if strings.Contains(errOut, "pw-secret-9") {
		t.Errorf("the password shows: %s", errOut)
	}
}

// TestSecretsMariaDB: the managed MariaDB's password and a user's password
// in mysql:// and mariadb:// DSNs appear nowhere but where documented —
// not in any command's output, the store, the report, the server's files
// and log, nor any process's command line while the commands run.
func TestSecretsMariaDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := mariatest.TempDir(t)
	dataDir := filepath.Join(base, "data", "db")
	started := startMariaDB(t, dataDir)
	u, err := url.Parse(started.DSN)
	if err != nil {
		t.Fatal(err)
	}
	managedPW, _ := u.User.Password()
	pw, pwRuns := distinctivePassword(t)
	wrongPW, wrongRuns := distinctivePassword(t)
	scan := &leakScan{t: t}
	scan.add("the DSN's password", pw, pwRuns...)
	scan.add("the wrong password", wrongPW, wrongRuns...)
	scan.add(managedSecret, managedPW, managedPW[:8], managedPW[8:16], managedPW[16:])

	// A user of the test's own with the distinctive password.
	const user, dbName = "tb_secret_user", "tb_secrets"
	mariaAdmin(ctx, t, started.DSN,
		"CREATE USER '"+user+"'@'127.0.0.1' IDENTIFIED BY '"+strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw)+"'",
		"GRANT ALL PRIVILEGES ON *.* TO '"+user+"'@'127.0.0.1'",
		"CREATE DATABASE "+dbName)
	host := net.JoinHostPort("127.0.0.1", strconv.Itoa(started.Port))
	dsnURL := func(scheme, password, host string) string {
		return (&url.URL{Scheme: scheme, User: url.UserPassword(user, password), Host: host, Path: "/" + dbName}).String()
	}
	var (
		dsn      = dsnURL("mysql", pw, host)
		mariaDSN = dsnURL("mariadb", pw, host)
		queryDSN = "mysql://" + user + "@" + host + "/" + dbName + "?password=" + url.QueryEscape(pw)
		wrongDSN = dsnURL("mysql", wrongPW, host)
		downDSN  = dsnURL("mysql", pw, "127.0.0.1:1")
		rawDSN   = "mysql://" + user + ":" + pw + "@" + host + "/" + dbName // the password pasted unescaped
	)
	res := filepath.Join(base, "results")

	// The process list, sampled while the commands run: no secret may show
	// in any process's command line (mariadbd's, mariadb-backup's, ours).
	cmdlines := clustertest.WatchCmdlines(t)

	calls := []struct {
		args []string
		ok   bool
	}{
		{[]string{"tpcc", "build", "--dsn", dsn, "--warehouses", "1", "--build-vus", "2"}, true},
		{[]string{"tpcc", "check", "--dsn", mariaDSN}, true},
		{[]string{"tpcc", "check", "--json", "--dsn", queryDSN}, true},
		{[]string{"tpcc", "check", "--dsn", wrongDSN}, false},
		{[]string{"tpcc", "check", "--dsn", downDSN}, false},
		{[]string{"tpcc", "check", "--dsn", rawDSN}, false},
		{[]string{"tpcc", "build", "--dsn", dsn, "--warehouses", "1"}, false}, // a schema is there: no --drop
		{[]string{"tpcc", "run", "--dsn", dsn, "--vus", "1", "--rampup", "0s", "--duration", "2s", "--rate", "1200", "--results", res}, true},
		{[]string{"tpcc", "run", "--json", "--dsn", mariaDSN, "--mode", "statements", "--vus", "1", "--rampup", "0s", "--duration", "2s",
			"--rate", "1200", "--results", res}, true},
		{[]string{"tpcc", "run", "--dsn", wrongDSN, "--vus", "1", "--duration", "2s", "--results", res}, false},
		{[]string{"monitor", "--target", base, "--duration", "2s", "--dsn", dsn, "--results", res}, true},
		{[]string{"backup", "run", "--json", "--dsn", dsn, "--datadir", dataDir, "--target", filepath.Join(base, "backup-physical"),
			"--cycles", "1", "--keep", "--results", res}, true},
		{[]string{"backup", "run", "--dsn", dsn, "--target", filepath.Join(base, "backup-logical"), "--logical", "--jobs", "2",
			"--cycles", "1", "--keep", "--results", res}, true},
		{[]string{"durability", "--dsn", dsn, "--cycles", "1", "--vus", "1", "--run-before-fault", "2s", "--fault", "command",
			"--fault-command", "true", "--recover-timeout", "30s", "--results", res}, true},
		{[]string{"server", "status", "--datadir", dataDir}, true},
	}
	for _, c := range calls {
		name := redactArgs(c.args)
		code, out, errOut := runTierbench(t, c.args...)
		t.Logf("exit %d: %s", code, name)
		scan.run(name, c.ok, code, out, errOut)
	}
	lines := cmdlines.Lines()
	for _, c := range lines {
		scan.check("a process's command line", c)
	}
	if len(lines) == 0 {
		t.Error("the process list was never read")
	}
	reportOut := filepath.Join(base, "report", "all.html")
	if code, out, errOut := runTierbench(t, "report", "--results", res, "--out", reportOut); code != 0 {
		t.Errorf("report: exit %d\n%s", code, errOut)
	} else {
		scan.check("report", out+errOut)
	}
	scan.tree(res)
	scan.store(ctx, res)
	scan.tree(filepath.Join(base, "report"))
	scan.tree(filepath.Join(base, "backup-logical"))
	// The server's own files: its option file, its error log.
	for _, f := range []string{server.LogFile, server.MariaConfFile} {
		b, err := os.ReadFile(filepath.Join(dataDir, f))
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		scan.check(filepath.Join(dataDir, f), string(b))
	}
	for path, want := range map[string]os.FileMode{dataDir: 0o700, filepath.Join(dataDir, server.StateFile): 0o600,
		filepath.Join(dataDir, server.MariaConfFile): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %04o", path, fi.Mode().Perm(), err, want)
		}
	}
	// 127.0.0.2 is loopback too: a server on 0.0.0.0 would answer there.
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.2", strconv.Itoa(started.Port)), 2*time.Second); err == nil {
		c.Close()
		t.Errorf("the managed MariaDB answers on 127.0.0.2:%d; it must listen on 127.0.0.1 only", started.Port)
	}
}

// mariaAdmin runs statements on a MariaDB as the user of dsn.
func mariaAdmin(ctx context.Context, t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	cfg, err := mariadb.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", strings.Fields(s)[:2], err)
		}
	}
}
