package engine

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// distinctive reports whether pw can be looked for in a redacted DSN: long
// enough, and not a part of "xxxxx" or of the rest of the DSN.
func distinctive(pw, rest string) bool {
	return len(pw) >= 4 && !strings.Contains("xxxxx", pw) && !strings.Contains(rest, pw)
}

// passwordIs reports whether u's password is pw, as typed or percent-decoded.
func passwordIs(u *url.Userinfo, pw string) bool {
	p, _ := u.Password()
	d, err := url.PathUnescape(pw)
	return p == pw || err == nil && p == d
}

// FuzzRedact: a password never survives Redact, wherever the DSN carries
// it (userinfo, a password= parameter of a URL or of a keyword/value DSN),
// whatever else is in the DSN; what Redact leaves carries no password but
// xxxxx; and PasswordOf finds a plain password where it is.
func FuzzRedact(f *testing.F) {
	for _, c := range [][4]string{
		{"u", "pw", "h:5432", "/db"}, {"u", "topsecret", "127.0.0.1:1", "/db?sslmode=disable"}, {"u", "p%w", "h:99999999", "/"},
		{"u", "ab/cd", "h", "/db"}, {"u", "12/cd", "h", "/db"}, {"u", "p@ss", "h", "/db"}, {"u", "p#ss", "h", "/db"},
		{"u", "p?ss", "h", "/db"}, {"", "secret1", "h", ""}, {"u:v", "secret2", "[::1]:5432", "/db"}, {"u", "s p a c e", "h", "/d b"},
		{"u", "sec%21", "h", "/db?application_name=a@b"}, {"u", "'quoted'", "h", "/db"}, {"u", `back\slash`, "h", "/db"},
	} {
		f.Add(c[0], c[1], c[2], c[3])
	}
	f.Fuzz(func(t *testing.T, user, pw, host, rest string) {
		if strings.ContainsAny(user+host+rest, "@") || strings.ContainsAny(user+host, "/?#") {
			// An '@' after the password makes the DSN ambiguous even to
			// pgx; a '/', '?' or '#' in the host ends it, and what follows
			// is no longer a password to pgx.
			return
		}
		var forms []struct{ dsn, others string }
		userinfo := "postgres://" + user + ":" + pw + "@" + host + rest
		// pgx reads a URL with url.Parse: when that reads another password
		// (a '#' or '/' in pw ends the authority early), pw is not one.
		if u, err := url.Parse(userinfo); err != nil || u.User == nil || passwordIs(u.User, pw) {
			forms = append(forms, struct{ dsn, others string }{userinfo, "postgres://" + user + ":@" + host + rest})
		}
		forms = append(forms, struct{ dsn, others string }{"postgres://" + user + "@" + host + "/db?password=" + url.QueryEscape(pw),
			"postgres://" + user + "@" + host + "/db?password="})
		if !strings.ContainsAny(pw, " \t\n\v\f\r'\\") { // libpq ends a bare value at C's isspace
			forms = append(forms, struct{ dsn, others string }{"host=" + host + " password=" + pw + " dbname=db", "host=" + host + " password= dbname=db"})
		}
		for _, form := range forms {
			red := Redact(form.dsn)
			// xxxxx as a mark of its own, so that pw cannot be found
			// straddling it ("xxx\f" in "xxxxx\f").
			marked := strings.ReplaceAll(red, "xxxxx", "\x00")
			for _, secret := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw)} {
				// others, redacted too: Redact re-encodes the rest (a host's
				// \x92 becomes %92), and what it makes of it is no password.
				if distinctive(secret, form.others+" "+Redact(form.others)) && !strings.Contains(secret, "\x00") && strings.Contains(marked, secret) {
					t.Fatalf("Redact(%q) = %q keeps the password %q", form.dsn, red, secret)
				}
			}
			if got := PasswordOf(red); got != "" && got != "xxxxx" {
				t.Fatalf("Redact(%q) = %q still carries password %q", form.dsn, red, got)
			}
			if _, err := Scheme(form.dsn); err != nil {
				if msg := err.Error(); !errors.Is(err, ErrBadInput) || strings.ContainsAny(msg, "\n\r") ||
					distinctive(pw, form.others) && strings.Contains(msg, pw) && strconv.Quote(form.dsn) == `"`+form.dsn+`"` {
					t.Fatalf("Scheme(%q): %v", form.dsn, err)
				}
			}
		}
		// A plain password in a plain URL is found.
		if pw != "" && strings.Trim(pw, "abcdefghijklmnopqrstuvwxyz0123456789") == "" && strings.Trim(user, "abcdefghijklmnopqrstuvwxyz") == "" &&
			strings.Trim(host, "abcdefghijklmnopqrstuvwxyz0123456789.") == "" && host != "" {
			if got := PasswordOf("postgres://" + user + ":" + pw + "@" + host + "/db"); got != pw {
				t.Fatalf("PasswordOf(postgres://%s:%s@%s/db) = %q", user, pw, host, got)
			}
		}
	})
}
