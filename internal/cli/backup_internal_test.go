package cli

import (
	"math"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
)

// The text view's line per phase kind: mean ± half the 95% interval with
// n, the mean alone for one cycle; backup, then restore, then any other.
func TestBackupStatsText(t *testing.T) {
	nan := math.NaN()
	st := stored.PhaseStats{
		"verify":            {"seconds": {Mean: 4, N: 1, Low: nan, High: nan}, "mbps": {Mean: 0, N: 1, Low: nan, High: nan}},
		stored.PhaseRestore: {"seconds": {Mean: 0.834, N: 1, Low: nan, High: nan}, "mbps": {Mean: 191.2, N: 1, Low: nan, High: nan}},
		stored.PhaseBackup: {"seconds": {Mean: 12.3, Stddev: 0.76, N: 6, Low: 11.5, High: 13.1},
			"mbps": {Mean: 210, Stddev: 14, N: 6, Low: 195, High: 225}, "bytes": stats.Of([]float64{1, 2})},
	}
	var b strings.Builder
	printBackupStats(&b, st)
	want := "backup: 12.3 s ± 0.8 (95% CI, n=6), 210 MB/s ± 15\n" +
		"restore: 0.83 s (n=1), 191 MB/s\n" +
		"verify: 4.00 s (n=1), 0.00 MB/s\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
