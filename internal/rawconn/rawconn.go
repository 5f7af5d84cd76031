// Package rawconn makes a database client's socket cheaper to use: reads
// and writes as raw system calls on the non-blocking socket (see Conn).
// Both engines' virtual users use it.
package rawconn

import (
	"context"
	"io"
	"net"
	"syscall"
	"unsafe"
)

// Conn is a network connection whose reads and writes are raw system
// calls on its non-blocking socket, with Go's network poller waiting when
// the socket has nothing to read or no room to write.
//
// A plain net.Conn enters each read and write through the runtime's
// syscall bookkeeping, which lends the thread's scheduler slot (P) to
// others while the call lasts. A write to a local server is long for a
// system call, since the kernel delivers the message and wakes the backend
// inside it, so nearly every write found the runtime's monitor thread
// asleep and woke it, and the monitor then took the P away to hand it to
// another thread: two thread wake-ups a transaction. A call on a
// non-blocking socket never waits, so it may run as a raw system call that
// keeps its P; on the 2-core reference machine this cut the driver's CPU
// per transaction (bench/driver.sh).
type Conn struct {
	net.Conn
	rc syscall.RawConn

	// The current read's and write's buffer and outcome, for the
	// callbacks, which are made once: a closure per call would be an
	// allocation. A read and a write may run at the same time (pgconn
	// reads in the background while it writes a large message).
	r, w rawCall

	// A request kept by a Write after HoldWrite, for the next Read to send
	// (see HoldWrite); hold says the next Write is to be kept.
	held []byte
	hold bool
	// exchange is the read's callback when a held request goes first.
	exchange func(fd uintptr) bool

	// mark is the socket's receive low-water mark as last set (the
	// kernel's is one byte); keepMark says WakeAt set it for the next
	// Read; setMark is r.setMark, made once, for WakeAt to set it at once.
	mark     int
	keepMark bool
	setMark  func(fd uintptr)
}

// rawCall is one direction of a Conn.
type rawCall struct {
	buf   []byte
	n     int
	errno syscall.Errno
	fn    func(fd uintptr) bool

	// send is what a read writes before it reads (HoldWrite); sendErr says
	// the write failed, with errno.
	send    []byte
	sendErr bool

	// lowat, when not 0, is the receive low-water mark to set before the
	// callback reads or waits (WakeAt).
	lowat int
}

// Wrap returns c reading and writing by raw system calls, or c itself
// when it has no file descriptor to call them on.
func Wrap(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	r := &Conn{Conn: c, rc: rc, mark: 1}
	r.r.fn, r.w.fn, r.exchange, r.setMark = r.r.read, r.w.write, r.r.sendThenRead, r.r.setMark
	return r
}

// Dialer dials with dial and wraps what it returns (see Conn).
func Dialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return Wrap(c), nil
	}
}

// read is the read callback: false asks the poller to wait for data.
func (c *rawCall) read(fd uintptr) bool {
	c.setMark(fd)
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)))
		if e == syscall.EINTR {
			continue
		}
		c.n, c.errno = int(r), e
		return e != syscall.EAGAIN
	}
}

// sendThenRead is a read's callback that first writes c.send, the request
// whose reply the read is for. The poller forgets the socket's old
// readiness before it calls the callback and waits after it returns
// false, so the reply, which cannot come before the request has gone,
// always wakes the wait: the read that would find nothing yet is not
// made. Bytes that came before the request (a reply's tail the caller had
// not read yet) are read with the reply.
func (c *rawCall) sendThenRead(fd uintptr) bool {
	if len(c.send) == 0 {
		return c.read(fd)
	}
	c.setMark(fd)
	for len(c.send) > 0 {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.send[0])), uintptr(len(c.send)))
		switch e {
		case 0:
			c.send = c.send[r:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return true // no room: Read writes the rest as Write does
		default:
			c.errno, c.sendErr = e, true
			return true
		}
	}
	return false
}

// setMark sets the socket's receive low-water mark (SO_RCVLOWAT) to
// c.lowat, if it is to change (WakeAt). A failure is left for the read to
// meet: the mark is only a saving.
func (c *rawCall) setMark(fd uintptr) {
	if c.lowat == 0 {
		return
	}
	v := int32(c.lowat)
	syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, fd, syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, uintptr(unsafe.Pointer(&v)), 4, 0)
	c.lowat = 0
}

// write is the write callback: it writes all of c.buf, and returns false
// to wait for room when the socket's buffer is full.
func (c *rawCall) write(fd uintptr) bool {
	for len(c.buf) > 0 {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)))
		switch e {
		case 0:
			c.n += int(r)
			c.buf = c.buf[r:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.errno = e
			return true
		}
	}
	return true
}

func (c *Conn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r := &c.r
	if !c.keepMark && c.mark > 1 {
		c.mark, r.lowat = 1, 1 // set by the callback, before it reads
	}
	c.keepMark = false
	if len(c.held) > 0 {
		if n, done, err := c.sendHeld(b); done {
			return n, err
		}
	}
	r.buf, r.n, r.errno = b, 0, 0
	err := c.rc.Read(r.fn)
	r.buf = nil
	return c.readResult(err)
}

// readResult turns the outcome of a read's wait and of its callback into
// Read's results.
func (c *Conn) readResult(err error) (int, error) {
	r := &c.r
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case r.errno != 0:
		return 0, c.opError("read", r.errno)
	case r.n == 0:
		return 0, io.EOF
	}
	return r.n, nil
}

// WakeAt sets the socket's receive low-water mark (SO_RCVLOWAT) to n
// bytes, until the next Read has returned: the kernel wakes neither that
// Read nor the process's poller for the bytes that come until n have, or
// the peer has closed. A reply known to come after a short piece that is
// no use alone then costs one wake-up, not two. The caller must know that
// at least n bytes are to come. A Read without WakeAt before it sets the
// mark back to one byte, first reading what came under the higher one.
// The mark is a system call only when it changes.
func (c *Conn) WakeAt(n int) {
	n = max(n, 1)
	c.keepMark = true
	if n != c.mark {
		c.mark, c.r.lowat = n, n
		_ = c.rc.Control(c.setMark) // a failure only forgoes the saving
	}
}

// HoldWrite makes the next Write keep its bytes rather than send them, and
// report them written: the next Read sends them from inside its wait, which
// saves the read that would find no reply yet, one system call a round
// trip. It is for a request whose reply the caller reads next; another
// Write first sends the kept bytes as they were due, and Close drops them.
func (c *Conn) HoldWrite() { c.hold = true }

// sendHeld writes the kept request inside the wait for its reply and reads
// into b. done is false when the request could not all be written at once
// (a full socket buffer): it has then been written by Write, and Read goes
// on as a plain read.
func (c *Conn) sendHeld(b []byte) (n int, done bool, err error) {
	r := &c.r
	r.buf, r.n, r.errno, r.send, r.sendErr = b, 0, 0, c.held, false
	c.held = c.held[:0]
	err = c.rc.Read(c.exchange)
	rest := r.send
	r.buf, r.send = nil, nil
	switch {
	case err != nil && len(rest) > 0:
		return 0, true, c.opError("write", err)
	case r.sendErr:
		return 0, true, c.opError("write", r.errno)
	case len(rest) > 0:
		if _, err := c.write(rest); err != nil {
			return 0, true, err
		}
		return 0, false, nil
	}
	n, err = c.readResult(err)
	return n, true, err
}

func (c *Conn) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if c.hold {
		c.hold = false
		c.held = append(c.held[:0], b...)
		return len(b), nil
	}
	if len(c.held) > 0 {
		held := c.held
		c.held = c.held[:0]
		if _, err := c.write(held); err != nil {
			return 0, err
		}
	}
	return c.write(b)
}

// write sends all of b.
func (c *Conn) write(b []byte) (int, error) {
	w := &c.w
	w.buf, w.n, w.errno = b, 0, 0
	err := c.rc.Write(w.fn)
	w.buf = nil
	switch {
	case err != nil:
		return w.n, c.opError("write", err)
	case w.errno != 0:
		return w.n, c.opError("write", w.errno)
	}
	return w.n, nil
}

// opError wraps err as the net package's Read and Write would (the raw
// calls wrap theirs as "raw-read" and "raw-write").
func (c *Conn) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
