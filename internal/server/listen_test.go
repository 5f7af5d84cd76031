package server_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/url"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/clustertest"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/mariatest"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// checkCmdlines stops the watch and fails the test if a command line held secret,
// or if no command line of a program named want was seen (the watch saw
// the server start).
func checkCmdlines(t *testing.T, w *clustertest.Cmdlines, secret string, want ...string) {
	t.Helper()
	lines := w.Lines()
	found := map[string]bool{}
	for _, c := range lines {
		if strings.Contains(c, secret) {
			t.Errorf("a process's command line holds the password: %q", strings.ReplaceAll(c, secret, "<PASSWORD>"))
		}
		for _, name := range want {
			if strings.Contains(c, name) {
				found[name] = true
			}
		}
	}
	for _, name := range want {
		if !found[name] {
			t.Errorf("the watch never saw %s's command line (%d seen): it did not sample the start", name, len(lines))
		}
	}
	t.Logf("%d command lines seen, none with the password", len(lines))
}

// inNamespace runs name args… in host 0 of c with extra environment
// variables, and returns its output.
func inNamespace(t *testing.T, c *clustertest.Cluster, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := c.Exec(t, 0, name, args...)
	cmd.Env = append(os.Environ(), env...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			if cmd.Process != nil {
				cmd.Process.Kill()
			}
		case <-done:
		}
	}()
	out, err := cmd.CombinedOutput()
	close(done)
	return strings.TrimSpace(string(out)), err
}

// fromLoopback2 dials from 127.0.0.2, an address of this host outside
// every network a server allows but 127.0.0.1/32.
func fromLoopback2(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}
	return d.DialContext(ctx, network, addr)
}

// A PostgreSQL started with Listen: reachable at that address from its
// network (another network namespace on the bridge, and this host) with
// the password, from nowhere else and never without it; pg_hba.conf says
// so; no command line holds the password; a start without Listen goes back
// to 127.0.0.1 alone.
func TestListenPostgres(t *testing.T) {
	pgtest.RequireBinaries(t)
	c := clustertest.New(t, 1, clustertest.Options{})
	addr, network := c.Controller, c.Subnet.String()
	ctx := testContext(t)
	dataDir := filepath.Join(pgtest.TempDir(t), "data")
	stopAtEnd(t, dataDir)

	watch := clustertest.WatchCmdlines(t)
	info, err := server.Start(ctx, server.Options{DataDir: dataDir, Listen: addr})
	if err != nil {
		t.Fatal(err)
	}
	pw := clustertest.Password(t, info.DSN)
	if u, _ := url.Parse(info.DSN); u.Host != net.JoinHostPort(addr, strconv.Itoa(info.Port)) {
		t.Errorf("DSN host %s; want %s:%d", u.Host, addr, info.Port)
	}
	if !slices.Equal(info.Listen, []string{addr, "127.0.0.1"}) || info.Network != network {
		t.Errorf("Info.Listen %v, Network %q; want [%s 127.0.0.1], %s", info.Listen, info.Network, addr, network)
	}
	hba, err := os.ReadFile(filepath.Join(dataDir, "pg_hba.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"host all all " + network + " scram-sha-256", "host replication all " + network + " scram-sha-256",
		"host all all 127.0.0.1/32 scram-sha-256", "local all all scram-sha-256"} {
		if !strings.Contains(string(hba), "\n"+line+"\n") {
			t.Errorf("pg_hba.conf lacks %q:\n%s", line, hba)
		}
	}

	// This host, at the address (its source address is addr: in the network).
	conn, err := pgx.Connect(ctx, info.DSN)
	if err != nil {
		t.Fatalf("a password login at %s failed: %v", addr, err)
	}
	var listen, client string
	if err := conn.QueryRow(ctx, "SELECT current_setting('listen_addresses'), host(inet_client_addr())").Scan(&listen, &client); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if listen != "127.0.0.1,"+addr || client != addr {
		t.Errorf("listen_addresses %q, client %q; want 127.0.0.1,%s and %s", listen, client, addr, addr)
	}
	// 127.0.0.1 still answers.
	local := strings.Replace(info.DSN, "@"+addr+":", "@127.0.0.1:", 1)
	if conn, err := pgx.Connect(ctx, local); err != nil {
		t.Errorf("a password login at 127.0.0.1 failed: %v", err)
	} else {
		conn.Close(ctx)
	}

	// Another host of the network: a namespace on the bridge, with psql.
	port := strconv.Itoa(info.Port)
	psql := []string{"-X", "-w", "-At", "-h", addr, "-p", port, "-U", server.DBUser, "-d", "postgres", "-c", "SELECT host(inet_client_addr())"}
	noPass := []string{"PGPASSWORD=", "PGPASSFILE=" + filepath.Join(t.TempDir(), "none"), "PGSSLMODE=disable", "PGCONNECT_TIMEOUT=5"}
	out, err := inNamespace(t, c, append(noPass, "PGPASSWORD="+pw), "psql", psql...)
	if err != nil || out != c.Hosts[0].Addr {
		t.Errorf("psql from %s with the password: %v: %s; want its address back", c.Hosts[0].Addr, err, out)
	}
	if out, err := inNamespace(t, c, noPass, "psql", psql...); err == nil {
		t.Errorf("psql from %s without a password got in: %s", c.Hosts[0].Addr, out)
	}
	if out, err := inNamespace(t, c, append(noPass, "PGPASSWORD=wrong"), "psql", psql...); err == nil || !strings.Contains(out, "password authentication failed") {
		t.Errorf("psql from %s with a wrong password: %v: %s", c.Hosts[0].Addr, err, out)
	}
	// Without a password from this host too.
	u, _ := url.Parse(info.DSN)
	u.User = url.User(server.DBUser)
	if conn, err := pgx.Connect(ctx, u.String()); err == nil {
		conn.Close(ctx)
		t.Error("a login at the address without a password got in")
	}
	// From outside the network (and not 127.0.0.1): no rule lets it in.
	cfg, err := pgx.ParseConfig(info.DSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DialFunc = fromLoopback2
	if conn, err := pgx.ConnectConfig(ctx, cfg); err == nil {
		conn.Close(ctx)
		t.Error("a login from 127.0.0.2, outside the network, got in")
	} else if !strings.Contains(err.Error(), "no pg_hba.conf entry") {
		t.Errorf("a login from 127.0.0.2: %v; want no pg_hba.conf entry", err)
	}

	st, err := server.Status(ctx, dataDir)
	if err != nil || st.DSN != info.DSN || !slices.Equal(st.Listen, info.Listen) || st.Network != network {
		t.Errorf("Status = %+v, %v; want the DSN, Listen and Network of the start", st, err)
	}
	// Running: a start asking for the same address reports it; one asking
	// for another is refused, as the server would not move.
	if again, err := server.Start(ctx, server.Options{DataDir: dataDir, Listen: addr}); err != nil || !again.AlreadyRunning || again.DSN != info.DSN {
		t.Errorf("a second start: %+v, %v", again, err)
	}
	if again, err := server.Start(ctx, server.Options{DataDir: dataDir}); err != nil || !again.AlreadyRunning || again.DSN != info.DSN {
		t.Errorf("a second start without Listen: %+v, %v; want the running server as it is", again, err)
	}
	// A crash and the durability test's restart: the same DSN answers.
	if _, err := server.Signal(ctx, dataDir, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if again, err := server.Restart(ctx, dataDir, time.Minute); err != nil || again.DSN != info.DSN || !slices.Equal(again.Listen, info.Listen) {
		t.Errorf("Restart: listening on %v (the same DSN: %v), %v; want the DSN and listen addresses of the start", again.Listen, again.DSN == info.DSN, err)
	} else if conn, err := pgx.Connect(ctx, info.DSN); err != nil {
		t.Errorf("a password login at %s after the restart failed: %v", addr, err)
	} else {
		conn.Close(ctx)
	}
	checkCmdlines(t, watch, pw, "initdb", "pg_ctl", "postgres")

	// A start without Listen: 127.0.0.1 only, and pg_hba.conf with it.
	if _, err := server.Stop(ctx, dataDir, ""); err != nil {
		t.Fatal(err)
	}
	plain, err := server.Start(ctx, server.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plain.DSN, "@127.0.0.1:") || !slices.Equal(plain.Listen, []string{"127.0.0.1"}) || plain.Network != "" {
		t.Errorf("a start without Listen: %+v", plain)
	}
	if hba, _ := os.ReadFile(filepath.Join(dataDir, "pg_hba.conf")); strings.Contains(string(hba), network) {
		t.Errorf("pg_hba.conf still allows %s:\n%s", network, hba)
	}
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(addr, strconv.Itoa(plain.Port)), 2*time.Second); err == nil {
		c.Close()
		t.Errorf("the server still answers at %s", addr)
	}
	var de *server.DataDirError
	if _, err := server.Start(ctx, server.Options{DataDir: dataDir, Listen: addr}); !errors.As(err, &de) || !strings.Contains(err.Error(), "stop it") {
		t.Errorf("a start with Listen on a server running without: %v; want a DataDirError saying to stop it", err)
	}
}

// An IPv6 listen address: a unique-local address the test gives the
// bridge.
func TestListenPostgresIPv6(t *testing.T) {
	pgtest.RequireBinaries(t)
	c := clustertest.New(t, 1, clustertest.Options{})
	octets := c.Subnet.Addr().As4()
	addr := "fd7b:" + strconv.Itoa(int(octets[1])) + ":" + strconv.Itoa(int(octets[2])) + "::1"
	if out, err := osexec.Command("ip", "-6", "addr", "add", addr+"/64", "dev", c.Bridge, "nodad").CombinedOutput(); err != nil {
		t.Skipf("cannot give the bridge an IPv6 address: %v: %s", err, out)
	}
	ctx := testContext(t)
	dataDir := filepath.Join(pgtest.TempDir(t), "data")
	stopAtEnd(t, dataDir)
	info, err := server.Start(ctx, server.Options{DataDir: dataDir, Listen: addr})
	if err != nil {
		t.Fatal(err)
	}
	wantNet := strings.TrimSuffix(addr, "1") + "/64"
	if !strings.Contains(info.DSN, "@["+addr+"]:") || info.Network != wantNet {
		t.Errorf("Info %+v; want a DSN at [%s] and network %s", info, addr, wantNet)
	}
	conn, err := pgx.Connect(ctx, info.DSN)
	if err != nil {
		t.Fatalf("a password login at [%s]: %v", addr, err)
	}
	defer conn.Close(ctx)
	var client string
	if err := conn.QueryRow(ctx, "SELECT host(inet_client_addr())").Scan(&client); err != nil || client != addr {
		t.Errorf("client address %q, %v; want %s", client, err, addr)
	}
}

func mariaConnect(t *testing.T, cfg *mysql.Config) (string, error) {
	t.Helper()
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var user string
	err = db.QueryRow("SELECT CURRENT_USER()").Scan(&user)
	return user, err
}

// The same for MariaDB: a tierbench account for the network, bound to the
// address and 127.0.0.1, and dropped again by a start without Listen.
func TestListenMariaDB(t *testing.T) {
	mariatest.RequireBinaries(t)
	c := clustertest.New(t, 1, clustertest.Options{})
	addr, network := c.Controller, c.Subnet.String()
	pattern := c.Subnet.Addr().String() + "/255.255.255.0"
	ctx := testContext(t)
	dataDir := filepath.Join(mariatest.TempDir(t), "data")
	stopAtEnd(t, dataDir)

	watch := clustertest.WatchCmdlines(t)
	info, err := server.Start(ctx, server.Options{Engine: server.EngineMariaDB, DataDir: dataDir, Listen: addr})
	if err != nil {
		t.Fatal(err)
	}
	pw := clustertest.Password(t, info.DSN)
	if !strings.HasPrefix(info.DSN, "mariadb://tierbench:") || !strings.Contains(info.DSN, "@"+addr+":") ||
		!slices.Equal(info.Listen, []string{addr, "127.0.0.1"}) || info.Network != network {
		t.Errorf("Info %+v; want a DSN at %s, Listen [%s 127.0.0.1], Network %s", info, addr, addr, network)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Timeout = server.DBUser, pw, "tcp", 5*time.Second
	cfg.Addr = net.JoinHostPort(addr, strconv.Itoa(info.Port))
	if user, err := mariaConnect(t, cfg); err != nil || user != server.DBUser+"@"+pattern {
		t.Errorf("a password login at %s: %q, %v; want the account %s@%s", addr, user, err, server.DBUser, pattern)
	}
	loop := *cfg
	loop.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(info.Port))
	if user, err := mariaConnect(t, &loop); err != nil || user != server.DBUser+"@127.0.0.1" {
		t.Errorf("a password login at 127.0.0.1: %q, %v", user, err)
	}
	noPass := *cfg
	noPass.Passwd = ""
	if _, err := mariaConnect(t, &noPass); err == nil {
		t.Error("a login at the address without a password got in")
	}
	outside := *cfg
	outside.DialFunc = fromLoopback2
	if _, err := mariaConnect(t, &outside); err == nil || !strings.Contains(err.Error(), "not allowed to connect") {
		t.Errorf("a login from 127.0.0.2, outside the network: %v; want not allowed", err)
	}

	// Another host of the network, with the mariadb client.
	client := []string{"--no-defaults", "-h", addr, "-P", strconv.Itoa(info.Port), "-u", server.DBUser, "--connect-timeout=5", "-N", "-e", "SELECT CURRENT_USER()"}
	if out, err := inNamespace(t, c, []string{"MYSQL_PWD=" + pw}, "mariadb", client...); err != nil || out != server.DBUser+"@"+pattern {
		t.Errorf("mariadb from %s with the password: %v: %s", c.Hosts[0].Addr, err, out)
	}
	if out, err := inNamespace(t, c, []string{"MYSQL_PWD="}, "mariadb", client...); err == nil {
		t.Errorf("mariadb from %s without a password got in: %s", c.Hosts[0].Addr, out)
	}
	st, err := server.Status(ctx, dataDir)
	if err != nil || st.DSN != info.DSN || st.Network != network {
		t.Errorf("Status = %+v, %v", st, err)
	}
	checkCmdlines(t, watch, pw, "mariadb-install-db", "mariadbd")

	// Without Listen: the network's account is gone, 127.0.0.1 alone answers.
	if _, err := server.Stop(ctx, dataDir, ""); err != nil {
		t.Fatal(err)
	}
	plain, err := server.Start(ctx, server.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plain.DSN, "@127.0.0.1:") || plain.Network != "" {
		t.Errorf("a start without Listen: %+v", plain)
	}
	mysqlDB, _ := url.Parse(plain.DSN)
	mysqlDB.Path = "/mysql"
	if hosts := mariaQuery(t, mysqlDB.String(),
		"SELECT GROUP_CONCAT(Host ORDER BY Host) FROM mysql.user WHERE User = 'tierbench'"); hosts != "127.0.0.1,localhost" {
		t.Errorf("tierbench accounts after a start without Listen: %s; want 127.0.0.1,localhost", hosts)
	}
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(addr, strconv.Itoa(plain.Port)), 2*time.Second); err == nil {
		c.Close()
		t.Errorf("the server still answers at %s", addr)
	}
	// A bad address is refused before anything is made.
	var le *server.ListenError
	fresh := filepath.Join(mariatest.TempDir(t), "fresh")
	if _, err := server.Start(ctx, server.Options{Engine: server.EngineMariaDB, DataDir: fresh, Listen: "0.0.0.0"}); !errors.As(err, &le) {
		t.Errorf("MariaDB listening on 0.0.0.0: %v; want a ListenError", err)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Errorf("a start refused for its listen address made %s", fresh)
	}
}
