package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tierbench/tierbench/internal/stored"
)

// Listed is one run as `results list --json` and the HTTP API list it: the
// run, its number of steps and its headline: for a TPC-C run with a step,
// its best NOPM; for a TPC-H run that finished a power test, the mean of
// its power tests' geometric means; for a durability run that finished a
// cycle, its verdict.
type Listed struct {
	Run
	Steps      int                `json:"steps"`
	BestNOPM   *float64           `json:"best_nopm,omitempty"`
	GeoMean    *float64           `json:"geomean_seconds,omitempty"`
	Durability *DurabilityVerdict `json:"durability,omitempty"`
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
