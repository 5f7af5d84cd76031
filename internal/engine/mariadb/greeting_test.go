package mariadb_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/engine/mariadb"
)

// A peer that accepts the connection but never sends MariaDB's greeting, as
// a PostgreSQL server does (it waits for its client), is given up on after
// the DSN's timeout with a message that says so, rather than when the peer
// hangs up (PostgreSQL: after a minute; this one: after the test).
func TestOpenWithoutGreeting(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }() // silent until the test ends
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // only a guard against hanging
	defer cancel()
	_, err = mariadb.Open(ctx, "mysql://u:secret@"+ln.Addr().String()+"/db?timeout=1s")
	if err == nil || !strings.Contains(err.Error(), "no MariaDB/MySQL greeting within 1s") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("Open: %v; want no greeting within 1s, and no password", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Open waited until the guard's deadline")
	}
}
