package options

import (
	"testing"
)

// A monitoring session's bad input names its option: the sampling
// interval, which it cannot do without, is --interval.
func TestMonitorConfig(t *testing.T) {
	for _, c := range []struct {
		opts        Monitor
		field, want string
	}{
		{Monitor{Target: "/", Duration: "soon", Telemetry: Telemetry{Interval: "1s"}}, "duration", "--duration: "},
		{Monitor{Target: "/", Duration: "0s", Telemetry: Telemetry{Interval: "0s"}}, "interval", "--interval "},
	} {
		c.opts.Results = t.TempDir()
		_, err := c.opts.Config()
		wantField(t, c.opts, err, c.field, c.want)
	}
}
