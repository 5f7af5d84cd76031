package stored

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// stored is a leaf: besides the standard library it imports only the
// engine-free packages its documents are made of (statistics, latency
// histograms, TPC-C's arithmetic), the units its texts are written in, and
// what those import themselves. The
// report depends on it, so whatever it imports, the report imports too.
func TestStoredIsALeaf(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		testenv.SkipOrFail(t, "no go command to list the dependencies with: %v", err)
	}
	const self = "github.com/tierbench/tierbench/internal/stored"
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", self).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	allowed := []string{
		self,
		"github.com/tierbench/tierbench/internal/stats", "github.com/tierbench/tierbench/internal/metrics",
		"github.com/tierbench/tierbench/internal/tpcc", "github.com/tierbench/tierbench/internal/units",
		"github.com/HdrHistogram/hdrhistogram-go", "gonum.org/v1/gonum",
	}
	for _, d := range strings.Fields(string(out)) {
		ok := false
		for _, a := range allowed {
			ok = ok || d == a || strings.HasPrefix(d, a+"/")
		}
		if !ok {
			t.Errorf("internal/stored depends on %s", d)
		}
	}
}
