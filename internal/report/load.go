package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/inventory"
	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// runData is one run as the report needs it: the store's rows decoded into
// the shapes tierbench's commands write (the report reads JSON, it does not
// import the commands).
type runData struct {
	results.Run
	Label string
	Color int // palette index
	Steps []results.Step
	Env   *inventory.Environment // nil: not captured (an older run)
	Check *tpcc.CheckResult      // nil: no consistency check stored

	TPCC   []tpccStep
	Disk   []diskStep
	Backup []backupStep
	// Durability: the fault cycles of a durability run.
	Durability []durabilityCycle
	Params     map[string]any

	seriesNames []string
	series      map[string][]results.Point
}

// tpccStep is what `tpcc run` stores per step (driver.StepResult's JSON).
type tpccStep struct {
	Index        int                        `json:"index"`
	VUs          int                        `json:"vus"`
	TPM          float64                    `json:"tpm"`
	NOPM         float64                    `json:"nopm"`
	ClientTPM    float64                    `json:"client_tpm"`
	ClientNOPM   float64                    `json:"client_nopm"`
	Errors       int64                      `json:"errors"`
	ErrorsByKind map[string]int64           `json:"errors_by_kind"`
	Reconnects   int64                      `json:"reconnects"`
	Txn          map[string]metrics.Summary `json:"txn"`
	Audit        []tpcc.AuditItem           `json:"audit"`
	Seconds      float64                    `json:"measured_seconds"`
	ClientCPUUs  float64                    `json:"client_cpu_us_per_txn"`
	NOPMCheck    struct {
		OK bool `json:"ok"`
	} `json:"nopm_check"`
	Host   map[string]float64 `json:"host"`
	Device map[string]float64 `json:"device"`
	DB     map[string]float64 `json:"db"`
}

// dirStats is one direction of a fio point (fio.DirStats's JSON).
type dirStats struct {
	IOPS   float64 `json:"iops"`
	MBps   float64 `json:"mbps"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
	IOs    float64 `json:"ios"`
}

// diskStep is what `disk run` stores per point.
type diskStep struct {
	Index     int                `json:"-"`
	Name      string             `json:"name"`
	BS        string             `json:"bs"`
	BSBytes   float64            `json:"bs_bytes"`
	RW        string             `json:"rw"`
	RWMixRead int                `json:"rwmix_read"`
	IODepth   int                `json:"iodepth"`
	Jobs      int                `json:"jobs"`
	Read      *dirStats          `json:"read"`
	Write     *dirStats          `json:"write"`
	UsrCPU    float64            `json:"usr_cpu_pct"`
	SysCPU    float64            `json:"sys_cpu_pct"`
	Seconds   float64            `json:"seconds"`
	Host      map[string]float64 `json:"host"`
	Device    map[string]float64 `json:"device"`
}

// iops, mbps: both directions together.
func (d diskStep) iops() float64 { return d.Read.get().IOPS + d.Write.get().IOPS }
func (d diskStep) mbps() float64 { return d.Read.get().MBps + d.Write.get().MBps }

// meanMs is the mean completion latency over both directions' I/Os.
func (d diskStep) meanMs() float64 {
	r, w := d.Read.get(), d.Write.get()
	if r.IOPS+w.IOPS == 0 {
		return math.NaN()
	}
	return (r.MeanMs*r.IOPS + w.MeanMs*w.IOPS) / (r.IOPS + w.IOPS)
}

// p99Ms is the worse direction's p99 (the two are separate distributions).
func (d diskStep) p99Ms() float64 {
	return max(d.Read.get().P99Ms, d.Write.get().P99Ms)
}

func (d *dirStats) get() dirStats {
	if d == nil {
		return dirStats{}
	}
	return *d
}

// point returns the run's storage point of this name (names are unique
// within a run).
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

// backupStep is one backup or restore cycle, as `backup run` (a later
// scenario step) stores it: a step per phase of each cycle.
type backupStep struct {
	Cycle   int     `json:"cycle"`
	Phase   string  `json:"phase"` // "backup" or "restore"
	Method  string  `json:"method"`
	Seconds float64 `json:"seconds"`
	Bytes   float64 `json:"bytes"`
	MBps    float64 `json:"mbps"`
}

// load reads the runs, in the order asked, with their steps and series.
func load(ctx context.Context, store *results.Store, ids []string, group string, labels map[string]string) ([]*runData, error) {
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
		rd := &runData{Run: r, Label: r.ID, Color: len(runs), series: map[string][]results.Point{}}
		if err := rd.read(ctx, store); err != nil {
			return nil, err
		}
		if l := rd.paramString("label"); l != "" {
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
	if len(rd.Run.Params) > 0 {
		_ = json.Unmarshal(rd.Run.Params, &rd.Params) // params are informative only
	}
	for _, st := range rd.Steps {
		switch rd.Kind {
		case "tpcc":
			s, err := decodeStep[tpccStep](rd, st)
			if err != nil {
				return err
			}
			s.Index = st.Index
			rd.TPCC = append(rd.TPCC, s)
		case "disk":
			s, err := decodeStep[diskStep](rd, st)
			if err != nil {
				return err
			}
			s.Index = st.Index
			rd.Disk = append(rd.Disk, s)
		case "backup":
			s, err := decodeStep[backupStep](rd, st)
			if err != nil {
				return err
			}
			rd.Backup = append(rd.Backup, s)
		case "durability":
			s, err := decodeStep[durabilityCycle](rd, st)
			if err != nil {
				return err
			}
			rd.Durability = append(rd.Durability, s)
		}
	}
	if rd.Env, err = document[inventory.Environment](ctx, store, rd.ID, results.DocEnvironment); err != nil {
		return err
	}
	if rd.Check, err = document[tpcc.CheckResult](ctx, store, rd.ID, results.DocCheck); err != nil {
		return err
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

// paramString returns a parameter as text ("" when absent).
func (rd *runData) paramString(key string) string {
	v, ok := rd.Params[key]
	if !ok || v == nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return trimFloat(x)
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ",")
	}
	return ""
}
