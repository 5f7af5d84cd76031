package driver

import "testing"

func TestProcsFor(t *testing.T) {
	for _, tc := range []struct{ vus, cpus, want int }{
		{1, 2, 1}, {4, 2, 1}, {32, 2, 1}, {33, 2, 2}, {89, 2, 2}, {89, 64, 3}, {1000, 8, 8}, {0, 4, 1},
	} {
		if got := procsFor(tc.vus, tc.cpus); got != tc.want {
			t.Errorf("procsFor(%d VUs, %d CPUs) = %d, want %d", tc.vus, tc.cpus, got, tc.want)
		}
	}
}
