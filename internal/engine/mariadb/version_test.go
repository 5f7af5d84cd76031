package mariadb_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/mariadb"
)

func TestCheckVersion(t *testing.T) {
	for _, c := range []struct {
		version string
		ok      bool
		says    string // in the refusal
	}{
		{"10.5.23-MariaDB-0+deb11u1", false, "MariaDB 10.5"},
		{"10.5.8-MariaDB-log", false, "10.6 or later"},
		{"10.6.0-MariaDB", true, ""},
		{"10.6.18-MariaDB-0ubuntu0.22.04.1", true, ""},
		{"10.11.19-MariaDB-0+deb12u1", true, ""},
		{"11.4.2-MariaDB", true, ""},
		{"11.8.1-MariaDB-ubu2404-log", true, ""},
		{"5.7.44", false, "MySQL 5.7"},
		{"5.7.44-log", false, "MySQL 8.0 or later"},
		{"8.0.36", true, ""},
		{"8.0.36-0ubuntu0.22.04.1", true, ""},
		{"8.4.0-commercial", true, ""},
		{"9.1.0", true, ""},
		{"", false, "not one tierbench can read"},
		{"garbage", false, "not one tierbench can read"},
		{"10", false, "not one tierbench can read"},
		{"MariaDB 10.11", false, "not one tierbench can read"},
	} {
		err := mariadb.CheckVersion(c.version)
		switch {
		case c.ok && err != nil:
			t.Errorf("%q refused: %v", c.version, err)
		case !c.ok && err == nil:
			t.Errorf("%q accepted, want a refusal", c.version)
		case !c.ok && (!errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), c.says)):
			t.Errorf("%q: %v, want bad input saying %q", c.version, err, c.says)
		}
	}
}

func TestParseDSN(t *testing.T) {
	for _, c := range []struct {
		dsn                   string
		net, addr, user, pass string
		db                    string
	}{
		{"mysql://tb:pw@db.example:3307/tpcc", "tcp", "db.example:3307", "tb", "pw", "tpcc"},
		{"mariadb://tb:pw@db.example:3307/tpcc", "tcp", "db.example:3307", "tb", "pw", "tpcc"},
		{"MySQL://tb:pw@10.0.0.5/tpcc", "tcp", "10.0.0.5:3306", "tb", "pw", "tpcc"}, // default port
		{"mysql://tb@/tpcc", "tcp", "127.0.0.1:3306", "tb", "", "tpcc"},             // default host, no password
		{"mysql://tb:pw@[::1]:3306/tpcc", "tcp", "[::1]:3306", "tb", "pw", "tpcc"},
		{"mysql://tb:pw@localhost/tpcc?socket=/run/mysqld/mysqld.sock", "unix", "/run/mysqld/mysqld.sock", "tb", "pw", "tpcc"},
		{"mysql://tb@localhost/tpcc?password=p%40ss", "tcp", "localhost:3306", "tb", "p@ss", "tpcc"},
		{"mysql://tb:p%3Ass%40@h/tpcc", "tcp", "h:3306", "tb", "p:ss@", "tpcc"},
	} {
		cfg, err := mariadb.ParseDSN(c.dsn)
		if err != nil {
			t.Errorf("%s: %v", c.dsn, err)
			continue
		}
		if cfg.Net != c.net || cfg.Addr != c.addr || cfg.User != c.user || cfg.Passwd != c.pass || cfg.DBName != c.db {
			t.Errorf("%s: net %q addr %q user %q password %q db %q; want %q %q %q %q %q", c.dsn,
				cfg.Net, cfg.Addr, cfg.User, cfg.Passwd, cfg.DBName, c.net, c.addr, c.user, c.pass, c.db)
		}
	}

	cfg, err := mariadb.ParseDSN("mysql://tb:pw@h:3306/tpcc?tls=skip-verify&timeout=3s&innodb_lock_wait_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TLSConfig != "skip-verify" || cfg.Timeout != 3*time.Second || cfg.Params["innodb_lock_wait_timeout"] != "5" {
		t.Errorf("parameters: tls %q timeout %v params %v", cfg.TLSConfig, cfg.Timeout, cfg.Params)
	}
	if cfg, err := mariadb.ParseDSN("mysql://tb:pw@h/tpcc"); err != nil || cfg.Timeout != 10*time.Second || cfg.MultiStatements {
		t.Errorf("defaults: %+v %v", cfg, err)
	}

	// Bad input, every message without the password.
	for _, c := range []struct{ dsn, says string }{
		{"postgres://tb:s3cret@h:5432/tpcc", "not mysql or mariadb"},
		{"mysql://tb:s3cret@h:notaport/tpcc", "does not parse"},
		{"mysql://tb:s3cret@h:70000/tpcc", "not in 1..65535"},
		{"mysql://tb:s3cret@h:0/tpcc", "not in 1..65535"},
		{"mysql://tb:s3cret@h:3306", "names no database"},
		{"mysql://tb:s3cret@h:3306/", "names no database"},
		{"mysql://tb:s3cret@h:3306/a/b", "names no database"},
		{"mysql://h:3306/tpcc?password=s3cret", "names no user"},
		{"mysql://tb:s3cret@h/tpcc?tls=maybe", "tls="},
		{"mysql://tb:s3cret@h/tpcc?timeout=soon", "timeout="},
		{"mysql://tb:s3cret@h/tpcc\x7f", "does not parse"},
	} {
		_, err := mariadb.ParseDSN(c.dsn)
		if !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q: %v, want bad input saying %q", c.dsn, err, c.says)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: the message shows the password: %v", c.dsn, err)
		}
		if !strings.Contains(err.Error(), mariadb.ExampleDSN) {
			t.Errorf("%q: %v, want the example DSN", c.dsn, err)
		}
	}
}
