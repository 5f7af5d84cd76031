package results

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/units"
)

// Listed is one run as `results list --json` and the HTTP API list it: the
// run, its number of steps and its headline: for a TPC-C run with a step,
// its best NOPM; for a TPC-H run that finished a power test, the mean of
// its power tests' geometric means; for a durability run that finished a
// cycle, its verdict. Headline is the run's outcome in a line, which every
// front end shows in its list of runs.
type Listed struct {
	Run
	Steps      int                `json:"steps"`
	BestNOPM   *float64           `json:"best_nopm,omitempty"`
	GeoMean    *float64           `json:"geomean_seconds,omitempty"`
	Durability *DurabilityVerdict `json:"durability,omitempty"`
	Headline   string             `json:"headline,omitempty"`
}

// DurabilityVerdict is a durability run's in a listing: its cycles, the
// acknowledged New-Orders they lost, and whether every cycle passed.
type DurabilityVerdict struct {
	Cycles int   `json:"cycles"`
	Lost   int64 `json:"lost"`
	OK     bool  `json:"ok"`
}

// ListQuery chooses the runs List returns: of a kind and a group ("":
// any), newest first, Limit of them from Offset (Limit 0: all).
type ListQuery struct {
	Kind, Group   string
	Offset, Limit int
}

// List returns the runs q chooses, each with its step count and best
// NOPM, and how many runs q matches in all. Two queries, whatever the
// number of runs; only the steps of the runs returned are read.
func (s *Store) List(ctx context.Context, q ListQuery) ([]Listed, int, error) {
	where, args := " WHERE (? = '' OR kind = ?) AND (? = '' OR grp = ?)", []any{q.Kind, q.Kind, q.Group, q.Group}
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("results: listing runs: %w", err)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	page := `SELECT rid FROM runs` + where + ` ORDER BY started_us DESC, id DESC LIMIT ? OFFSET ?`
	pageArgs := append(slices.Clone(args), limit, max(q.Offset, 0))
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE rid IN (`+page+`) ORDER BY started_us DESC, id DESC`, pageArgs...)
	if err != nil {
		return nil, 0, fmt.Errorf("results: listing runs: %w", err)
	}
	list := []Listed{} // [] in JSON when there are none
	for rows.Next() {
		r, err := s.scanRun(rows)
		if err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("results: listing runs: %w", err)
		}
		l := Listed{Run: r}
		switch r.Kind {
		case stored.KindTPCH:
			l.GeoMean = tpchGeoMean(r.Summary)
		case stored.KindDurability:
			l.Durability = durabilityVerdict(r.Summary)
		}
		list = append(list, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("results: listing runs: %w", err)
	}
	// A TPC-C step's document holds its NOPM at the top ("nopm"); other
	// kinds' steps have none, and only TPC-C runs show a best.
	rows, err = s.db.QueryContext(ctx, `SELECT r.id, COUNT(*), MAX(CASE WHEN r.kind = ? THEN json_extract(st.metrics, '$.nopm') END)
		FROM steps st JOIN runs r ON r.rid = st.rid WHERE st.rid IN (`+page+`) GROUP BY st.rid`, append([]any{stored.KindTPCC}, pageArgs...)...)
	if err != nil {
		return nil, 0, fmt.Errorf("results: listing runs' steps: %w", err)
	}
	defer rows.Close()
	type agg struct {
		steps int
		best  sql.NullFloat64
	}
	by := map[string]agg{}
	for rows.Next() {
		var id string
		var a agg
		if err := rows.Scan(&id, &a.steps, &a.best); err != nil {
			return nil, 0, fmt.Errorf("results: listing runs' steps: %w", err)
		}
		by[id] = a
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("results: listing runs' steps: %w", err)
	}
	for i := range list {
		a := by[list[i].ID]
		list[i].Steps = a.steps
		if a.best.Valid {
			list[i].BestNOPM = &a.best.Float64
		}
		list[i].Headline = headline(list[i])
	}
	return list, total, nil
}

// Shown is one run as `results show --json` and the HTTP API show it: the
// run, its steps and the names of its series.
type Shown struct {
	Run    Run      `json:"run"`
	Steps  []Step   `json:"steps"`
	Series []string `json:"series"`
}

// Show returns the run id names (an id, a unique prefix or "latest") with
// its steps and series names.
func (s *Store) Show(ctx context.Context, id string) (Shown, error) {
	run, err := s.Run(ctx, id)
	if err != nil {
		return Shown{}, err
	}
	out := Shown{Run: run}
	if out.Steps, err = s.Steps(ctx, run.ID); err != nil {
		return Shown{}, err
	}
	if out.Series, err = s.SeriesNames(ctx, run.ID); err != nil {
		return Shown{}, err
	}
	if out.Steps == nil {
		out.Steps = []Step{}
	}
	return out, nil
}

// tpchGeoMean is a TPC-H run's summary's geometric mean over its power
// tests (nil when none finished, or the run has no summary yet).
func tpchGeoMean(summary json.RawMessage) *float64 {
	var doc struct {
		GeoMean struct {
			Mean float64 `json:"mean"`
			N    int     `json:"n"`
		} `json:"geomean_seconds"`
	}
	if json.Unmarshal(summary, &doc) != nil || doc.GeoMean.N == 0 {
		return nil
	}
	return &doc.GeoMean.Mean
}

// durabilityVerdict is a durability run's summary's total (nil when no
// cycle finished, or the run has no summary yet).
func durabilityVerdict(summary json.RawMessage) *DurabilityVerdict {
	var doc struct {
		Total *DurabilityVerdict `json:"total"`
	}
	if json.Unmarshal(summary, &doc) != nil || doc.Total == nil || doc.Total.Cycles == 0 {
		return nil
	}
	return doc.Total
}

// headline is a listed run's outcome in a line: a TPC-C run's best NOPM
// and a sweep's knee, a TPC-H run's geometric mean, a durability run's
// verdict, a disk run's best point and knees, a backup run's mean times;
// otherwise its steps ("" with none).
func headline(l Listed) string {
	var parts []string
	switch l.Kind {
	case stored.KindTPCC:
		if l.BestNOPM != nil {
			parts = append(parts, "best NOPM "+units.Thousands(int64(math.Round(*l.BestNOPM))))
		}
		var doc struct{ Knee *stored.Knee }
		if json.Unmarshal(l.Summary, &doc) == nil && doc.Knee != nil {
			switch k := doc.Knee; {
			case k.OfferedTPM == 0:
				parts = append(parts, "no rate held")
			case k.NextTPM == 0:
				parts = append(parts, "every rate held, up to "+units.Thousands(int64(k.OfferedTPM))+" TPM offered")
			default:
				parts = append(parts, "knee at "+units.Thousands(int64(k.OfferedTPM))+" TPM offered")
			}
		}
	case stored.KindTPCH:
		if l.GeoMean != nil {
			parts = append(parts, fmt.Sprintf("geometric mean %.3f s", *l.GeoMean))
		}
	case stored.KindDurability:
		if d := l.Durability; d != nil {
			verdict := "passed"
			if !d.OK {
				verdict = "FAILED"
			}
			parts = append(parts, fmt.Sprintf("%s, %s lost, %s", units.Plural(d.Cycles, "cycle", "cycles"), units.Thousands(d.Lost), verdict))
		}
	case stored.KindDisk:
		parts = diskHeadline(l.Summary)
	case stored.KindBackup:
		parts = backupHeadline(l.Summary)
	}
	if len(parts) == 0 && l.Steps > 0 {
		parts = append(parts, units.Plural(l.Steps, "step", "steps"))
	}
	return strings.Join(parts, "; ")
}

// diskHeadline is a disk run's: its points and the best of them by IOPS,
// read and write together, and each knee's offered IOPS (≥ when every rate
// held: the knee is there or above).
func diskHeadline(summary json.RawMessage) []string {
	var doc struct {
		Points []stored.Point
		Knees  []stored.DiskKnee
	}
	if json.Unmarshal(summary, &doc) != nil || len(doc.Points) == 0 {
		return nil
	}
	best := slices.MaxFunc(doc.Points, func(a, b stored.Point) int { return cmp.Compare(a.IOPS(), b.IOPS()) })
	out := []string{fmt.Sprintf("%s, best %s IOPS (%s)", units.Plural(len(doc.Points), "point", "points"),
		units.Thousands(int64(math.Round(best.IOPS()))), best.Name)}
	if len(doc.Knees) > 0 {
		knees := make([]string, len(doc.Knees))
		for i, k := range doc.Knees {
			knees[i] = units.Thousands(int64(k.OfferedIOPS))
			if k.OfferedIOPS > 0 && k.NextIOPS == 0 {
				knees[i] = "≥" + knees[i] // every rate held
			}
		}
		word := "knee"
		if len(knees) > 1 {
			word = "knees"
		}
		out = append(out, word+" at "+strings.Join(knees, "/")+" IOPS offered")
	}
	return out
}

// backupHeadline is a backup run's: each phase's mean time over the
// cycles that finished it.
func backupHeadline(summary json.RawMessage) []string {
	var doc struct{ Stats stored.PhaseStats }
	if json.Unmarshal(summary, &doc) != nil {
		return nil
	}
	var times []string
	n := 0
	for _, phase := range []string{stored.PhaseBackup, stored.PhaseRestore} {
		if s, ok := doc.Stats[phase]["seconds"]; ok && s.N > 0 {
			times = append(times, fmt.Sprintf("%s %.1f s", phase, s.Mean))
			n = max(n, s.N)
		}
	}
	if len(times) == 0 {
		return nil
	}
	return []string{strings.Join(times, ", ") + " (mean of " + units.Plural(n, "cycle", "cycles") + ")"}
}
