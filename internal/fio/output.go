package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"github.com/tierbench/tierbench/internal/stored"
)

// Result is one fio invocation's output with all its jobs merged.
type Result struct {
	FioVersion  string              `json:"fio_version"` // "fio version" field, e.g. "fio-3.33"
	Jobs        int                 `json:"jobs"`
	RuntimeS    float64             `json:"runtime_s"`      // longest job_runtime in seconds
	Read        *stored.DirStats    `json:"read,omitempty"` // nil when no job did reads
	Write       *stored.DirStats    `json:"write,omitempty"`
	UsrCPUPct   float64             `json:"usr_cpu_pct"` // sum over jobs of usr_cpu (percent of one core)
	SysCPUPct   float64             `json:"sys_cpu_pct"`
	SteadyState *stored.SteadyState `json:"steady_state,omitempty"` // only when the jobs carry a "steadystate" object
}

// fioOutput is the part of fio's json+ output that Result needs.
type fioOutput struct {
	Version string      `json:"fio version"`
	Jobs    []fioJob    `json:"jobs"`
	Clients []clientJob `json:"client_stats"` // instead of "jobs" when fio ran as a client (--client)
}

// clientJob is an entry of "client_stats": one job of one server, named by
// the address and port the client was given (hostname is that address, not
// the server's own host name). With more than one job fio's client also
// appends its own sum, named "All clients" and without "job options";
// tierbench merges the jobs itself and skips it.
type clientJob struct {
	fioJob
	Hostname string          `json:"hostname"`
	Port     int             `json:"port"`
	Options  json.RawMessage `json:"job options"`
}

// isClientSum reports whether e is fio's "All clients" sum, not a job.
func (e *clientJob) isClientSum() bool {
	return e.Name == "All clients" && len(e.Options) == 0
}

// fioJob is one entry of "jobs". fio's client/server mode reports each
// host's jobs in the same shape, so merging never assumes one host.
type fioJob struct {
	Name        string          `json:"jobname"`
	Error       int             `json:"error"`
	Read        fioDir          `json:"read"`
	Write       fioDir          `json:"write"`
	RuntimeMs   float64         `json:"job_runtime"`
	UsrCPU      float64         `json:"usr_cpu"`
	SysCPU      float64         `json:"sys_cpu"`
	SteadyState *fioSteadyState `json:"steadystate"`
}

type fioDir struct {
	BWBytes  float64 `json:"bw_bytes"`
	IOPS     float64 `json:"iops"`
	TotalIOs uint64  `json:"total_ios"`
	Clat     struct {
		Max  int64             `json:"max"`
		Mean float64           `json:"mean"`
		N    uint64            `json:"N"`
		Bins map[string]uint64 `json:"bins"` // json+ only: bin value in ns -> count
	} `json:"clat_ns"`
}

type fioSteadyState struct {
	Criterion string `json:"ss"`
	Attained  int    `json:"attained"`
}

// ParseOutput parses one fio invocation's --output-format=json+ output and
// merges all its jobs. Warnings fio writes before the JSON are skipped. Plain
// --output-format=json parses too, but has no bins, so its percentiles are 0.
func ParseOutput(data []byte) (*Result, error) {
	start := jsonStart(data)
	if start < 0 {
		return nil, errors.New("fio output: no line starts with '{'")
	}
	if err := jobDied(data[:start]); err != nil {
		return nil, err
	}
	var out fioOutput
	// A Decoder stops after the first value, so anything fio appends is ignored.
	if err := json.NewDecoder(bytes.NewReader(data[start:])).Decode(&out); err != nil {
		return nil, fmt.Errorf("fio output: %w", err)
	}
	if len(out.Jobs) == 0 {
		return nil, errors.New("fio output: no jobs")
	}
	for i, j := range out.Jobs {
		if j.Error != 0 {
			return nil, fmt.Errorf("fio output: job %d (%q) failed with fio error %d", i+1, j.Name, j.Error)
		}
	}
	return mergeJobs(out.Version, out.Jobs)
}

// jobDied is an error when what fio wrote before its JSON says a job
// died. Such a job still has its I/Os in the output, but no runtime and 0
// IOPS, and fio says so before it: "fio: pid=N, got signal=6", with the
// host's name first ("<host> fio: …") from a server (fio 3.33's rated
// mixed jobs could abort on an assertion in rate_ddir, fixed in 3.36; the
// OOM killer's signal is 9). Not a measurement.
func jobDied(preamble []byte) error {
	i := bytes.Index(preamble, []byte("got signal="))
	if i < 0 {
		return nil
	}
	line := preamble[bytes.LastIndexByte(preamble[:i], '\n')+1:]
	if n := bytes.IndexByte(line, '\n'); n >= 0 {
		line = line[:n]
	}
	return fmt.Errorf("fio output: a job died (%s); its figures are not a measurement", bytes.TrimSpace(line))
}

// jsonStart returns the offset of the first line that starts with '{', or -1.
func jsonStart(data []byte) int {
	for off := 0; off < len(data); {
		if data[off] == '{' {
			return off
		}
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break
		}
		off += nl + 1
	}
	return -1
}

// mergeJobs sums and merges jobs, whichever host or job section they came from.
func mergeJobs(version string, jobs []fioJob) (*Result, error) {
	r := &Result{FioVersion: version, Jobs: len(jobs)}
	var ss *stored.SteadyState
	for i, j := range jobs {
		if !(j.RuntimeMs >= 0 && j.UsrCPU >= 0 && j.SysCPU >= 0 && j.RuntimeMs+j.UsrCPU+j.SysCPU < 1e15) {
			return nil, fmt.Errorf("fio output: job %d (%q): job_runtime, usr_cpu or sys_cpu is negative or out of range", i+1, j.Name)
		}

	}
	for _, j := range jobs {
		r.RuntimeS = math.Max(r.RuntimeS, j.RuntimeMs/1000)
		r.UsrCPUPct += j.UsrCPU
		r.SysCPUPct += j.SysCPU
		if j.SteadyState != nil {
			if ss == nil {
				ss = &stored.SteadyState{Criterion: j.SteadyState.Criterion, Jobs: len(jobs)}
			}
			if j.SteadyState.Attained != 0 {
				ss.JobsAttained++
			}
		}
	}
	if ss != nil {
		ss.Attained = ss.JobsAttained == ss.Jobs
		if ss.Attained {
			ss.AttainedAfterS = r.RuntimeS
		}
		r.SteadyState = ss
	}
	var err error
	if r.Read, err = mergeDir(jobs, "read", func(j *fioJob) *fioDir { return &j.Read }); err != nil {
		return nil, err
	}
	if r.Write, err = mergeDir(jobs, "write", func(j *fioJob) *fioDir { return &j.Write }); err != nil {
		return nil, err
	}
	return r, nil
}

// mergeDir merges one direction of all jobs; nil when no job did any IO in it.
// Percentiles come from the merged bins: averaging the jobs' own
// percentiles would be wrong whenever the jobs' distributions differ.
func mergeDir(jobs []fioJob, name string, dir func(*fioJob) *fioDir) (*stored.DirStats, error) {
	s := &stored.DirStats{Hist: &stored.Hist{}}
	var weighted float64 // sum of mean*N, ns
	var n, binned uint64
	for i := range jobs {
		d := dir(&jobs[i])
		s.IOPS += d.IOPS
		s.MBps += d.BWBytes / 1e6
		s.IOs += d.TotalIOs
		weighted += d.Clat.Mean * float64(d.Clat.N)
		n += d.Clat.N
		s.MaxMs = math.Max(s.MaxMs, float64(d.Clat.Max)/1e6)
		for k, c := range d.Clat.Bins {
			ns, err := strconv.ParseInt(k, 10, 64)
			if err == nil && ns < 0 {
				err = errors.New("a negative latency")
			}
			if err != nil {
				return nil, fmt.Errorf("fio output: job %d (%q): %s clat_ns bin %q: %w", i+1, jobs[i].Name, name, k, err)
			}
			// Count and Percentile sum the bins in a uint64.
			var carry uint64
			if binned, carry = bits.Add64(binned, c, 0); carry != 0 {
				return nil, fmt.Errorf("fio output: job %d (%q): %s clat_ns bins count more IOs than a histogram holds", i+1, jobs[i].Name, name)
			}
			s.Hist.Add(ns, c)
		}
	}
	if s.IOs == 0 {
		return nil, nil
	}
	if n > 0 {
		s.MeanMs = weighted / float64(n) / 1e6
	}
	s.P50Ms, s.P95Ms, s.P99Ms, s.P999Ms = s.Hist.PercentilesMs()
	// Numbers fio never writes (1e308 IOPS, negative bandwidth) would make
	// NaN or ±Inf that no JSON document can store: refuse them here.
	for _, v := range []float64{s.IOPS, s.MBps, s.MeanMs, s.MaxMs} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("fio output: %s: iops, bw_bytes, clat_ns mean or max is negative or out of range", name)
		}
	}
	return s, nil
}
