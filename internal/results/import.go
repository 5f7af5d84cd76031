package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// ImportOptions say how a run from another store is kept in this one.
type ImportOptions struct {
	// Group is the run's results group here (the scenario's).
	Group string
	// Params, when set, replace the run's parameters (a scenario adds its
	// placement).
	Params json.RawMessage
	// Shift is added to every time of the run: the other host's clock
	// offset, negated, so that its steps and series line up with the
	// controller's.
	Shift time.Duration
	// Host names the machine that ran it; "": as the other store says.
	Host string
}

// Import copies run runID of src — a store another host wrote, e.g. a
// remote backup run's, brought back over SSH — into s with its steps,
// series, histograms and documents, under the same run id. It is one
// transaction: the run is there whole or not at all.
func (s *Store) Import(ctx context.Context, src *Store, runID string, o ImportOptions) error {
	r, err := src.Run(ctx, runID)
	if err != nil {
		return err
	}
	steps, err := src.Steps(ctx, r.ID)
	if err != nil {
		return err
	}
	shift := func(t time.Time) int64 { return micros(t.Add(o.Shift)) }
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: importing run %s: %w", r.ID, err)
	}
	defer tx.Rollback()
	params := r.Params
	if o.Params != nil {
		params = o.Params
	}
	host := r.Host
	if o.Host != "" {
		host = o.Host
	}
	var finished sql.NullInt64
	if r.FinishedAt != nil {
		finished = sql.NullInt64{Int64: shift(*r.FinishedAt), Valid: true}
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (id, kind, status, started_us, finished_us, params, summary, grp, host, pid)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Kind, r.Status, shift(r.StartedAt), finished, nullJSON(params), nullJSON(r.Summary), o.Group, host, r.PID)
	if err != nil {
		return fmt.Errorf("results: importing run %s: %w", r.ID, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("results: importing run %s: %w", r.ID, err)
	}
	for _, st := range steps {
		if _, err := tx.ExecContext(ctx, `INSERT INTO steps (rid, idx, name, started_us, measure_start_us, measure_end_us, metrics)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, id, st.Index, st.Name, shift(st.StartedAt), shift(st.MeasureStart),
			shift(st.MeasureEnd), string(st.Metrics)); err != nil {
			return fmt.Errorf("results: importing step %d of run %s: %w", st.Index, r.ID, err)
		}
	}
	names, err := src.SeriesNames(ctx, r.ID)
	if err != nil {
		return err
	}
	for _, name := range names {
		pts, err := src.Points(ctx, r.ID, name, AllSteps)
		if err != nil {
			return err
		}
		for i := range pts {
			pts[i].T = pts[i].T.Add(o.Shift)
		}
		if _, err := addPoints(ctx, tx, r.ID, pts, nil); err != nil {
			return fmt.Errorf("results: importing series %s of run %s: %w", name, r.ID, err)
		}
	}
	if err := copyRows(ctx, src, tx, r.ID, id); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: importing run %s: %w", r.ID, err)
	}
	return nil
}

// copyRows copies a run's histograms and documents, which need no shift.
func copyRows(ctx context.Context, src *Store, tx *sql.Tx, runID string, to int64) error {
	from, err := rid(ctx, src.db, runID)
	if err != nil {
		return err
	}
	copyTable := func(query, insert string) error {
		rows, err := src.db.QueryContext(ctx, query, from)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a, b any
			if err := rows.Scan(&a, &b); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, insert, to, a, b); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	hist, err := src.db.QueryContext(ctx, `SELECT step, name, data FROM histograms WHERE rid = ?`, from)
	if err != nil {
		return fmt.Errorf("results: importing histograms of run %s: %w", runID, err)
	}
	defer hist.Close()
	for hist.Next() {
		var step int
		var name string
		var data []byte
		if err := hist.Scan(&step, &name, &data); err != nil {
			return fmt.Errorf("results: importing histograms of run %s: %w", runID, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO histograms (rid, step, name, data) VALUES (?, ?, ?, ?)`, to, step, name, data); err != nil {
			return fmt.Errorf("results: importing histograms of run %s: %w", runID, err)
		}
	}
	if err := hist.Err(); err != nil {
		return err
	}
	if src.version < 2 {
		return nil
	}
	if err := copyTable(`SELECT name, doc FROM documents WHERE rid = ?`,
		`INSERT INTO documents (rid, name, doc) VALUES (?, ?, ?)`); err != nil {
		return fmt.Errorf("results: importing documents of run %s: %w", runID, err)
	}
	return nil
}

func nullJSON(b json.RawMessage) sql.NullString {
	if len(b) == 0 {
		return sql.NullString{}
	}
	return sql.NullString{String: string(b), Valid: true}
}
