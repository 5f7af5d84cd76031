package stored

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/units"
)

// KneeFollowPct is how far below the arrivals a step's completed
// transactions, with those still running at its end, may fall, in
// percent, for its rate to count as held.
const KneeFollowPct = 2

// KneeP99Factor sets the default New-Order p99 bound of a sweep: this many
// times the lowest rate's.
const KneeP99Factor = 10

// Knee is where a rate sweep stops keeping up: the highest offered rate
// at which it, and every lower rate, still served what arrived (within
// KneeFollowPct) with a New-Order p99, measured from the intended starts,
// within the bound.
type Knee struct {
	// OfferedTPM is that rate; 0 when the lowest rate did not hold.
	OfferedTPM float64 `json:"offered_tpm"`
	P99BoundMs float64 `json:"p99_bound_ms"`
	// NextTPM is the rate after the knee, which did not hold (0 when every
	// rate held); Why says how, or that every rate held.
	NextTPM float64 `json:"next_offered_tpm,omitempty"`
	Why     string  `json:"why"`
}

// Text says where the knee is and why the next rate did not hold, as
// `tpcc run` and the console's notes give it: "knee: 12,000 TPM offered
// (served within 2% of the arrivals, New-Order p99 within 44.70 ms); at
// 24,000 TPM offered, …", or "knee: none: not even the lowest rate held;
// …".
func (k *Knee) Text() string {
	knee := "knee: none: not even the lowest rate held"
	if k.OfferedTPM > 0 {
		knee = fmt.Sprintf("knee: %s TPM offered (served within %d%% of the arrivals, New-Order p99 within %.2f ms)",
			count(k.OfferedTPM), KneeFollowPct, k.P99BoundMs)
	}
	return knee + "; " + k.Why
}

// FindKnee finds the knee of an open-loop run's steps (as GroupTPCC gives
// them: one per rate); bound is the p99 bound, 0 for KneeP99Factor times
// the lowest rate's (the lowest with a New-Order). It is nil without
// open-loop steps. A rate whose steps Ctrl-C all cut short (Interrupted)
// is left out: its interval was not the one the others were judged over.
func FindKnee(steps []*TPCCStep, bound time.Duration) *Knee {
	var open []*TPCCStep
	for _, s := range steps {
		if s.OpenLoop != nil && !s.Interrupted {
			open = append(open, s)
		}
	}
	if len(open) == 0 {
		return nil
	}
	slices.SortStableFunc(open, func(a, b *TPCCStep) int { return cmp.Compare(a.OfferedTPM, b.OfferedTPM) })
	boundMs := float64(bound) / float64(time.Millisecond)
	if bound <= 0 {
		// The lowest rate whose step completed a New-Order: a short step
		// at a low rate may have none, and a bound of 0 would fail every
		// rate after it. With none in any step, the p99 is not judged.
		for _, s := range open {
			if p := newOrderP99(s); p > 0 {
				boundMs = KneeP99Factor * p
				break
			}
		}
	}
	k := &Knee{P99BoundMs: boundMs}
	for _, s := range open {
		if why := notHeld(s, boundMs); why != "" {
			k.NextTPM, k.Why = s.OfferedTPM, why
			return k
		}
		k.OfferedTPM = s.OfferedTPM
	}
	k.Why = fmt.Sprintf("every rate held, up to %s TPM offered: the knee is there or above", count(k.OfferedTPM))
	return k
}

// count is a rate or count as the knee's words give it: 12,000.
func count(v float64) string { return units.Thousands(int64(math.Round(v))) }

// newOrderP99 is a step's New-Order p99 from the intended start: pooled
// over its repetitions when it has them.
func newOrderP99(s *TPCCStep) float64 {
	no := tpcc.NewOrder.String()
	if p, ok := s.TxnPooled[no]; ok {
		return p.P99Ms
	}
	return s.Txn[no].P99Ms
}

// notHeld says why a step's rate did not hold, or "" when it did.
// Its repetitions are judged together: those its figures are over.
func notHeld(s *TPCCStep, boundMs float64) string {
	// The count served is not put as a rate: with those running and
	// queued at the end it is more than the step's TPM, beside which a
	// report shows it.
	if arrivals, done := s.served(); !keptPace(arrivals, done) {
		return fmt.Sprintf("at %s TPM offered, %.1f%% of the %s transactions that arrived were served (%s: completed, "+
			"or still running or queued and not yet late at the end), more than %d%% short",
			count(s.OfferedTPM), 100*float64(done)/float64(arrivals), units.Thousands(arrivals), units.Thousands(done), KneeFollowPct)
	}
	if p := newOrderP99(s); boundMs > 0 && p > boundMs {
		return fmt.Sprintf("at %s TPM offered, the New-Order p99 from the intended start was %.2f ms, over the %.2f ms bound", count(s.OfferedTPM), p, boundMs)
	}
	return ""
}

// KeptPace reports whether an open-loop step served what arrived, within
// KneeFollowPct, over the repetitions its figures are over: its
// throughput is then the offered rate's, whatever the storage. False for a
// closed-loop step.
func (s *TPCCStep) KeptPace() bool {
	arrivals, done := s.served()
	return s.OpenLoop != nil && arrivals > 0 && keptPace(arrivals, done)
}

func keptPace(arrivals, done int64) bool {
	return float64(done) >= float64(arrivals)*(1-KneeFollowPct/100.0)
}

// served is the arrivals of a step's counted repetitions and those served:
// completed, or still running or queued and not yet late at the end.
func (s *TPCCStep) served() (arrivals, done int64) {
	for _, r := range s.Counted() {
		if r.OpenLoop != nil {
			// Those still running at the end were served too, and those
			// queued at the end and not yet late were keeping pace:
			// without them a short step at a rate well held falls short
			// by its rate times its latency (6 of 180 in a 2 s step, 4
			// of 127 queued on a loaded host).
			arrivals += r.Arrivals
			done += r.InFlight + r.WaitingAtEnd
		}
		done += r.Completed()
	}
	return arrivals, done
}

// Completed is the transactions the step completed in its measured
// interval, all types.
func (s *TPCCStep) Completed() int64 {
	var n int64
	for _, t := range s.Txn {
		n += t.Count
	}
	return n
}

// DiskKnee is the knee of one point's rates (the points that differ only
// in their rate_iops): as Knee, with the offered and measured rates in
// I/Os a second (all jobs together) and fio's p99 completion latency (the
// slower direction's).
type DiskKnee struct {
	Point       string  `json:"point"` // the first rated point's name
	OfferedIOPS float64 `json:"offered_iops"`
	P99BoundMs  float64 `json:"p99_bound_ms"`
	NextIOPS    float64 `json:"next_offered_iops,omitempty"`
	Why         string  `json:"why"`
}

// Text is as Knee's, named by its point's shape (RatelessName): "knee of
// 4k-randread-qd1x1: 2,000 IOPS offered (done within 2% of the rate, p99
// within 0.500 ms); at 4,000 IOPS offered, …".
func (k DiskKnee) Text() string {
	knee := "none: not even the lowest rate held"
	if k.OfferedIOPS > 0 {
		knee = fmt.Sprintf("%s IOPS offered (done within %d%% of the rate, p99 within %.3f ms)", count(k.OfferedIOPS), KneeFollowPct, k.P99BoundMs)
	}
	return "knee of " + RatelessName(k.Point) + ": " + knee + "; " + k.Why
}

// RatelessName is a point's name without the rate its name ends with
// ("-rate250", fio.PointName's, per job): the name of what its rates
// share, "4k-randread-qd1x1".
func RatelessName(point string) string {
	return rateSuffix.ReplaceAllString(point, "")
}

var rateSuffix = regexp.MustCompile(`-rate[0-9]+$`)

// FindDiskKnees finds the knee of each point offered at two or more rates,
// in the order the points come; bound is as FindKnee's.
func FindDiskKnees(points []Point, bound time.Duration) []DiskKnee {
	type shape struct {
		bs            int64
		rw            string
		mix, qd, jobs int
	}
	var order []shape
	rated := map[shape][]Point{}
	for _, p := range points {
		if p.RateIOPS <= 0 {
			continue
		}
		k := shape{p.BSBytes, p.RW, p.RWMixRead, p.IODepth, p.Jobs}
		if rated[k] == nil {
			order = append(order, k)
		}
		rated[k] = append(rated[k], p)
	}
	var out []DiskKnee
	for _, k := range order {
		ps := rated[k]
		if len(ps) < 2 {
			continue
		}
		slices.SortStableFunc(ps, func(a, b Point) int { return cmp.Compare(a.RateIOPS, b.RateIOPS) })
		boundMs := float64(bound) / float64(time.Millisecond)
		if bound <= 0 {
			boundMs = KneeP99Factor * pointP99(ps[0])
		}
		kn := DiskKnee{Point: ps[0].Name, P99BoundMs: boundMs}
		for _, p := range ps {
			offered := p.OfferedIOPS()
			measured := p.IOPS()
			if measured < offered-diskShortfall(offered, p.Seconds) {
				kn.NextIOPS = offered
				kn.Why = fmt.Sprintf("at %s IOPS offered, %s were done: %.1f%%, more than %d%% short", count(offered), count(measured), 100*measured/offered, KneeFollowPct)
				break
			}
			if p99 := pointP99(p); p99 > boundMs {
				kn.NextIOPS = offered
				kn.Why = fmt.Sprintf("at %s IOPS offered, the p99 completion latency was %.3f ms, over the %.3f ms bound", count(offered), p99, boundMs)
				break
			}
			kn.OfferedIOPS = offered
		}
		if kn.Why == "" {
			kn.Why = fmt.Sprintf("every rate held, up to %s IOPS offered: the knee is there or above", count(kn.OfferedIOPS))
		}
		out = append(out, kn)
	}
	return out
}

// diskShortfall is how many I/Os a second a point offered a rate may fall
// short and still hold it: KneeFollowPct of it, or, when more, what
// chance alone takes from Poisson arrivals over secs (three standard
// deviations of their count): fio does not report the arrivals it drew,
// and 2 s at 800 a second stray 2.5% by chance.
func diskShortfall(offered, secs float64) float64 {
	short := offered * KneeFollowPct / 100
	if secs > 0 {
		short = max(short, 3*math.Sqrt(offered*secs)/secs)
	}
	return short
}

// IOPS is the point's I/Os a second, both directions together.
func (p *Point) IOPS() float64 {
	var n float64
	for _, d := range []*DirStats{p.Read, p.Write} {
		if d != nil {
			n += d.IOPS
		}
	}
	return n
}

// pointP99 is the slower direction's p99 completion latency: pooled over
// the repetitions when the point has them.
func pointP99(p Point) float64 {
	var ms float64
	if p.Pooled != nil {
		for _, d := range []*PooledDir{p.Pooled.Read, p.Pooled.Write} {
			if d != nil {
				ms = max(ms, d.P99Ms)
			}
		}
		return ms
	}
	for _, d := range []*DirStats{p.Read, p.Write} {
		if d != nil {
			ms = max(ms, d.P99Ms)
		}
	}
	return ms
}
