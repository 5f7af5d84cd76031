package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/cli"
	"github.com/tierbench/tierbench/internal/fio/fiotest"
	"github.com/tierbench/tierbench/internal/report/reporttest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/testenv"
)

type diskDir struct {
	IOPS   float64 `json:"iops"`
	MBps   float64 `json:"mbps"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
}

type diskDoc struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Points []struct {
		Name    string             `json:"name"`
		BS      string             `json:"bs"`
		RW      string             `json:"rw"`
		IODepth int                `json:"iodepth"`
		Jobs    int                `json:"jobs"`
		Read    *diskDir           `json:"read"`
		Write   *diskDir           `json:"write"`
		Host    map[string]float64 `json:"host"`
		Device  map[string]float64 `json:"device"`
	} `json:"points"`
}

func parseDisk(t *testing.T, out string) diskDoc {
	t.Helper()
	var d diskDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("disk run --json: %v\n%s", err, out)
	}
	return d
}

// Lists make a sweep: 2 block sizes x 2 queue depths are 4 points, block
// size outermost.
func TestDiskRunSweep(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	res := t.TempDir()
	code, out, errOut := runTierbench(t, "disk", "run", "--target", t.TempDir(), "--bs", "4k,8k", "--iodepth", "1,4",
		"--rw", "randread", "--jobs", "1", "--duration", "1s", "--ramp", "0s", "--size", "16MiB",
		"--results", res, "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	doc := parseDisk(t, out)
	want := []string{"4k-randread-qd1x1", "4k-randread-qd4x1", "8k-randread-qd1x1", "8k-randread-qd4x1"}
	var got []string
	for _, p := range doc.Points {
		got = append(got, p.Name)
		if p.Read == nil || p.Read.IOPS <= 0 || p.Write != nil {
			t.Errorf("%s: read %v write %v", p.Name, p.Read, p.Write)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("points %v, want %v", got, want)
	}

	// Its report: the storage charts, each queue-depth sweep a line with
	// its points labelled, fio's version in the environment.
	code, _, errOut = runTierbench(t, "report", "--results", res)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	htmlPath := filepath.Join(res, "report.html")
	b, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{`<section id="storage">`, "IOPS vs average latency, by queue depth", "4k randread x1 jobs",
		"8k randread x1 jobs", ">qd4<", "IOPS per point", "Throughput per point", `id="storage-points"`, "IOPS per second: 8k-randread-qd4x1",
		"<td>fio</td><td>fio-3"} {
		if !strings.Contains(html, want) {
			t.Errorf("the disk run's report lacks %q", want)
		}
	}
	reporttest.CheckInBrowser(t, htmlPath, 8, filepath.Join(reporttest.ArtifactDir(t), "report-storage.png"))
}

// A point at a fixed rate is followed, as text, by what it offered over
// all its jobs and the share of it done: what the knee judges.
func TestDiskRunRatedText(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	code, out, errOut := runTierbench(t, "disk", "run", "--target", t.TempDir(), "--bs", "4k", "--rw", "randread", "--iodepth", "1",
		"--jobs", "2", "--rate-iops", "100,200", "--duration", "2s", "--ramp", "0s", "--size", "16MiB", "--direct=false", "--engine", "psync",
		"--results", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, rate := range []string{"100", "200"} {
		offered := map[string]string{"100": "200", "200": "400"}[rate]
		re := regexp.MustCompile(`(?m)^4k-randread-qd1x2-rate` + rate + ` .*\n  offered ` + offered + ` IOPS \(` + rate +
			` a second on each of 2 jobs\): ([0-9.]+)% done$`)
		m := re.FindStringSubmatch(out)
		if m == nil {
			t.Errorf("no offered line under the point at %s a job:\n%s", rate, out)
			continue
		}
		if pct, _ := strconv.ParseFloat(m[1], 64); pct < 50 || pct > 150 {
			t.Errorf("at %s a job, %s%% of the offer done; want about 100", rate, m[1])
		}
	}
}

// TestDiskRunRepeat: the contract of a repeated disk run, cheaply. With
// --json, one document whose points carry their stats, pooled percentiles
// and repetitions; as text, --back-to-back's table gives each point's mean ±
// half the interval (n=2) after its repetitions, and the run line counts
// them. What the figures are, and the order the repetitions run and are
// stored in, is tested where the run is (internal/experiment,
// TestRunDiskRepeatSweep).
func TestDiskRunRepeat(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	res := t.TempDir()
	code, out, errOut := runTierbench(t, "disk", "run", "--target", t.TempDir(), "--bs", "4k", "--iodepth", "1", "--rw", "randread",
		"--jobs", "1", "--duration", "1s", "--ramp", "0s", "--size", "16MiB", "--results", res, "--repeat", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	doc := hasKeys(t, "the document", object(t, "disk run --json", out), "run_id", "status", "repeat", "points")
	if doc["status"] != "complete" || doc["repeat"] != 2.0 {
		t.Errorf("status %v, repeat %v; want complete and 2", doc["status"], doc["repeat"])
	}
	point := hasKeys(t, "a point", first(t, "points", doc["points"]), "name", "read", "stats", "pooled", "repetitions")
	hasKeys(t, "read.iops", hasKeys(t, "stats", point["stats"], "read.iops", "read.mbps", "read.p99_ms")["read.iops"],
		"mean", "stddev", "n", "ci95_low", "ci95_high")
	hasKeys(t, "pooled read", hasKeys(t, "pooled", point["pooled"], "read")["read"], "p50_ms", "p99_ms", "max_ms")
	hasKeys(t, "a repetition", first(t, "repetitions", point["repetitions"]), "name", "repetition", "read")

	code, out, errOut = runTierbench(t, "disk", "run", "--target", t.TempDir(), "--bs", "4k", "--iodepth", "1,2", "--rw", "randread",
		"--jobs", "1", "--duration", "1s", "--ramp", "0s", "--size", "16MiB", "--results", res, "--repeat", "2", "--back-to-back")
	if code != 0 {
		t.Fatalf("back to back: exit %d\n%s", code, errOut)
	}
	if !regexp.MustCompile(`4k-randread-qd2x1 +\d+ ± \d+ \(n=2\) +[0-9.]+ ± [0-9.]+ \(n=2\) +- +- `).MatchString(out) ||
		!strings.Contains(out, "4k-randread-qd1x1 #2") || !strings.Contains(out, "over 2 repetitions") {
		t.Errorf("back to back, text view:\n%s", out)
	}
	if !regexp.MustCompile(`run (\S+) complete: 4 runs of 2 points \(--repeat 2\)`).MatchString(out) {
		t.Fatalf("no run line:\n%s", out)
	}
}

// What fio may not touch is refused before anything runs: one line, exit 2,
// naming the flag that would allow it; the foreign file is left as it was.
func TestDiskRunRefusals(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	dir := t.TempDir()
	foreign := filepath.Join(dir, "data.bin")
	if err := os.WriteFile(foreign, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	// A block-device node for the device that holds the test directory:
	// a device, and a mounted one. Only root may make one.
	dev := filepath.Join(t.TempDir(), "blk")
	if os.Geteuid() == 0 {
		if err := syscall.Mknod(dev, syscall.S_IFBLK|0o600, int(st.Dev)); err != nil {
			t.Fatalf("mknod: %v", err)
		}
	}
	res := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"foreign file", []string{"--target", foreign}, "--overwrite-file"},
		{"block device", []string{"--target", dev}, "--destroy-data-on"},
		{"mounted device", []string{"--target", dev, "--destroy-data-on", dev, "--even-if-formatted"}, "mount"},
		{"no room", []string{"--target", dir, "--size", "1000TiB"}, "--size"},
		{"character device", []string{"--target", "/dev/null"}, "/dev/null"},
		{"no target", nil, "--target"},
		{"profile and ad hoc", []string{"--target", dir, "--profile", "quick", "--bs", "4k"}, "--profile"},
		{"unknown profile", []string{"--target", dir, "--profile", "fast"}, "easy-run"},
		{"bad rw", []string{"--target", dir, "--rw", "randomread"}, "randread"},
		{"bad bs", []string{"--target", dir, "--bs", "3000"}, "--bs"},
		{"bad rwmix", []string{"--target", dir, "--rwmix", "170"}, "--rwmix"},
		{"bad iodepth", []string{"--target", dir, "--iodepth", "0"}, "--iodepth"},
		{"bad duration", []string{"--target", dir, "--duration", "-1s"}, "--duration"},
		{"bad engine", []string{"--target", dir, "--engine", "spdk"}, "io_uring"},
		{"bad steady state", []string{"--target", dir, "--steady-state", "flat"}, "iops_slope"},
		{"steady window too long", []string{"--target", dir, "--duration", "10s", "--steady-state", "iops:2%",
			"--steady-state-window", "20s"}, "--steady-state-window"},
		{"no repetitions", []string{"--target", dir, "--repeat", "0"}, "--repeat 0 is out of range; give a count of repetitions from 1 to 1000"},
		{"negative repetitions", []string{"--target", dir, "--repeat", "-1"}, "--repeat -1 is out of range"},
		{"noisy limit not a percentage", []string{"--target", dir, "--noisy-cpu", "150"}, "--noisy-cpu 150 is not a percentage; give 0 (never) to 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if slices.Contains(c.args, dev) {
				testenv.NeedRoot(t, "mknod of a block-device node")
			}
			args := append([]string{"disk", "run", "--results", res}, c.args...)
			code, _, errOut := runTierbench(t, args...)
			oneErrorLine(t, code, errOut, 2, c.want)
		})
	}
	if b, err := os.ReadFile(foreign); err != nil || string(b) != "precious" {
		t.Errorf("the foreign file changed: %q (%v)", b, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("refused runs left files behind: %v", entries)
	}

	code, _, errOut := runTierbench(t, "disk", "run", "--target", dir, "--fio", "/nonexistent/fio", "--results", res)
	oneErrorLine(t, code, errOut, 1, "apt-get install fio")
	old := filepath.Join(t.TempDir(), "fio")
	if err := os.WriteFile(old, []byte("#!/bin/sh\necho fio-2.2.10\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runTierbench(t, "disk", "run", "--target", dir, "--fio", old, "--results", res)
	oneErrorLine(t, code, errOut, 1, "too old")
}

// Ctrl-C during the second point: exit 130; the store keeps the finished
// point in a run marked interrupted.
func TestDiskRunInterrupted(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	res := t.TempDir()
	target := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // cancel once the first point is stored
		for ctx.Err() == nil {
			time.Sleep(200 * time.Millisecond)
			if s, err := results.OpenReadOnly(res); err == nil {
				if run, err := s.Run(ctx, "latest"); err == nil {
					if steps, _ := s.Steps(ctx, run.ID); len(steps) >= 1 {
						time.Sleep(time.Second)
						cancel()
					}
				}
				s.Close()
			}
		}
	}()
	var stdout, stderr bytes.Buffer
	code := cli.Execute(ctx, []string{"disk", "run", "--target", target, "--bs", "4k", "--iodepth", "1,2,4",
		"--rw", "randread", "--jobs", "1", "--duration", "3s", "--ramp", "0s", "--size", "16MiB", "--results", res},
		envOf(nil), strings.NewReader(""), &stdout, &stderr)
	if code != 130 || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	if _, steps := interruptedRun(t, res); len(steps) < 1 || len(steps) > 2 {
		t.Fatalf("%d stored steps, want the finished one (and maybe the cut one)", len(steps))
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("the interrupted run left %v behind", entries)
	}
}

// monitor samples on its own: host CPU, the target's devices, a database's
// internals; stored as a run of kind monitor.
func TestMonitor(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	res := t.TempDir()
	// Samples every half second for 3 s: about 6 points, and at least two
	// on a host so loaded that a 1 s interval once stored one.
	code, out, errOut := runTierbench(t, "monitor", "--target", t.TempDir(), "--duration", "3s", "--interval", "500ms", "--dsn", dsn,
		"--results", res, "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var doc struct {
		RunID   string `json:"run_id"`
		Devices []struct {
			Name string `json:"name"`
		} `json:"devices"`
		Host map[string]float64 `json:"host"`
		DB   map[string]float64 `json:"db"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("monitor --json: %v\n%s", err, out)
	}
	if len(doc.Devices) == 0 || doc.Devices[0].Name == "" {
		t.Errorf("no devices sampled: %s", out)
	}
	if idle, ok := doc.Host["cpu_idle_pct"]; !ok || idle < 0 || idle > 100 {
		t.Errorf("host: %v", doc.Host)
	}
	if _, ok := doc.DB["commits_per_s"]; !ok {
		t.Errorf("db: %v", doc.DB)
	}
	store, err := results.OpenReadOnly(res)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	run, err := store.Run(context.Background(), doc.RunID)
	if err != nil || run.Kind != "monitor" || run.Status != "complete" {
		t.Fatalf("stored run %+v (%v)", run, err)
	}
	pts, err := store.Points(context.Background(), doc.RunID, "host.cpu_idle_pct", 0)
	if err != nil || len(pts) < 2 {
		t.Errorf("%d stored host.cpu_idle_pct points (%v), want about 6", len(pts), err)
	}
	for _, bad := range [][]string{{"--duration", "1s"}, {"--target", "/", "--interval", "10ms"}} {
		code, _, errOut := runTierbench(t, append([]string{"monitor", "--results", res}, bad...)...)
		oneErrorLine(t, code, errOut, 2, "--")
	}
}
