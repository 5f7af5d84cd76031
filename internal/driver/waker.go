package driver

import (
	"context"
	"os"
	"time"

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
type waker struct {
	fd    int
	file  *os.File // nil: the timer waits
	timer *time.Timer
	buf   [8]byte
	stop  func() bool
}

// newWaker returns a waker whose waits end when ctx does.
func newWaker(ctx context.Context) *waker {
	w := &waker{}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err == nil {
		w.fd, w.file = fd, os.NewFile(uintptr(fd), "timerfd")
		w.stop = context.AfterFunc(ctx, func() { _ = w.file.SetReadDeadline(time.Unix(1, 0)) })
		return w
	}
	w.timer = time.NewTimer(time.Hour)
	w.timer.Stop()
	return w
}

// until waits until t, and reports false when ctx ended first.
func (w *waker) until(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	if w.file == nil {
		w.timer.Reset(d)
		select {
		case <-w.timer.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if err := unix.TimerfdSettime(w.fd, 0, &unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}, nil); err != nil {
		return sleep(ctx, time.Until(t))
	}
	_, err := w.file.Read(w.buf[:])
	return err == nil && ctx.Err() == nil
}

func (w *waker) close() {
	if w.file != nil {
		w.stop()
		_ = w.file.Close()
	}
}
