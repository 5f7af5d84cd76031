package driver

import (
	"fmt"
	"strings"
)

// A noisy repetition is one measured while something else used the host:
// the hypervisor (steal time) or processes that are neither the database
// server nor tierbench. Its figures say as much about the neighbours as
// about the storage, so the report flags it and `--discard-noisy` leaves it
// out of the means (docs/statistics.md).

// NoisyLimits are the shares of all the host's cores above which a
// repetition is noisy; 0 leaves a check out.
type NoisyLimits struct {
	StealPct   float64 `json:"steal_pct"`
	ForeignPct float64 `json:"foreign_cpu_pct"`
}

// DefaultNoisy are the limits unless told otherwise: 5% of all cores
// stolen by the hypervisor, 10% used by other processes (on 2 cores, a
// fifth of one core).
var DefaultNoisy = NoisyLimits{StealPct: 5, ForeignPct: 10}

// ForeignCPU is the share of all the host's cores (percent) that was busy
// in user or system time but used neither by the database server's
// processes nor by tierbench itself, over the step's measured interval;
// false when the telemetry to tell is missing (no host sample, or a server
// whose processes this host cannot see).
func ForeignCPU(s *StepResult, cpus int) (float64, bool) {
	user, okU := s.Host["cpu_user_pct"]
	sys, okS := s.Host["cpu_system_pct"]
	server, okSrv := s.Host["server_cpu_pct"] // percent of one core
	if !okU || !okS || !okSrv || cpus <= 0 || s.Seconds <= 0 {
		return 0, false
	}
	client := s.ClientCPUPerTxnUs * float64(s.completed()) / 1e6 / s.Seconds // cores
	return max(0, user+sys-(server+100*client)/float64(cpus)), true
}

// JudgeNoisy sets s.Noisy when its steal or foreign CPU passed the limits.
func JudgeNoisy(s *StepResult, cpus int, l NoisyLimits) {
	var why []string
	if steal, ok := s.Host["cpu_steal_pct"]; ok && l.StealPct > 0 && steal > l.StealPct {
		why = append(why, fmt.Sprintf("steal %.1f%% of all cores > %g%%", steal, l.StealPct))
	}
	if f, ok := ForeignCPU(s, cpus); ok {
		s.Host["foreign_cpu_pct"] = f
		if l.ForeignPct > 0 && f > l.ForeignPct {
			why = append(why, fmt.Sprintf("other processes %.1f%% of all cores > %g%%", f, l.ForeignPct))
		}
	}
	s.Noisy = strings.Join(why, "; ")
}
