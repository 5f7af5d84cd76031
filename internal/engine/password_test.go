package engine

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// Short and common passwords ("p", "postgres") are letters of ordinary
// words: Redact must mask them where the DSN carries them, whatever their
// length, and leave the rest of the DSN as it is.
func TestRedactShortPasswords(t *testing.T) {
	cases := map[string]string{
		"postgres://u:p@localhost/db":                           "postgres://u:xxxxx@localhost/db",
		"mysql://u:p@localhost/db":                              "mysql://u:xxxxx@localhost/db",
		"postgres://postgres:postgres@localhost:5432/postgres":  "postgres://postgres:xxxxx@localhost:5432/postgres",
		"mysql://mysql:mysql@127.0.0.1:3306/mysql":              "mysql://mysql:xxxxx@127.0.0.1:3306/mysql",
		"mariadb://u:s3cr@h/db?tls=false":                       "mariadb://u:xxxxx@h/db?tls=false",
		"postgres://u@h/db?password=p":                          "postgres://u@h/db?password=xxxxx",
		"postgres://u@h/postgres?sslmode=disable&password=p":    "postgres://u@h/postgres?sslmode=disable&password=xxxxx",
		"mysql://u@h/db?password=mysql&tls=false":               "mysql://u@h/db?password=xxxxx&tls=false",
		"postgres://u:p%40@h/db":                                "postgres://u:xxxxx@h/db", // "p@", percent-encoded
		"postgres://u@h/db?password=p%20q":                      "postgres://u@h/db?password=xxxxx",
		"host=x password=p dbname=y":                            "host=x password=xxxxx dbname=y",
		"host=postgres user=postgres password=postgres":         "host=postgres user=postgres password=xxxxx",
		"host=x password='p' dbname=y":                          "host=x password=xxxxx dbname=y",
		"sqlite://u:p@localhost/db":                             "sqlite://u:xxxxx@localhost/db",
		"postgres://u:p@h:99999999/":                            "postgres://u:xxxxx@h:99999999/",
		"postgres://u:p%zz@h/db":                                "postgres://xxxxx@h/db", // does not parse: the userinfo goes whole
		"postgres://u:p@h/db?application_name=password=p&x=y":   "postgres://u:xxxxx@h/db?application_name=password=p&x=y",
		"postgres://u@h/db?application_name=ap&password=p&x=yp": "postgres://u@h/db?application_name=ap&password=xxxxx&x=yp",
	}
	for in, want := range cases {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	for dsn, want := range map[string]string{
		"postgres://u:p@localhost/db":           "p",
		"mysql://u:p@localhost/db":              "p",
		"postgres://postgres:postgres@h/db":     "postgres",
		"postgres://u@h/db?password=p":          "p",
		"postgres://u:a@h/db?password=p":        "p", // the parameter wins
		"postgres://u:p%40@h/db":                "p@",
		"postgres://u@h/db?password=p%2Bq":      "p+q",
		"host=x password=p dbname=y":            "p",
		`host=x password='p\'s' dbname=y`:       "p's",
		"mysql://u:s3cr@h/db":                   "s3cr",
		"postgres://u@h/db":                     "",
		"postgres://u:@h/db":                    "",
		"host=x dbname=y":                       "",
		"postgres://u:p%zz@h/db":                "p%zz", // does not parse: as written
		"postgres://u:p@h/db?sslpassword=other": "p",
	} {
		if got := PasswordOf(dsn); got != want {
			t.Errorf("PasswordOf(%q) = %q, want %q", dsn, got, want)
		}
	}
}

// RedactIn replaces the parts of a DSN that carry its password, wherever a
// message quotes them, and nothing else: the words of the message stay as
// they are, however short or common the password.
func TestRedactIn(t *testing.T) {
	type tc struct{ msg, dsn, want string }
	cases := []tc{
		// The message: no DSN in it, nothing to redact.
		{`engine "mysql" is not supported yet; use a postgres:// or mysql:// DSN`, "mysql://u:p@localhost/db",
			`engine "mysql" is not supported yet; use a postgres:// or mysql:// DSN`},
		{`DSN scheme "mysqlx" is unknown; use a postgres:// or mysql:// DSN`, "mysqlx://u:p@localhost/db",
			`DSN scheme "mysqlx" is unknown; use a postgres:// or mysql:// DSN`},
		{`cannot connect to PostgreSQL at 127.0.0.1:5432 (database postgres, user postgres): the server said: FATAL: password authentication failed for user "postgres" (SQLSTATE 28P01)`,
			"postgres://postgres:postgres@127.0.0.1:5432/postgres",
			`cannot connect to PostgreSQL at 127.0.0.1:5432 (database postgres, user postgres): the server said: FATAL: password authentication failed for user "postgres" (SQLSTATE 28P01)`},
		{"Error 1045 (28000): Access denied for user 'mysql'@'localhost' (using password: YES)", "mysql://mysql:mysql@localhost/mysql",
			"Error 1045 (28000): Access denied for user 'mysql'@'localhost' (using password: YES)"},
		// The DSN, as given and as %q writes it.
		{`unknown command "postgres://u:p@localhost/db" for "tierbench tpcc check"`, "postgres://u:p@localhost/db",
			`unknown command "postgres://u:xxxxx@localhost/db" for "tierbench tpcc check"`},
		{`parse "postgres://u:p\"q@h/db\x01": net/url: invalid control character in URL`, "postgres://u:p\"q@h/db\x01",
			`parse "postgres://xxxxx@h/db\x01": net/url: invalid control character in URL`},
		{"connecting to mysql://u:postgres@h/db failed", "mysql://u:postgres@h/db", "connecting to mysql://u:xxxxx@h/db failed"},
		// Its userinfo and its password parameter, without the rest.
		{"bad authority u:p@h in the URL", "postgres://u:p@h/db", "bad authority u:xxxxx@h in the URL"},
		{"bad query password=p&sslmode=bogus; use postgres:// URLs", "postgres://u@h/db?password=p&sslmode=bogus",
			"bad query password=xxxxx&sslmode=bogus; use postgres:// URLs"},
		{"bad query password=postgres, postgres:// (password=postgresql stays)", "postgres://u@h/postgres?password=postgres",
			"bad query password=xxxxx, postgres:// (password=postgresql stays)"},
		{"keyword/value: password=p dbname=p", "host=x password=p dbname=p", "keyword/value: password=xxxxx dbname=p"},
		{"quoted: password='p q' ok", "host=x password='p q'", "quoted: password=xxxxx ok"},
		{"sslpassword=k sslmode=verify-full", "postgres://u@h/db?sslpassword=k&sslmode=verify-full", "sslpassword=xxxxx sslmode=verify-full"},
		// A DSN without a password, or no DSN at all: nothing changes.
		{"postgres://u@h/d b is odd", "postgres://u@h/d b", "postgres://u@h/d b is odd"},
		{"p and postgres", "", "p and postgres"},
		{"p and postgres", "--vus", "p and postgres"},
	}
	for _, pw := range []string{"p", "s3cr", "mysql", "postgres"} {
		dsn := fmt.Sprintf("postgres://postgres:%s@localhost:5432/postgres?sslmode=disable", pw)
		msg := fmt.Sprintf("DSN %q: the postgres:// scheme; user postgres, port 5432, mysql:// too, supported", dsn)
		cases = append(cases, tc{msg, dsn,
			`DSN "postgres://postgres:xxxxx@localhost:5432/postgres?sslmode=disable": the postgres:// scheme; user postgres, port 5432, mysql:// too, supported`})
	}
	for _, c := range cases {
		if got := RedactIn(c.msg, c.dsn); got != c.want {
			t.Errorf("RedactIn(%q, %q)\n = %q\nwant %q", c.msg, c.dsn, got, c.want)
		}
	}
}

// RedactPasswordOptions masks a password where an option gives it, and
// nowhere else: "password: set" stays readable with the password "p".
func TestRedactPasswordOptions(t *testing.T) {
	for _, c := range []struct{ out, pw, want string }{
		{"Connecting to MariaDB server host: 127.0.0.1, user: u, password: set, port: 1, socket: not set", "p",
			"Connecting to MariaDB server host: 127.0.0.1, user: u, password: set, port: 1, socket: not set"},
		{`pg_dump: error: connection to server at "127.0.0.1", port 5432 failed: FATAL:  password authentication failed for user "postgres"`,
			"postgres",
			`pg_dump: error: connection to server at "127.0.0.1", port 5432 failed: FATAL:  password authentication failed for user "postgres"`},
		{"args: --user=u --password=p --port=1", "p", "args: --user=u --password=xxxxx --port=1"},
		{`password = "s3cr" and PASSWORD='s3cr'`, "s3cr", `password = xxxxx and PASSWORD=xxxxx`},
		{"password=pq stays, password=p goes", "p", "password=pq stays, password=xxxxx goes"},
		{"password=p", "", "password=p"},
	} {
		if got := RedactPasswordOptions(c.out, c.pw); got != c.want {
			t.Errorf("RedactPasswordOptions(%q, %q)\n = %q\nwant %q", c.out, c.pw, got, c.want)
		}
	}
	if got := RedactPasswordOptions("password="+strings.Repeat("x", 3), "xxx"); got != "password=xxxxx" {
		t.Errorf("got %q", got)
	}
}

// FuzzRedactIn: a message that quotes a DSN (as given and with %q) keeps
// no distinctive password of it after RedactIn, and a message that does
// not quote it comes back as it was.
func FuzzRedactIn(f *testing.F) {
	for _, c := range [][3]string{
		{"p", "use a postgres:// DSN", "h"}, {"postgres", "use a postgres:// DSN", "localhost:5432"},
		{"s3cr3t!x", "supported", "h"}, {`a"b\c`, "x", "h"}, {"p w", "password=p w", "h"},
	} {
		f.Add(c[0], c[1], c[2])
	}
	f.Fuzz(func(t *testing.T, pw, words, host string) {
		if pw == "" || strings.ContainsAny(host, "@/?#:") {
			return
		}
		for _, dsn := range []string{
			"postgres://u:" + pw + "@" + host + "/db",
			"postgres://u@" + host + "/db?password=" + queryEscapeForTest(pw),
		} {
			if got := RedactIn(words, dsn); !strings.Contains(words, "password") && !strings.Contains(words, "@") && got != words {
				t.Fatalf("RedactIn(%q, %q) = %q: changed a message that does not quote the DSN", words, dsn, got)
			}
			msg := fmt.Sprintf("%s %s %q %+q %s", words, dsn, dsn, dsn, words)
			got := RedactIn(msg, dsn)
			rest := strings.ReplaceAll(fmt.Sprintf("%s %s %q %+q %s", words, Redact(dsn), Redact(dsn), Redact(dsn), words), "xxxxx", "\x00")
			if PasswordOf(dsn) != "" && distinctive(pw, rest) && strings.Contains(strings.ReplaceAll(got, "xxxxx", "\x00"), pw) {
				t.Fatalf("RedactIn(%q, %q) = %q keeps the password", msg, dsn, got)
			}
		}
	})
}

// queryEscapeForTest escapes a query value as pgx decodes it.
func queryEscapeForTest(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}
