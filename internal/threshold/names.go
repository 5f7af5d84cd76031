package threshold

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/stored"
)

// Name is one figure a threshold can judge: what users write, the stored
// key it reads, the key's unit and what it is.
type Name struct{ Name, Key, Unit, Meaning string }

// Units of the stored keys, which say which units an expression may use.
const (
	unitCount = ""     // a count or a rate: plain numbers, k, M, G
	unitMs    = "ms"   // a latency in milliseconds: ns, us, µs, ms, s
	unitUs    = "us"   // microseconds
	unitS     = "s"    // seconds
	unitPct   = "%"    // a percentage: 20 or 20%
	unitBytes = "B"    // bytes: plain, k, M, G, KiB, MiB, GiB
	unitMBps  = "MB/s" // MB/s (10^6 bytes): plain or MB/s
)

// txnKinds are the TPC-C transaction types, as the step's txn object names them.
var txnKinds = []string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// telemetryNames are the host and device averages a step or point carries
// when telemetry sampled them (telemetry.Summarize).
var telemetryNames = []Name{
	{"cpu_user", "host.cpu_user_pct", unitPct, "host CPU in user mode"},
	{"cpu_system", "host.cpu_system_pct", unitPct, "host CPU in system mode (irq and softirq included)"},
	{"cpu_iowait", "host.cpu_iowait_pct", unitPct, "host CPU idle waiting for I/O"},
	{"cpu_idle", "host.cpu_idle_pct", unitPct, "host CPU idle"},
	{"cpu_steal", "host.cpu_steal_pct", unitPct, "CPU taken by the hypervisor"},
	{"server_cpu", "host.server_cpu_pct", unitPct, "the database server's processes, in percent of one core"},
	{"mem_used", "host.mem_used_bytes", unitBytes, "host memory in use"},
	{"mem_cache", "host.mem_cache_bytes", unitBytes, "host page cache"},
	{"mem_dirty", "host.mem_dirty_bytes", unitBytes, "dirty pages"},
	{"device.r_iops", "device.r_iops", unitCount, "reads per second on the target's disks"},
	{"device.w_iops", "device.w_iops", unitCount, "writes per second on the target's disks"},
	{"device.r_mbps", "device.r_mbps", unitMBps, "read MB/s on the target's disks"},
	{"device.w_mbps", "device.w_mbps", unitMBps, "written MB/s on the target's disks"},
	{"device.r_await", "device.r_await_ms", unitMs, "iostat's read await"},
	{"device.w_await", "device.w_await_ms", unitMs, "iostat's write await"},
	{"device.aqu_sz", "device.aqu_sz", unitCount, "iostat's average queue size"},
	{"device.util", "device.util_pct", unitPct, "iostat's %util"},
	{"device.p50", "device.p50_ms", unitMs, "block-layer latency p50 (traced)"},
	{"device.p95", "device.p95_ms", unitMs, "block-layer latency p95 (traced)"},
	{"device.p99", "device.p99_ms", unitMs, "block-layer latency p99 (traced)"},
}

// percentiles are a latency summary's figures (metrics.Summary and
// stored.DirStats share them).
var percentiles = []struct{ short, key, meaning string }{
	{"mean", "mean_ms", "mean latency"},
	{"p50", "p50_ms", "median latency"},
	{"p95", "p95_ms", "95th percentile latency"},
	{"p99", "p99_ms", "99th percentile latency"},
	{"p99.9", "p999_ms", "99.9th percentile latency"},
	{"max", "max_ms", "largest latency"},
}

// Names lists the names a kind accepts, in the order docs/thresholds.md
// shows them. Every one also accepts its stored key as written.
func Names(kind string) []Name {
	var out []Name
	switch kind {
	case stored.KindTPCC:
		out = []Name{
			{"nopm", "nopm", unitCount, "New-Orders per minute, from the database"},
			{"tpm", "tpm", unitCount, "commits + rollbacks per minute, from the database"},
			{"client_nopm", "client_nopm", unitCount, "New-Orders per minute the driver completed"},
			{"client_tpm", "client_tpm", unitCount, "business transactions per minute the driver completed"},
			{"errors", "errors", unitCount, "failed transactions in the measured interval"},
			{"retries", "retries", unitCount, "retried transactions"},
			{"reconnects", "reconnects", unitCount, "virtual users that reconnected"},
			{"new_order_rollbacks", "new_order_rollbacks", unitCount, "New-Orders rolled back by design (1%)"},
			{"client_cpu_us_per_txn", "client_cpu_us_per_txn", unitUs, "tierbench's own CPU per transaction"},
		}
		for _, k := range txnKinds {
			out = append(out, Name{k + ".count", "txn." + k + ".count", unitCount, k + " transactions completed"})
			for _, p := range percentiles {
				out = append(out, Name{k + "." + p.short, "txn." + k + "." + p.key, unitMs, k + " " + p.meaning})
			}
		}
	case stored.KindDisk:
		for _, dir := range []string{"read", "write"} {
			out = append(out,
				Name{dir + ".iops", dir + ".iops", unitCount, dir + " I/Os per second"},
				Name{dir + ".mbps", dir + ".mbps", unitMBps, dir + " MB/s (10^6 bytes)"},
				Name{dir + ".ios", dir + ".ios", unitCount, dir + " I/Os in all"})
			for _, p := range percentiles {
				out = append(out, Name{dir + "." + p.short, dir + "." + p.key, unitMs, dir + " completion " + p.meaning})
			}
		}
		out = append(out,
			Name{"usr_cpu", "usr_cpu_pct", unitPct, "fio's user CPU, percent of one core"},
			Name{"sys_cpu", "sys_cpu_pct", unitPct, "fio's system CPU, percent of one core"})
	case stored.KindTPCH:
		// Judged on each power test, whose queries carry no host
		// averages, and on the throughput test (TPCHFigures).
		return tpchNames()
	default:
		return nil
	}
	return append(out, telemetryNames...)
}

// tpchNames are the figures of a TPC-H power or throughput test: its
// own, then each query's and refresh function's in the power test.
func tpchNames() []Name {
	out := []Name{
		{"geomean", "geomean_seconds", unitS, "the geometric mean of the power test's 22 query times"},
		{"seconds", "seconds", unitS, "the power test's elapsed time, refresh functions included"},
		{"power_at_size", "power_at_size", unitCount, "the power test's power@size"},
		{"throughput_seconds", "throughput_seconds", unitS, "the throughput test's elapsed time"},
		{"throughput_at_size", "throughput_at_size", unitCount, "the throughput test's throughput@size"},
		{"composite_qph", "composite_qph", unitCount, "tierbench's composite of power@size and throughput@size"},
	}
	what := make([]string, 0, 24)
	for n := 1; n <= 22; n++ {
		what = append(what, "q"+strconv.Itoa(n))
	}
	for _, name := range append(what, "rf1", "rf2") {
		label := strings.ToUpper(name)
		out = append(out,
			Name{name + ".seconds", name + ".seconds", unitS, label + "'s time in the power test, as the client measured it"},
			Name{name + ".server_seconds", name + ".server_seconds", unitS, label + "'s time as the server reported it (MariaDB)"},
			Name{name + ".rows", name + ".rows", unitCount, "rows " + label + " returned (changed, for a refresh function)"},
			Name{name + ".read_mbps", name + ".read_mbps", unitMBps, "read MB/s on the target's disks while " + label + " ran"},
			Name{name + ".read_await", name + ".read_await_ms", unitMs, "iostat's read await while " + label + " ran"},
			Name{name + ".device_p99", name + ".device_p99_ms", unitMs, "block-layer latency p99 while " + label + " ran (traced)"})
	}
	return out
}

// resolve finds the stored key and its unit for a name written by a user.
func resolve(kind, name string) (key, unit string, err error) {
	names := Names(kind)
	if names == nil {
		return "", "", fmt.Errorf("unknown kind of run %q", kind)
	}
	n := dotPercentile(name)
	for _, nm := range names {
		// nopm, new_order.p99, txn.new_order.p99_ms, txn.new_order.p99,
		// cpu_iowait_pct (a host figure without its object's name)
		if n == dotPercentile(nm.Name) || n == nm.Key || n == stripUnit(nm.Key) || "host."+n == nm.Key {
			return nm.Key, nm.Unit, nil
		}
	}
	if rest, ok := strings.CutPrefix(n, "db."); ok && validDBName(rest) {
		return n, unitOfKey(n), nil
	}
	return "", "", fmt.Errorf("%q is not a figure of a %s %s%s; see docs/thresholds.md", name, kindRun[kind], kindStep[kind], closest(names, n))
}

var kindRun = map[string]string{stored.KindTPCC: "TPC-C", stored.KindDisk: "disk", stored.KindTPCH: "TPC-H"}
var kindStep = map[string]string{stored.KindTPCC: "step", stored.KindDisk: "point", stored.KindTPCH: "test"}

// dotPercentile writes p99.9 as the stored keys do (p999).
func dotPercentile(s string) string { return strings.ReplaceAll(s, "p99.9", "p999") }

// stripUnit drops a key's unit suffix: p99_ms -> p99.
func stripUnit(key string) string {
	for _, suf := range []string{"_ms", "_pct", "_us", "_bytes"} {
		if s, ok := strings.CutSuffix(key, suf); ok {
			return s
		}
	}
	return key
}

// unitOfKey is the unit a key's suffix says (a database internal's).
func unitOfKey(key string) string {
	switch {
	case strings.HasSuffix(key, "_ms"):
		return unitMs
	case strings.HasSuffix(key, "_pct"):
		return unitPct
	case strings.HasSuffix(key, "_bytes"):
		return unitBytes
	}
	return unitCount
}

// validDBName is a database internal's name as telemetry writes them.
func validDBName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// closest suggests the names nearest to n (those sharing its first part).
func closest(names []Name, n string) string {
	head := strings.SplitN(n, ".", 2)[0]
	var near []string
	for _, nm := range names {
		if strings.HasPrefix(nm.Name, head) || strings.Contains(nm.Name, head) && len(head) >= 3 {
			near = append(near, nm.Name)
		}
		if len(near) == 4 {
			break
		}
	}
	if len(near) == 0 {
		var some []string
		for _, nm := range names[:min(4, len(names))] {
			some = append(some, nm.Name)
		}
		return " (e.g. " + strings.Join(some, ", ") + ")"
	}
	return " (did you mean " + strings.Join(near, ", ") + "?)"
}
