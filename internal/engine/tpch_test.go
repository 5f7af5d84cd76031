package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/tierbench/tierbench/internal/tpch"
)

// conflicting is a loader that reads part of a stream and reports a
// conflict its first fails times, then reads it whole.
type conflicting struct {
	fails, calls int
	err          error
}

func (c *conflicting) LoadTable(_ context.Context, _ string, r io.Reader) (int64, error) {
	c.calls++
	if c.calls <= c.fails {
		_, _ = io.CopyN(io.Discard, r, 100)
		return 0, c.err
	}
	b, err := io.ReadAll(r)
	return int64(bytes.Count(b, []byte{'\n'})), err
}

func (c *conflicting) Close() {}

// A run rolled back for a conflict is loaded again from its first row,
// and only the load that took counts its bytes; other errors, and a fifth
// conflict, end it.
func TestLoadRunRetriesConflicts(t *testing.T) {
	sc, _ := tpch.NewScale(0.01)
	task := tpch.LoadTask{Table: tpch.Orders, First: 1, Count: 1000}
	whole, _ := io.ReadAll(task.Reader(sc))
	ctx := context.Background()
	var streamed atomic.Int64
	l := &conflicting{fails: 2, err: ErrLoadConflict}
	if n, err := loadRun(ctx, l, sc, task, &streamed); err != nil || n != 1000 || l.calls != 3 || streamed.Load() != int64(len(whole)) {
		t.Errorf("two conflicts: %d rows, %v, %d calls, %d bytes; want 1000 rows in 3 calls, %d bytes", n, err, l.calls, streamed.Load(), len(whole))
	}
	other := errors.New("disk full")
	if _, err := loadRun(ctx, &conflicting{fails: 1, err: other}, sc, task, &streamed); !errors.Is(err, other) {
		t.Errorf("another error: %v; want it returned", err)
	}
	l = &conflicting{fails: 9, err: ErrLoadConflict}
	if _, err := loadRun(ctx, l, sc, task, &streamed); !errors.Is(err, ErrLoadConflict) || l.calls != maxLoadTries {
		t.Errorf("endless conflicts: %v after %d calls; want the conflict after %d", err, l.calls, maxLoadTries)
	}
}

// A TPC-H session's buffer is M/(32 × sessions), within its bounds, in
// whole 64kB; no sessions counts as one.
func TestTPCHShare(t *testing.T) {
	const kb, mb, gb = int64(1) << 10, int64(1) << 20, int64(1) << 30
	for _, c := range []struct {
		m        int64
		sessions int
		want     int64
	}{
		{2 * gb, 1, 64 * mb},
		{2 * gb, 0, 64 * mb},
		{2 * gb, 3, 341 * 64 * kb}, // 21.3MB, rounded down
		{512 * mb, 1, 16 * mb},
		{64 * mb, 1, 4 * mb},         // below the floor
		{64 * gb, 1, 1 * gb},         // above the ceiling
		{64 * gb, 65, 504 * 64 * kb}, // 64GB/2080 = 31.5MB
	} {
		if got := TPCHShare(c.m, c.sessions, 4*mb, gb); got != c.want {
			t.Errorf("TPCHShare(%d, %d) = %d; want %d", c.m, c.sessions, got, c.want)
		}
	}
}
