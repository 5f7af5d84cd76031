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

// Latency is device completion latency over an interval, from paired
// block_rq_issue/block_rq_complete events.
type Latency struct {
	Count uint64  `json:"count"`
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
	P99Ms float64 `json:"p99_ms"`
	OneIn int     `json:"one_in,omitempty"` // one request in OneIn was traced (the tracer samples at high rates)
}
