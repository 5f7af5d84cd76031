package engine

import (
	"errors"
	"strings"
	"testing"
)

func TestSchemeOf(t *testing.T) {
	for dsn, want := range map[string]string{"postgres://x": "postgres", "postgresql://a@b/c": "postgres", "POSTGRES://h": "postgres"} {
		if got, err := SchemeOf(dsn); err != nil || got != want {
			t.Errorf("SchemeOf(%q) = %q, %v", dsn, got, err)
		}
	}
	for _, dsn := range []string{"", "host=x", "mysql://u@h/db", "ftp://x"} {
		if _, err := SchemeOf(dsn); !errors.Is(err, ErrBadInput) {
			t.Errorf("SchemeOf(%q) = %v, want bad input", dsn, err)
		}
	}
}

func TestRedact(t *testing.T) {
	cases := map[string]string{
		"postgres://u:pw@h:5/db":       "postgres://u:xxxxx@h:5/db",
		"postgres://u@h/db":            "postgres://u@h/db",
		"postgres://u:p%w@h:99999999/": "postgres://xxxxx@h:99999999/",
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
	if strings.Contains(Redact("postgres://u:topsecret@h/db"), "topsecret") {
		t.Error("password survived")
	}
}
