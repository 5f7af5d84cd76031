package fio

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DirSecond is one direction in one second, merged over all jobs.
type DirSecond struct {
	IOPS   float64 `json:"iops"`    // summed over jobs
	MBps   float64 `json:"mbps"`    // summed over jobs, KiB/s * 1024 / 1e6
	ClatMs float64 `json:"clat_ms"` // mean completion latency, each job's mean weighted by its IOPS in the same second (plain mean if all weights are 0)
}

// Second is one second of fio's per-second logs.
type Second struct {
	T     int        `json:"t"`              // seconds since the measured interval began (1 = the first full second)
	Read  *DirSecond `json:"read,omitempty"` // nil when no job logged that direction in that second
	Write *DirSecond `json:"write,omitempty"`
}

// The logs ReadLogs reads. fio also writes P_lat and P_slat; they are not needed.
const (
	logIOPS = iota // P_iops.N.log: IOs per second
	logBW          // P_bw.N.log: KiB/s
	logClat        // P_clat.N.log: mean completion latency in the window, ns
	logKinds
)

var logNames = [logKinds]string{"iops", "bw", "clat"}

// logKey is one second of one direction: 0 read, 1 write.
type logKey struct{ t, dir int }

// series is one log file's values, one per second and direction.
type series map[logKey]float64

// ReadLogs reads and merges every job's logs written with prefix (the path
// prefix given to fio as write_iops_log, write_bw_log and write_lat_log, with
// log_avg_msec=1000), in increasing T. fio names them P_iops.N.log (N the
// 1-based job number; per_job_logs=0, which makes all jobs share one file,
// is not supported). No log files at all is an error; a job with an iops log
// but no bw or clat log leaves those fields 0.
func ReadLogs(prefix string) ([]Second, error) {
	jobs, err := readJobLogs(prefix, "")
	if err != nil {
		return nil, err
	}
	return mergeSeconds(jobs), nil
}

// jobLogs is one job's parsed logs, by kind; a missing log is nil.
type jobLogs [logKinds]series

// readJobLogs reads the logs of every job written with prefix whose names
// end in suffix after ".log" (fio's client appends ".HOST" to the logs it
// receives from a server), in job order.
func readJobLogs(prefix, suffix string) ([]jobLogs, error) {
	files, err := findLogs(prefix, suffix)
	if err != nil {
		return nil, err
	}
	out := make([]jobLogs, 0, len(files))
	for _, job := range slices.Sorted(maps.Keys(files)) {
		var s jobLogs
		for kind, path := range files[job] {
			if path == "" {
				continue
			}
			if s[kind], err = readLog(path); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// mergeSeconds merges jobs' logs second by second: IOPS and bandwidth are
// summed, and the mean latency is each job's mean weighted by its IOPS in
// that second (the plain mean when every weight is 0). The jobs may come
// from one host or several: the same sums make a point's aggregate.
func mergeSeconds(jobs []jobLogs) []Second {
	type acc struct {
		iops, bw      float64
		clatW, weight float64 // sum of clat*iops, sum of iops
		clatSum       float64 // for the plain mean when every weight is 0
		clatN         int
	}
	accs := map[logKey]*acc{}
	get := func(k logKey) *acc {
		a := accs[k]
		if a == nil {
			a = &acc{}
			accs[k] = a
		}
		return a
	}
	for _, s := range jobs {
		for k, v := range s[logIOPS] {
			get(k).iops += v
		}
		for k, v := range s[logBW] {
			get(k).bw += v
		}
		for k, v := range s[logClat] {
			a, w := get(k), s[logIOPS][k]
			a.clatW += v * w
			a.weight += w
			a.clatSum += v
			a.clatN++
		}
	}
	byT := map[int]*Second{}
	for k, a := range accs {
		sec := byT[k.t]
		if sec == nil {
			sec = &Second{T: k.t}
			byT[k.t] = sec
		}
		d := &DirSecond{IOPS: a.iops, MBps: a.bw * 1024 / 1e6}
		switch {
		case a.weight > 0:
			d.ClatMs = a.clatW / a.weight / 1e6
		case a.clatN > 0:
			d.ClatMs = a.clatSum / float64(a.clatN) / 1e6
		}
		if k.dir == 0 {
			sec.Read = d
		} else {
			sec.Write = d
		}
	}
	out := make([]Second, 0, len(byT))
	for _, t := range slices.Sorted(maps.Keys(byT)) {
		out = append(out, *byT[t])
	}
	return out
}

// findLogs returns, per job number, the paths of its iops, bw and clat logs
// ("" when missing): PREFIX_KIND.N.log followed by suffix.
func findLogs(prefix, suffix string) (map[int]*[logKinds]string, error) {
	dir, base := filepath.Split(prefix)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("fio logs: %w", err)
	}
	jobs := map[int]*[logKinds]string{}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+"_")
		if !ok || e.IsDir() {
			continue
		}
		if rest, ok = strings.CutSuffix(rest, ".log"+suffix); !ok {
			continue
		}
		for kind, name := range logNames {
			num, ok := strings.CutPrefix(rest, name+".")
			if !ok {
				continue
			}
			job, err := strconv.Atoi(num)
			if err != nil || job < 1 {
				continue
			}
			if jobs[job] == nil {
				jobs[job] = &[logKinds]string{}
			}
			jobs[job][kind] = filepath.Join(dir, e.Name())
		}
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("fio logs: no %s_{iops,bw,clat}.N.log%s files", prefix, suffix)
	}
	return jobs, nil
}

// Bounds of a log line's time (ms; ten years) and value (IOs/s, KiB/s or ns),
// far beyond any real log, so sums of them stay finite.
const (
	maxLogMs    = 10 * 365 * 24 * 3600 * 1000
	maxLogValue = 1e18
)

// readLog reads one log with lines "time_ms, value, direction, bs, offset[, prio]".
// Each sample goes to second round(time/1000): fio closes its 1000 ms windows
// at times like 1000, 2001, 2999. Trim (direction 2) is ignored. When one
// second gets two samples of a direction (fio flushes a short last window
// when the job ends), they are averaged weighted by their window lengths.
func readLog(path string) (series, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("fio logs: %w", err)
	}
	defer f.Close()
	return parseLog(path, f)
}

// parseLog is readLog's parser; path names the log in errors.
func parseLog(path string, r io.Reader) (series, error) {
	var sum, length series = series{}, series{}
	var last [2]float64 // previous sample's time per direction: its window's start
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		fields := strings.Split(text, ",")
		if len(fields) < 3 {
			return nil, fmt.Errorf("fio logs: %s:%d: want time, value, direction: %q", path, line, text)
		}
		t, err1 := strconv.ParseFloat(strings.TrimSpace(fields[0]), 64)
		v, err2 := strconv.ParseFloat(strings.TrimSpace(fields[1]), 64)
		dir, err3 := strconv.Atoi(strings.TrimSpace(fields[2]))
		// The first failure only: errors.Join would make a message of several lines.
		if err := cmp.Or(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("fio logs: %s:%d: %w", path, line, err)
		}
		// fio writes milliseconds since the job started and counts that are
		// not negative; "inf", "nan" or 1e300 would poison the sums.
		if !(t >= 0 && t <= maxLogMs && v >= 0 && v <= maxLogValue) {
			return nil, fmt.Errorf("fio logs: %s:%d: time or value out of range: %q", path, line, text)
		}
		if dir != 0 && dir != 1 {
			continue
		}
		window := t - last[dir]
		if window <= 0 {
			window = 1 // two samples in the same ms: weigh them alike
		}
		last[dir] = t
		k := logKey{t: int(math.Round(t / 1000)), dir: dir}
		sum[k] += v * window
		length[k] += window
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fio logs: %s: %w", path, err)
	}
	for k := range sum {
		sum[k] /= length[k]
	}
	return sum, nil
}
