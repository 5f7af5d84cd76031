package telemetry

// NodeStats is one host's telemetry over a step or point, as read from its
// Prometheus node_exporter: CPU shares in percent of the host's CPU time
// (all cores), and per block device the numbers `iostat -x` prints.
type NodeStats struct {
	CPUIdlePct   float64       `json:"cpu_idle_pct"`
	CPUIowaitPct float64       `json:"cpu_iowait_pct"`
	CPUUserPct   float64       `json:"cpu_user_pct"`
	CPUSystemPct float64       `json:"cpu_system_pct"`
	CPUStealPct  float64       `json:"cpu_steal_pct"`
	Devices      []DeviceRates `json:"devices,omitempty"`
	// Samples is how many intervals the figures average; Missing is how
	// many have none because the exporter did not answer at one of their
	// ends (it went away, or was late): an outage of k scrapes is k+1.
	Samples int `json:"samples"`
	Missing int `json:"missing,omitempty"`
	// ClockOffsetMs is the host's clock minus the controller's, from
	// node_exporter's node_time_seconds (median over the samples; 0 when
	// its time collector is off), within half a request's round trip.
	ClockOffsetMs float64 `json:"clock_offset_ms"`
}

// HostStats is NodeStats named by the host: an entry of the `hosts` list
// of a TPC-C step, a disk point, a backup phase or a monitor sample.
type HostStats struct {
	Host string `json:"host"`
	NodeStats
}
