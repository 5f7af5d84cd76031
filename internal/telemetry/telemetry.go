// Package telemetry samples what the system does underneath a workload,
// once a second by default: host CPU and memory, the block devices that
// hold the target path (iostat -x arithmetic), the database's own counters,
// and, where the kernel allows it, device latency percentiles from block
// tracepoints. Every reader takes the root of /proc and /sys it reads, so
// tests feed it fixture trees.
package telemetry

// CPU is host CPU time over an interval, in percent of all cores.
type CPU struct {
	UserPct   float64 `json:"cpu_user_pct"`   // user + nice
	SystemPct float64 `json:"cpu_system_pct"` // system + irq + softirq
	IOWaitPct float64 `json:"cpu_iowait_pct"`
	IdlePct   float64 `json:"cpu_idle_pct"`
	StealPct  float64 `json:"cpu_steal_pct"`
}

// Memory is a reading of /proc/meminfo, in bytes.
type Memory struct {
	UsedBytes      int64 `json:"mem_used_bytes"`  // MemTotal - MemFree - Buffers - Cached - SReclaimable, as free(1)
	CacheBytes     int64 `json:"mem_cache_bytes"` // Cached + Buffers + SReclaimable
	DirtyBytes     int64 `json:"mem_dirty_bytes"`
	WritebackBytes int64 `json:"mem_writeback_bytes"`
}

// DeviceRates is one block device over an interval, with iostat -x's
// arithmetic.
type DeviceRates struct {
	Name     string  `json:"name"`
	RIOPS    float64 `json:"r_iops"`     // reads completed per second
	WIOPS    float64 `json:"w_iops"`     // writes completed per second
	RMBps    float64 `json:"r_mbps"`     // MB (10^6 bytes) read per second
	WMBps    float64 `json:"w_mbps"`     // MB written per second
	RAwaitMs float64 `json:"r_await_ms"` // Δ read ticks / Δ reads (0 without reads)
	WAwaitMs float64 `json:"w_await_ms"` // Δ write ticks / Δ writes
	AquSz    float64 `json:"aqu_sz"`     // Δ weighted ticks / Δ ms
	UtilPct  float64 `json:"util_pct"`   // Δ io ticks / Δ ms x 100, at most 100
}

// Latency is device completion latency over an interval, from paired
// block_rq_issue/block_rq_complete events.
type Latency struct {
	Count uint64  `json:"count"`
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
	P99Ms float64 `json:"p99_ms"`
	OneIn int     `json:"one_in,omitempty"` // one request in OneIn was traced (the tracer samples at high rates)
}
