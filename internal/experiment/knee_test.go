package experiment_test

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stored"
)

// A sweep that held a rate above the maximum its probe found says so
// beside its knee: its fractions were of less than the server serves. One
// whose knee is within the probe's maximum (2% over it included) says only
// the knee.
func TestKneeTextsProbeExceeded(t *testing.T) {
	run := func(knee float64) []string {
		return (&experiment.TPCCResult{RateProbe: &experiment.RateProbe{ClientTPM: 259},
			Knee: &stored.Knee{OfferedTPM: knee, P99BoundMs: 1000, Why: "every rate held"}}).KneeTexts()
	}
	got := run(518)
	if len(got) != 2 || !strings.HasPrefix(got[0], "knee: 518 TPM offered") ||
		got[1] != "the sweep held 518 TPM offered, 200% of the 259 TPM its probe found: the probe met a colder or busier server than the sweep did, "+
			"so its fractions are of less than the server serves; a longer ramp-up warms the server before the probe" {
		t.Errorf("a knee at 200%% of the probe's maximum: %q", got)
	}
	if got := run(264); len(got) != 1 {
		t.Errorf("a knee 2%% over the probe's maximum: %q; want the knee alone", got)
	}
}
