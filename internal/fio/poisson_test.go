package fio

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// The rate_iops given for a Poisson rate makes fio offer the rate nearest
// to it on fio's grid: within half a step, about 1/(2m) of the rate, where
// the rate_iops asked as such (fio's bias) can be several percent over.
func TestPoissonRateIOPS(t *testing.T) {
	if got := poissonOffered(39185); math.Abs(got-40810.8) > 0.1 {
		t.Errorf("fio's offer for rate_iops=39185 is %.1f; want 40810.8 (m = 25)", got)
	}
	for _, want := range []int{1, 10, 100, 500, 1000, 5000, 13062, 20000, 39185, 100000, 250000} {
		r := poissonRateIOPS(want)
		got := poissonOffered(r)
		rel := math.Abs(got/float64(want) - 1)
		if bound := 0.6*float64(want)/1e6 + 1e-3; rel > bound {
			t.Errorf("want %d: rate_iops %d offers %.1f, %.2f%% off; want within %.2f%%", want, r, got, 100*rel, 100*bound)
		}
		// And no rate_iops does better.
		for _, other := range []int{r - 1, r + 1} {
			if other > 0 && math.Abs(poissonOffered(other)-float64(want)) < math.Abs(got-float64(want)) {
				t.Errorf("want %d: rate_iops %d offers %.1f, nearer than %d's %.1f", want, other, poissonOffered(other), r, got)
			}
		}
	}
	if r := poissonRateIOPS(39185); r != 37038 {
		t.Errorf("rate_iops for 39,185 a second: %d; want 37038 (m = 26, which offers 39,231)", r)
	}
}

// Real fio at a Poisson rate where its own rounding would offer 4% more
// (reading from the page cache, invalidate=0, so that any host keeps up):
// the rate given keeps it within 2% above the rate wanted. (Below it only
// a host too slow for 39,000 reads a second falls; that is not asserted.)
func TestPoissonRateRealFio(t *testing.T) {
	const want = 39185
	dir := t.TempDir()
	data := runFio(t, dir, "--name=p", "--size=16m", "--rw=randread", "--bs=4k", "--ioengine=psync", "--invalidate=0", "--time_based", "--runtime=2",
		fmt.Sprintf("--rate_iops=%d", poissonRateIOPS(want)), "--rate_process=poisson")
	var out struct {
		Jobs []struct {
			Read struct {
				IOPS float64 `json:"iops"`
			} `json:"read"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.Jobs) != 1 {
		t.Fatalf("fio's output: %v", err)
	}
	got := out.Jobs[0].Read.IOPS
	if got > 1.02*want {
		t.Errorf("fio did %.0f reads a second for %d wanted; want at most 2%% more", got, want)
	}
	t.Logf("fio did %.0f reads a second for %d wanted (rate_iops=%d)", got, want, poissonRateIOPS(want))
}

// A mix at a rate does that rate in all, in its own proportions: fio
// paces reads and writes each to its own rate_iops, so the one value the
// job files wrote before made a 70% mix at 4,000 a second do 4,000 reads
// and 4,000 writes, half and half. Run as tierbench runs a point.
func TestRateOfMixRealFio(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		testenv.SkipOrFail(t, "fio not in PATH: %v", err)
	}
	ctx := context.Background()
	r, err := Find(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, make([]byte, 16<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	const rate, mix = 4000, 70
	s := Spec{Name: "mix", BS: 4096, RW: RandRW, RWMixRead: mix, IODepth: 1, Jobs: 1, RateIOPS: rate}
	p, err := r.Run(ctx, 0, s, Settings{IOEngine: "psync", Duration: 3 * time.Second, File: target, Size: 16 << 20}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Result.Read == nil || p.Result.Write == nil {
		t.Fatalf("fio's result: %+v", p.Result)
	}
	rd, wr := p.Result.Read.IOPS, p.Result.Write.IOPS
	if math.Abs(rd+wr-rate) > 0.04*rate || math.Abs(100*rd/(rd+wr)-mix) > 3 {
		t.Errorf("fio did %.0f reads and %.0f writes a second; want %d in all, %d%% reads\n%s", rd, wr, rate, mix, p.JobFile)
	}
	t.Logf("%.0f reads and %.0f writes a second for %d at %d%% reads", rd, wr, rate, mix)
}
