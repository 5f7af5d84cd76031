package cli_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/mariatest"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// Issue 8's promise about secrets: a password given in a DSN appears in no
// stdout, stderr, log file, results store row or report, whatever command
// takes it and however it fails. Managed servers accept password logins on
// 127.0.0.1 (and the local socket) only, and the files tierbench creates
// that hold a secret are readable by their owner only.
//
// The one deliberate exception is the managed server's own password: `server
// start` and `server status --json` print the server's DSN with it, because
// that is how a user gets the DSN (docs/server.md), and the data directory's
// tierbench-server.json keeps it (mode 0600) — also in a physical backup's
// copy of the data directory. The password of the DSN the user gives has no
// exception at all.
func TestSecrets(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// Connections without a password must not find one elsewhere: TestMain
	// clears $PGPASSWORD and $PGPASSFILE.
	base := pgtest.TempDir(t)

	// A managed server of the test's own, so its files and log are ours to
	// read. It lives in DATA/db: the scenario at the end, with --data DATA,
	// takes it as its server "db".
	dataDir := filepath.Join(base, "data", "db")
	t.Cleanup(func() { server.Stop(context.Background(), dataDir, "immediate") })
	code, out, errOut := runTierbench(t, "server", "start", "--json", "--datadir", dataDir)
	if code != 0 {
		t.Fatalf("server start: exit %d: %s", code, errOut)
	}
	var started struct {
		DSN  string `json:"dsn"`
		Port int    `json:"port"`
	}
	if err := json.Unmarshal([]byte(out), &started); err != nil || started.DSN == "" {
		t.Fatalf("server start --json: %v\n%s", err, out)
	}
	u, err := url.Parse(started.DSN)
	if err != nil {
		t.Fatal(err)
	}
	managedPW, _ := u.User.Password()
	if len(managedPW) < 16 {
		t.Fatalf("the managed server's password %q is short", managedPW)
	}

	// The user's secrets: the password of a role made for the test, and a
	// wrong one (a wrong password is a secret too, often a near miss). Both
	// hold characters that need escaping in a URL, in a keyword/value DSN,
	// in Go and JSON strings and in HTML; each has two random 8-character
	// runs, so any fragment of it that survives a half-done redaction shows.
	pw, pwRuns := distinctivePassword(t)
	wrongPW, wrongRuns := distinctivePassword(t)
	scan := &leakScan{t: t}
	scan.add("the DSN's password", pw, pwRuns...)
	scan.add("the wrong password", wrongPW, wrongRuns...)
	scan.add(managedSecret, managedPW, managedPW[:8], managedPW[8:16], managedPW[16:])
	// The scan must see a secret however it is written, and half of one.
	for _, control := range []string{pw, url.QueryEscape(wrongPW), html.EscapeString(pw), pw[:10], pw[len(pw)-9:], managedPW[6:20]} {
		if len(scan.leaks([]byte("…"+control+"…"), nil)) != 1 {
			t.Fatalf("the scan misses %q", control)
		}
	}
	scan.check("server start --json: stdout", out, managedSecret) // the documented exception
	scan.check("server start --json: stderr", errOut)
	code, out, errOut = runTierbench(t, "server", "start", "--datadir", dataDir) // already running: prints the DSN again
	if code != 0 || !strings.Contains(out, "dsn: ") {
		t.Errorf("server start (running): exit %d\n%s%s", code, out, errOut)
	}
	scan.check("server start: stdout", out, managedSecret)
	scan.check("server start: stderr", errOut)

	checkManagedServer(ctx, t, dataDir, started.DSN, started.Port)

	const role, dbName, shortDB = "tb_secret_user", "tb_secrets", "tb_secrets_short"
	admin(ctx, t, started.DSN,
		fmt.Sprintf("CREATE ROLE %s LOGIN SUPERUSER PASSWORD '%s'", role, strings.ReplaceAll(pw, "'", "''")),
		fmt.Sprintf("CREATE DATABASE %s OWNER %s", dbName, role))
	host := net.JoinHostPort("127.0.0.1", strconv.Itoa(started.Port))
	dsnURL := func(password, host, query string) string {
		return (&url.URL{Scheme: "postgres", User: url.UserPassword(role, password), Host: host, Path: "/" + dbName, RawQuery: query}).String()
	}
	var (
		dsn      = dsnURL(pw, host, "sslmode=disable")
		queryDSN = "postgres://" + role + "@" + host + "/" + dbName + "?sslmode=disable&password=" + queryEscape(pw)
		kvDSN    = fmt.Sprintf("host=127.0.0.1 port=%d user=%s password='%s' dbname=%s", started.Port, role, kvQuote(pw), dbName)
		wrongDSN = dsnURL(wrongPW, host, "sslmode=disable")
		downDSN  = dsnURL(pw, "127.0.0.1:1", "sslmode=disable")                // nothing listens on port 1
		rawDSN   = "postgres://" + role + ":" + pw + "@" + host + "/" + dbName // the password pasted unescaped
	)
	res := filepath.Join(base, "results")
	physical, logical := filepath.Join(base, "backup-physical"), filepath.Join(base, "backup-logical")
	tpccRun := func(more ...string) []string {
		return append([]string{"tpcc", "run", "--vus", "1", "--rampup", "0s", "--duration", "2s", "--rate", "1200", "--arrival", "constant",
			"--results", res}, more...)
	}
	// The fault is a no-op command: the durability test runs through, and
	// the server stays up for the commands after it.
	durability := func(more ...string) []string {
		return append([]string{"durability", "--cycles", "1", "--vus", "1", "--run-before-fault", "2s",
			"--fault", "command", "--fault-command", "true", "--recover-timeout", "30s", "--results", res}, more...)
	}

	// Every command that takes a DSN, with the DSN in each form tierbench
	// accepts (URL, password as a URL parameter, $TIERBENCH_DSN), with and
	// without --json, and failing: wrong password, nothing listening, a DSN
	// that does not parse, bad flags beside a good DSN, a DSN given where no
	// argument belongs. ok: the command must succeed (so it really ran).
	type call struct {
		args  []string
		env   string // $TIERBENCH_DSN
		stdin string // standard input, for --dsn -
		ok    bool
	}
	calls := []call{
		{args: []string{"tpcc", "build", "--dsn", dsn, "--warehouses", "1", "--build-vus", "2"}, ok: true},
		{args: []string{"tpcc", "build", "--json", "--dsn", queryDSN, "--routines-only"}, ok: true},
		{args: []string{"tpcc", "build", "--dsn", dsn, "--warehouses", "1"}},     // a schema is there: no --drop
		{args: []string{"tpcc", "build", "--dsn", dsn, "--warehouses", "0"}},     // bad flag
		{args: []string{"tpcc", "build", "--dsn", downDSN, "--warehouses", "1"}}, // nothing listening
		{args: []string{"tpcc", "build", "--json", "--dsn", wrongDSN, "--routines-only"}},
		{args: []string{"tpcc", "check", "--dsn", dsn}, ok: true},
		{args: []string{"tpcc", "check", "--json"}, env: dsn, ok: true},
		{args: []string{"tpcc", "check", "--dsn", queryDSN}, ok: true},
		{args: []string{"tpcc", "check", "--dsn", wrongDSN}},
		{args: []string{"tpcc", "check", "--json"}, env: wrongDSN},
		{args: []string{"tpcc", "check", "--dsn", kvDSN}},  // keyword/value: refused (no scheme)
		{args: []string{"tpcc", "check", "--dsn", rawDSN}}, // does not parse
		{args: []string{"tpcc", "check", "--dsn", dsnURL(pw, host, "sslmode=bogus")}},
		{args: []string{"tpcc", "check", "--dsn", dsnURL(pw, "127.0.0.1:99999", "")}},
		// A mysql:// DSN at PostgreSQL's port: no greeting comes (1 s, not
		// the default 10, to wait for it).
		{args: []string{"tpcc", "check", "--dsn", strings.Replace(dsn, "postgres://", "mysql://", 1) + "&timeout=1s"}},
		{args: []string{"tpcc", "check", dsn}},                       // the DSN without --dsn
		{args: []string{"tpcc", "check", "--dsn=" + dsn, "--bogus"}}, // an unknown flag beside it
		{args: []string{"tpcc", "chekc", "--dsn", dsn}},              // a mistyped command
		{args: tpccRun("--dsn", dsn), ok: true},
		{args: tpccRun("--json", "--dsn", queryDSN, "--mode", "statements"), ok: true},
		{args: tpccRun("--json"), env: dsn, ok: true},
		{args: tpccRun("--dsn", wrongDSN)},
		{args: tpccRun("--json", "--dsn", downDSN)},
		{args: tpccRun("--dsn", dsn, "--duration", "0s")},
		{args: tpccRun("--dsn", dsn, "--mix", "no=200")},
		{args: []string{"monitor", "--target", base, "--duration", "2s", "--dsn", dsn, "--results", res}, ok: true},
		{args: []string{"monitor", "--json", "--target", base, "--duration", "2s", "--dsn", queryDSN, "--results", res}, ok: true},
		{args: []string{"monitor", "--target", base, "--duration", "1s", "--dsn", wrongDSN, "--results", res}},
		{args: []string{"monitor", "--json", "--target", base, "--duration", "1s", "--dsn", downDSN, "--results", res}},
		{args: []string{"monitor", "--dsn", dsn, "--results", res}}, // no --target
		{args: []string{"monitor", "--target", base, "--interval", "10ms", "--dsn", dsn, "--results", res}},
		{args: []string{"backup", "run", "--json", "--dsn", dsn, "--target", physical, "--cycles", "1", "--keep", "--results", res}, ok: true},
		{args: []string{"backup", "run", "--dsn", queryDSN, "--target", logical, "--logical", "--jobs", "1", "--cycles", "1", "--keep",
			"--results", res}, ok: true},
		{args: []string{"backup", "run", "--json", "--dsn", wrongDSN, "--target", filepath.Join(base, "backup-x"), "--results", res}},
		{args: []string{"backup", "run", "--dsn", downDSN, "--target", filepath.Join(base, "backup-x"), "--results", res}},
		{args: []string{"backup", "run", "--dsn", dsn, "--target", base, "--results", res}}, // a target that is not tierbench's
		{args: []string{"backup", "run", "--dsn", dsn, "--target", filepath.Join(base, "backup-x"), "--cycles", "0", "--results", res}},
		{args: []string{"backup", "run", "--dsn", dsn, "--target", filepath.Join(base, "backup-x"), "--datadir", base, "--results", res}},
		{args: durability("--json", "--dsn", dsn), ok: true},
		{args: durability("--dsn", wrongDSN)},
		{args: durability("--dsn", dsn, "--managed", dataDir)},
		{args: durability("--dsn", dsn, "--fault", "bogus")},
		// --dsn -: the DSN on standard input, which no argument holds for
		// the error line's redaction to find.
		{args: []string{"tpcc", "check", "--dsn", "-"}, stdin: dsn + "\n", ok: true},
		{args: tpccRun("--json", "--dsn", "-"), stdin: queryDSN + "\n", ok: true},
		{args: []string{"tpcc", "check", "--json", "--dsn", "-"}, stdin: wrongDSN + "\n"},
		{args: []string{"tpcc", "check", "--dsn", "-"}, stdin: rawDSN + "\n"},
		{args: []string{"tpcc", "check", "--dsn", "-"}, stdin: kvDSN + "\n"},
		{args: []string{"tpcc", "build", "--dsn", "-", "--warehouses", "1"}, stdin: downDSN},
		{args: []string{"tpcc", "check", "--dsn", "-"}, stdin: strings.Replace(dsn, "postgres://", "mysqlx://", 1)},
		{args: durability("--dsn", "-"), stdin: wrongDSN + "\n"},
		{args: []string{"backup", "run", "--dsn", "-", "--target", filepath.Join(base, "backup-x"), "--results", res}, stdin: wrongDSN + "\n"},
	}
	// Short and common passwords: "p" is a letter of "supported", "postgres"
	// the start of "postgres://", so no message is searched for them (that
	// garbled "not supported yet; use a postgres:// DSN"). Every DSN,
	// parameter and argument that carries one is redacted where it is
	// formatted, and the words around it stay as they are. Two roles log in
	// with such passwords; the other DSNs fail (a wrong password, nothing
	// listening, a DSN that does not parse) or name no engine.
	admin(ctx, t, started.DSN,
		"CREATE ROLE tb_pw_p LOGIN SUPERUSER PASSWORD 'p'",
		`DO $$BEGIN CREATE ROLE postgres; EXCEPTION WHEN duplicate_object THEN NULL; END$$`,
		"ALTER ROLE postgres LOGIN SUPERUSER PASSWORD 'postgres'",
		"CREATE DATABASE "+shortDB+" OWNER tb_pw_p")
	for _, pw := range []string{"p", "postgres", "mysql", "s3cr"} {
		scan.addShort(fmt.Sprintf("the short password %q", pw), pw, "u", "tb_pw_p", "postgres", "mysql", role)
	}
	checkShortScan(t, scan)
	pgDSN := func(user, password, host, db, query string) string {
		return "postgres://" + user + ":" + password + "@" + host + "/" + db + "?sslmode=disable" + query
	}
	var (
		pDSN        = pgDSN("tb_pw_p", "p", host, shortDB, "")
		postgresDSN = pgDSN("postgres", "postgres", host, shortDB, "")
		pQueryDSN   = "postgres://tb_pw_p@" + host + "/" + shortDB + "?sslmode=disable&password=p"
		wrongP      = pgDSN("postgres", "p", host, "postgres", "")       // role postgres, password p: refused
		wrongPG     = pgDSN("tb_pw_p", "postgres", host, "postgres", "") // role tb_pw_p, password postgres: refused
		wrongMySQL  = pgDSN("postgres", "mysql", host, "postgres", "")   // refused
		downS3cr    = pgDSN("u", "s3cr", "127.0.0.1:1", "db", "")        // nothing listens on port 1
		plain       = "postgres://u:p@localhost/db"                      // named, never reached
		mysqlDown   = "mysql://u:p@127.0.0.1:1/db"                       // nothing listens
		mysqlMySQL  = "mysql://mysql:mysql@127.0.0.1:99999/mysql"        // a port out of range
		shortRes    = filepath.Join(base, "results-short")
		authFailed  = func(user string) string { return `password authentication failed for user "` + user + `"` }
		checkPW     = "check the user and password in the DSN; `tierbench server status --datadir DIR --json` shows a managed server's"
		useSchemes  = "use a postgres:// or mysql:// DSN"
		pgExample   = "give one such as postgres://user:password@127.0.0.1:5432/dbname"
		isRunning   = "(is the server running? `tierbench server start` starts one)"
		mariaRuns   = "(is the server running? `tierbench server start --engine mariadb` starts one)"
		mariaExampl = "give one such as mysql://user:password@127.0.0.1:3306/dbname"
	)
	shortCalls := []shortCall{
		// They log in: with the password in the userinfo, as a parameter,
		// in $TIERBENCH_DSN; the runs are stored with the DSN redacted.
		{args: []string{"tpcc", "build", "--dsn", pDSN, "--warehouses", "1", "--build-vus", "2"}, ok: true},
		{args: []string{"tpcc", "check", "--dsn", pDSN}, ok: true, want: []string{"all consistency conditions hold"}},
		{args: []string{"tpcc", "check", "--json"}, env: postgresDSN, ok: true},
		{args: tpccRun("--json", "--dsn", postgresDSN, "--results", shortRes), ok: true},
		{args: tpccRun("--dsn", pQueryDSN, "--results", shortRes), ok: true},
		{args: []string{"monitor", "--target", base, "--duration", "1s", "--dsn", pDSN, "--results", shortRes}, ok: true},
		{args: []string{"backup", "run", "--dsn", postgresDSN, "--target", filepath.Join(base, "backup-short"), "--logical", "--jobs", "1",
			"--cycles", "1", "--results", shortRes}, ok: true},
		// The server refuses them: its words, the user's name, the hint.
		{args: []string{"tpcc", "check", "--dsn", wrongP}, want: []string{authFailed("postgres"), "(database postgres, user postgres)", checkPW}},
		{args: []string{"tpcc", "check", "--dsn", wrongPG}, want: []string{authFailed("tb_pw_p"), "(database postgres, user tb_pw_p)", checkPW}},
		{args: []string{"tpcc", "check", "--json"}, env: wrongMySQL, want: []string{authFailed("postgres"), checkPW}},
		{args: tpccRun("--dsn", wrongP, "--results", shortRes), want: []string{authFailed("postgres"), checkPW}},
		{args: []string{"monitor", "--target", base, "--duration", "1s", "--dsn", wrongPG, "--results", shortRes},
			want: []string{authFailed("tb_pw_p")}},
		{args: []string{"backup", "run", "--dsn", wrongP, "--target", filepath.Join(base, "backup-x"), "--results", shortRes},
			want: []string{authFailed("postgres")}},
		{args: durability("--dsn", wrongPG, "--results", shortRes), want: []string{authFailed("tb_pw_p")}},
		{args: tpccRun("--json", "--dsn", downS3cr), want: []string{"cannot connect to PostgreSQL at 127.0.0.1:1 (database db, user u)", isRunning}},
		// DSNs that do not parse or name no engine: the message shows the
		// DSN redacted, and its words whole.
		{args: tpccRun("--dsn", "mysqlx://u:p@localhost/db"), want: []string{`DSN scheme "mysqlx" is unknown; ` + useSchemes}},
		{args: tpccRun("--dsn", "sqlite://u:p@localhost/db"), want: []string{`engine "sqlite" is not supported yet; ` + useSchemes}},
		{args: tpccRun("--dsn", "sqlite://postgres:postgres@localhost/postgres"), want: []string{"not supported yet; " + useSchemes}},
		{args: []string{"tpcc", "check", "--dsn", "mysqlx://mysql:mysql@localhost/mysql"}, want: []string{`"mysqlx" is unknown; ` + useSchemes}},
		{args: []string{"tpcc", "check", "--dsn", pgDSN("postgres", "postgres", "127.0.0.1:99999", "postgres", "")},
			want: []string{"DSN postgres://postgres:xxxxx@127.0.0.1:99999/postgres?sslmode=disable is not valid: invalid port; " + pgExample}},
		{args: []string{"tpcc", "check", "--dsn", "postgres://postgres:postgres@" + host + "/postgres?sslmode=bogus"},
			want: []string{"postgres://postgres:xxxxx@" + host + "/postgres?sslmode=bogus is not valid", "sslmode is invalid", pgExample}},
		{args: []string{"tpcc", "check", "--dsn", "postgres://u@" + host + "/postgres?sslmode=bogus&password=postgres"},
			want: []string{"postgres://u@" + host + "/postgres?sslmode=bogus&password=xxxxx is not valid", pgExample}},
		{args: []string{"tpcc", "check", "--dsn", "postgres://u:p%zz@" + host + "/postgres"},
			want: []string{"DSN postgres://xxxxx@" + host + "/postgres is not valid", pgExample}},
		{args: []string{"tpcc", "check", "--dsn", "host=127.0.0.1 user=postgres password=postgres dbname=postgres"},
			want: []string{`"host=127.0.0.1 user=postgres password=xxxxx dbname=postgres" has no scheme; give one such as postgres://user:password@host:5432/dbname`}},
		{args: []string{"tpcc", "check", "--dsn", "host=x password=p dbname=y"}, want: []string{`"host=x password=xxxxx dbname=y" has no scheme`}},
		// Echoed arguments: cobra quotes them, the message shows them
		// redacted.
		{args: []string{"tpcc", "check", plain}, want: []string{`unknown command "postgres://u:xxxxx@localhost/db" for "tierbench tpcc check"`}},
		{args: []string{"tpcc", "check", postgresDSN}, want: []string{`unknown command "` + engine.Redact(postgresDSN) + `" for "tierbench tpcc check"`}},
		{args: []string{"tpcc", "build", "--dsn", plain, "--warehouses", plain},
			want: []string{`--warehouses "postgres://u:xxxxx@localhost/db" is not a whole number`}},
		{args: []string{"tpcc", "check", "--dsn=" + plain, "--bogus"}, want: []string{"unknown flag: --bogus"}},
		{args: []string{"tpcc", "chekc", "--dsn", postgresDSN}, want: []string{"unknown"}},
		// mysql:// DSNs (the MariaDB engine; no server here).
		{args: []string{"tpcc", "check", "--dsn", mysqlDown}, want: []string{"cannot connect to MariaDB/MySQL at 127.0.0.1:1 (database db, user u)", mariaRuns}},
		{args: tpccRun("--json"), env: "mysql://mysql:mysql@127.0.0.1:1/mysql", want: []string{"(database mysql, user mysql)", mariaRuns}},
		{args: []string{"tpcc", "check", "--dsn", "mysql://u@127.0.0.1:1/db?password=p"}, want: []string{"(database db, user u)", mariaRuns}},
		{args: []string{"tpcc", "check", "--dsn", mysqlMySQL},
			want: []string{`DSN mysql://mysql:xxxxx@127.0.0.1:99999/mysql is not valid: its port "99999" is not in 1..65535; ` + mariaExampl}},
		{args: []string{"tpcc", "check", "--dsn", "mysql://u:s3cr@127.0.0.1:3306/"}, want: []string{"mysql://u:xxxxx@127.0.0.1:3306/ is not valid: it names no database"}},
		{args: []string{"tpcc", "check", "--dsn", "mysql://u:p@127.0.0.1:1/db?tls=bogus"},
			want: []string{`DSN mysql://u:xxxxx@127.0.0.1:1/db?tls=bogus is not valid: tls="bogus" is not one of`}},
		{args: []string{"tpcc", "check", "mysql://mysql:mysql@localhost/mysql"},
			want: []string{`unknown command "mysql://mysql:xxxxx@localhost/mysql" for "tierbench tpcc check"`}},
		{args: []string{"durability", "--dsn", mysqlDown, "--fault", "bogus"}, want: []string{`--fault "bogus" is unknown`}},
	}
	// The commands with the user's DSN, and those with short passwords (in a
	// database of their own), side by side: they share only the server.
	t.Run("commands", func(t *testing.T) {
		t.Run("dsn", func(t *testing.T) {
			t.Parallel()
			for _, c := range calls {
				name := redactArgs(c.args)
				env := map[string]string{"TIERBENCH_DSN": c.env}
				if c.env != "" {
					name += " (TIERBENCH_DSN " + engine.Redact(c.env) + ")"
				}
				start := time.Now()
				var code int
				var out, errOut string
				if c.stdin != "" {
					name += " (stdin " + engine.Redact(strings.TrimSpace(c.stdin)) + ")"
					code, out, errOut = runTierbenchStdin(t, env, c.stdin, c.args...)
				} else {
					code, out, errOut = runTierbenchWith(t, env, strings.NewReader(""), c.args...)
				}
				t.Logf("exit %d in %v: %s", code, time.Since(start).Round(time.Millisecond), name)
				scan.run(name, c.ok, code, out, errOut)
			}
		})
		t.Run("short passwords", func(t *testing.T) {
			t.Parallel()
			runShortCalls(t, scan, shortCalls)
			// The runs are stored with their DSN redacted, the password's place
			// marked.
			for want, found := range map[string]bool{"postgres://postgres:xxxxx@": false, "password=xxxxx": false, "postgres://tb_pw_p:xxxxx@": false} {
				for _, r := range storedRuns(ctx, t, shortRes) {
					found = found || strings.Contains(string(r.Params), want)
				}
				if !found {
					t.Errorf("no run in %s is stored with a DSN holding %s", shortRes, want)
				}
			}
			scan.tree(shortRes)
			scan.store(ctx, shortRes)
		})
	})

	// The commands that hold the managed server's DSN without taking one:
	// the main job, on the running server, and a scenario (last: it stops
	// the server it used). Then the commands that read what was stored.
	for _, args := range [][]string{
		{"run", "--datadir", dataDir, "--warehouses", "1", "--build-vus", "2", "--vus", "1", "--rampup", "0s", "--duration", "2s",
			"--rate", "1200", "--results", res},
		{"server", "status", "--datadir", dataDir},
	} {
		code, out, errOut := runTierbench(t, args...)
		if code != 0 {
			t.Errorf("%s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
		scan.check(strings.Join(args, " ")+": stdout", out)
		scan.check(strings.Join(args, " ")+": stderr", errOut)
	}
	code, out, errOut = runTierbench(t, "server", "status", "--json", "--datadir", dataDir)
	if code != 0 || !strings.Contains(out, `"dsn"`) {
		t.Errorf("server status --json: exit %d\n%s%s", code, out, errOut)
	}
	scan.check("server status --json: stdout", out, managedSecret) // the documented exception
	scan.check("server status --json: stderr", errOut)

	scenarioFile := filepath.Join(base, "secrets.yaml")
	if err := os.WriteFile(scenarioFile, []byte(secretsScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runTierbench(t, "scenario", "run", scenarioFile, "--data", filepath.Join(base, "data"), "--results", res)
	if code != 0 {
		t.Errorf("scenario run: exit %d\n%s", code, errOut)
	}
	// The stop step stopped db, and the backup after it started db again.
	if i, j := strings.Index(errOut+out, "server db: stopped"), strings.LastIndex(errOut+out, "server db: postgres"); i < 0 || j < i {
		t.Errorf("scenario run: db was not stopped, then started again:\n%s%s", out, errOut)
	}
	scan.check("scenario run: stdout", out)
	scan.check("scenario run: stderr", errOut)

	runs := storedRuns(ctx, t, res)
	if len(runs) < 10 {
		t.Errorf("%d runs stored, want one per successful tpcc run, monitor, backup run, durability, run and scenario step", len(runs))
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
		code, out, errOut := runTierbench(t, "results", "show", "--json", "--results", res, r.ID)
		if code != 0 {
			t.Errorf("results show %s: exit %d\n%s", r.ID, code, errOut)
		}
		scan.check("results show "+r.ID, out+errOut)
	}
	reportOut := filepath.Join(base, "report", "all.html")
	for _, args := range [][]string{
		{"results", "list", "--results", res},
		{"results", "list", "--json", "--results", res},
		{"report", "--json", "--results", res, "--run", strings.Join(ids, ","), "--out", reportOut},
		{"report", "--results", res, "--out", filepath.Join(base, "report", "latest.html")},
	} {
		code, out, errOut := runTierbench(t, args...)
		if code != 0 {
			t.Errorf("%s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
		scan.check(strings.Join(args, " "), out+errOut)
	}

	// Everything written: the results directory (the store's files byte by
	// byte, the reports of run and scenario, the durability test's logs),
	// the store's rows read back, the reports, the backup targets, the
	// managed server's log and configuration.
	scan.tree(res)
	scan.store(ctx, res)
	scan.tree(filepath.Join(base, "report"))
	for _, target := range []string{physical, logical} { // --keep: the backups are there
		if _, err := os.Stat(filepath.Join(target, "cycle-1")); err != nil {
			t.Errorf("backup target %s: %v", target, err)
		}
		scan.tree(target)
	}
	// The physical backup is a copy of the data directory: its state file
	// holds the server's password (a restore starts the copy with it), at
	// mode 0600 like the original.
	if fi, err := os.Stat(filepath.Join(physical, "cycle-1", server.StateFile)); err != nil {
		t.Errorf("the physical backup has no %s: %v", server.StateFile, err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("the physical backup's %s has mode %04o, want 0600", server.StateFile, fi.Mode().Perm())
	}
	for _, f := range []string{server.LogFile, server.ConfFile, "pg_hba.conf", "postgresql.conf", "postgresql.auto.conf"} {
		b, err := os.ReadFile(filepath.Join(dataDir, f))
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		scan.check(filepath.Join(dataDir, f), string(b))
	}
	if b, err := os.ReadFile(filepath.Join(dataDir, server.StateFile)); err != nil || !strings.Contains(string(b), managedPW) {
		t.Errorf("%s does not hold the server's password (%v): the scan would miss its copies", server.StateFile, err)
	}
	t.Logf("scanned %d outputs and %d files (%d MB) for %d secrets in %d forms each", scan.outputs, scan.files, scan.bytes>>20,
		len(scan.secrets), len(scan.secrets[0].forms))
}

// checkShortScan makes sure the scan finds a short password where a DSN, a
// parameter or an argument shows it, and only there: not in the words
// around it, nor in a DSN redacted.
func checkShortScan(t *testing.T, scan *leakScan) {
	t.Helper()
	for _, text := range []string{"postgres://tb_pw_p:p@h/db", "mysql://u:p@h/db", "postgres://postgres:postgres@h/postgres",
		`unknown command "mysql://u:mysql@h/db"`, "?sslmode=disable&password=p", "password=s3cr&x=1", "password='postgres'",
		"--password=mysql", "password = \"p\"", "dsn=" + url.QueryEscape("postgres://u:p@h/db"), url.QueryEscape("?password=p&x=y")} {
		if got := scan.leaks([]byte("…"+text+"…"), []string{managedSecret}); len(got) != 1 {
			t.Fatalf("the scan finds %v in %q, want one short password", got, text)
		}
	}
	for _, text := range []string{`engine "sqlite" is not supported yet; use a postgres:// or mysql:// DSN`,
		`FATAL: password authentication failed for user "postgres"; check the user and password in the DSN`,
		"Access denied for user 'tb_pw_p'@'localhost' (using password: YES)", "postgres://tb_pw_p:xxxxx@h/db?password=xxxxx",
		"mysql://u:xxxxx@h/db", "postgres://xxxxx@h/db", "password=postgresql", "password: set, port: 1", exampleDSNs} {
		if got := scan.leaks([]byte("…"+text+"…"), []string{managedSecret}); len(got) != 0 {
			t.Fatalf("the scan finds %v in %q, which shows no password", got, text)
		}
	}
}

// exampleDSNs are the DSNs tierbench's messages show as examples.
const exampleDSNs = "postgres://user:password@127.0.0.1:5432/dbname mysql://user:password@127.0.0.1:3306/dbname"

// shortCall is a command given a DSN whose password is short or common.
// want: what its output must say, word for word (the readable message).
type shortCall struct {
	args []string
	env  string // $TIERBENCH_DSN
	ok   bool
	want []string
}

// garbled finds xxxxx where no password stands: a password's letters
// masked inside a word ("suxxxxxorted"), not a DSN's ":xxxxx@", "//xxxxx@"
// or a parameter's "=xxxxx".
var garbled = regexp.MustCompile(`(^|[^:=/x])xxxxx`)

// runShortCalls runs each call, checks its exit, that its output says what
// it must, whole, with no word garbled, and scans it for the secrets.
func runShortCalls(t *testing.T, scan *leakScan, calls []shortCall) {
	t.Helper()
	for _, c := range calls {
		name := redactArgs(c.args)
		if c.env != "" {
			name += " (TIERBENCH_DSN " + engine.Redact(c.env) + ")"
		}
		code, out, errOut := runTierbenchWith(t, map[string]string{"TIERBENCH_DSN": c.env}, strings.NewReader(""), c.args...)
		t.Logf("exit %d: %s: %s", code, name, strings.TrimSpace(errOut))
		scan.exit(name, c.ok, code, errOut)
		for _, w := range c.want {
			if !strings.Contains(out+errOut, w) {
				t.Errorf("%s: the output does not say %q:\n%s%s", name, w, out, errOut)
			}
		}
		if m := garbled.FindString(out + errOut); m != "" {
			t.Errorf("%s: %q: a word is masked:\n%s%s", name, m, out, errOut)
		}
		scan.check(name+": stdout", out)
		scan.check(name+": stderr", errOut)
	}
}

// managedSecret names the managed server's password among a leakScan's
// secrets: the one allowed where the documentation promises it.
const managedSecret = "the managed server's password"

// secretsScenario is a scenario as small as it gets: the server "db" on
// the target DATA (the test's managed server), TPC-C, a check, a stop (the
// backup starts the server again), a logical backup and the report.
const secretsScenario = `name: secrets
targets:
  - name: local
    path: ${data}
servers:
  - name: db
    engine: postgres
    target: local
steps:
  - tpcc-build: {server: db, warehouses: 1, build_vus: 2}
  - tpcc-run: {server: db, vus: "1", rampup: 0s, duration: 2s, rate: 1200}
  - check: {server: db}
  - stop: {server: db}
  - backup: {server: db, cycles: 1, logical: true}
  - report: {}
`

// checkManagedServer checks what a managed server promises: it listens on
// 127.0.0.1 only, takes SCRAM password logins only (over 127.0.0.1 and the
// local socket), and the files that hold its password or its access rules
// are its owner's alone.
func checkManagedServer(ctx context.Context, t *testing.T, dataDir, dsn string, port int) {
	t.Helper()
	modes := map[string]os.FileMode{
		dataDir:                                     0o700,
		filepath.Join(dataDir, server.StateFile):    0o600,
		filepath.Join(dataDir, "pg_hba.conf"):       0o600,
		filepath.Join(dataDir, server.ConfFile):     0o600,
		filepath.Join(dataDir, server.LogFile):      0o600,
		filepath.Join(dataDir, "postgresql.conf"):   0o600,
		filepath.Join(dataDir, "postmaster.opts"):   0o600,
		filepath.Join(dataDir, "global/pg_control"): 0o600,
	}
	for path, want := range modes {
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if got := fi.Mode().Perm(); got&0o077 != 0 || got != want {
			t.Errorf("%s has mode %04o, want %04o (readable by its owner only)", path, got, want)
		}
	}

	hba, err := os.ReadFile(filepath.Join(dataDir, "pg_hba.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var rules int
	for _, line := range strings.Split(string(hba), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		rules++
		f := strings.Fields(line)
		switch {
		case len(f) == 4 && f[0] == "local" && f[3] == "scram-sha-256":
		case len(f) == 5 && f[0] == "host" && f[3] == "127.0.0.1/32" && f[4] == "scram-sha-256":
		default:
			t.Errorf("pg_hba.conf line %q: want only local or host 127.0.0.1/32 lines with scram-sha-256", line)
		}
	}
	if rules == 0 {
		t.Error("pg_hba.conf has no rule")
	}

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("a password login over 127.0.0.1 failed: %v", err)
	}
	for setting, want := range map[string]string{"listen_addresses": "127.0.0.1", "password_encryption": "scram-sha-256"} {
		var got string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", setting).Scan(&got); err != nil || got != want {
			t.Errorf("%s = %q (%v), want %q", setting, got, err, want)
		}
	}
	conn.Close(ctx)

	var st struct {
		SocketDir string `json:"socket_dir"`
	}
	b, err := os.ReadFile(filepath.Join(dataDir, server.StateFile))
	if err != nil || json.Unmarshal(b, &st) != nil || st.SocketDir == "" {
		t.Fatalf("reading the socket directory from %s: %v", server.StateFile, err)
	}
	u, _ := url.Parse(dsn)
	refused := map[string]string{
		"no password over 127.0.0.1":     (&url.URL{Scheme: "postgres", User: url.User(u.User.Username()), Host: u.Host, Path: u.Path, RawQuery: u.RawQuery}).String(),
		"a wrong password":               (&url.URL{Scheme: "postgres", User: url.UserPassword(u.User.Username(), "wrong"), Host: u.Host, Path: u.Path, RawQuery: u.RawQuery}).String(),
		"no password on the socket":      fmt.Sprintf("host=%s port=%d user=%s dbname=postgres", st.SocketDir, port, u.User.Username()),
		"a wrong password on the socket": fmt.Sprintf("host=%s port=%d user=%s password=wrong dbname=postgres", st.SocketDir, port, u.User.Username()),
	}
	for what, dsn := range refused {
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			c.Close(ctx)
			t.Errorf("the managed server let in a login with %s", what)
		}
	}
	// 127.0.0.2 is loopback too: a server on 0.0.0.0 would answer there.
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.2", strconv.Itoa(port)), 2*time.Second); err == nil {
		c.Close()
		t.Errorf("the managed server answers on 127.0.0.2:%d; it must listen on 127.0.0.1 only", port)
	}
}

// admin runs statements as the managed server's superuser.
func admin(ctx context.Context, t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", strings.Fields(s)[:2], err)
		}
	}
}

// distinctivePassword is two random runs of 8 letters and digits around
// the characters that URLs, keyword/value DSNs, Go and JSON strings and
// HTML escape; it returns the runs too.
func distinctivePassword(t *testing.T) (string, []string) {
	t.Helper()
	const alnum = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	run := func() string {
		b := make([]byte, 8)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		for i := range b {
			b[i] = alnum[int(b[i])%len(alnum)]
		}
		return string(b)
	}
	a, b := run(), run()
	return a + `@:/%?#&=+ '"\<` + b, []string{a, b}
}

// kvQuote escapes a value for a quoted keyword/value DSN field.
func kvQuote(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `'`, `\'`)
}

// queryEscape escapes a URL query value as pgx and libpq decode it: a space
// is %20 ('+' would stay '+').
func queryEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// redactArgs is a command line fit for the test log.
func redactArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = engine.Redact(a)
	}
	return "tierbench " + strings.Join(out, " ")
}

func storedRuns(ctx context.Context, t *testing.T, dir string) []results.Run {
	t.Helper()
	store, err := results.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runs, err := store.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// leakScan looks for secrets, in every form they could be written in,
// in outputs and files.
type leakScan struct {
	t       *testing.T
	secrets []secret // added to before the scans, which may run side by side
	mu      sync.Mutex
	forms   *formIndex // of secrets, made again when a secret is added
	// What was scanned, for the log.
	outputs, files, bytes int
}

// formIndex finds the forms of every secret in one pass over the data: the
// forms by their first four bytes, and a filter of those that turns most
// positions away at a glance. A byte search per form of each secret went
// over a data directory's copy 86 times: 9 s of the secrets test's CPU.
type formIndex struct {
	secrets int                // how many it was made from
	filter  [1 << 10]uint64    // a bit per hash of a form's first four bytes
	first   map[uint32][]found // by the form's first four bytes
	shorter []found            // forms under four bytes, searched whole
}

// found is a form of secret number secret, named form.
type found struct {
	secret int
	form   string
	text   []byte
}

// index returns the index of the secrets added so far.
func (s *leakScan) index() *formIndex {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forms != nil && s.forms.secrets == len(s.secrets) {
		return s.forms
	}
	x := &formIndex{secrets: len(s.secrets), first: map[uint32][]found{}}
	for i, sec := range s.secrets {
		for form, text := range sec.forms {
			f := found{secret: i, form: form, text: []byte(text)}
			switch {
			case text == "":
			case len(text) < 4:
				x.shorter = append(x.shorter, f)
			default:
				k := binary.LittleEndian.Uint32(f.text)
				h := formHash(k)
				x.filter[h>>6] |= 1 << (h & 63)
				x.first[k] = append(x.first[k], f)
			}
		}
	}
	s.forms = x
	return x
}

func formHash(k uint32) uint32 { return (k * 0x9e3779b1) >> 16 }

// find calls hit with each form found in data (a form found again, again).
func (x *formIndex) find(data []byte, hit func(found)) {
	for i := 0; i+4 <= len(data); i++ {
		k := binary.LittleEndian.Uint32(data[i:])
		if h := formHash(k); x.filter[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for _, f := range x.first[k] {
			if bytes.HasPrefix(data[i:], f.text) {
				hit(f)
			}
		}
	}
	for _, f := range x.shorter {
		if bytes.Contains(data, f.text) {
			hit(f)
		}
	}
}

// count adds to what was scanned.
func (s *leakScan) count(outputs, files, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outputs += outputs
	s.files += files
	s.bytes += bytes
}

type secret struct {
	name     string
	forms    map[string]string         // how it is written (raw, URL-escaped, …) → the text
	patterns map[string]*regexp.Regexp // how a short one shows: in a DSN's userinfo, as a parameter
}

func (s *leakScan) add(name, value string, fragments ...string) {
	quoted := strconv.Quote(value)
	js, _ := json.Marshal(value)
	forms := map[string]string{
		"raw":                     value,
		"URL-escaped (userinfo)":  strings.TrimPrefix(url.UserPassword("u", value).String(), "u:"),
		"URL-escaped (query)":     url.QueryEscape(value),
		"URL-escaped (DSN query)": queryEscape(value),
		"URL-escaped (path)":      url.PathEscape(value),
		"Go-quoted":               quoted[1 : len(quoted)-1],
		"JSON-escaped":            string(js[1 : len(js)-1]),
		"HTML-escaped":            html.EscapeString(value),
		"keyword/value-escaped":   kvQuote(value),
		"base64":                  base64.StdEncoding.EncodeToString([]byte(value)),
		"base64 (unpadded)":       base64.RawStdEncoding.EncodeToString([]byte(value)),
		"base64url":               base64.URLEncoding.EncodeToString([]byte(value)),
		"base64url (unpadded)":    base64.RawURLEncoding.EncodeToString([]byte(value)),
	}
	for i, f := range fragments {
		forms[fmt.Sprintf("fragment %d", i+1)] = f
	}
	s.secrets = append(s.secrets, secret{name: name, forms: forms})
}

// addShort adds a password too short or common to look for on its own
// ("p" is a letter of "supported", "postgres" the start of "postgres://"):
// it is a secret where a DSN, a parameter or an argument carries it, so the
// scan looks for those, as tierbench would have to write them to show it:
// the userinfo of a DSN that carries it ("user:pw@", also URL-escaped
// whole), and a parameter that gives it (password=pw, --password='pw').
func (s *leakScan) addShort(name, pw string, users ...string) {
	q := regexp.QuoteMeta(pw)
	forms := map[string]string{}
	for _, u := range users {
		forms["the userinfo of "+u] = u + ":" + pw + "@"
		forms["the userinfo of "+u+" (URL-escaped)"] = url.QueryEscape(u + ":" + pw + "@")
	}
	// Each pattern starts with patternStart, where findAfter looks.
	s.secrets = append(s.secrets, secret{name: name, forms: forms, patterns: map[string]*regexp.Regexp{
		"a parameter": regexp.MustCompile(`(?i:password)\s*=\s*['"]?` + q + `(?:[^A-Za-z0-9%]|$)`),
		"a parameter (URL-escaped)": regexp.MustCompile(`(?i:password)%3D` + regexp.QuoteMeta(url.QueryEscape(pw)) +
			`(?:[^A-Za-z0-9%]|%26|%20|$)`),
	}})
}

// check reports every secret, but the allowed ones, found in data.
// exit checks that a command succeeded or failed as expected.
func (s *leakScan) exit(name string, ok bool, code int, errOut string) {
	s.t.Helper()
	switch {
	case ok && code != 0:
		s.t.Errorf("%s: exit %d, want 0\n%s", name, code, errOut)
	case !ok && code == 0:
		s.t.Errorf("%s: exit 0, want a failure", name)
	}
}

// run checks a command's exit as exit does, and scans its output.
func (s *leakScan) run(name string, ok bool, code int, out, errOut string) {
	s.t.Helper()
	s.exit(name, ok, code, errOut)
	s.check(name+": stdout", out)
	s.check(name+": stderr", errOut)
}

func (s *leakScan) check(where, data string, allowed ...string) {
	s.t.Helper()
	s.count(1, 0, 0)
	s.find(where, []byte(data), allowed)
}

func (s *leakScan) find(where string, data []byte, allowed []string) {
	s.t.Helper()
	for _, leak := range s.leaks(data, allowed) {
		s.t.Errorf("%s holds %s", where, leak)
	}
}

// leaks names the secrets, but the allowed ones, found in data, each with
// a form it was found in.
func (s *leakScan) leaks(data []byte, allowed []string) []string {
	var leaked []string
	idx := s.index()
	in := map[int]string{} // secret → a form it was found in
	idx.find(data, func(f found) { in[f.secret] = f.form })
	var lower []byte // data in ASCII lower case, made once for the patterns
	for i, sec := range s.secrets[:idx.secrets] {
		if contains(allowed, sec.name) {
			continue
		}
		if form, ok := in[i]; ok {
			leaked = append(leaked, fmt.Sprintf("%s (%s)", sec.name, form))
		}
		for form, re := range sec.patterns {
			if lower == nil {
				lower = asciiLower(data)
			}
			if m := findAfter(re, data, lower, patternStart); m != nil {
				leaked = append(leaked, fmt.Sprintf("%s (%s: %q)", sec.name, form, m))
				break
			}
		}
	}
	return leaked
}

// patternStart is the text every pattern of a short password starts with,
// in any case.
const patternStart = "password"

// findAfter is re.Find(data), run only where data has start (lower, data in
// ASCII lower case, is searched for it): a regular expression over every
// byte of a data directory's copy takes minutes, a byte search seconds. A
// match must begin at start and fit in a window of 4 KiB after it.
func findAfter(re *regexp.Regexp, data, lower []byte, start string) []byte {
	for off := 0; off < len(lower); {
		i := bytes.Index(lower[off:], []byte(start))
		if i < 0 {
			return nil
		}
		i += off
		if m := re.Find(data[i:min(len(data), i+4096)]); m != nil {
			return m
		}
		off = i + 1
	}
	return nil
}

// asciiLower is data with A-Z made a-z and every other byte kept, so that
// offsets into it are offsets into data (bytes.ToLower rewrites invalid
// UTF-8, which a binary file is full of).
func asciiLower(data []byte) []byte {
	out := make([]byte, len(data))
	for i, c := range data {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// tree scans every file under dir. Copies of a managed data directory (a
// physical backup) keep the server's password in their state file, as the
// original does: allowed there, and only at mode 0600. Their table pages
// and WAL (base, pg_wal) are left out: the server writes them, and keeps a
// password there only as its hash; tierbench's files, the configuration
// and the logs beside them are scanned. (They were most of a copy's bytes,
// and most of the secrets tests' scanning.)
func (s *leakScan) tree(dir string) {
	s.t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == "base" || d.Name() == "pg_wal") && fileExists(filepath.Join(filepath.Dir(path), "PG_VERSION")) {
			return filepath.SkipDir
		}
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		s.count(0, 1, len(b))
		var allowed []string
		if d.Name() == server.StateFile {
			allowed = []string{managedSecret}
			if fi, err := d.Info(); err == nil && fi.Mode().Perm()&0o077 != 0 {
				s.t.Errorf("%s holds the managed server's password at mode %04o; want 0600", path, fi.Mode().Perm())
			}
		}
		s.find(path, b, allowed)
		return nil
	})
	if err != nil {
		s.t.Errorf("scanning %s: %v", dir, err)
	}
}

// store reads the results store back: every run's parameters, summary,
// steps and documents through the results package, JSON strings decoded
// (a byte scan could miss an escaped form), and every row of every table
// through SQL.
func (s *leakScan) store(ctx context.Context, dir string) {
	s.t.Helper()
	st, err := results.OpenReadOnly(dir)
	if err != nil {
		s.t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, r := range runs {
		docs := map[string]json.RawMessage{"params": r.Params, "summary": r.Summary}
		steps, err := st.Steps(ctx, r.ID)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, step := range steps {
			docs["step "+step.Name] = step.Metrics
		}
		for _, name := range []string{results.DocEnvironment, results.DocCheck} {
			if d, err := st.Document(ctx, r.ID, name); err == nil {
				docs["document "+name] = d
			}
		}
		for what, raw := range docs {
			s.check(fmt.Sprintf("results store: run %s (%s) %s", r.ID, r.Kind, what), string(raw)+"\n"+jsonStrings(raw))
		}
	}

	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, results.FileName)+"?mode=ro")
	if err != nil {
		s.t.Fatal(err)
	}
	defer db.Close()
	tables, err := db.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		s.t.Fatal(err)
	}
	var names []string
	for tables.Next() {
		var n string
		if err := tables.Scan(&n); err != nil {
			s.t.Fatal(err)
		}
		names = append(names, n)
	}
	tables.Close()
	for _, table := range names {
		rows, err := db.QueryContext(ctx, "SELECT * FROM "+strconv.Quote(table))
		if err != nil {
			s.t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var b strings.Builder
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				s.t.Fatal(err)
			}
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					b.Write(bs)
				} else {
					fmt.Fprint(&b, v)
				}
				b.WriteByte('\n')
			}
		}
		rows.Close()
		s.check("results store: table "+table, b.String())
	}
}

// jsonStrings is every key and string value of a JSON document, decoded.
func jsonStrings(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x + "\n")
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				b.WriteString(k + "\n")
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

// TestSecretsShortPasswordsMariaDB: TestSecrets' short and common passwords
// on MariaDB, through mysql:// and mariadb:// DSNs: users that log in with
// "p" and "mysql" build, check, run, monitor and back up, and the server
// refuses the wrong ones. No DSN, parameter or argument that tierbench
// prints or stores carries the password, and the messages read whole.
func TestSecretsShortPasswordsMariaDB(t *testing.T) {
	t.Parallel()
	mariatest.RequireBinaries(t)
	ctx := context.Background()
	dbDSN := mariatest.NewDatabase(t)
	u, err := url.Parse(dbDSN)
	if err != nil {
		t.Fatal(err)
	}
	host, dbName := u.Host, strings.TrimPrefix(u.Path, "/")
	var stmts []string
	for user, pw := range map[string]string{"tb_pw_p": "p", "tb_mysql": "mysql"} {
		for _, from := range []string{"127.0.0.1", "localhost", "%"} {
			stmts = append(stmts, fmt.Sprintf("CREATE OR REPLACE USER '%s'@'%s' IDENTIFIED BY '%s'", user, from, pw),
				fmt.Sprintf("GRANT ALL PRIVILEGES ON *.* TO '%s'@'%s'", user, from))
		}
	}
	mariaAdmin(ctx, t, mariatest.DSN(t), stmts...)
	scan := &leakScan{t: t}
	for _, pw := range []string{"p", "mysql", "MySQL", "tb_mysql", "postgres", "s3cr"} {
		scan.addShort(fmt.Sprintf("the short password %q", pw), pw, "u", "tb_pw_p", "tb_mysql", "postgres", "mysql", u.User.Username())
	}
	checkShortScan(t, scan)
	base := mariatest.TempDir(t)
	res := filepath.Join(base, "results")
	dsn := func(scheme, user, pw string) string {
		return scheme + "://" + user + ":" + pw + "@" + host + "/" + dbName
	}
	var (
		pDSN     = dsn("mysql", "tb_pw_p", "p")
		mysqlDSN = dsn("mariadb", "tb_mysql", "mysql")
		queryDSN = "mysql://tb_pw_p@" + host + "/" + dbName + "?password=p"
		denied   = func(user string) []string {
			return []string{"cannot connect to MariaDB/MySQL at " + host + " (database " + dbName + ", user " + user + ")",
				"Access denied for user '" + user + "'@", "(using password: YES)", "check the user and password in the DSN"}
		}
		run = func(more ...string) []string {
			return append([]string{"tpcc", "run", "--vus", "1", "--rampup", "0s", "--duration", "2s", "--rate", "1200", "--arrival", "constant",
				"--results", res}, more...)
		}
	)
	runShortCalls(t, scan, []shortCall{
		{args: []string{"tpcc", "build", "--dsn", pDSN, "--warehouses", "1", "--build-vus", "2"}, ok: true},
		{args: []string{"tpcc", "check", "--dsn", mysqlDSN}, ok: true, want: []string{"all consistency conditions hold"}},
		{args: []string{"tpcc", "check", "--json"}, env: queryDSN, ok: true},
		{args: run("--json", "--dsn", mysqlDSN), ok: true},
		{args: run("--dsn", queryDSN, "--mode", "statements"), ok: true},
		{args: []string{"monitor", "--target", base, "--duration", "1s", "--dsn", pDSN, "--results", res}, ok: true},
		{args: []string{"backup", "run", "--dsn", pDSN, "--target", filepath.Join(base, "backup"), "--logical", "--jobs", "1",
			"--cycles", "1", "--results", res}, ok: true},
		{args: []string{"tpcc", "check", "--dsn", dsn("mysql", "tb_pw_p", "mysql")}, want: denied("tb_pw_p")},
		{args: run("--dsn", dsn("mysql", "tb_mysql", "p")), want: denied("tb_mysql")},
		{args: []string{"tpcc", "check", "--dsn", dsn("mysql", "tb_mysql", "tb_mysql")}, want: denied("tb_mysql")}, // the user's name as the password
		{args: []string{"tpcc", "build", "--dsn", dsn("mariadb", "tb_pw_p", "MySQL"), "--warehouses", "1"}, want: denied("tb_pw_p")},
		{args: []string{"tpcc", "check"}, env: dsn("mariadb", "tb_mysql", "postgres"), want: denied("tb_mysql")},
		{args: []string{"backup", "run", "--dsn", dsn("mysql", "tb_mysql", "s3cr"), "--target", filepath.Join(base, "backup-x"), "--logical",
			"--results", res}, want: denied("tb_mysql")},
		{args: []string{"durability", "--dsn", dsn("mysql", "tb_pw_p", "postgres"), "--cycles", "1", "--vus", "1", "--run-before-fault", "1s",
			"--fault", "command", "--fault-command", "true", "--results", res}, want: denied("tb_pw_p")},
		{args: []string{"tpcc", "check", "--dsn", "mysql://tb_pw_p:p@" + host + "/tb_no_such_db"},
			want: []string{"(database tb_no_such_db, user tb_pw_p)", "check the database name in the DSN, or create the database"}},
		{args: []string{"tpcc", "check", "--dsn", "mysql://tb_pw_p:p@" + host + "/" + dbName + "?tls=bogus"},
			want: []string{"DSN mysql://tb_pw_p:xxxxx@" + host + "/" + dbName + "?tls=bogus is not valid"}},
		{args: []string{"tpcc", "check", pDSN}, want: []string{`unknown command "mysql://tb_pw_p:xxxxx@` + host}},
	})
	for _, want := range []string{"mariadb://tb_mysql:xxxxx@", "mysql://tb_pw_p:xxxxx@", "password=xxxxx"} {
		found := false
		for _, r := range storedRuns(ctx, t, res) {
			found = found || strings.Contains(string(r.Params), want)
		}
		if !found {
			t.Errorf("no run in %s is stored with a DSN holding %s", res, want)
		}
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
}

// fileExists reports whether path is there.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
