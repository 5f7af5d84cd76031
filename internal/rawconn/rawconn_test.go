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

// TestHoldWrite checks the held request: it leaves only with the Read of
// its reply, the reply always ends that wait, including when it comes in
// pieces or after bytes left unread from the reply before, and a request
// too large for the socket buffer still goes whole.
func TestHoldWrite(t *testing.T) {
	t.Run("kept until the read", func(t *testing.T) {
		c, peer := rawPair(t)
		c.HoldWrite()
		if n, err := c.Write([]byte("ping")); n != 4 || err != nil {
			t.Fatalf("held Write = %d, %v; want 4, nil", n, err)
		}
		peer.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if n, err := peer.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the peer read %d bytes (%v) of a held request before any Read", n, err)
		}
		go func() {
			peer.SetReadDeadline(time.Time{})
			b := make([]byte, 4)
			if _, err := io.ReadFull(peer, b); err == nil {
				peer.Write(append(b, " pong"...))
			}
		}()
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		got := make([]byte, 9)
		if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping pong" {
			t.Fatalf("reply = %q, %v; want \"ping pong\"", got, err)
		}
	})
	t.Run("round trips", func(t *testing.T) {
		c, peer := rawPair(t)
		// The peer answers request i (8 bytes: i) with its reply, sent whole,
		// in two pieces a moment apart, or with its last byte a moment later,
		// which the client reads only with the next reply: the byte comes
		// before the next request or while its reply is awaited.
		go func() {
			req := make([]byte, 8)
			for i := 0; ; i++ {
				if _, err := io.ReadFull(peer, req); err != nil {
					return
				}
				reply := append(req, bytes.Repeat([]byte{byte(i)}, i%50)...)
				switch i % 3 {
				case 0:
					peer.Write(reply)
				case 1:
					peer.Write(reply[:3])
					time.Sleep(time.Duration(i%7) * 100 * time.Microsecond)
					peer.Write(reply[3:])
				case 2:
					peer.Write(reply[:len(reply)-1])
					time.Sleep(time.Duration(i%5) * 50 * time.Microsecond)
					peer.Write(reply[len(reply)-1:])
				}
			}
		}()
		c.SetReadDeadline(time.Now().Add(60 * time.Second)) // a lost wake-up fails, not hangs
		var owed int                                        // bytes of the last reply still to read
		for i := range 600 {
			req := make([]byte, 8)
			req[0], req[1] = byte(i), byte(i>>8)
			c.HoldWrite()
			if _, err := c.Write(req); err != nil {
				t.Fatal(err)
			}
			want := owed + 8 + i%50
			got := make([]byte, want)
			n, err := io.ReadFull(c, got[:want-boolInt(i%3 == 2)])
			if err != nil {
				t.Fatalf("round trip %d: read %d bytes: %v", i, n, err)
			}
			if !bytes.Equal(got[owed:owed+8], req) {
				t.Fatalf("round trip %d: reply %x does not start with the request %x", i, got[owed:owed+8], req)
			}
			owed = boolInt(i%3 == 2)
		}
	})
	t.Run("larger than the socket buffer", func(t *testing.T) {
		c, peer := rawPair(t)
		big := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB
		go func() {
			n, _ := io.CopyN(io.Discard, peer, int64(len(big)))
			peer.Write([]byte{byte(n >> 24)})
		}()
		c.HoldWrite()
		c.Write(big)
		c.SetReadDeadline(time.Now().Add(60 * time.Second))
		b := make([]byte, 1)
		if _, err := io.ReadFull(c, b); err != nil || b[0] != byte(len(big)>>24) {
			t.Fatalf("reply = %x, %v; want the peer to have read all %d bytes", b, err, len(big))
		}
	})
	t.Run("another write sends it first", func(t *testing.T) {
		c, peer := rawPair(t)
		c.HoldWrite()
		c.Write([]byte("first "))
		c.Write([]byte("second"))
		peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		got := make([]byte, 12)
		if _, err := io.ReadFull(peer, got); err != nil || string(got) != "first second" {
			t.Fatalf("the peer read %q, %v; want \"first second\"", got, err)
		}
	})
	t.Run("closed while waiting", func(t *testing.T) {
		c, peer := rawPair(t)
		done := make(chan error, 1)
		go func() {
			c.HoldWrite()
			c.Write([]byte("never answered"))
			_, err := c.Read(make([]byte, 8))
			done <- err
		}()
		peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.ReadFull(peer, make([]byte, 14)); err != nil {
			t.Fatal(err)
		}
		c.Close()
		select {
		case err := <-done:
			if !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Read after Close = %v; want net.ErrClosed", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not end a Read waiting for a held request's reply")
		}
	})
	t.Run("deadline", func(t *testing.T) {
		c, _ := rawPair(t)
		c.HoldWrite()
		c.Write([]byte("never answered"))
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := c.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Read of a reply that never comes, past its deadline = %v; want a timeout", err)
		}
	})
	t.Run("peer gone", func(t *testing.T) {
		c, peer := rawPair(t)
		peer.(*net.TCPConn).SetLinger(0)
		peer.Close()
		time.Sleep(20 * time.Millisecond) // the reset has come
		var err error
		for range 100 {
			c.HoldWrite()
			c.Write([]byte("after the reset"))
			if _, err = c.Read(make([]byte, 8)); err != nil {
				break
			}
		}
		if err == nil {
			t.Fatal("a held request to a reset connection never failed")
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestWakeAt checks the low-water mark a Read may ask for: its wait
// sleeps through a first piece shorter than the mark, the Reads after it
// wake at the first byte again, bytes that came under the mark are read
// by the next Read, and a peer that closes short of the mark still ends
// the wait.
func TestWakeAt(t *testing.T) {
	// answer writes the reply "01234" and, a moment later, "56789".
	answer := func(peer net.Conn, req int) {
		if req > 0 {
			if _, err := io.ReadFull(peer, make([]byte, req)); err != nil {
				return
			}
		}
		peer.Write([]byte("01234"))
		time.Sleep(30 * time.Millisecond)
		peer.Write([]byte("56789"))
	}
	for _, held := range []bool{false, true} {
		name := map[bool]string{false: "plain read", true: "held request"}[held]
		t.Run(name+" sleeps through a short piece", func(t *testing.T) {
			c, peer := rawPair(t)
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			for i := range 4 { // the mark stays set from one Read to the next
				req := 0
				if held {
					req = 3
					c.HoldWrite()
					c.Write([]byte("req"))
				}
				go answer(peer, req)
				c.WakeAt(8)
				b := make([]byte, 64)
				n, err := c.Read(b)
				if err != nil || string(b[:n]) != "0123456789" {
					t.Fatalf("Read %d after WakeAt(8) = %q, %v; want both pieces, \"0123456789\", in one wake-up", i, b[:n], err)
				}
			}
		})
	}
	// After a Read under a mark of 8, a plain Read wakes at the first
	// byte, and reads bytes that came under the mark, waking no one.
	for _, before := range []bool{false, true} {
		name := map[bool]string{false: "the next read wakes at the first byte", true: "bytes that came under the mark"}[before]
		t.Run(name, func(t *testing.T) {
			c, peer := rawPair(t)
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			go answer(peer, 0)
			c.WakeAt(8)
			if _, err := io.ReadFull(c, make([]byte, 10)); err != nil {
				t.Fatal(err)
			}
			if before {
				peer.Write([]byte("abc"))
				time.Sleep(20 * time.Millisecond)
			} else {
				go peer.Write([]byte("abc"))
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			b := make([]byte, 8)
			if n, err := c.Read(b); err != nil || string(b[:n]) != "abc" {
				t.Fatalf("a Read after the WakeAt one, of 3 bytes sent = %q, %v; want \"abc\"", b[:n], err)
			}
		})
	}
	t.Run("peer closes short of the mark", func(t *testing.T) {
		c, peer := rawPair(t)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		go func() {
			peer.Write([]byte("abc"))
			time.Sleep(20 * time.Millisecond)
			peer.Close()
		}()
		c.WakeAt(100)
		got, err := io.ReadAll(c)
		if err != nil || string(got) != "abc" {
			t.Fatalf("reading to the end of a peer that sent 3 bytes under a mark of 100 = %q, %v; want \"abc\", nil", got, err)
		}
	})
}
