package report

import (
	"strings"
	"testing"
)

// Two tiers' recovery times: the second's compared with the first's, with
// the interval and the verdict; one label alone is not compared.
func TestRecoveryFinding(t *testing.T) {
	rec := map[string][]float64{"fast": {0.5, 0.6, 0.55}, "slow": {2.0, 2.2, 2.1}, "same": {0.5, 0.62, 0.56}}
	got := recoveryFinding([]string{"fast", "slow", "same"}, rec)
	for _, want := range []string{"Recovery from the fault took 0.55 s on average on fast (3 cycles)", "; relative to it: slow 3.82x (", ", higher); same 1.02x (", "not distinguishable at n=3)"} {
		if !strings.Contains(got, want) {
			t.Errorf("finding %q lacks %q", got, want)
		}
	}
	if got := recoveryFinding([]string{"fast"}, rec); got != "" {
		t.Errorf("one label: %q; want no finding", got)
	}
}
