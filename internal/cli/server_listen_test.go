package cli_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/clustertest"
	"github.com/tierbench/tierbench/internal/remote"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// The cluster's use of a managed server, end to end: a controller (this
// test, in the root network namespace) tells a host (a namespace on a
// bridge, with sshd) over ssh to start a PostgreSQL listening on its
// address, loads it there with `tpcc build --dsn -` (the DSN on ssh's
// stdin), checks it over the network, clones it with `server clone` and
// reads `server status`: every --json document is the one thing on ssh's
// stdout, no password is on any command line of either side, and logins
// need the password.
func TestServerListenRemote(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	c := clustertest.New(t, 1, clustertest.Options{SSH: true})
	clustertest.ShareSSH(t, c)
	h := remote.Host{Name: "h1", SSH: c.Hosts[0].SSH, Tierbench: clustertest.Tierbench(t)}
	addr := c.Hosts[0].Addr
	base := pgtest.TempDir(t)
	src, dst := filepath.Join(base, "db-1"), filepath.Join(base, "db-2")
	for _, d := range []string{src, dst} {
		t.Cleanup(func() { server.Stop(context.Background(), d, "immediate") }) // before the namespace goes
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	watch := clustertest.WatchCmdlines(t)

	var started serverDoc
	if err := h.JSON(ctx, nil, &started, "server", "start", "--datadir", src, "--listen", addr); err != nil {
		t.Fatalf("server start on the host: %v", err)
	}
	pw := clustertest.Password(t, started.DSN)
	if u, _ := url.Parse(started.DSN); u.Host != net.JoinHostPort(addr, strconv.Itoa(started.Port)) ||
		!slices.Equal(started.Listen, []string{addr, "127.0.0.1"}) || started.Network != c.Subnet.String() {
		t.Errorf("server start --listen %s: %+v; want its DSN at the host's address and network %s", addr, started, c.Subnet)
	}
	// The controller logs in over the bridge, from its own address.
	if got := pgQuery(ctx, t, started.DSN, "SELECT host(inet_client_addr())"); got != c.Controller {
		t.Errorf("logged in from %s; want the controller's %s", got, c.Controller)
	}
	u, _ := url.Parse(started.DSN)
	u.User = url.User(server.DBUser)
	if conn, err := pgx.Connect(ctx, u.String()); err == nil {
		conn.Close(ctx)
		t.Error("a login without a password got in")
	}

	// The host loads the schema, the DSN on ssh's stdin.
	var built struct {
		Warehouses int `json:"warehouses"`
	}
	if err := h.JSON(ctx, strings.NewReader(started.DSN+"\n"), &built, "tpcc", "build", "--dsn", "-", "--warehouses", "1", "--build-vus", "2"); err != nil || built.Warehouses != 1 {
		t.Fatalf("tpcc build --dsn - on the host: %+v, %v", built, err)
	}
	// The controller checks it over the network.
	if code, out, errOut := runTierbench(t, "tpcc", "check", "--json", "--dsn", started.DSN); code != 0 {
		t.Errorf("tpcc check from the controller: exit %d\n%s%s", code, out, errOut)
	}
	var st struct {
		Running bool     `json:"running"`
		DSN     string   `json:"dsn"`
		Listen  []string `json:"listen"`
		Network string   `json:"network"`
	}
	if err := h.JSON(ctx, nil, &st, "server", "status", "--datadir", src); err != nil || !st.Running || st.DSN != started.DSN ||
		!slices.Equal(st.Listen, started.Listen) || st.Network != started.Network {
		t.Errorf("server status on the host: %+v, %v", st, err)
	}

	// Clones need the source stopped.
	var ee *remote.ExitError
	if _, err := h.Run(ctx, nil, "server", "clone", "--from", src, "--datadir", dst, "--json"); !errors.As(err, &ee) || !ee.BadInput() ||
		!strings.Contains(ee.Msg, "stop it before cloning") {
		t.Errorf("server clone of a running source: %v; want exit 2 saying to stop it", err)
	}
	if err := h.JSON(ctx, nil, new(map[string]any), "server", "stop", "--datadir", src); err != nil {
		t.Fatal(err)
	}
	var cloned serverDoc
	if err := h.JSON(ctx, nil, &cloned, "server", "clone", "--from", src, "--datadir", dst, "--listen", addr); err != nil {
		t.Fatalf("server clone on the host: %v", err)
	}
	if cloned.ClonedFrom != src || cloned.DataDir != dst || cloned.Port == started.Port || clustertest.Password(t, cloned.DSN) != pw ||
		!strings.Contains(cloned.DSN, "@"+addr+":") || cloned.Network != c.Subnet.String() {
		t.Errorf("server clone: %+v", cloned)
	}
	if got := pgQuery(ctx, t, cloned.DSN, "SELECT count(*)::text FROM warehouse"); got != "1" {
		t.Errorf("the clone has %s warehouses; want 1", got)
	}
	var again serverDoc
	if err := h.JSON(ctx, nil, &again, "server", "start", "--datadir", src, "--listen", addr); err != nil || again.DSN != started.DSN {
		t.Errorf("the source started again: %+v, %v; want its DSN of before", again, err)
	}
	// A bad address is bad input on the host too.
	if _, err := h.Run(ctx, nil, "server", "start", "--datadir", filepath.Join(base, "db-3"), "--listen", c.Controller); !errors.As(err, &ee) ||
		!ee.BadInput() || !strings.Contains(ee.Msg, "is not an address of this host") {
		t.Errorf("server start --listen with the controller's address on the host: %v", err)
	}

	lines := watch.Lines()
	sawSSH := false
	for _, l := range lines {
		if strings.Contains(l, pw) {
			t.Errorf("a command line holds the server's password: %q", strings.ReplaceAll(l, pw, "<PASSWORD>"))
		}
		sawSSH = sawSSH || strings.Contains(l, "tpcc build --dsn -")
	}
	if !sawSSH {
		t.Errorf("the watch never saw the remote tpcc build (%d command lines)", len(lines))
	}
}
