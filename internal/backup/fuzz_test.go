package backup

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/engine"
)

// FuzzClientConn: the connection string the PostgreSQL tools get on their
// command line (world-readable in /proc) carries no password — neither the
// userinfo's nor a password= parameter — yet the same user, host and
// database; the password travels apart, and a DSN that is not a URL is bad
// input in one line without it.
func FuzzClientConn(f *testing.F) {
	for _, s := range []string{"postgres://u:pw@127.0.0.1:5432/db", "postgres://u@h/db?password=secret&sslmode=disable",
		"postgres://u:a@h/db?password=b", "postgres://u:pw@h/db?statement_cache_capacity=0&pool_max_conns=4",
		"postgres://h/db?password=x&password=y", "postgres://u:p%20w@h/db", "postgres://u:pw@h:notaport/db", "postgres://u:p%w@h/db",
		"host=h password=pw", "postgres://u:pw@[::1]:5432/db?host=/run/pg", "postgres://u:pw@h/db?PASSWORD=upper", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		conn, _, err := clientConn(dsn)
		if err != nil {
			msg := err.Error()
			if !errors.Is(err, engine.ErrBadInput) || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("clientConn(%q): %q", dsn, msg)
			}
			// (A DSN with control characters is quoted with escapes, which
			// can spell anything: "\x0000" holds "0000".)
			if pw := engine.PasswordOf(dsn); len(pw) >= 4 && !strings.Contains("xxxxx", pw) && strconv.Quote(dsn) == `"`+dsn+`"` &&
				!strings.Contains(strings.Replace(dsn, pw, "", 1), pw) && strings.Contains(msg, pw) {
				t.Fatalf("clientConn(%q): %q shows the password", dsn, msg)
			}
			return
		}
		u, err := url.Parse(conn)
		if err != nil {
			t.Fatalf("clientConn(%q) = %q, not a URL: %v", dsn, conn, err)
		}
		if u.User != nil {
			if _, has := u.User.Password(); has {
				t.Fatalf("clientConn(%q) = %q keeps the userinfo's password", dsn, conn)
			}
		}
		if u.Query().Has("password") { // libpq's keywords are lower case: PASSWORD= is refused, not a password
			t.Fatalf("clientConn(%q) = %q keeps a password parameter", dsn, conn)
		}
		// The passwords libpq would read: the userinfo's and password= parameters.
		orig, _ := url.Parse(dsn)
		secrets := orig.Query()["password"]
		if orig.User != nil {
			p, _ := orig.User.Password()
			secrets = append(secrets, p)
		}
		for _, s := range secrets {
			rest := strings.ReplaceAll(dsn, s, "")
			for _, form := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
				if len(form) >= 4 && !strings.Contains(rest, form) && strings.Contains(conn, form) {
					t.Fatalf("clientConn(%q) = %q shows the password %q", dsn, conn, s)
				}
			}
		}
		if u.Host != orig.Host || u.Path != orig.Path || orig.User != nil && u.User.Username() != orig.User.Username() {
			t.Fatalf("clientConn(%q) = %q lost the user, host or database", dsn, conn)
		}
	})
}
