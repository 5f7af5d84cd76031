package telemetry

import (
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/internal/stored"
)

// A noisy repetition is one measured while something else used the host:
// the hypervisor (steal time) or processes that are neither the workload
// (tierbench, the server under test, the experiment's other processes) nor
// the kernel's threads. Its figures say as much about the neighbours as
// about the storage, so the report flags it and `--discard-noisy` leaves it
// out of the means (docs/statistics.md). TPC-C steps, disk points and
// backup phases are judged alike, from their telemetry's means.

// DefaultNoisy are the limits unless told otherwise: 5% of all cores
// stolen by the hypervisor, 10% used by other processes (on 2 cores, a
// fifth of one core).
var DefaultNoisy = stored.NoisyLimits{StealPct: 5, ForeignPct: 10}

// Noisy says why a repetition whose telemetry is a passed the limits, ""
// when it did not or when its telemetry cannot tell. This host is judged
// on its steal time and other processes' CPU (Host's cpu_steal_pct and
// foreign_cpu_pct); the node_exporter hosts on their steal time only, since
// their exporters cannot tell whose processes used their CPU.
func Noisy(a stored.Aggregate, l stored.NoisyLimits) string {
	var why []string
	if steal, ok := a.Host["cpu_steal_pct"]; ok && l.StealPct > 0 && steal > l.StealPct {
		why = append(why, fmt.Sprintf("steal %.1f%% of all cores > %g%%", steal, l.StealPct))
	}
	if f, ok := a.Host["foreign_cpu_pct"]; ok && l.ForeignPct > 0 && f > l.ForeignPct {
		why = append(why, fmt.Sprintf("other processes %.1f%% of all cores > %g%%", f, l.ForeignPct))
	}
	for _, h := range a.Hosts {
		if h.Samples > 0 && l.StealPct > 0 && h.CPUStealPct > l.StealPct {
			why = append(why, fmt.Sprintf("steal on %s %.1f%% of its cores > %g%%", h.Host, h.CPUStealPct, l.StealPct))
		}
	}
	return strings.Join(why, "; ")
}
