package report

import (
	"context"
	"math"

	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
)

// Compared is one figure of a run against the same figure of the baseline,
// the first run of its kind among those compared: what a cell of the
// report's ratio tables shows, as numbers. A ratio above 1 is more
// throughput, or more latency.
type Compared struct {
	Kind  string `json:"kind"` // tpcc or disk
	Run   string `json:"run"`
	Label string `json:"label"`
	Base  string `json:"base"`
	Step  string `json:"step"`          // a TPC-C step's "4 VUs" or "4 VUs at 3,000 TPM", or a disk point's name
	VUs   int    `json:"vus,omitempty"` // a TPC-C step's
	// OfferedTPM is an open-loop TPC-C step's offered rate: it is compared
	// with the baseline's step at the same rate.
	OfferedTPM float64 `json:"offered_tpm,omitempty"`
	Figure     string  `json:"figure"` // nopm, tpm, new_order.p95_ms, new_order.p99_ms…; iops, mbps, mean_ms, p99_ms
	// Ratio, Low and High are absent when there is nothing to compare or
	// no interval (a figure measured once).
	Ratio   *float64 `json:"ratio,omitempty"`
	Low     *float64 `json:"low,omitempty"`
	High    *float64 `json:"high,omitempty"`
	N       int      `json:"n"`      // the run's repetitions counted
	BaseN   int      `json:"base_n"` // the baseline's
	Verdict string   `json:"verdict"`
}

// figure is one figure's comparison, by the name Compared gives it.
type figure struct {
	name string
	c    stats.Comparison
	// said, when set, is the verdict in place of the comparison's
	// (bothHeld).
	said string
}

// verdictText is the figure's verdict as a table cell gives it.
func (f figure) verdictText() string {
	if f.said != "" && !math.IsNaN(f.c.Ratio) {
		return f.said
	}
	return verdict(f.c)
}

// tpccFigures are the figures the TPC-C ratio table compares, in its
// columns' order.
func tpccFigures(x, bx tpccStep) []figure {
	return []figure{
		{name: "tpm", c: compareStat(x, bx, "tpm")},
		{name: "nopm", c: compareStat(x, bx, "nopm"), said: heldRate(x, bx)},
		{name: "new_order.p95_ms", c: compareStat(x, bx, "new_order.p95_ms")},
		{name: "host.cpu_iowait_pct", c: compareStat(x, bx, "host.cpu_iowait_pct")},
		{name: "device.await_ms", c: compareBy(x, bx, func(s *stored.TPCCStep) float64 { return deviceAwait(s.Device) })},
		{name: "db.read_latency_ms", c: compareStat(x, bx, "db.read_latency_ms")},
		{name: "db.wal_sync_latency_ms", c: compareStat(x, bx, "db.wal_sync_latency_ms")},
	}
}

// bothHeld is the NOPM verdict of two open-loop steps that both served what
// arrived at their offered rate.
const bothHeld = "both held the rate"

// heldRate is bothHeld for two open-loop steps that both kept pace with
// their arrivals, whose NOPM the rate set (with constant arrivals the
// repetitions barely vary, and a difference of a few transactions would
// read as "higher"), else "".
func heldRate(x, base tpccStep) string {
	if x.KeptPace() && base.KeptPace() {
		return bothHeld
	}
	return ""
}

// diskFigures are the figures the storage ratio table compares, in its
// columns' order.
func diskFigures(d, b diskStep) []figure {
	cmp := func(key string) stats.Comparison { return stats.Compare(d.values(key), b.values(key)) }
	return []figure{{name: "iops", c: cmp("iops")}, {name: "mbps", c: cmp("mbps")}, {name: "mean_ms", c: cmp("mean_ms")}, {name: "p99_ms", c: cmp("p99_ms")}}
}

// Compare computes every figure of the runs against their kind's
// baseline, as the report's ratio tables do: the TPC-C runs per step both
// ran (a virtual-user count, or a pool at an offered rate), the disk runs
// per point both ran.
func Compare(ctx context.Context, store *results.Store, o Options) ([]Compared, error) {
	runs, err := load(ctx, store, o.Runs, o.Group, o.Labels, o.DiscardNoisy)
	if err != nil {
		return nil, err
	}
	out := []Compared{}
	add := func(kind string, rd, base *runData, step string, key stored.StepKey, fs []figure) {
		for _, f := range fs {
			c := Compared{Kind: kind, Run: rd.ID, Label: rd.Label, Base: base.ID, Step: step, VUs: key.VUs, OfferedTPM: key.OfferedTPM, Figure: f.name,
				N: f.c.NA, BaseN: f.c.NB, Verdict: f.verdictText(), Ratio: finite(f.c.Ratio)}
			if f.c.HasCI() {
				c.Low, c.High = finite(atLeast0(f.c.Low)), finite(f.c.High)
			}
			out = append(out, c)
		}
	}
	var tpcc, disk []*runData
	for _, rd := range runs {
		switch rd.Kind {
		case stored.KindTPCC:
			tpcc = append(tpcc, rd)
		case stored.KindDisk:
			disk = append(disk, rd)
		}
	}
	if len(tpcc) > 1 {
		b := byKey(tpcc[0])
		for _, rd := range tpcc[1:] {
			for _, x := range rd.TPCC {
				k := x.Key()
				if bx, ok := b[k]; ok {
					step := plural(x.VUs, "VU", "VUs")
					if k.OfferedTPM > 0 {
						step += " at " + thousands(int64(k.OfferedTPM)) + " TPM"
					}
					add(stored.KindTPCC, rd, tpcc[0], step, k, append(tpccFigures(x, bx), figure{name: "new_order.p99_ms", c: compareStat(x, bx, "new_order.p99_ms")}))
				}
			}
		}
	}
	if len(disk) > 1 {
		for _, rd := range disk[1:] {
			for _, name := range pointNames(disk) {
				b, ok1 := disk[0].point(name)
				d, ok2 := rd.point(name)
				if ok1 && ok2 {
					add(stored.KindDisk, rd, disk[0], name, stored.StepKey{}, diskFigures(d, b))
				}
			}
		}
	}
	return out, nil
}

// finite is v, or nil when it is NaN or infinite.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
