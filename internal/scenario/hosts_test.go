package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// Hosts, servers on them and servers given by a DSN: every problem at its
// line and column, and the DSN's password in none of them.
func TestHostProblems(t *testing.T) {
	want := []string{
		`4:12: host h1 is defined twice (first on line 3)`,
		`5:21: host h3: ssh "root@10.9.0.3:x": port x is not a number; give user@addr[:port], addr[:port] or user@[ipv6]:port`,
		`5:55: host h3: node_exporter "ftp://10.9.0.3" is not an http(s) URL; give the exporter's metrics page, e.g. http://10.0.0.5:9100/metrics`,
		`5:84: host h3: tierbench "bin/tierbench" is not an absolute path; give where tierbench is on the host, e.g. /usr/local/bin/tierbench`,
		`11: target rel: path "tb" is relative, and the target is used on host h5; give an absolute path, which means the same on every host`,
		`11: target rel: emulate makes a tier on the machine tierbench runs on, but server noaddr uses it on host h5; leave emulate out of targets used on other hosts`,
		`13:51: server db: host "h9" is not defined; defined hosts: h1, h3, h4, h5`,
		`14:54: server nossh: host h4 has no ssh, and tierbench manages a server on another host over ssh; give the host ssh: user@addr, or give the server a dsn`,
		`15:57: server noaddr: host h5 has no address for its servers to listen on; give the host address: (an IP address of it)`,
		`16:76: server cloud: memory needs a server tierbench manages, and this one is given by its dsn; leave memory out, or give engine, target and host instead of dsn`,
		`17:57: server both: give host (one) or hosts (a list), not both`,
		`18:52: server off: host "h6" is not defined; defined hosts: h1, h3, h4, h5`,
		`20:35: disk: host h4 has no fio_server; give it fio_server: addr[:8765] (a running ` + "`fio --server`" + `)`,
		`20:39: disk: host h1 is listed twice`,
		`21:22: backup: server cloud is given by its dsn, so tierbench does not manage it, and this step backs up its data directory; leave the step out, or give the server engine, target and host instead of dsn`,
		`22:20: stop: server cloud is given by its dsn, so tierbench does not manage it, and this step stops it; leave the step out, or give the server engine, target and host instead of dsn`,
	}
	_, err := Load("testdata/hosts.yaml", "", nil)
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("Load: %v; want Errors", err)
	}
	var got []string
	for _, e := range es {
		got = append(got, strings.TrimPrefix(e.Error(), "testdata/hosts.yaml:"))
		if strings.Contains(e.Msg, "secret") {
			t.Errorf("a message shows the DSN's password: %s", e.Msg)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A server spread over hosts: its instances, in order, Count on each; where
// each target is used; a disk step on every host with a fio server.
func TestHostsModel(t *testing.T) {
	src := `name: spread
hosts:
  - {name: a, ssh: "tb@10.9.0.1", fio_server: "10.9.0.1:8765"}
  - {name: b, ssh: "tb@10.9.0.2:2222", fio_server: "10.9.0.2", tierbench: "${tb}"}
  - {name: c, node_exporter: "http://10.9.0.3:9100/metrics", address: 10.9.0.33}
scales:
  default: {hosts: "a,b", tb: ""}
targets:
  - {name: remote, path: /srv/tb}
  - {name: here, path: ./here}
servers:
  - {name: db, engine: postgres, target: remote, hosts: "${hosts}", count: 2}
  - {name: ext, dsn: "postgres://u:pw@10.9.0.3/x", host: c}
  - {name: loc, engine: postgres, target: here}
steps:
  - disk: {target: remote, hosts: all, duration: 0s}
  - disk: {target: here}
  - tpcc-build: {server: db, warehouses: 1}
  - neighbours: {tpcc: "db-1..3", backup: db-4, vus: 1, rampup: 1s, duration: 20s, cycles: 1}
`
	sc, err := Parse("spread.yaml", []byte(src), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := sc.Server("db")
	if got := db.Instances(); !reflect.DeepEqual(got, []string{"db-1", "db-2", "db-3", "db-4"}) {
		t.Errorf("instances %v", got)
	}
	var hosts []string
	for i := range db.Instances() {
		hosts = append(hosts, db.HostOf(i))
	}
	if !reflect.DeepEqual(hosts, []string{"a", "a", "b", "b"}) {
		t.Errorf("hosts of the instances: %v", hosts)
	}
	ext, _ := sc.Server("ext")
	if ext.Managed() || ext.Engine != "postgres" || ext.HostOf(0) != "c" {
		t.Errorf("ext = %+v", ext)
	}
	if a, _ := sc.Host("a"); a.Address != "10.9.0.1" || a.Remote().SSH != "tb@10.9.0.1" || a.Fio().Port != 8765 || a.Fio().Name != "a" {
		t.Errorf("host a = %+v", a)
	}
	if b, _ := sc.Host("b"); b.Tierbench != "" {
		t.Errorf("an empty tierbench is as if absent: %+v", b)
	}
	if c, _ := sc.Host("c"); c.Address != "10.9.0.33" {
		t.Errorf("host c = %+v", c)
	}
	remote, _ := sc.Target("remote")
	here, _ := sc.Target("here")
	if !reflect.DeepEqual(remote.Hosts, []string{"a", "b"}) || remote.Local() || !here.Local() {
		t.Errorf("target uses: remote %v, here %v", remote.Hosts, here.Hosts)
	}
	if d := sc.Steps[0].Disk; !reflect.DeepEqual(d.Hosts, []string{"a", "b"}) || d.Duration != 0 {
		t.Errorf("disk step %+v", d)
	}
	if strings.Contains(mustJSON(t, sc), "pw@") {
		t.Error("the scenario's JSON shows a DSN")
	}
}

// CheckHosts reports each address that does not answer at the line and
// column naming it, and passes those that do.
func TestCheckHosts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	open := ln.Addr().String()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := dead.Addr().(*net.TCPAddr).Port
	dead.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	src := strings.NewReplacer("OPEN", open, "CLOSED", itoa(closed)).Replace(`name: c
hosts:
  - {name: up, ssh: "u@OPEN", node_exporter: "http://OPEN/metrics", fio_server: "OPEN"}
  - {name: down, ssh: "u@127.0.0.1:CLOSED", fio_server: "127.0.0.1:CLOSED"}
steps:
  - report
`)
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, err := Load(file, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = CheckHosts(context.Background(), sc)
	var es Errors
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("CheckHosts: %v; want 2 errors", err)
	}
	for i, col := range []int{23, 56} {
		e := es[i]
		if e.Line != 4 || e.Col != col || !strings.Contains(e.Msg, "host down") || !strings.Contains(e.Msg, "unreachable") ||
			!strings.Contains(e.Msg, "connection refused") {
			t.Errorf("error %d: %v", i, e)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func itoa(n int) string { return strconv.Itoa(n) }

// The bundled cluster scenario: 2 hosts with 3 instances each at laptop
// scale, the paper's 4 with 3 each at paper scale; its storage profile on
// every host; every instance's host.
func TestBundledCluster(t *testing.T) {
	for scale, want := range map[string]struct{ hosts, instances int }{"": {2, 6}, "paper": {4, 12}} {
		sc, err := Load("cluster", scale, nil)
		if err != nil {
			t.Fatal(err)
		}
		db, _ := sc.Server("db")
		if len(sc.Hosts) != want.hosts || len(db.Hosts) != want.hosts || db.Total() != want.instances {
			t.Errorf("scale %q: %d hosts, server on %v, %d instances; want %d and %d", scale, len(sc.Hosts), db.Hosts, db.Total(),
				want.hosts, want.instances)
		}
		if d := sc.Steps[0].Disk; d == nil || len(d.Hosts) != want.hosts {
			t.Errorf("scale %q: the first step is not a disk step on every host: %+v", scale, sc.Steps[0])
		}
		if db.HostOf(want.instances-1) != sc.Hosts[want.hosts-1].Name || db.HostOf(2) != "h1" || db.HostOf(3) != "h2" {
			t.Errorf("scale %q: instances are not 3 per host in order", scale)
		}
	}
}
