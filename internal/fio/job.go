// Package fio drives fio, the I/O benchmark the storage field trusts, for
// tierbench's storage profiles: it builds job files from profiles and sweeps,
// guards what fio may write to, runs fio, and merges its json+ histograms
// and per-second logs into points. It never reimplements fio.
package fio

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/tierbench/tierbench/internal/units"
)

// Access patterns a point may use (fio's rw values).
const (
	RandRW    = "randrw"
	RandRead  = "randread"
	RandWrite = "randwrite"
	SeqRead   = "read"
	SeqWrite  = "write"
)

// Patterns lists the access patterns tierbench accepts, in help order.
var Patterns = []string{RandRW, RandRead, RandWrite, SeqRead, SeqWrite}

// Spec is one fio run: one point of a profile or sweep.
type Spec struct {
	Name       string `json:"name"`
	BS         int64  `json:"bs"` // bytes
	RW         string `json:"rw"`
	RWMixRead  int    `json:"rwmix_read,omitempty"` // percent reads, randrw only
	IODepth    int    `json:"iodepth"`
	Jobs       int    `json:"jobs"`
	RateIOPS   int    `json:"rate_iops,omitempty"` // per job, reads and writes together (rateIOPS)
	CompressPc int    `json:"compress_pct,omitempty"`
	DedupePc   int    `json:"dedupe_pct,omitempty"`
}

// Settings are what every point of a run shares.
type Settings struct {
	IOEngine      string        // fio's ioengine (not a database engine)
	Direct        bool          // O_DIRECT: bypass the page cache
	Duration      time.Duration // measured time per point (the maximum when steady state is sought)
	Ramp          time.Duration // unmeasured time before it
	SteadyState   string        // fio's steadystate criterion, e.g. "iops_slope:2%"; "" = none
	SteadyWindow  time.Duration // steadystate_duration
	SteadyRamp    time.Duration // steadystate_ramp_time
	File          string        // what fio opens
	Size          int64         // bytes of File the point may use
	LogPrefix     string        // per-second logs go to LogPrefix_{iops,bw,clat,…}.N.log
	Header        string        // a comment written at the top of the job file
	LogIntervalMs int           // 0 = 1000
	// RemoteDeviceChecked lets RunHosts use a block device (/dev/...) on
	// the fio servers: the caller has confirmed --destroy-data-on for it
	// and checked it on every host. Without it a device target is refused.
	RemoteDeviceChecked bool
}

// FormatBS writes a block size the way fio and its users do: 4k, 256k, 1m.
func FormatBS(b int64) string {
	switch {
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%dm", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%dk", b>>10)
	}
	return fmt.Sprint(b)
}

// PointName names a spec by its parameters, e.g. "4k-randrw70-qd8x4".
func PointName(s Spec) string {
	rw := s.RW
	if s.RW == RandRW {
		rw = fmt.Sprintf("%s%d", s.RW, s.RWMixRead)
	}
	name := fmt.Sprintf("%s-%s-qd%dx%d", FormatBS(s.BS), rw, s.IODepth, s.Jobs)
	if s.RateIOPS > 0 {
		name += fmt.Sprintf("-rate%d", s.RateIOPS) // per job
	}
	return name
}

// Reads and Writes report which directions a spec's pattern uses.
func (s Spec) Reads() bool {
	return s.RW != RandWrite && s.RW != SeqWrite && !(s.RW == RandRW && s.RWMixRead == 0)
}
func (s Spec) Writes() bool {
	return s.RW != RandRead && s.RW != SeqRead && !(s.RW == RandRW && s.RWMixRead == 100)
}

// Problem is a point's value out of range: Field is its key (bs, rw,
// rwmix, iodepth, jobs, rate_iops, compress_pct, dedupe_pct), Value the
// value as written, Msg what is wrong and what would be right.
type Problem struct{ Field, Value, Msg string }

func (p Problem) Error() string { return p.Field + " " + p.Value + " " + p.Msg }

// Problems lists every value of the spec out of range: the rules of a
// point, which the experiment layer's DiskConfig.Validate applies.
func (s Spec) Problems() []Problem {
	var out []Problem
	add := func(field string, v any, msg string) {
		out = append(out, Problem{Field: field, Value: fmt.Sprint(v), Msg: msg})
	}
	if !slices.Contains(Patterns, s.RW) {
		add("rw", fmt.Sprintf("%q", s.RW), "is unknown; use "+strings.Join(Patterns, ", "))
	}
	if s.BS < 512 || s.BS%512 != 0 || s.BS > 64<<20 {
		add("bs", FormatBS(s.BS), "is not a block size; give multiples of 512 bytes up to 64m, e.g. 4k,64k,256k")
	}
	if s.RWMixRead < 0 || s.RWMixRead > 100 {
		add("rwmix", s.RWMixRead, "is not a percentage of reads; give 0 to 100")
	}
	if s.IODepth < 1 || s.IODepth > 4096 {
		add("iodepth", s.IODepth, "is out of range; give 1 to 4096")
	}
	if s.Jobs < 1 || s.Jobs > 256 {
		add("jobs", s.Jobs, "is out of range; give 1 to 256")
	}
	if s.RateIOPS < 0 {
		add("rate_iops", s.RateIOPS, "is negative; give 0 (no cap) or more")
	}
	if s.CompressPc < 0 || s.CompressPc > 100 {
		add("compress_pct", s.CompressPc, "is not a percentage; give 0 to 100")
	}
	if s.DedupePc < 0 || s.DedupePc > 100 {
		add("dedupe_pct", s.DedupePc, "is not a percentage; give 0 to 100")
	}
	return out
}

// Validate is the spec's first problem, or nil.
func (s Spec) Validate() error {
	if ps := s.Problems(); len(ps) > 0 {
		return ps[0]
	}
	return nil
}

// jobRegion is the bytes each of a spec's jobs works on: the file is split
// into Jobs disjoint regions (fio's offset_increment), rounded down to whole
// MiB and to the block size.
func jobRegion(size int64, s Spec) int64 {
	r := size / int64(s.Jobs)
	r -= r % (1 << 20)
	r -= r % s.BS
	return r
}

// JobFile writes the fio job file of one point. It is stored with the run
// so that anyone can re-run the point by hand: `fio --output-format=json+ FILE`.
func JobFile(s Spec, set Settings) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	for _, p := range []string{set.File, set.LogPrefix} {
		if err := CheckPath(p); err != nil {
			return "", err
		}
	}
	region := jobRegion(set.Size, s)
	if region < s.BS || region < 1<<20 {
		return "", fmt.Errorf("a %s test file is too small for %d jobs of %s blocks; give a larger --size", units.FormatSize(set.Size), s.Jobs, FormatBS(s.BS))
	}
	logMs := set.LogIntervalMs
	if logMs <= 0 {
		logMs = 1000
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(set.Header), "\n") {
		if line != "" {
			fmt.Fprintf(&b, "; %s\n", line)
		}
	}
	direct := 0
	if set.Direct {
		direct = 1
	}
	fmt.Fprintf(&b, "[global]\nioengine=%s\ndirect=%d\nfilename=%s\n", set.IOEngine, direct, filenameValue(set.File))
	fmt.Fprintf(&b, "time_based=1\nruntime=%s\n", fioSeconds(set.Duration))
	if set.Ramp > 0 {
		fmt.Fprintf(&b, "ramp_time=%s\n", fioSeconds(set.Ramp))
	}
	if set.SteadyState != "" {
		fmt.Fprintf(&b, "steadystate=%s\nsteadystate_duration=%s\n", set.SteadyState, fioSeconds(set.SteadyWindow))
		if set.SteadyRamp > 0 {
			fmt.Fprintf(&b, "steadystate_ramp_time=%s\n", fioSeconds(set.SteadyRamp))
		}
	}
	if set.LogPrefix != "" {
		fmt.Fprintf(&b, "log_avg_msec=%d\nwrite_iops_log=%s\nwrite_bw_log=%[2]s\nwrite_lat_log=%[2]s\n", logMs, set.LogPrefix)
	}
	fmt.Fprintf(&b, "\n[%s]\nrw=%s\n", s.Name, s.RW)
	if s.RW == RandRW {
		fmt.Fprintf(&b, "rwmixread=%d\n", s.RWMixRead)
	}
	fmt.Fprintf(&b, "bs=%s\niodepth=%d\nnumjobs=%d\nsize=%d\noffset_increment=%d\n", FormatBS(s.BS), s.IODepth, s.Jobs, region, region)
	if s.RateIOPS > 0 {
		// Poisson arrivals, as independent requests come, rather than
		// fio's default of evenly spaced ones; at the rate_iops whose
		// Poisson offer is nearest to the point's rate.
		fmt.Fprintf(&b, "rate_iops=%s\nrate_process=poisson\n", rateIOPS(s))
	}
	if s.CompressPc > 0 || s.DedupePc > 0 {
		// Fresh buffer contents on every write, so the pattern holds for
		// the whole run and not just the first buffer.
		b.WriteString("refill_buffers=1\n")
		if s.CompressPc > 0 {
			fmt.Fprintf(&b, "buffer_compress_percentage=%d\nbuffer_compress_chunk=%d\n", s.CompressPc, min(s.BS, 4096))
		}
		if s.DedupePc > 0 {
			fmt.Fprintf(&b, "dedupe_percentage=%d\n", s.DedupePc)
		}
	}
	return b.String(), nil
}

// rateIOPS is fio's rate_iops for the spec's rate, each direction's
// Poisson-corrected (poissonRateIOPS). fio paces reads and writes each to
// its own rate, and one value is both's (io_u.c, rate_ddir): a mix given
// rate_iops=100 did 100 reads and 100 writes a second, half and half,
// whatever its rwmixread. So a mix's rate is split by its share of
// reads, "70,30" for 100 a second at 70%, each direction that has a share
// getting at least 1.
func rateIOPS(s Spec) string {
	if s.RW != RandRW || s.RWMixRead == 0 || s.RWMixRead == 100 {
		return strconv.Itoa(poissonRateIOPS(s.RateIOPS))
	}
	reads := max(int(math.Round(float64(s.RateIOPS)*float64(s.RWMixRead)/100)), 1)
	writes := max(s.RateIOPS-reads, 1)
	return fmt.Sprintf("%d,%d", poissonRateIOPS(reads), poissonRateIOPS(writes))
}

// CheckPath refuses a path that a fio job file cannot carry as a value: fio
// reads a line up to a ';' or '#' (a comment), drops the spaces and control
// characters around it, and a newline would end the line. Such a path
// would have fio open another file than the one tierbench checked.
func CheckPath(p string) error {
	if i := strings.IndexAny(p, ";#\n\r"); i >= 0 {
		return fmt.Errorf("fio cannot be given %q: its job files end a value at %q; use a path without ';', '#' or line breaks", p, p[i])
	}
	if strings.TrimSpace(p) != p || strings.ContainsFunc(p, unicode.IsControl) {
		return fmt.Errorf("fio cannot be given %q: its job files drop spaces at either end and control characters; use another path", p)
	}
	return nil
}

// filenameValue writes a path as the value of fio's filename option, which
// splits at ':' (a list of files) unless the colon is escaped as '\:'.
func filenameValue(p string) string { return strings.ReplaceAll(p, ":", `\:`) }

// fioSeconds writes a duration in fio's time syntax, whole milliseconds.
func fioSeconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return fmt.Sprintf("%dms", d.Milliseconds())
}
