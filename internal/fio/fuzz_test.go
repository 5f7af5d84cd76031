package fio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/units"
)

// oneLine fails unless err's message is non-empty and one line.
func oneLine(t *testing.T, err error) {
	t.Helper()
	if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error %q is empty or not one line", msg)
	}
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// FuzzParseOutput: whatever fio (or something posing as fio) prints, a
// merged result has jobs, percentiles in order and not negative, directions
// with IOs, and numbers that a JSON document can hold (the results store
// keeps it as JSON); its histograms survive their JSON round trip.
func FuzzParseOutput(f *testing.F) {
	f.Add([]byte(docJSON(jobA, jobB)))
	f.Add([]byte("fio: warning\n" + docJSON(jobA)))
	f.Add([]byte(docJSON(jobJSON("s", 0, dirJSON(10, 1e6, 10, 1e5, 2e5, `"100000": 10`), idle, 1000, 1, 1,
		`, "steadystate": {"ss": "iops_slope:2.000000%", "attained": 1}`))))
	f.Add([]byte(docJSON(jobJSON("e", 5, idle, idle, 0, 0, 0, ""))))
	f.Add([]byte(docJSON(jobJSON("neg", 0, dirJSON(1, 1, 1, 1, 1, `"-5": 1`), idle, 1, 0, 0, ""))))
	f.Add([]byte(docJSON(jobJSON("big", 0, dirJSON(1e308, 1e308, 2, 1e308, 1, `"1": 18446744073709551615, "2": 1`), idle, 1, 0, 0, ""))))
	f.Add([]byte(`{"fio version": "fio-3.33", "jobs": []}`))
	f.Add([]byte(`{"jobs": [{"read": {"total_ios": 1, "clat_ns": {"bins": {"x": 1}}}}]}`))
	f.Add([]byte(`{"jobs": [{"read": {"total_ios": 1, "iops": -1}}]}`))
	f.Add([]byte(`{"jobs": [{"job_runtime": -5, "read": {"total_ios": 1}}]}`))
	f.Add([]byte("no json here\n"))
	f.Add([]byte("{"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseOutput(data)
		if err != nil {
			oneLine(t, err)
			return
		}
		if r.Jobs < 1 || !finite(r.RuntimeS, r.UsrCPUPct, r.SysCPUPct) || r.RuntimeS < 0 {
			t.Fatalf("result %+v", r)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("the result cannot be stored as JSON: %v", err)
		}
		for _, d := range []*stored.DirStats{r.Read, r.Write} {
			if d == nil {
				continue
			}
			ps := []float64{d.P50Ms, d.P95Ms, d.P99Ms, d.P999Ms}
			if d.IOs == 0 || !slices.IsSorted(ps) || d.P50Ms < 0 || !finite(d.IOPS, d.MBps, d.MeanMs, d.MaxMs) {
				t.Fatalf("direction %+v", *d)
			}
			b, err := json.Marshal(d.Hist)
			if err != nil {
				t.Fatalf("histogram does not marshal: %v", err)
			}
			var back stored.Hist
			if err := json.Unmarshal(b, &back); err != nil || back.Count() != d.Hist.Count() || back.Percentile(99) != d.Hist.Percentile(99) {
				t.Fatalf("histogram %s does not round-trip: %v", b, err)
			}
		}
	})
}

// FuzzHistJSON: a histogram that unmarshals marshals to the same JSON form
// again, and its percentiles rise with p and stay within its bins.
func FuzzHistJSON(f *testing.F) {
	for _, s := range []string{`{"bins":[[100,2],[5000,1],[20352,7]]}`, `{"bins":[]}`, `{}`, `{"bins":[[1,0]]}`,
		`{"bins":[[5,1],[5,2]]}`, `{"bins":[[9223372036854775808,1]]}`, `{"bins":[[1,18446744073709551615],[2,1]]}`,
		`{"bins":[[-1,1]]}`, `{"bins":[[1]]}`, `{"bins":null}`, `[]`, `null`, `{"bins":[[1.5,1]]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var h stored.Hist
		if err := json.Unmarshal(data, &h); err != nil {
			return
		}
		b, err := json.Marshal(&h)
		if err != nil {
			t.Fatalf("%s unmarshals but does not marshal: %v", data, err)
		}
		var back stored.Hist
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: its own JSON %s does not unmarshal: %v", data, b, err)
		}
		if b2, _ := json.Marshal(&back); string(b2) != string(b) {
			t.Fatalf("%s: JSON %s, then %s", data, b, b2)
		}
		prev := int64(math.MinInt64)
		for _, p := range []float64{0.1, 1, 50, 90, 99, 99.9, 100} {
			v := h.Percentile(p)
			if v < prev || (h.Count() > 0 && v > h.Max()) {
				t.Fatalf("%s: p%v = %d after %d (max %d)", data, p, v, prev, h.Max())
			}
			prev = v
		}
	})
}

// FuzzParseLog: a per-second log parses to finite values or fails with one
// line naming the file and line.
func FuzzParseLog(f *testing.F) {
	for _, s := range []string{"1000, 100, 0, 4096, 0\n2001, 200, 0, 4096, 0\n2999, 50, 1, 4096, 0\n",
		"1000, 1, 0, 4096, 0, 0\n", "1000, 1, 2, 4096, 0\n", "1000\n", "1000, x, 0\n", "x, y, z\n", "\n\n",
		"1000, inf, 0\n", "nan, 1, 0\n", "-5, 1, 0\n", "1e300, 1e300, 1\n", "1000, 1e308, 0\n1000, 1e308, 0\n",
		"1000, 1, 0\n1000, 2, 0\n", "9223372036854775807, 1, 0\n", "1000,1,-1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "/w/p_iops.1.log"
		s, err := parseLog(path, bytes.NewReader(data))
		if err != nil {
			oneLine(t, err)
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for k, v := range s {
			if !finite(v) || v < 0 || (k.dir != 0 && k.dir != 1) {
				t.Fatalf("%q: second %d dir %d = %v", data, k.t, k.dir, v)
			}
		}
	})
}

// FuzzParseVersion: a version is read only from fio's own form, and what
// is read prints back as a version that reads the same.
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"fio-3.33", "fio-3.35-12-gabcdef", "fio-2.2.10", "fio version 3", "fio-", "fio-3.",
		"fio-99999999999999999999.1", "fio-3.99999999999999999999", "fio-03.007", "FIO-3.33", " fio-3.33", "fio-٣.٣"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^fio-\d+\.\d+`)
	f.Fuzz(func(t *testing.T, s string) {
		major, minor, ok := parseVersion(s)
		if !ok {
			if major != 0 || minor != 0 {
				t.Fatalf("parseVersion(%q) = %d, %d but not ok", s, major, minor)
			}
			return
		}
		if !re.MatchString(s) || major < 0 || minor < 0 {
			t.Fatalf("parseVersion(%q) = %d, %d", s, major, minor)
		}
		if a, b, ok := parseVersion(fmt.Sprintf("fio-%d.%d", major, minor)); !ok || a != major || b != minor {
			t.Fatalf("parseVersion(%q) = %d.%d, which reads back as %d.%d %v", s, major, minor, a, b, ok)
		}
	})
}

// jobKeys are the options JobFile writes.
var jobKeys = []string{"ioengine", "direct", "filename", "time_based", "runtime", "ramp_time", "steadystate",
	"steadystate_duration", "steadystate_ramp_time", "log_avg_msec", "write_iops_log", "write_bw_log", "write_lat_log",
	"rw", "rwmixread", "bs", "iodepth", "numjobs", "size", "offset_increment", "rate_iops", "rate_process", "refill_buffers",
	"buffer_compress_percentage", "buffer_compress_chunk", "dedupe_percentage"}

// FuzzJobFile: a job file is either refused in one line or made of
// comments, the two sections and known options, each once; fio reads its
// filename back as the file tierbench checked (a path fio would cut short
// is refused), and the block size as the spec's.
func FuzzJobFile(f *testing.F) {
	f.Add("/t/f.dat", "point 1", int64(4096), 8, 4, 70, 0, 50, 0, uint8(0), int64(1<<30))
	f.Add("/mnt/a:b/tierbench.dat", "two\nlines", int64(256<<10), 1, 1, 0, 100, 0, 20, uint8(3), int64(100<<20))
	f.Add("/mnt/run#1/f", "", int64(512), 1, 1, 0, 0, 0, 0, uint8(1), int64(1<<20))
	f.Add("/mnt/x;y", "", int64(4096), 1, 1, 0, 0, 0, 0, uint8(1), int64(1<<20))
	f.Add("/mnt/x\nrw=write", "", int64(4096), 1, 1, 0, 0, 0, 0, uint8(1), int64(1<<20))
	f.Add("/mnt/x ", "; [global]", int64(4096), 1, 1, 0, 0, 0, 0, uint8(1), int64(1<<20))
	f.Add(`/mnt/back\slash`, "\r", int64(3000), 5000, 300, 101, -1, -1, 101, uint8(9), int64(-1))
	f.Fuzz(func(t *testing.T, file, header string, bs int64, depth, jobs, mix, rate, compress, dedupe int, rw uint8, size int64) {
		s := Spec{BS: bs, RW: Patterns[int(rw)%len(Patterns)], RWMixRead: mix, IODepth: depth, Jobs: jobs,
			RateIOPS: rate, CompressPc: compress, DedupePc: dedupe}
		s.Name = PointName(s)
		set := Settings{IOEngine: "psync", Duration: 90 * time.Second, Ramp: 1500 * time.Millisecond, File: file, Size: size,
			Header: header, LogPrefix: "/w/p1", SteadyState: "iops_slope:2%", SteadyWindow: 30 * time.Second}
		job, err := JobFile(s, set)
		if err != nil {
			oneLine(t, err)
			return
		}
		if s.Validate() != nil {
			t.Fatalf("spec %+v is invalid, but JobFile wrote one", s)
		}
		seen := map[string]bool{}
		sections := 0
		for _, line := range strings.Split(strings.TrimSuffix(job, "\n"), "\n") {
			switch {
			case line == "" || strings.HasPrefix(line, "; "):
				continue
			case strings.HasPrefix(line, "["):
				if line != "[global]" && line != "["+s.Name+"]" {
					t.Fatalf("section %q", line)
				}
				sections++
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok || !slices.Contains(jobKeys, k) || seen[k] {
				t.Fatalf("line %q is not a known option given once:\n%s", line, job)
			}
			seen[k] = true
			// What fio's ini reader keeps of a value (strip_blank_end).
			kept := v
			if i := strings.IndexAny(kept, ";#"); i >= 0 {
				kept = kept[:i]
			}
			if kept = strings.TrimSpace(kept); kept != v {
				t.Fatalf("fio would read %s=%q, not %q", k, kept, v)
			}
			switch k {
			case "filename":
				if strings.ReplaceAll(v, `\:`, ":") != file || strings.Count(v, ":") != strings.Count(v, `\:`) {
					t.Fatalf("filename=%s is not %q with its colons escaped", v, file)
				}
			case "bs":
				if n, err := units.ParseSize(v); err != nil || n != s.BS {
					t.Fatalf("bs=%s reads as %d, %v, not %d", v, n, err, s.BS)
				}
			}
		}
		if sections != 2 || !seen["filename"] {
			t.Fatalf("job file without its two sections or filename:\n%s", job)
		}
	})
}
