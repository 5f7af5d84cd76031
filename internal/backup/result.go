package backup

// PhaseResult is a timed phase as `backup run --json` prints it and as the
// results store keeps it, with the telemetry of its timed interval. The
// report decodes the same type: the schema lives here once.
type PhaseResult struct {
	Phase
	Host   map[string]float64 `json:"host,omitempty"`
	Device map[string]float64 `json:"device,omitempty"`
}
