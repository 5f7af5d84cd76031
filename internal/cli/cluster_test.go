package cli_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/clustertest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stored"
)

// monitor samples two hosts' node_exporters, each into its own figures and
// series; the second exporter is killed mid-run, which is a warning with
// its time and a gap, and the run goes on to the end.
func TestMonitorNodeExporters(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t, 2, clustertest.Options{NodeExporter: true})
	res := t.TempDir()
	killed := make(chan time.Time, 1)
	go func() {
		// 4 s into the run, counted from its store's creation: on a
		// loaded host the command took seconds to get there, and h2 had
		// answered once when killed; and once, 2.5 s after the store was
		// made, the sampling had only just begun.
		for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(50 * time.Millisecond) {
			if ents, _ := os.ReadDir(res); len(ents) > 0 {
				break
			}
		}
		time.Sleep(4 * time.Second)
		c.KillNodeExporter(t, 1)
		killed <- time.Now()
	}()
	code, out, errOut := runTierbench(t, "monitor", "--duration", "8s", "--interval", "500ms", "--block-trace=false",
		"--node-exporter", "h1="+c.Hosts[0].NodeExporter, "--node-exporter", "h2="+c.Hosts[1].NodeExporter,
		"--results", res, "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	at := <-killed
	var doc struct {
		RunID string `json:"run_id"`
		Hosts []struct {
			Host     string  `json:"host"`
			Idle     float64 `json:"cpu_idle_pct"`
			Iowait   float64 `json:"cpu_iowait_pct"`
			User     float64 `json:"cpu_user_pct"`
			System   float64 `json:"cpu_system_pct"`
			Steal    float64 `json:"cpu_steal_pct"`
			Samples  int     `json:"samples"`
			Missing  int     `json:"missing"`
			OffsetMs float64 `json:"clock_offset_ms"`
			Devices  []struct {
				Name    string  `json:"name"`
				UtilPct float64 `json:"util_pct"`
			} `json:"devices"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("monitor --json: %v\n%s", err, out)
	}
	if len(doc.Hosts) != 2 || doc.Hosts[0].Host != "h1" || doc.Hosts[1].Host != "h2" {
		t.Fatalf("hosts: %s", out)
	}
	for _, h := range doc.Hosts {
		if sum := h.Idle + h.Iowait + h.User + h.System + h.Steal; sum > 100.5 || sum < 50 {
			t.Errorf("host %s: CPU shares add up to %.1f%%", h.Host, sum)
		}
		if len(h.Devices) == 0 {
			t.Errorf("host %s: no devices", h.Host)
		}
		if math.Abs(h.OffsetMs) > 1000 {
			t.Errorf("host %s: clock offset %.1f ms on one machine", h.Host, h.OffsetMs)
		}
	}
	// About 16 samples of 500 ms: h1 answered all, h2 the ones before it was
	// killed. A host with no core to spare takes fewer (a loaded CI host's
	// h1 gave 7), each a sample of both hosts, and h1's exporter, alive
	// throughout, may still answer one or two past the sample's deadline
	// there (once 1 of 11, with every package's tests running at once).
	h1, h2 := doc.Hosts[0], doc.Hosts[1]
	if h1.Missing > 2 || h1.Samples < 5 {
		t.Errorf("h1: %d samples, %d missing; want about 16 and at most 2 late", h1.Samples, h1.Missing)
	} else if h1.Missing > 0 {
		t.Logf("h1, alive throughout, missed %d of %d samples", h1.Missing, h1.Samples+h1.Missing)
	}
	if h2.Missing < 2 || h2.Samples < 2 || h2.Samples >= h1.Samples {
		t.Errorf("h2: %d samples, %d missing; want a few of each (killed 4 s into 8)", h2.Samples, h2.Missing)
	}
	m := regexp.MustCompile(`node_exporter h2 \(http://[^)]+\) stopped answering at (\d\d:\d\d:\d\d)`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no warning that h2 stopped answering:\n%s", errOut)
	}
	if when, err := time.ParseInLocation("15:04:05", m[1], time.Local); err != nil ||
		math.Abs(float64(when.Hour()*3600+when.Minute()*60+when.Second()-(at.Hour()*3600+at.Minute()*60+at.Second()))) > 2 {
		t.Errorf("h2 stopped answering at %s; it was killed at %s", m[1], at.Format("15:04:05"))
	}

	store, err := results.OpenReadOnly(res)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	for _, host := range []string{"h1", "h2"} {
		pts, err := store.Points(ctx, doc.RunID, "node."+host+".cpu_idle_pct", results.AllSteps)
		if err != nil || len(pts) < 2 {
			t.Errorf("%s: %d stored cpu_idle_pct points (%v)", host, len(pts), err)
		}
	}
	up, err := store.Points(ctx, doc.RunID, "node.h2.up", results.AllSteps)
	if err != nil || len(up) == 0 || up[len(up)-1].Value != 0 || up[0].Value != 1 {
		t.Errorf("node.h2.up: %+v (%v); want 1 first and 0 at the end", up, err)
	}
}

// disk run across two hosts' fio servers: the aggregate IOPS is the sum of
// the hosts', its p99 is the percentile of both hosts' bins merged, each
// host has its own per-second series, and both hosts' test files are gone
// afterwards. The hosts share this machine's file system, as hosts on NFS
// do, so their files sit side by side in one directory.
func TestDiskRunFioServers(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t, 2, clustertest.Options{Fio: true, NodeExporter: true})
	res, dir := t.TempDir(), t.TempDir()
	// The first host by a name its node_exporter shares, so that its CPU
	// joins its fio figures; the second by its address and port.
	h1, h2 := "db1", c.Hosts[1].Addr+":8765"
	args := []string{"disk", "run", "--fio-server", "db1=" + c.Hosts[0].Addr, "--fio-server", h2,
		"--node-exporter", "db1=http://" + c.Hosts[0].Addr + ":9100/metrics",
		"--bs", "4k", "--rw", "randread", "--iodepth", "4", "--jobs", "2", "--size", "16MiB", "--duration", "3s", "--ramp", "0s",
		"--direct=false", "--engine", "psync", "--block-trace=false", "--results", res, "--json"}

	// A directory the hosts do not have is refused before anything runs.
	missing := filepath.Join(dir, "no-such-dir")
	code, _, errOut := runTierbench(t, append([]string{"--target", missing}, args...)...)
	if code != 2 || !strings.Contains(errOut, "--target "+missing+" does not exist on host db1") {
		t.Errorf("a target missing on the hosts: exit %d, %s", code, errOut)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the missing target was made: %v", err)
	}

	code, out, errOut := runTierbench(t, append([]string{"--target", dir}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var doc struct {
		RunID  string `json:"run_id"`
		Points []struct {
			Read struct {
				IOPS  float64 `json:"iops"`
				P99Ms float64 `json:"p99_ms"`
				IOs   uint64  `json:"ios"`
			} `json:"read"`
			Hosts []struct {
				Host string `json:"host"`
				Read struct {
					IOPS float64 `json:"iops"`
					IOs  uint64  `json:"ios"`
				} `json:"read"`
				Samples int `json:"samples"`
			} `json:"hosts"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Points) != 1 {
		t.Fatalf("disk run --json: %v\n%s", err, out)
	}
	p := doc.Points[0]
	if len(p.Hosts) != 2 || p.Hosts[0].Host != h1 || p.Hosts[1].Host != c.Hosts[1].Addr {
		t.Fatalf("hosts: %+v", p.Hosts)
	}
	if p.Hosts[0].Samples == 0 || p.Hosts[1].Samples != 0 {
		t.Errorf("node_exporter samples: db1 %d (its exporter's), %s %d (none); want some and none", p.Hosts[0].Samples, p.Hosts[1].Host, p.Hosts[1].Samples)
	}
	sum := p.Hosts[0].Read.IOPS + p.Hosts[1].Read.IOPS
	if p.Read.IOPS <= 0 || math.Abs(p.Read.IOPS-sum) > 0.01*sum {
		t.Errorf("aggregate IOPS %.0f; the hosts' sum is %.0f", p.Read.IOPS, sum)
	}
	if p.Read.IOs != p.Hosts[0].Read.IOs+p.Hosts[1].Read.IOs {
		t.Errorf("aggregate IOs %d; the hosts' sum is %d", p.Read.IOs, p.Hosts[0].Read.IOs+p.Hosts[1].Read.IOs)
	}

	store, err := results.OpenReadOnly(res)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	merged := &stored.Hist{}
	for _, h := range p.Hosts {
		data, err := store.Histogram(ctx, doc.RunID, 0, h.Host+":read.clat_ns")
		if err != nil {
			t.Fatalf("host %s's histogram: %v", h.Host, err)
		}
		var hh stored.Hist
		if err := json.Unmarshal(data, &hh); err != nil {
			t.Fatal(err)
		}
		merged.Merge(&hh)
		pts, err := store.Points(ctx, doc.RunID, "fio."+h.Host+".read.iops", 0)
		if err != nil || len(pts) < 1 {
			t.Errorf("host %s: %d per-second points (%v)", h.Host, len(pts), err)
		}
	}
	if want := float64(merged.Percentile(99)) / 1e6; p.Read.P99Ms != want {
		t.Errorf("aggregate p99 %.4f ms; the hosts' merged bins give %.4f ms", p.Read.P99Ms, want)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 0 {
		t.Errorf("left on the hosts: %v", left)
	}

	// Fractions on two hosts: each job on each host is offered its share of
	// what the hosts did together uncapped, and the knee counts every
	// host's offer, as the IOPS it is held to count every host's I/Os.
	code, out, errOut = runTierbench(t, append([]string{"--target", dir, "--rate-iops", "5%,10%"}, args...)...)
	if code != 0 {
		t.Fatalf("--rate-iops 5%%,10%% on two hosts: exit %d\n%s", code, errOut)
	}
	var swept struct {
		Fractions []float64 `json:"rate_fractions_pct"`
		Points    []struct {
			Name     string `json:"name"`
			RateIOPS int    `json:"rate_iops"`
			Read     struct {
				IOPS float64 `json:"iops"`
			} `json:"read"`
			Hosts []struct {
				Read struct {
					IOPS float64 `json:"iops"`
				} `json:"read"`
			} `json:"hosts"`
		} `json:"points"`
		Knees []stored.DiskKnee `json:"knees"`
	}
	if err := json.Unmarshal([]byte(out), &swept); err != nil || len(swept.Points) != 3 || !slices.Equal(swept.Fractions, []float64{5, 10}) {
		t.Fatalf("disk run --rate-iops 5%%,10%% --json: %v\n%s", err, out)
	}
	most := swept.Points[0].Read.IOPS
	for i, f := range []float64{5, 10} {
		p := swept.Points[i+1]
		if want := int(math.Round(f / 100 * most / 4)); p.RateIOPS != want {
			t.Errorf("%s: rate_iops %d; %.0f%% of the hosts' %.0f IOPS over 2 jobs on each of 2 hosts is %d", p.Name, p.RateIOPS, f, most, want)
		}
		// Poisson arrivals over the 3 s stray by chance: 4 standard
		// deviations of their count, 8% at 754 a second.
		for h, hp := range p.Hosts {
			got, want := hp.Read.IOPS, float64(2*p.RateIOPS)
			if tol := 4 * math.Sqrt(want*3) / 3; math.Abs(got-want) > tol {
				t.Errorf("%s on host %d: %.0f IOPS; offered %.0f (±%.0f)", p.Name, h+1, got, want, tol)
			}
		}
	}
	// The knee's offers, held or not, count 2 jobs on each of 2 hosts.
	// Both fractions hold on an idle host; on a busy one the first may
	// fall short of its count, and the knee then names it.
	r5, r10 := float64(4*swept.Points[1].RateIOPS), float64(4*swept.Points[2].RateIOPS)
	if len(swept.Knees) != 1 {
		t.Fatalf("knees %+v; want one", swept.Knees)
	}
	switch k := swept.Knees[0]; {
	case k.NextIOPS == 0 && k.OfferedIOPS == r10:
	case k.NextIOPS == r10 && k.OfferedIOPS == r5, k.NextIOPS == r5 && k.OfferedIOPS == 0:
		t.Logf("a fraction did not hold on this busy host: %s", k.Why)
	default:
		t.Errorf("knee %+v; want its offers of %.0f and %.0f IOPS: 2 jobs on each of 2 hosts at %d and %d", k, r5, r10,
			swept.Points[1].RateIOPS, swept.Points[2].RateIOPS)
	}
}
