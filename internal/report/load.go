package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/space"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/threshold"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// runData is one run as the report needs it: the store's rows decoded into
// the types tierbench's workloads write them from.
type runData struct {
	results.Run
	Label string
	// Legend is the run's name in chart legends when it is not Label: with
	// TPC-C runs of several engines, its engine and target (nameEngines).
	Legend string
	Color  int // palette index
	Steps  []results.Step
	Env    *stored.Environment // nil: not captured (an older run)
	Check  *tpcc.CheckResult   // nil: no consistency check stored
	// Thresholds are the run's thresholds judged per step or point; none
	// when the run stored no thresholds document.
	Thresholds []threshold.Verdict

	TPCC []tpccStep
	Disk []diskStep
	// Backup: a step per phase of each cycle of a `backup run` (a later
	// scenario step).
	Backup []stored.PhaseResult
	// Durability: the fault cycles of a durability run.
	Durability []stored.DurabilityCycle
	// Space: a space scan's result (nil: not a space run, or one that
	// stored no scan).
	Space *space.Document
	// TPCH: a TPC-H run's queries and refresh functions, as they ran.
	TPCH []tpchQuery
	// Params are the run's stored parameters as its kind's type, and Place
	// the scenario placement they carry (zero when they have none).
	Params stored.Params
	Place  stored.Placement

	seriesNames []string
	series      map[string][]results.Point
	// discardNoisy: noisy TPC-C repetitions are left out of the means (the
	// run's --discard-noisy, or the report's).
	discardNoisy bool
}

// legend is the run's name in chart legends.
func (rd *runData) legend() string {
	if rd.Legend != "" {
		return rd.Legend
	}
	return rd.Label
}

// tpccStep is one step of a `tpcc run`: the driver's own document
// (stored.TPCCStep), so the schema is declared once, beside its writer's.
type tpccStep struct {
	stored.TPCCStep
}

// tpm, nopm: the driver counts whole transactions; the report computes
// with floats.
func (x tpccStep) tpm() float64  { return float64(x.TPM) }
func (x tpccStep) nopm() float64 { return float64(x.NOPM) }

// diskStep is one point of a `disk run`: fio's own step document, with the
// step's index in the store. A point the run repeated is one diskStep
// (stored.GroupPoints): its figures are the means over its repetitions, with Stats
// and the repetitions (PointResult.Repetitions) kept.
type diskStep struct {
	stored.PointStep
	// Index is the step's index in the store; a repeated point's is its
	// first repetition's.
	Index int `json:"-"`
	// Indexes are the step indexes of the point's repetitions, in the order
	// of Repetitions ([Index] for a point measured once).
	Indexes []int `json:"-"`
}

// mbps: both directions together, as stored.Point's IOPS.
func (d diskStep) mbps() float64 { return dirStats(d.Read).MBps + dirStats(d.Write).MBps }

// meanMs is the mean completion latency over both directions' I/Os.
func (d diskStep) meanMs() float64 {
	r, w := dirStats(d.Read), dirStats(d.Write)
	if r.IOPS+w.IOPS == 0 {
		return math.NaN()
	}
	return (r.MeanMs*r.IOPS + w.MeanMs*w.IOPS) / (r.IOPS + w.IOPS)
}

// p99Ms is the worse direction's p99 (the two are separate distributions).
func (d diskStep) p99Ms() float64 {
	return max(dirStats(d.Read).P99Ms, dirStats(d.Write).P99Ms)
}

// dirStats is a direction's figures, zero when the point has none.
func dirStats(d *stored.DirStats) stored.DirStats {
	if d == nil {
		return stored.DirStats{}
	}
	return *d
}

// point returns the run's storage point of this name (one per name: a
// repeated point's repetitions are grouped into one).
func (rd *runData) point(name string) (diskStep, bool) {
	for _, d := range rd.Disk {
		if d.Name == name {
			return d, true
		}
	}
	return diskStep{}, false
}

// random says whether the point is random access.
func (d diskStep) random() bool { return strings.HasPrefix(d.RW, "rand") }

// mixName is the access pattern without size or depth, e.g. "randrw70", "read".
func (d diskStep) mixName() string {
	if d.RW == "randrw" || d.RW == "rw" || d.RW == "readwrite" {
		return fmt.Sprintf("%s%d", d.RW, d.RWMixRead)
	}
	return d.RW
}

// load reads the runs, in the order asked, with their steps and series.
func load(ctx context.Context, store *results.Store, ids []string, group string, labels map[string]string, discardNoisy bool) ([]*runData, error) {
	if len(ids) == 0 && group != "" {
		all, err := store.Runs(ctx)
		if err != nil {
			return nil, err
		}
		for i := len(all) - 1; i >= 0; i-- { // oldest first: the order the group ran in
			if all[i].Group == group {
				ids = append(ids, all[i].ID)
			}
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("group %s: %w", group, results.ErrNotFound)
		}
	}
	if len(ids) == 0 {
		ids = []string{"latest"}
	}
	var runs []*runData
	seen := map[string]bool{}
	for _, id := range ids {
		r, err := store.Run(ctx, id)
		if err != nil {
			return nil, err
		}
		if seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		rd := &runData{Run: r, Label: r.ID, Color: len(runs), series: map[string][]results.Point{}, discardNoisy: discardNoisy}
		if err := rd.read(ctx, store); err != nil {
			return nil, err
		}
		if l := rd.Place.Label; l != "" {
			rd.Label = l
		}
		runs = append(runs, rd)
	}
	for key, label := range labels {
		n := 0
		for _, rd := range runs {
			if strings.HasPrefix(rd.ID, key) {
				rd.Label = label
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("label %s=%s: %w %s", key, label, ErrLabelNoRun, key)
		}
	}
	return runs, nil
}

func (rd *runData) read(ctx context.Context, store *results.Store) error {
	var err error
	if rd.Steps, err = store.Steps(ctx, rd.ID); err != nil {
		return err
	}
	// Parameters are informative only: ones that do not decode leave the
	// run without them.
	rd.Params, _ = stored.DecodeParams(rd.Kind, rd.Run.Params)
	rd.Place = rd.Params.Placement
	var reps []*stored.TPCCStep
	var points []diskStep
	for _, st := range rd.Steps {
		switch rd.Kind {
		case stored.KindTPCC:
			s, err := decodeStep[stored.TPCCStep](rd, st)
			if err != nil {
				return err
			}
			s.Index = st.Index
			if s.Repetition > 0 { // pooled percentiles need the repetitions' histograms
				if err := readHistograms(ctx, store, rd.ID, st.Index, &s); err != nil {
					return err
				}
			}
			reps = append(reps, &s)
		case stored.KindDisk:
			s, err := decodeStep[diskStep](rd, st)
			if err != nil {
				return err
			}
			s.Index = st.Index
			points = append(points, s)
		case stored.KindBackup:
			s, err := decodeStep[stored.PhaseResult](rd, st)
			if err != nil {
				return err
			}
			rd.Backup = append(rd.Backup, s)
		case stored.KindDurability:
			s, err := decodeStep[stored.DurabilityCycle](rd, st)
			if err != nil {
				return err
			}
			rd.Durability = append(rd.Durability, s)
		case stored.KindSpace:
			s, err := decodeStep[space.Document](rd, st)
			if err != nil {
				return err
			}
			rd.Space = &s
		case stored.KindTPCH:
			q, err := decodeStep[stored.TPCHQuery](rd, st)
			if err != nil {
				return err
			}
			rd.TPCH = append(rd.TPCH, tpchQuery{q, float64(st.MeasureStart.UnixNano()) / 1e9})
		}
	}
	// One step per VU count: a repeated run's repetitions become their
	// means, with Stats and the repetitions kept (stored.GroupTPCC).
	// As the run's own document did, or as the report was asked to.
	if rd.Params.Noisy.Discard {
		rd.discardNoisy = true
	}
	for _, g := range stored.GroupTPCCDiscarding(reps, stored.KeysOf(reps), rd.discardNoisy) {
		rd.TPCC = append(rd.TPCC, tpccStep{*g})
	}
	// One point per name: a repeated run's repetitions become their means,
	// with Stats and the repetitions kept (stored.GroupPoints).
	rd.Disk = groupPoints(points, rd.discardNoisy)
	if rd.Env, err = document[stored.Environment](ctx, store, rd.ID, results.DocEnvironment); err != nil {
		return err
	}
	if rd.Check, err = document[tpcc.CheckResult](ctx, store, rd.ID, results.DocCheck); err != nil {
		return err
	}
	if th, err := document[[]threshold.Verdict](ctx, store, rd.ID, results.DocThresholds); err != nil {
		return err
	} else if th != nil {
		rd.Thresholds = *th
	}
	if rd.seriesNames, err = store.SeriesNames(ctx, rd.ID); err != nil {
		return err
	}
	for _, name := range rd.seriesNames {
		pts, err := store.Points(ctx, rd.ID, name, results.AllSteps)
		if err != nil {
			return err
		}
		rd.series[name] = pts
	}
	return nil
}

// groupPoints gathers a repeated disk run's stored points into one per
// name, in the order the names first ran (stored.GroupPoints). The stored
// documents have no histograms (the store keeps them apart), so a
// repeated point has no pooled percentiles: its percentiles are the means
// of its repetitions'. A run that does not repeat its points is read as
// stored. discard leaves noisy repetitions out of the means
// (stored.GroupPointsDiscarding).
func groupPoints(points []diskStep, discard bool) []diskStep {
	if !slices.ContainsFunc(points, func(p diskStep) bool { return p.Repetition > 0 }) {
		for i := range points {
			points[i].Indexes = []int{points[i].Index}
		}
		return points
	}
	var names []string
	ran := make([]stored.Ran, 0, len(points))
	indexes := map[string][]int{}
	jobFile := map[string]string{}
	for _, p := range points {
		i := slices.Index(names, p.Name)
		if i < 0 {
			i = len(names)
			names = append(names, p.Name)
			jobFile[p.Name] = p.JobFile
		}
		ran = append(ran, stored.Ran{Point: i, Result: p.Point})
		indexes[p.Name] = append(indexes[p.Name], p.Index)
	}
	var out []diskStep
	for _, g := range stored.GroupPointsDiscarding(ran, discard) {
		ix := indexes[g.Name]
		out = append(out, diskStep{PointStep: stored.PointStep{Point: g, JobFile: jobFile[g.Name]}, Index: ix[0], Indexes: ix})
	}
	return out
}

// readHistograms reads a stored TPC-C step's latency histograms into s.
func readHistograms(ctx context.Context, store *results.Store, runID string, index int, s *stored.TPCCStep) error {
	for k := range tpcc.NumKinds {
		data, err := store.Histogram(ctx, runID, index, k.String())
		if errors.Is(err, results.ErrNotFound) {
			continue // a step without it: no pooled figure for that type
		} else if err != nil {
			return err
		}
		h, err := hdr.Decode(data)
		if err != nil {
			return fmt.Errorf("run %s step %d: %s histogram: %w", runID, index, k, err)
		}
		s.Histograms[k] = h
	}
	return nil
}

func decodeStep[T any](rd *runData, st results.Step) (T, error) {
	var v T
	if err := json.Unmarshal(st.Metrics, &v); err != nil {
		return v, fmt.Errorf("run %s step %d: %w", rd.ID, st.Index, err)
	}
	return v, nil
}

// document reads a run's document; nil when it has none or it does not
// decode (an older tierbench wrote it).
func document[T any](ctx context.Context, store *results.Store, runID, name string) (*T, error) {
	doc, err := store.Document(ctx, runID, name)
	if errors.Is(err, results.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var v T
	if json.Unmarshal(doc, &v) != nil {
		return nil, nil
	}
	return &v, nil
}

// points returns a series' points, of one step or (results.AllSteps) all.
func (rd *runData) points(name string, step int) []results.Point {
	pts := rd.series[name]
	if step == results.AllSteps {
		return pts
	}
	var out []results.Point
	for _, p := range pts {
		if p.Step == step {
			out = append(out, p)
		}
	}
	return out
}

// has says whether the run has a series with this name prefix.
func (rd *runData) has(prefix string) bool {
	i := sort.SearchStrings(rd.seriesNames, prefix)
	return i < len(rd.seriesNames) && strings.HasPrefix(rd.seriesNames[i], prefix)
}

// stepStart returns when step idx started (zero time if unknown).
func (rd *runData) stepStart(idx int) time.Time {
	for _, st := range rd.Steps {
		if st.Index == idx {
			return st.StartedAt
		}
	}
	return time.Time{}
}

// measureStart returns when step idx's measured interval started.
func (rd *runData) measureStart(idx int) time.Time {
	for _, st := range rd.Steps {
		if st.Index == idx {
			return st.MeasureStart
		}
	}
	return time.Time{}
}

// origin is the time charts of the whole run count seconds from.
func (rd *runData) origin() time.Time {
	t := rd.StartedAt
	for _, pts := range rd.series {
		if len(pts) > 0 && pts[0].T.Before(t) {
			t = pts[0].T
		}
	}
	return t
}
