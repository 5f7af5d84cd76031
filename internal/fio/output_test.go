package fio

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/testenv"
)

// dirJSON writes one direction of a json+ job; bins is the body of "bins".
func dirJSON(iops, bwBytes float64, ios uint64, meanNs float64, maxNs int64, bins string) string {
	return fmt.Sprintf(`{"io_bytes": %d, "bw_bytes": %g, "bw": %d, "iops": %f, "runtime": 1000, "total_ios": %d,
		"slat_ns": {"min": 0, "max": 0, "mean": 0.000000, "stddev": 0.000000, "N": 0},
		"clat_ns": {"min": 0, "max": %d, "mean": %f, "stddev": 1.0, "N": %d,
			"percentile": {"50.000000": 0}, "bins": {%s}}}`,
		ios*4096, bwBytes, int64(bwBytes/1024), iops, ios, maxNs, meanNs, ios, bins)
}

var idle = dirJSON(0, 0, 0, 0, 0, "")

// jobJSON writes one entry of "jobs"; extra is spliced in as more fields.
func jobJSON(name string, errno int, read, write string, runtimeMs int, usr, sys float64, extra string) string {
	return fmt.Sprintf(`{"jobname": %q, "groupid": 0, "error": %d, "eta": 0, "elapsed": 2,
		"job options": {"rw": "randrw"}, "read": %s, "write": %s, "trim": %s,
		"job_runtime": %d, "usr_cpu": %f, "sys_cpu": %f, "ctx": 10%s}`,
		name, errno, read, write, idle, runtimeMs, usr, sys, extra)
}

func docJSON(jobs ...string) string {
	return `{"fio version": "fio-3.33", "timestamp": 1, "jobs": [` + strings.Join(jobs, ",\n") + "]}\n"
}

// Two jobs that did both reads and writes:
//
//	read:  a 99 IOs at 100µs, b 1 IO at 10ms
//	write: a 5 at 1ms and 5 at 3ms (mean 2ms), b 30 at 1ms
var (
	jobA = jobJSON("a", 0,
		dirJSON(100, 2_000_000, 99, 100_000, 100_000, `"100000": 99`),
		dirJSON(50, 1_000_000, 10, 2_000_000, 3_000_000, `"1000000": 5, "3000000": 5`),
		1000, 10.5, 2.25, "")
	jobB = jobJSON("b", 0,
		dirJSON(1, 4096, 1, 10_000_000, 10_000_000, `"10000000": 1`),
		dirJSON(25, 500_000, 30, 1_000_000, 1_500_000, `"1000000": 30`),
		1500, 1.5, 0.75, "")
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestOutputMergesJobs(t *testing.T) {
	r, err := ParseOutput([]byte(docJSON(jobA, jobB)))
	if err != nil {
		t.Fatal(err)
	}
	if r.FioVersion != "fio-3.33" || r.Jobs != 2 || !near(r.RuntimeS, 1.5) {
		t.Errorf("version %q jobs %d runtime %v; want fio-3.33, 2, 1.5", r.FioVersion, r.Jobs, r.RuntimeS)
	}
	if !near(r.UsrCPUPct, 12) || !near(r.SysCPUPct, 3) {
		t.Errorf("cpu usr %v sys %v; want 12 and 3", r.UsrCPUPct, r.SysCPUPct)
	}
	if r.SteadyState != nil {
		t.Errorf("SteadyState = %+v without steadystate objects", r.SteadyState)
	}
	tests := []struct {
		name string
		got  *stored.DirStats
		want stored.DirStats
	}{
		// Mean: (99*0.1 + 1*10) / 100. The jobs' own p50s are 0.1 and 10 ms;
		// their average (5.05) is not the merged 0.1.
		{"read", r.Read, stored.DirStats{IOPS: 101, MBps: 2.004096, MeanMs: 0.199,
			P50Ms: 0.1, P95Ms: 0.1, P99Ms: 0.1, P999Ms: 10, MaxMs: 10, IOs: 100}},
		// Mean: (10*2 + 30*1) / 40. 35 of 40 IOs at 1ms: p95 needs 38.
		{"write", r.Write, stored.DirStats{IOPS: 75, MBps: 1.5, MeanMs: 1.25,
			P50Ms: 1, P95Ms: 3, P99Ms: 3, P999Ms: 3, MaxMs: 3, IOs: 40}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, w := tt.got, tt.want
			if g == nil {
				t.Fatal("nil DirStats")
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"IOPS", g.IOPS, w.IOPS}, {"MBps", g.MBps, w.MBps}, {"MeanMs", g.MeanMs, w.MeanMs},
				{"P50Ms", g.P50Ms, w.P50Ms}, {"P95Ms", g.P95Ms, w.P95Ms}, {"P99Ms", g.P99Ms, w.P99Ms},
				{"P999Ms", g.P999Ms, w.P999Ms}, {"MaxMs", g.MaxMs, w.MaxMs},
			} {
				if !near(f.got, f.want) {
					t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
				}
			}
			if g.IOs != w.IOs || g.Hist.Count() != w.IOs {
				t.Errorf("IOs %d, hist count %d; want %d", g.IOs, g.Hist.Count(), w.IOs)
			}
		})
	}
}

func TestOutputReadOnly(t *testing.T) {
	r, err := ParseOutput([]byte(docJSON(
		jobJSON("r1", 0, dirJSON(10, 40960, 10, 1000, 2000, `"1000": 10`), idle, 1000, 1, 1, ""),
		jobJSON("r2", 0, dirJSON(10, 40960, 10, 3000, 4000, `"3000": 10`), idle, 1000, 1, 1, ""),
	)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Write != nil {
		t.Errorf("Write = %+v, want nil for a read-only run", r.Write)
	}
	if r.Read == nil || r.Read.IOs != 20 || !near(r.Read.MeanMs, 0.002) {
		t.Errorf("Read = %+v, want 20 IOs with mean 0.002 ms", r.Read)
	}
}

func TestOutputSkipsWarnings(t *testing.T) {
	data := "fio: this platform does not support process shared mutexes, forcing use of threads.\n" +
		"note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n" +
		"  {indented, not JSON\n" + docJSON(jobA, jobB) + "fio: trailing noise\n"
	r, err := ParseOutput([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if r.Jobs != 2 || r.Read == nil || r.Read.IOs != 100 {
		t.Errorf("got %+v", r)
	}
}

func TestOutputErrors(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string // substrings of the error
	}{
		{"job error", docJSON(jobA, jobJSON("bad", 5, idle, idle, 10, 0, 0, "")), []string{"fio output", `"bad"`, "job 2", "fio error 5"}},
		{"no JSON", "fio: file not found\n", []string{"fio output"}},
		{"no jobs", `{"fio version": "fio-3.33", "jobs": []}`, []string{"fio output", "no jobs"}},
		{"truncated", docJSON(jobA)[:200], []string{"fio output"}},
		{"bad bin", docJSON(jobJSON("x", 0, dirJSON(1, 1, 1, 1, 1, `"1e3": 1`), idle, 10, 0, 0, "")), []string{"fio output", `"x"`, "read", `"1e3"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseOutput([]byte(tt.data))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
		})
	}
}

func TestOutputSteadyState(t *testing.T) {
	ss := func(attained int) string {
		return fmt.Sprintf(`, "steadystate": {"ss": "iops_slope:2.000000%%", "duration": 2, "attained": %d,
			"criterion": "1.214055%%", "max_deviation": 0.0, "slope": 567.0,
			"data": {"bw_mean": 1, "iops_mean": 1, "iops": [1, 1], "bw": [1, 1]}}`, attained)
	}
	read := dirJSON(10, 40960, 10, 1000, 1000, `"1000": 10`)
	tests := []struct {
		name string
		jobs []string
		want stored.SteadyState
	}{
		{"all attained", []string{
			jobJSON("s", 0, read, idle, 1000, 0, 0, ss(1)),
			jobJSON("s", 0, read, idle, 2500, 0, 0, ss(1)),
		}, stored.SteadyState{Criterion: "iops_slope:2.000000%", Attained: true, JobsAttained: 2, Jobs: 2, AttainedAfterS: 2.5}},
		{"one not", []string{
			jobJSON("s", 0, read, idle, 1000, 0, 0, ss(1)),
			jobJSON("s", 0, read, idle, 2500, 0, 0, ss(0)),
		}, stored.SteadyState{Criterion: "iops_slope:2.000000%", JobsAttained: 1, Jobs: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseOutput([]byte(docJSON(tt.jobs...)))
			if err != nil {
				t.Fatal(err)
			}
			if r.SteadyState == nil || *r.SteadyState != tt.want {
				t.Errorf("SteadyState = %+v, want %+v", r.SteadyState, tt.want)
			}
		})
	}
}

// runFio runs the real fio in dir with the given arguments after
// --output-format=json+ --output=F --filename=T and returns its output.
// Without fio it skips, except under CI.
func runFio(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	fio, err := exec.LookPath("fio")
	if err != nil {
		testenv.SkipOrFail(t, "fio not in PATH: %v", err)
	}
	out := filepath.Join(dir, "out.json")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args = append([]string{"--output-format=json+", "--output=" + out, "--filename=" + filepath.Join(dir, "target")}, args...)
	if msg, err := exec.CommandContext(ctx, fio, args...).CombinedOutput(); err != nil {
		t.Fatalf("fio %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sameReadPercentiles checks that every read clat percentile fio printed for
// its single job equals the one computed from the bins, and returns fio's.
func sameReadPercentiles(t *testing.T, data []byte, h *stored.Hist) map[string]int64 {
	t.Helper()
	var raw struct {
		Jobs []struct {
			Read struct {
				Clat struct {
					Percentile map[string]int64 `json:"percentile"`
				} `json:"clat_ns"`
			} `json:"read"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(data[jsonStart(data):], &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw.Jobs) != 1 {
		t.Fatalf("want one job, got %d", len(raw.Jobs))
	}
	fioP := raw.Jobs[0].Read.Clat.Percentile
	for key, want := range fioP {
		p, err := strconv.ParseFloat(key, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Percentile(p); got != want {
			t.Errorf("p%s from %d IOs' bins = %d ns, fio says %d ns", key, h.Count(), got, want)
		}
	}
	return fioP
}

// TestOutputAndLogsRealFio runs fio itself and checks that percentiles from
// the bins equal fio's own, and that its per-second logs read back. It runs
// for 2 s: fio only writes an iops/bw sample once a full 1000 ms window has
// passed and drops the last partial one, so a 1 s run leaves those logs empty.
func TestOutputAndLogsRealFio(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "p")
	data := runFio(t, dir, "--name=p", "--size=16m", "--rw=randread", "--bs=4k", "--iodepth=4",
		"--ioengine=psync", "--runtime=2", "--time_based", "--numjobs=1",
		"--write_iops_log="+prefix, "--write_bw_log="+prefix, "--write_lat_log="+prefix, "--log_avg_msec=1000")
	r, err := ParseOutput(data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Jobs != 1 || r.Read == nil || r.Read.IOs == 0 || r.Write != nil {
		t.Fatalf("want one read-only job with IOs, got %+v", r)
	}
	fioP := sameReadPercentiles(t, data, r.Read.Hist)
	for _, c := range []struct {
		key  string
		mine float64
	}{
		{"50.000000", r.Read.P50Ms}, {"95.000000", r.Read.P95Ms},
		{"99.000000", r.Read.P99Ms}, {"99.900000", r.Read.P999Ms},
	} {
		want, ok := fioP[c.key]
		if !ok {
			t.Errorf("fio printed no %s percentile: %v", c.key, fioP)
		} else if c.mine != float64(want)/1e6 {
			t.Errorf("DirStats p%s = %v ms, fio says %d ns", c.key, c.mine, want)
		}
	}

	secs, err := ReadLogs(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) < 1 || secs[0].Read == nil || secs[0].Read.IOPS <= 0 {
		t.Fatalf("want at least one second with read IOPS, got %+v", secs)
	}
	for _, s := range secs {
		if s.Write != nil {
			t.Errorf("second %d has writes in a randread run", s.T)
		}
	}
}

// TestOutputRealFioRounding makes fio do exactly 2000 IOs, where its
// long-double rounding puts the 99.95th percentile at the 2000th IO and
// float64 arithmetic would put it at the 1999th (see fioLimit).
func TestOutputRealFioRounding(t *testing.T) {
	dir := t.TempDir()
	data := runFio(t, dir, "--name=p", "--size=16m", "--io_size=8000k", "--rw=randread", "--bs=4k", "--ioengine=psync")
	r, err := ParseOutput(data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Read == nil || r.Read.IOs != 2000 {
		t.Fatalf("want 2000 reads, got %+v", r.Read)
	}
	sameReadPercentiles(t, data, r.Read.Hist)
}

// With CgroupProcs, fio starts already inside the groups: the process that
// becomes fio wrote its own PID into each cgroup.procs (plain files here)
// before exec'ing fio.
func TestRunnerCgroupProcs(t *testing.T) {
	bin, err := exec.LookPath("fio")
	if err != nil {
		testenv.SkipOrFail(t, "fio is not installed (make setup installs it)")
	}
	dir := t.TempDir()
	procs := []string{filepath.Join(dir, "blkio procs"), filepath.Join(dir, "it's memory")}
	r := &Runner{Path: bin, CgroupProcs: procs}
	cmd := r.command(context.Background(), "--version")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "fio-") {
		t.Errorf("output %q; want fio's version", out)
	}
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(cmd.Process.Pid) {
			t.Errorf("%s holds %q (%v); want fio's PID %d", p, b, err, cmd.Process.Pid)
		}
	}
}

// A job that fio aborted still has its I/Os in the output, with no runtime
// and 0 IOPS (testdata/rated-mix-aborted-3.33.json: fio 3.33 on a rated
// 70% mix, which hit the assertion in rate_ddir that fio 3.36 fixed), and
// fio says so before the document. It is an error, not a point of 0 IOPS.
func TestParseOutputAbortedJob(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "rated-mix-aborted-3.33.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := ParseOutput(data); err == nil || err.Error() != "fio output: a job died (fio: pid=30711, got signal=6); its figures are not a measurement" {
		t.Errorf("the aborted job's output parsed as %+v, %v; want an error naming the signal", r, err)
	}
}
