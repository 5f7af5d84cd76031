package results

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tierbench/tierbench/internal/stored"
)

// Listed is one run as `results list --json` and the HTTP API list it: the
// run, its number of steps and, for a TPC-C run with a step, its best NOPM.
type Listed struct {
	Run
	Steps    int      `json:"steps"`
	BestNOPM *float64 `json:"best_nopm,omitempty"`
}

// List returns every run, newest first, each with its step count and best
// NOPM, in two queries whatever the number of runs.
func (s *Store) List(ctx context.Context) ([]Listed, error) {
	runs, err := s.Runs(ctx)
	if err != nil {
		return nil, err
	}
	type agg struct {
		steps int
		best  sql.NullFloat64
	}
	// A TPC-C step's document holds its NOPM at the top ("nopm"); other
	// kinds' steps have none, and only TPC-C runs show a best.
	rows, err := s.db.QueryContext(ctx, `SELECT r.id, r.kind, COUNT(*), MAX(json_extract(st.metrics, '$.nopm'))
		FROM steps st JOIN runs r ON r.rid = st.rid GROUP BY st.rid`)
	if err != nil {
		return nil, fmt.Errorf("results: listing runs' steps: %w", err)
	}
	defer rows.Close()
	by := map[string]agg{}
	for rows.Next() {
		var id, kind string
		var a agg
		if err := rows.Scan(&id, &kind, &a.steps, &a.best); err != nil {
			return nil, fmt.Errorf("results: listing runs' steps: %w", err)
		}
		if kind != stored.KindTPCC {
			a.best.Valid = false
		}
		by[id] = a
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: listing runs' steps: %w", err)
	}
	list := make([]Listed, len(runs))
	for i, r := range runs {
		a := by[r.ID]
		list[i] = Listed{Run: r, Steps: a.steps}
		if a.best.Valid {
			list[i].BestNOPM = &a.best.Float64
		}
	}
	return list, nil
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
