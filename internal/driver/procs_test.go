package driver

import (
	"testing"
	"time"
)

func TestMoreProcs(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		n, max    int
		cpu, wall time.Duration
		want      int
	}{
		{1, 2, 150 * time.Millisecond, s, 1},  // 4 VUs on the reference machine: 15% of a P
		{1, 2, 600 * time.Millisecond, s, 2},  // more than half of one P
		{2, 2, 1900 * time.Millisecond, s, 2}, // at the host's CPUs
		{2, 8, 900 * time.Millisecond, s, 2},  // under half of two
		{2, 8, 1100 * time.Millisecond, s, 3},
		{1, 2, 60 * time.Millisecond, 50 * time.Millisecond, 1}, // too short a window to tell
		{1, 1, 2 * s, s, 1},
	} {
		if got := moreProcs(tc.n, tc.max, tc.cpu, tc.wall); got != tc.want {
			t.Errorf("moreProcs(%d Ps of %d, %v CPU in %v) = %d, want %d", tc.n, tc.max, tc.cpu, tc.wall, got, tc.want)
		}
	}
}
