package rawconn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"
)

// rawPair returns a Conn dialled to a local listener and the listener's
// end of the connection.
func rawPair(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	var d net.Dialer
	c, err := Dialer(d.DialContext)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rc, ok := c.(*Conn)
	if !ok {
		t.Fatalf("a TCP connection was not wrapped: %T", c)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { rc.Close(); peer.Close() })
	return rc, peer
}

// TestRawConnEcho sends far more than the socket buffers hold through a
// Conn while reading the echo on the same connection at the same time:
// writes must wait for room (EAGAIN), reads for data, and a read and a
// write may run together, as pgconn's background reader does.
func TestRawConnEcho(t *testing.T) {
	c, peer := rawPair(t)
	go io.Copy(peer, peer) // echo

	want := make([]byte, 16<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range want {
		want[i] = byte(r.Uint32())
	}
	werr := make(chan error, 1)
	go func() {
		// Uneven pieces, so that writes end at odd places.
		rest := want
		for len(rest) > 0 {
			n := min(len(rest), 1+r.IntN(300_000))
			m, err := c.Write(rest[:n])
			if err != nil || m != n {
				werr <- errors.Join(err, errors.New("short write"))
				return
			}
			rest = rest[n:]
		}
		werr <- nil
	}()
	got := make([]byte, len(want))
	c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a lost byte fails, not hangs
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading the echo: %v", err)
	}
	if err := <-werr; err != nil {
		t.Fatalf("writing: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the echo differs from what was written")
	}
}

// TestRawConnEnds checks the ends a driver relies on: EOF when the server
// closes, a timeout error past a read deadline (pgconn's cancellation),
// and a blocked read that returns net.ErrClosed when another goroutine
// closes the connection (the driver's interrupt at the end of a step).
func TestRawConnEnds(t *testing.T) {
	t.Run("EOF", func(t *testing.T) {
		c, peer := rawPair(t)
		if _, err := peer.Write([]byte("last")); err != nil {
			t.Fatal(err)
		}
		peer.Close()
		got, err := io.ReadAll(c)
		if err != nil || string(got) != "last" {
			t.Fatalf("ReadAll = %q, %v; want \"last\", nil (EOF)", got, err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		c, _ := rawPair(t)
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err := c.Read(make([]byte, 8))
		var ne net.Error
		if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("Read past its deadline = %v; want a timeout", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		c, _ := rawPair(t)
		done := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 8))
			done <- err
		}()
		time.Sleep(20 * time.Millisecond)
		c.Close()
		select {
		case err := <-done:
			var oe *net.OpError
			if !errors.Is(err, net.ErrClosed) || !errors.As(err, &oe) || oe.Op != "read" {
				t.Fatalf("blocked Read after Close = %v; want a read OpError wrapping net.ErrClosed", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not end a blocked Read")
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Write after Close = %v; want net.ErrClosed", err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		c, peer := rawPair(t)
		peer.(*net.TCPConn).SetLinger(0) // close with a reset
		peer.Close()
		var err error
		for range 100 { // the first write may still succeed
			if _, err = c.Write([]byte("after the reset")); err != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		var oe *net.OpError
		if err == nil || !errors.As(err, &oe) || oe.Op != "write" {
			t.Fatalf("Write to a reset connection = %v; want a write OpError", err)
		}
	})
}

// A connection without a file descriptor is used as it is.
func TestWrapRawPipe(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := Wrap(a); got != a {
		t.Fatalf("Wrap(pipe) = %T; want the pipe itself", got)
	}
}
