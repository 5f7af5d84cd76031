package engine

import (
	"errors"
	"strings"
	"testing"
)

func TestScheme(t *testing.T) {
	for dsn, want := range map[string]string{"postgres://x": "postgres", "POSTGRESQL://a@b/c": "postgresql", "MySQL://h": "mysql"} {
		if got, err := Scheme(dsn); err != nil || got != want {
			t.Errorf("Scheme(%q) = %q, %v", dsn, got, err)
		}
	}
	for _, dsn := range []string{"", "host=x", "://x", "postgres:/x"} {
		if _, err := Scheme(dsn); !errors.Is(err, ErrBadInput) {
			t.Errorf("Scheme(%q) = %v, want bad input", dsn, err)
		}
	}
}

func TestRedact(t *testing.T) {
	cases := map[string]string{
		"postgres://u:pw@h:5/db":                              "postgres://u:xxxxx@h:5/db",
		"postgres://u@h/db":                                   "postgres://u@h/db",
		"postgres://u:p%w@h:99999999/":                        "postgres://xxxxx@h:99999999/",
		"postgres://u@h/db?password=pw&sslmode=disable":       "postgres://u@h/db?password=xxxxx&sslmode=disable",
		"postgres://h/db?sslmode=disable&password=p%20w":      "postgres://h/db?sslmode=disable&password=xxxxx",
		"host=h user=u password=pw dbname=db":                 "host=h user=u password=xxxxx dbname=db",
		`host=h password = 'p w\' x' sslpassword=k dbname=db`: "host=h password = xxxxx sslpassword=xxxxx dbname=db",
	}
	for in, want := range cases {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	if p := PasswordOf("postgres://u:p%w@h/db"); p != "p%w" {
		t.Errorf("PasswordOf unparseable = %q", p)
	}
	if p := PasswordOf("postgres://u:sec%21@h/db"); p != "sec!" {
		t.Errorf("PasswordOf = %q", p)
	}
	for dsn, want := range map[string]string{
		"postgres://u@h/db?password=p%40w": "p@w",
		"postgres://u@h/db?password=p+w":   "p+w", // pgx and libpq decode no '+'
		"host=h password=pw dbname=db":     "pw",
		`host=h password='p w\' x'`:        `p w' x`,
		"postgres://u:a@h/db?password=b":   "b", // the parameter wins, as in pgx and libpq
	} {
		if p := PasswordOf(dsn); p != want {
			t.Errorf("PasswordOf(%q) = %q, want %q", dsn, p, want)
		}
	}
	if strings.Contains(Redact("postgres://u:topsecret@h/db"), "topsecret") {
		t.Error("password survived")
	}
}
