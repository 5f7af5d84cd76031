package scenario

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// A server on another host is validated with the rules that host's
// tierbench applies when it starts it (the same ServerConfig.Validate):
// what it would refuse 39 seconds into the run is refused at `scenario
// validate`, at its line and column, as a server here is.
func TestRemoteServerRules(t *testing.T) {
	src := `name: remote-rules
hosts:
  - {name: db1, ssh: "root@10.9.0.7", address: 10.9.0.7}
targets:
  - {name: data, path: /srv/tierbench}
servers:
  - {name: far, engine: postgres, target: data, host: db1, memory: 100MiB}
  - {name: near, engine: postgres, target: data, memory: 100MiB}
  - {name: spread, engine: mariadb, target: data, hosts: db1, settings: {innodb.io: 1, innodb-io-capacity: 200}}
steps:
  - tpcc-build: {server: far, warehouses: 1}
`
	_, err := Parse("remote.yaml", []byte(src), "", nil)
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("Parse: %v; want Errors", err)
	}
	var got []string
	for _, e := range es {
		got = append(got, strings.TrimPrefix(e.Error(), "remote.yaml:"))
	}
	want := []string{
		`7:68: server far: memory 100MiB is too little for a managed server; give at least 128MiB`,
		`8:58: server near: memory 100MiB is too little for a managed server; give at least 128MiB`,
		`9:74: server spread: settings "innodb.io" is not a MariaDB option name; use letters, digits, _ and -, starting with a letter or _`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Within the rules, the same servers validate.
	ok := strings.NewReplacer("memory: 100MiB", "memory: 128MiB", "innodb.io: 1, ", "").Replace(src)
	sc, err := Parse("remote.yaml", []byte(ok), "", nil)
	if err != nil {
		t.Fatalf("the servers within the rules: %v", err)
	}
	if s := sc.Servers[0]; s.Memory != 128<<20 || !reflect.DeepEqual(s.Hosts, []string{"db1"}) {
		t.Errorf("server far: %+v", s)
	}
	// What the host is asked for is what was validated: the same values, as
	// the flags of its server start.
	cfg := serverConfig(sc.Servers[2], "/srv/tierbench/spread", "10.9.0.7", nil)
	if args := strings.Join(serverArgs(cfg), " "); args != "--listen 10.9.0.7 --set innodb-io-capacity=200" {
		t.Errorf("server start's flags on the host: %s", args)
	}
	cfg = serverConfig(sc.Servers[0], "/srv/tierbench/far", "10.9.0.7", nil)
	if args := strings.Join(serverArgs(cfg), " "); args != "--listen 10.9.0.7 --memory 128MiB" {
		t.Errorf("server start's flags on the host: %s", args)
	}
}
