// Package mariadb is tierbench's MariaDB (and MySQL 8.0) engine, on
// go-sql-driver/mysql: the TPC-C DDL, the parallel loader, the consistency
// checks, the stored procedures and workers, and the server's counters.
//
// The SQL stays within what MySQL 8.0 also accepts wherever that costs
// nothing; docs/engines.md lists the differences tierbench knows of.
package mariadb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/engine"
)

// ExampleDSN is the DSN shape messages show.
const ExampleDSN = "mysql://user:password@127.0.0.1:3306/dbname"

// DefaultPort is the port a DSN without one means.
const DefaultPort = 3306

// DB is a MariaDB or MySQL database named by a DSN. It holds the parsed
// configuration and a small pool for its own short tasks (checks, counters,
// telemetry); each virtual user and loader worker opens a connection of its
// own.
type DB struct {
	cfg *mysql.Config
	dsn string // as given: what redact looks for in errors
	// Version is what the server said VERSION() is, e.g.
	// "10.11.19-MariaDB-0+deb12u1" or "8.0.36".
	Version string

	pool   *sql.DB // a few kept connections for short tasks
	direct *sql.DB // connect's: a new connection per call, closed with it

	mu         sync.Mutex
	statsConn  *sql.Conn // kept open for Stats and ServerInfo
	countsConn *sql.Conn // kept open for Counters

	// driverCalls makes the routines' calls through the driver rather than
	// wire.go's code (the tests compare the two).
	driverCalls bool
}

// tls says whether the connections may use TLS, whose records only the
// driver reads.
func (db *DB) tls() bool { return db.cfg.TLSConfig != "" && db.cfg.TLSConfig != "false" }

// ParseDSN turns a mysql:// or mariadb:// URL into the driver's
// configuration:
//
//	mysql://user:password@host:port/dbname?socket=/path/to.sock&tls=true
//
// The port defaults to 3306 and the host to 127.0.0.1. socket= connects
// through a Unix socket instead of TCP. Other query parameters are passed to
// the driver, which sets those it does not know as session variables.
func ParseDSN(dsn string) (*mysql.Config, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, badDSN(dsn, "it does not parse as a URL")
	}
	switch strings.ToLower(u.Scheme) {
	case "mysql", "mariadb":
	default:
		return nil, badDSN(dsn, fmt.Sprintf("its scheme is %q, not mysql or mariadb", u.Scheme))
	}
	cfg := mysql.NewConfig()
	if u.User == nil || u.User.Username() == "" {
		return nil, badDSN(dsn, "it names no user")
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if cfg.DBName == "" || strings.Contains(cfg.DBName, "/") {
		return nil, badDSN(dsn, "it names no database (the path after the port)")
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = strconv.Itoa(DefaultPort)
	} else if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return nil, badDSN(dsn, fmt.Sprintf("its port %q is not in 1..65535", port))
	}
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, port)
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "socket":
			cfg.Net, cfg.Addr = "unix", v
		case "tls":
			switch v {
			case "true", "false", "skip-verify", "preferred":
				cfg.TLSConfig = v
			default:
				return nil, badDSN(dsn, fmt.Sprintf("tls=%q is not one of true, false, skip-verify, preferred", v))
			}
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, badDSN(dsn, fmt.Sprintf("timeout=%q is not a duration such as 10s", v))
			}
			cfg.Timeout = d
		case "password":
			cfg.Passwd = v
		default:
			if cfg.Params == nil {
				cfg.Params = map[string]string{}
			}
			cfg.Params[k] = v
		}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	// The driver logs what it also returns as errors (a connection reset
	// when the server is killed) to stderr; the errors are what count.
	cfg.Logger = discardLogger{}
	cfg.AllowNativePasswords = true
	cfg.InterpolateParams = false // statements are prepared on the server
	cfg.MultiStatements = false
	cfg.Loc = time.UTC
	return cfg, nil
}

// discardLogger is the driver's logger: it drops every line.
type discardLogger struct{}

func (discardLogger) Print(...any) {}

func badDSN(dsn, why string) error {
	return engine.InputErrorf("DSN %s is not valid: %s; give one such as %s", engine.Redact(dsn), why, ExampleDSN)
}

// Open parses dsn, connects, and refuses a server too old for TPC-C as
// tierbench runs it (CheckVersion).
func Open(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	db := &DB{cfg: cfg, dsn: dsn}
	// One connection per task: nothing idles in this pool, so a task's
	// Close closes its connection.
	db.direct = sql.OpenDB(db.connector(nil))
	db.direct.SetMaxIdleConns(0)
	conn, err := db.connect(ctx)
	if err != nil {
		db.direct.Close()
		return nil, err
	}
	err = conn.QueryRowContext(ctx, "SELECT VERSION()").Scan(&db.Version)
	conn.Close()
	if err == nil {
		err = CheckVersion(db.Version)
	} else {
		err = fmt.Errorf("reading the server's version: %s", db.redact(err))
	}
	if err != nil {
		db.direct.Close()
		return nil, err
	}
	db.pool = sql.OpenDB(db.connector(nil))
	db.pool.SetMaxOpenConns(4)
	db.pool.SetMaxIdleConns(2)
	return db, nil
}

// CheckVersion refuses a server without JSON_TABLE, which the New-Order
// procedure reads its order lines with: MariaDB before 10.6 and MySQL
// before 8.0. version is VERSION()'s text.
func CheckVersion(version string) error {
	nums, rest := leadingVersion(version)
	if len(nums) < 2 {
		return engine.InputErrorf("the server's version %q is not one tierbench can read; it needs MariaDB 10.6 or later, or MySQL 8.0 or later", version)
	}
	maria := strings.Contains(strings.ToLower(rest), "mariadb")
	major, minor := nums[0], nums[1]
	switch {
	case maria && (major > 10 || major == 10 && minor >= 6):
		return nil
	case maria:
		return engine.InputErrorf("the server is MariaDB %d.%d, which has no JSON_TABLE (the New-Order procedure needs it); use MariaDB 10.6 or later", major, minor)
	case major >= 8:
		return nil
	default:
		return engine.InputErrorf("the server is MySQL %d.%d, which has no JSON_TABLE (the New-Order procedure needs it); use MySQL 8.0 or later, or MariaDB 10.6 or later", major, minor)
	}
}

// leadingVersion splits "10.11.6-MariaDB-log" into [10 11 6] and the rest.
// MariaDB 10 once reported "5.5.5-10.x…" to old clients; VERSION() does not.
func leadingVersion(v string) ([]int, string) {
	var nums []int
	rest := v
	for len(nums) < 3 {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 {
			break
		}
		n, _ := strconv.Atoi(rest[:i])
		nums = append(nums, n)
		rest = rest[i:]
		if !strings.HasPrefix(rest, ".") {
			break
		}
		rest = rest[1:]
	}
	return nums, rest
}

// connector makes connections of db's configuration; dial, when set,
// replaces the driver's dialer (a worker keeps its socket to interrupt it).
func (db *DB) connector(dial func(ctx context.Context, network, addr string) (net.Conn, error)) driver.Connector {
	cfg := db.cfg.Clone()
	if dial != nil {
		cfg.DialFunc = dial
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil { // only for a TLS name that is not registered, which ParseDSN keeps out
		panic(err)
	}
	return c
}

// connect opens one connection of its own (not from the pool), with an error
// that names the server but never the password.
//
// The handshake has the DSN's timeout too, as the dial has: a peer that
// never greets (another program on the port, or a PostgreSQL server, which
// waits for its client to speak first) would otherwise hold it until it
// hangs up, a minute for PostgreSQL.
func (db *DB) connect(ctx context.Context) (*sql.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, db.cfg.Timeout)
	defer cancel()
	conn, err := db.direct.Conn(cctx)
	if err != nil {
		if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no MariaDB/MySQL greeting within %s (is a MariaDB or MySQL server listening there, and not another one such as PostgreSQL? "+
				"a slow server may need more: ?timeout=30s)", db.cfg.Timeout)
		}
		return nil, db.connectError(err)
	}
	return conn, nil
}

// connectError names the server and what to do, never the password.
func (db *DB) connectError(err error) error {
	where := db.cfg.Addr
	if db.cfg.Net == "unix" {
		where = "socket " + db.cfg.Addr
	}
	var myErr *mysql.MySQLError
	var opErr *net.OpError
	hint := ""
	switch {
	case errors.As(err, &myErr):
		switch myErr.Number {
		case 1045, 1698: // ER_ACCESS_DENIED_ERROR, ER_ACCESS_DENIED_NO_PASSWORD_ERROR
			hint = " (check the user and password in the DSN; `tierbench server status --datadir DIR --json` shows a managed server's)"
		case 1049: // ER_BAD_DB_ERROR
			hint = " (check the database name in the DSN, or create the database)"
		}
		// As for PostgreSQL, a server that refuses the login is a failure
		// to connect (exit 1), not a malformed request.
		return fmt.Errorf("cannot connect to MariaDB/MySQL at %s (database %s, user %s): the server said: %s%s",
			where, db.cfg.DBName, db.cfg.User, db.redact(myErr), hint)
	case errors.As(err, &opErr):
		hint = " (is the server running? `tierbench server start --engine mariadb` starts one)"
	}
	return fmt.Errorf("cannot connect to MariaDB/MySQL at %s (database %s, user %s): %s%s",
		where, db.cfg.DBName, db.cfg.User, db.redact(err), hint)
}

// redact returns err's text with the DSN, should any layer have quoted it or
// a part of it that holds the password, redacted (engine.RedactIn: never a
// search for the password itself, which would garble ordinary words).
func (db *DB) redact(err error) string { return engine.RedactIn(err.Error(), db.dsn) }

// Close closes the pool and the kept connections.
func (db *DB) Close() {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, c := range []**sql.Conn{&db.statsConn, &db.countsConn} {
		if *c != nil {
			(*c).Close()
			*c = nil
		}
	}
	if db.pool != nil {
		db.pool.Close()
	}
	if db.direct != nil {
		db.direct.Close()
	}
}

// errNumber returns the server's error number of err, or 0.
func errNumber(err error) uint16 {
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		return myErr.Number
	}
	return 0
}
