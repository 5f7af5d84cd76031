package stored

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

// Aggregate is a step's telemetry: averages over its samples, and device
// latency percentiles from the merged histograms of its samples.
type Aggregate struct {
	Samples int                `json:"samples"`
	Host    map[string]float64 `json:"host"`
	Device  map[string]float64 `json:"device,omitempty"`
	DB      map[string]float64 `json:"db,omitempty"`
	// Hosts are the node_exporter hosts' figures, in the order the
	// telemetry session was given them.
	Hosts []HostStats `json:"hosts,omitempty"`
}

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

// NoisyLimits are the shares of all the host's cores above which a
// repetition is noisy; 0 (or less) leaves a check out.
type NoisyLimits struct {
	StealPct   float64 `json:"steal_pct"`
	ForeignPct float64 `json:"foreign_cpu_pct"`
}
