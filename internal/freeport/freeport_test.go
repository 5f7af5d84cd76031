package freeport_test

import (
	"net"
	"strconv"
	"testing"

	"github.com/tierbench/tierbench/internal/freeport"
)

// The ports picked come from below the system's ephemeral range, which
// outgoing connections take, are free when handed out, and are spread out.
func TestPickBelowEphemeralRange(t *testing.T) {
	lo := freeport.EphemeralLow()
	if lo <= freeport.Min+1000 {
		t.Skipf("ephemeral range from %d leaves no room below it", lo)
	}
	seen := map[int]bool{}
	for range 20 {
		p, err := freeport.Pick(0)
		if err != nil {
			t.Fatal(err)
		}
		if p < freeport.Min || p >= lo {
			t.Fatalf("port %d; want one in [%d, %d)", p, freeport.Min, lo)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d handed out as free: %v", p, err)
		}
		l.Close()
		seen[p] = true
	}
	if len(seen) < 10 {
		t.Errorf("20 picks gave %d distinct ports; want them spread over the range", len(seen))
	}
}

// Pick never hands out the port to avoid, even when it is free.
func TestPickAvoids(t *testing.T) {
	avoid, err := freeport.Pick(0)
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if p, err := freeport.Pick(avoid); err != nil || p == avoid {
			t.Fatalf("Pick(%d) = %d, %v", avoid, p, err)
		}
	}
}
