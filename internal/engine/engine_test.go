package engine

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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

type interrupts struct{ n atomic.Int32 }

func (i *interrupts) Interrupt() { i.n.Add(1) }

// InterruptOnDone: an ended context refuses the call; one that ends during
// it interrupts once; a stopped watch, or a context that cannot end, never.
func TestInterruptOnDone(t *testing.T) {
	var w interrupts
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := InterruptOnDone(ended, &w); !errors.Is(err, context.Canceled) {
		t.Fatalf("an ended context: %v; want context.Canceled", err)
	}
	stop, err := InterruptOnDone(context.Background(), &w)
	if err != nil || stop() {
		t.Fatalf("a context that cannot end: %v, stop reported a watch", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	if _, err := InterruptOnDone(ctx, &w); err != nil {
		t.Fatal(err)
	}
	stopped, cancelStopped := context.WithCancel(context.Background())
	stop, _ = InterruptOnDone(stopped, &w)
	if !stop() {
		t.Fatal("stop did not undo a watch")
	}
	cancelStopped()
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for w.n.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // a second, wrong interrupt would have come by now
	if n := w.n.Load(); n != 1 {
		t.Fatalf("%d interrupts; want 1 (the watched context that ended)", n)
	}
}
