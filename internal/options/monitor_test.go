package options

import (
	"strings"
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
		es := List(err)
		if len(es) != 1 || es[0].Field != c.field || !strings.HasPrefix(es[0].Msg, c.want) {
			t.Errorf("%+v: %v (%+v); want field %s with %q", c.opts, err, es, c.field, c.want)
		}
	}
}
