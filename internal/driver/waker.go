package driver

import (
	"context"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// waker waits a VU until its arrival's intended start. Go's timers wake a
// goroutine no sooner than the next poll of the network poller, whose
// timeout Linux takes in whole milliseconds: a 300 µs sleep on an idle
// thread took 790 µs at the median. A timerfd (one per VU) is a file the
// poller watches, and the kernel makes it ready at the nanosecond it was set
// for: the same sleep then ends 26 µs late at the median and 85 µs at p99,
// with no thread spinning or blocked. Where no timerfd can be made, a Go
// timer does the waiting.
//
// A wait is one system call: the timer is set from inside the poller's
// read callback, after the poller has forgotten the file's last readiness
// and before it parks the goroutine, so an expiry at any moment from then
// on wakes it; the expiry count is never read (setting the timer again
// clears it). The call is raw, as rawconn's are: it never blocks, and a
// call through the runtime's syscall bookkeeping woke its monitor thread
// from its idle sleep at nearly every arrival of a lightly loaded step.
type waker struct {
	file *os.File // nil: a Go timer waits (sleep)
	rc   syscall.RawConn
	stop func() bool

	// The current wait's end and outcome, for the callback, which is made
	// once: a closure per wait would be an allocation.
	at    time.Time
	spec  unix.ItimerSpec
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

// newWaker returns a waker whose waits end when ctx does.
func newWaker(ctx context.Context) *waker {
	w := &waker{}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err == nil {
		w.file = os.NewFile(uintptr(fd), "timerfd")
		if w.rc, err = w.file.SyscallConn(); err == nil {
			w.fn = w.arm
			w.stop = context.AfterFunc(ctx, func() { _ = w.file.SetReadDeadline(time.Unix(1, 0)) })
			return w
		}
		_ = w.file.Close()
		w.file = nil
	}
	return w
}

// arm is the poller's read callback: true once the wait's end has come,
// or the timer could not be set (errno); otherwise it sets the timer for
// what is left, and false has the poller wait for it. A wake-up before the
// end (none is expected) only sets the timer again.
func (w *waker) arm(fd uintptr) bool {
	d := time.Until(w.at)
	if d <= 0 {
		return true
	}
	w.spec.Value = unix.NsecToTimespec(d.Nanoseconds())
	_, _, e := syscall.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&w.spec)), 0, 0, 0)
	w.errno = e
	return e != 0
}

// until waits until t, and reports false when ctx ended first.
func (w *waker) until(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	if w.file == nil {
		return sleep(ctx, d)
	}
	w.at, w.errno = t, 0
	if err := w.rc.Read(w.fn); err != nil {
		return false
	}
	if w.errno != 0 {
		return sleep(ctx, time.Until(t))
	}
	return ctx.Err() == nil
}

func (w *waker) close() {
	if w.file != nil {
		w.stop()
		_ = w.file.Close()
	}
}
