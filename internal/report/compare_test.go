package report

import (
	"strings"
	"testing"
)

// orderFinding states an order of targets only when the interval of their
// ratio excludes 1: three instances a tier that agree are ordered; two
// that disagree wildly (the case that once read as a finding) are not.
func TestOrderFinding(t *testing.T) {
	agree := []*tally{
		{phase: "beside backups", target: "fast", nopm: []float64{0.90, 0.88, 0.92}},
		{phase: "beside backups", target: "slow", nopm: []float64{0.55, 0.57, 0.53}},
	}
	get := func(tl *tally) []float64 { return tl.nopm }
	b := orderFinding("beside backups", "of its baseline NOPM", "kept", agree, get)
	if len(b) != 1 || !strings.HasPrefix(b[0].Text, "TPC-C beside backups kept the most of its baseline NOPM on fast (0.90x) and the least on slow (0.55x): "+
		"fast against slow is 1.64x (95% CI ") || !strings.HasSuffix(b[0].Text, ": higher).") {
		t.Errorf("a clear order: %+v", b)
	}
	noisy := []*tally{
		{phase: "beside backups", target: "slow", nopm: []float64{0.47, 1.09}},
		{phase: "beside backups", target: "fast", nopm: []float64{0.70, 0.78}},
	}
	b = orderFinding("beside backups", "of its baseline NOPM", "kept", noisy, get)
	if len(b) != 1 || !strings.Contains(b[0].Text, "an order not distinguishable from noise") || !strings.Contains(b[0].Text, "not distinguishable at n=2") ||
		strings.Contains(b[0].Text, "kept the most") {
		t.Errorf("a noisy order: %+v", b)
	}
	if b := orderFinding("beside backups", "x", "kept", agree[:1], get); b != nil {
		t.Errorf("one target: %+v", b)
	}
}
