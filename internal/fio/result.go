package fio

import (
	"github.com/tierbench/tierbench/internal/stored"
)

// NewPointResult returns the figures of a measured point (telemetry is the
// caller's to add).
func NewPointResult(p *Point) stored.Point {
	r := p.Result
	return stored.Point{
		Name: p.Spec.Name, BS: FormatBS(p.Spec.BS), BSBytes: p.Spec.BS, RW: p.Spec.RW, RWMixRead: p.Spec.RWMixRead,
		IODepth: p.Spec.IODepth, Jobs: p.Spec.Jobs, RateIOPS: p.Spec.RateIOPS, Read: r.Read, Write: r.Write,
		UsrCPUPct: r.UsrCPUPct, SysCPUPct: r.SysCPUPct, Seconds: r.RuntimeS, SteadyState: r.SteadyState,
		Interrupted: p.Interrupted, Hosts: hostPoints(p.Hosts),
	}
}

// hostPoints are the hosts' figures of a point; nil for a one-host point.
func hostPoints(hosts []HostRun) []stored.HostPoint {
	if len(hosts) == 0 {
		return nil
	}
	out := make([]stored.HostPoint, len(hosts))
	for i, h := range hosts {
		out[i].Host = h.Server.Name
		if h.Result != nil {
			out[i].Read, out[i].Write = h.Result.Read, h.Result.Write
		}
	}
	return out
}
