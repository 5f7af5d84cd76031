package backup

import "github.com/tierbench/tierbench/internal/stored"

// PhaseResult is a timed phase as `backup run --json` prints it and as the
// results store keeps it, with the telemetry of its timed interval. The
// report decodes the same type: the schema lives here once.
type PhaseResult struct {
	Phase
	Host   map[string]float64 `json:"host,omitempty"`
	Device map[string]float64 `json:"device,omitempty"`
	// Hosts are the node_exporter hosts' telemetry of the timed interval
	// (--node-exporter).
	Hosts []stored.HostStats `json:"hosts,omitempty"`
	// Noisy, when set, says why the phase was timed on a noisy host
	// (telemetry.Noisy): steal time or other processes' CPU above the
	// limits.
	Noisy string `json:"noisy,omitempty"`
}
