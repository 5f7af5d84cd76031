// Package durability runs the durability test of TPC-C clause 3.5.4: record
// every New-Order the database acknowledged in a success log, cause a
// failure while transactions are in flight, recover, and verify that every
// committed order survived and no rolled-back one appeared.
package durability

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/tierbench/tierbench/internal/tpcc"
)

// SyncInterval is how often the success log is written and fsync'd while
// it is appended to. An entry acknowledged within the last SyncInterval
// before the client machine itself crashed may be missing from the log;
// the test then sees its order as excess, never as lost.
const SyncInterval = 50 * time.Millisecond

// Log is a success log: one line per acknowledged New-Order,
// "W D O_ID C_ID OL_CNT FIRST_ITEM C|R", appended by the virtual users
// concurrently and made durable in batches.
type Log struct {
	path string
	mu   sync.Mutex
	f    *os.File
	buf  []byte
	n    int64 // entries appended
	err  error // the first write or sync error

	stop chan struct{}
	done chan struct{}
}

// CreateLog creates a new success log at path (readable by its owner only;
// an existing file is an error, never overwritten).
func CreateLog(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	l := &Log{path: path, f: f, stop: make(chan struct{}), done: make(chan struct{})}
	go l.syncLoop()
	return l, nil
}

// Path is the log's file.
func (l *Log) Path() string { return l.path }

// Append adds an acknowledged New-Order. It is safe for concurrent use.
func (l *Log) Append(a tpcc.Ack) {
	l.mu.Lock()
	l.buf = appendAck(l.buf, a)
	l.n++
	l.mu.Unlock()
}

// Len is the number of entries appended so far.
func (l *Log) Len() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

func appendAck(b []byte, a tpcc.Ack) []byte {
	for _, v := range [...]int{a.W, a.D, a.OID, a.Customer, a.Lines, a.FirstItem} {
		b = strconv.AppendInt(b, int64(v), 10)
		b = append(b, ' ')
	}
	if a.RolledBack {
		return append(b, 'R', '\n')
	}
	return append(b, 'C', '\n')
}

// Sync writes the buffered entries and fsyncs the file.
func (l *Log) Sync() error {
	l.mu.Lock()
	b := l.buf
	l.buf = nil
	l.mu.Unlock()
	// Only syncLoop and Close call Sync, one at a time, so the writes keep
	// the order of the appends.
	if l.err == nil && len(b) > 0 {
		if _, err := l.f.Write(b); err != nil {
			l.err = err
		} else if err := l.f.Sync(); err != nil {
			l.err = err
		}
	}
	return l.err
}

func (l *Log) syncLoop() {
	defer close(l.done)
	t := time.NewTicker(SyncInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			_ = l.Sync()
		}
	}
}

// Close writes and fsyncs what is left and closes the file.
func (l *Log) Close() error {
	close(l.stop)
	<-l.done
	err := l.Sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("success log %s: %w", l.path, err)
	}
	return nil
}

// ReadLog reads a success log. A last line cut short (a crash while it was
// written) is left out; any other malformed line is an error.
func ReadLog(path string) ([]tpcc.Ack, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		data = data[:i+1] // a torn last entry was never made durable
	}
	var acks []tpcc.Ack
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		a, err := parseAck(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		acks = append(acks, a)
	}
	return acks, sc.Err()
}

func parseAck(s string) (tpcc.Ack, error) {
	var a tpcc.Ack
	f := bytes.Fields([]byte(s))
	if len(f) != 7 {
		return a, fmt.Errorf("%q is not a success-log entry (W D O_ID C_ID OL_CNT FIRST_ITEM C|R)", s)
	}
	dst := [...]*int{&a.W, &a.D, &a.OID, &a.Customer, &a.Lines, &a.FirstItem}
	for i, p := range dst {
		v, err := strconv.Atoi(string(f[i]))
		if err != nil || v < 0 {
			return a, fmt.Errorf("%q: field %d is not a number ≥ 0", s, i+1)
		}
		*p = v
	}
	switch string(f[6]) {
	case "C":
	case "R":
		a.RolledBack = true
	default:
		return a, fmt.Errorf("%q: the last field must be C (committed) or R (rolled back)", s)
	}
	return a, nil
}
