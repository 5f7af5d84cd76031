package all

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/engine"
)

func TestNameOf(t *testing.T) {
	for dsn, want := range map[string]string{"postgres://x": "postgres", "postgresql://a@b/c": "postgres", "POSTGRES://h": "postgres",
		"mysql://u@h/db": "mariadb", "MariaDB://u:p@h:3306/db": "mariadb"} {
		if got, err := NameOf(dsn); err != nil || got != want {
			t.Errorf("NameOf(%q) = %q, %v", dsn, got, err)
		}
	}
	for dsn, says := range map[string]string{"": "no scheme", "host=x": "no scheme", "sqlite://x.db": "not supported yet", "ftp://x": "unknown"} {
		_, err := NameOf(dsn)
		if !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), says) {
			t.Errorf("NameOf(%q) = %v, want bad input saying %q", dsn, err, says)
		}
	}
}

// TestTable: every engine is whole, and no scheme selects two engines.
func TestTable(t *testing.T) {
	seen := map[string]string{}
	for _, e := range Engines {
		if e.Name == "" || e.Open == nil || len(e.Schemes) == 0 {
			t.Errorf("engine %+v lacks a name, a constructor or a scheme", e)
		}
		for _, s := range e.Schemes {
			if other, dup := seen[s]; dup || s != strings.ToLower(s) || slices.Contains(planned, s) {
				t.Errorf("scheme %q of %s: also %q's, not lower-case, or listed as planned", s, e.Name, other)
			}
			seen[s] = e.Name
		}
		if e.Display == "" || e.DefaultPort == 0 || len(e.FaultSignals) != 3 {
			t.Errorf("engine %s lacks a display name, a default port or the signals of kill, stop and restart", e.Name)
		}
		if got, ok := Lookup(e.Name); !ok || got.Name != e.Name {
			t.Errorf("Lookup(%q) = %v, %v", e.Name, got.Name, ok)
		}
	}
	if !slices.Contains(Names(true), "postgres") || !slices.Contains(Names(true), "mariadb") || len(Names(false)) != len(Engines) {
		t.Errorf("Names: %v, managed %v", Names(false), Names(true))
	}
}

// FuzzNameOf: any string either names an engine by one of its schemes in any
// case, or is bad input in one line that never shows the DSN's password.
func FuzzNameOf(f *testing.F) {
	for _, s := range []string{"postgres://x", "postgresql://a@b/c", "POSTGRES://h", "", "host=x", "mysql://u@h/db", "ftp://x", "://x",
		"postgres:/x", "postgres://u:hunter22@h/db", "host=h password=hunter22", "post\ngres://x", "x\n://y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		name, err := NameOf(dsn)
		if err != nil {
			msg := err.Error()
			if !errors.Is(err, engine.ErrBadInput) || msg == "" || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("NameOf(%q): %q", dsn, msg)
			}
			// (Quoted with escapes, control characters can spell anything.)
			pw := engine.PasswordOf(dsn)
			rest := strings.Replace(dsn, pw, "", 1)
			if len(pw) >= 4 && !strings.Contains("xxxxx", pw) && !strings.Contains(rest, pw) && strings.Contains(msg, pw) &&
				strconv.Quote(dsn) == `"`+dsn+`"` {
				t.Fatalf("NameOf(%q): %q shows the password %q", dsn, msg, pw)
			}
			return
		}
		scheme, _, _ := strings.Cut(dsn, "://")
		e, ok := Lookup(name)
		if !ok || !slices.Contains(e.Schemes, strings.ToLower(scheme)) {
			t.Fatalf("NameOf(%q) = %q", dsn, name)
		}
	})
}
