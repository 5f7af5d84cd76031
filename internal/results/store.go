// Package results is tierbench's results store: one SQLite file per results
// directory holding runs, their steps, per-second series and histograms.
// Writers stream into it while a benchmark runs; `results`, `report` and
// scripts read it afterwards. It knows no database engine.
package results

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// FileName is the store's file inside a results directory.
const FileName = "tierbench.db"

// Run statuses. StatusIncomplete is never written: it is what a run still
// marked running reads as once its process is gone (killed, power cut).
const (
	StatusRunning     = "running"
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
	StatusIncomplete  = "incomplete"
)

// Step selectors for Points and AddPoints.
const (
	NoStep   = -1 // a point not tied to a step
	AllSteps = -2 // Points: every step, NoStep included
)

var (
	// ErrNotFound is returned when a run, step histogram or series is absent.
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous is returned when a run id prefix matches several runs.
	ErrAmbiguous = errors.New("ambiguous run id prefix")
	// ErrNoStore is returned by OpenReadOnly when the directory holds no store.
	ErrNoStore = errors.New("no results store")
)

// schemaVersion is stored in PRAGMA user_version. Bump it with a migration
// in migrate when the schema changes; a store with a newer version is
// refused rather than misread.
const schemaVersion = 2

// Times are integer Unix microseconds (UTC); JSON documents are TEXT.
// runs.rid is the compact key the bulky tables (points) refer to; runs.id is
// the sortable public id.
const schemaV1 = `
CREATE TABLE IF NOT EXISTS runs (
	rid         INTEGER PRIMARY KEY,
	id          TEXT    NOT NULL UNIQUE,
	kind        TEXT    NOT NULL,
	status      TEXT    NOT NULL,
	started_us  INTEGER NOT NULL,
	finished_us INTEGER,
	params      TEXT,
	summary     TEXT,
	grp         TEXT    NOT NULL DEFAULT '',
	host        TEXT    NOT NULL,
	pid         INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_started ON runs (started_us);
CREATE TABLE IF NOT EXISTS steps (
	rid              INTEGER NOT NULL REFERENCES runs (rid),
	idx              INTEGER NOT NULL,
	name             TEXT    NOT NULL,
	started_us       INTEGER NOT NULL,
	measure_start_us INTEGER NOT NULL,
	measure_end_us   INTEGER NOT NULL,
	metrics          TEXT    NOT NULL,
	PRIMARY KEY (rid, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS series (
	sid  INTEGER PRIMARY KEY,
	rid  INTEGER NOT NULL REFERENCES runs (rid),
	name TEXT    NOT NULL,
	UNIQUE (rid, name)
);
CREATE TABLE IF NOT EXISTS points (
	sid   INTEGER NOT NULL REFERENCES series (sid),
	step  INTEGER NOT NULL,
	t_us  INTEGER NOT NULL,
	value REAL
);
CREATE INDEX IF NOT EXISTS points_series ON points (sid, step, t_us);
CREATE TABLE IF NOT EXISTS histograms (
	rid  INTEGER NOT NULL REFERENCES runs (rid),
	step INTEGER NOT NULL,
	name TEXT    NOT NULL,
	data BLOB    NOT NULL,
	PRIMARY KEY (rid, step, name)
) WITHOUT ROWID;
`

// schemaV2 adds documents attached to a run by name: its environment
// inventory, a consistency check, a backup cycle's record.
const schemaV2 = `
CREATE TABLE IF NOT EXISTS documents (
	rid  INTEGER NOT NULL REFERENCES runs (rid),
	name TEXT    NOT NULL,
	doc  TEXT    NOT NULL,
	PRIMARY KEY (rid, name)
) WITHOUT ROWID;
`

// Store is an open results store. It is safe for use from several
// goroutines.
type Store struct {
	db       *sql.DB
	path     string
	host     string
	readOnly bool
	version  int // schema version, when older than schemaVersion (read-only)
}

// Open opens (creating if needed) the store in dir, creating dir too. The
// file is in WAL mode with synchronous=FULL: once a write method returns, a
// SIGKILL or a power cut cannot take it back.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results store: %w", err)
	}
	return open(dir, false)
}

// OpenReadOnly opens an existing store in dir for reading; it creates
// nothing, and returns an error wrapping ErrNoStore when there is no store.
func OpenReadOnly(dir string) (*Store, error) {
	p := filepath.Join(dir, FileName)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w in %s", ErrNoStore, dir)
	}
	return open(dir, true)
}

// openBusyFor is how long opening the store retries while SQLite answers
// SQLITE_BUSY: runs that start together (a scenario step's instances) open
// it at once, and setting up the WAL can refuse a second opener without
// waiting on busy_timeout. Once open, busy_timeout does the waiting.
const openBusyFor = 30 * time.Second

func open(dir string, readOnly bool) (*Store, error) {
	deadline := time.Now().Add(openBusyFor)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		s, err := openOnce(dir, readOnly)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().Add(wait).After(deadline) {
			return s, err
		}
		time.Sleep(wait)
	}
}

func openOnce(dir string, readOnly bool) (*Store, error) {
	abs, err := filepath.Abs(filepath.Join(dir, FileName))
	if err != nil {
		return nil, fmt.Errorf("results store: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Set("mode", "ro")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		// Write transactions take the write lock at BEGIN, so two writers
		// (two processes) wait on busy_timeout instead of one failing with
		// SQLITE_BUSY when it upgrades a read lock.
		q.Set("_txlock", "immediate")
	}
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("results store %s: %w", abs, err)
	}
	if !readOnly {
		// One connection: writes from several goroutines queue in
		// database/sql instead of contending for SQLite's file lock.
		db.SetMaxOpenConns(1)
	}
	s := &Store{db: db, path: abs, readOnly: readOnly, version: schemaVersion}
	s.host, _ = os.Hostname()
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("results store %s: %w", abs, err)
	}
	return s, nil
}

// migrate checks the schema version and creates or upgrades the schema.
func (s *Store) migrate(ctx context.Context) error {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	switch {
	case v > schemaVersion:
		return fmt.Errorf("schema version %d is newer than this tierbench understands (%d); use a newer tierbench", v, schemaVersion)
	case v == schemaVersion:
		return nil
	case s.readOnly && v >= 1:
		// An older store reads as it is; what it lacks reads as absent.
		s.version = v
		return nil
	case s.readOnly:
		// Empty: another tierbench may be creating it this moment.
		return fmt.Errorf("%w yet: %s is empty (schema version %d), or not a tierbench results store", ErrNoStore, s.path, v)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Another process may have created the schema while this one waited
	// for the write lock.
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v == schemaVersion {
		return nil
	}
	if v < 1 {
		if _, err := tx.ExecContext(ctx, schemaV1); err != nil {
			return fmt.Errorf("creating schema: %w", err)
		}
	}
	if v < 2 {
		if _, err := tx.ExecContext(ctx, schemaV2); err != nil {
			return fmt.Errorf("upgrading schema to version 2: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// Path is the store file's absolute path.
func (s *Store) Path() string { return s.path }

// Run is one benchmark run: a TPC-C VU sequence, a disk profile, a monitor
// session, a scenario's part.
type Run struct {
	ID         string          `json:"id"`
	Kind       string          `json:"kind"`
	Status     string          `json:"status"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
	Params     json.RawMessage `json:"params,omitempty"`
	Summary    json.RawMessage `json:"summary,omitempty"`
	Group      string          `json:"group,omitempty"`
	Host       string          `json:"host"`
	PID        int             `json:"pid"`
}

// Step is one step of a run, e.g. one VU count of a TPC-C sequence.
type Step struct {
	RunID        string          `json:"run_id"`
	Index        int             `json:"index"`
	Name         string          `json:"name"`
	StartedAt    time.Time       `json:"started_at"`
	MeasureStart time.Time       `json:"measure_start"`
	MeasureEnd   time.Time       `json:"measure_end"`
	Metrics      json.RawMessage `json:"metrics"`

	// What AddStep stores with the step, in the same transaction (Steps
	// does not read them back: see Points and Histogram).
	Points     []Point           `json:"-"` // of this run; each names its step
	Histograms map[string][]byte `json:"-"` // by name, of this step
}

// Point is one sample of a named series. Step is the step it belongs to, or
// NoStep.
type Point struct {
	Name  string
	Step  int
	T     time.Time
	Value float64
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// NewRunID returns a new run id, for a run recorded later under it
// (CreateRunAs): e.g. one a queue hands out before the run starts.
func NewRunID() string { return newRunID(time.Now()) }

// newRunID returns a sortable id: UTC time to the second and 4 random hex
// digits, e.g. "20261121-034512-3f9a".
func newRunID(now time.Time) string {
	var b [2]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// jsonText marshals v for a TEXT column; nil (or JSON null) is SQL NULL.
func jsonText(v any) (sql.NullString, error) {
	if v == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return sql.NullString{}, err
	}
	if string(b) == "null" {
		return sql.NullString{}, nil
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// CreateRun records a new run with status running, this process's PID and
// this host's name. params is marshalled to JSON (nil: none).
func (s *Store) CreateRun(ctx context.Context, kind, group string, params any) (Run, error) {
	return s.CreateRunAs(ctx, "", kind, group, params)
}

// CreateRunAs is CreateRun under a given id (from NewRunID; "": a new
// one). An id already in the store is an error.
func (s *Store) CreateRunAs(ctx context.Context, id, kind, group string, params any) (Run, error) {
	if strings.TrimSpace(kind) == "" {
		return Run{}, errors.New("results: CreateRun needs a kind")
	}
	p, err := jsonText(params)
	if err != nil {
		return Run{}, fmt.Errorf("results: run params: %w", err)
	}
	now := time.Now()
	r := Run{
		Kind:      kind,
		Status:    StatusRunning,
		StartedAt: fromMicros(micros(now)),
		Group:     group,
		Host:      s.host,
		PID:       os.Getpid(),
	}
	if p.Valid {
		r.Params = json.RawMessage(p.String)
	}
	// Two runs started in the same second collide with probability 1/65536;
	// a fresh suffix settles it.
	for range 8 {
		if r.ID = id; id == "" {
			r.ID = newRunID(now)
		}
		res, err := s.db.ExecContext(ctx, `INSERT INTO runs (id, kind, status, started_us, params, grp, host, pid)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			r.ID, r.Kind, r.Status, micros(r.StartedAt), p, r.Group, r.Host, r.PID)
		if err != nil {
			return Run{}, fmt.Errorf("results: creating run: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return r, nil
		}
		if id != "" {
			return Run{}, fmt.Errorf("results: creating run: the store already has a run %s", id)
		}
	}
	return Run{}, errors.New("results: creating run: no free run id")
}

// FinishRun sets a run's final status (complete, interrupted or failed), its
// finish time and its summary (marshalled to JSON; nil: none).
func (s *Store) FinishRun(ctx context.Context, runID, status string, summary any) error {
	switch status {
	case StatusComplete, StatusInterrupted, StatusFailed:
	default:
		return fmt.Errorf("results: FinishRun: status %q is not one of %s, %s, %s", status, StatusComplete, StatusInterrupted, StatusFailed)
	}
	sum, err := jsonText(summary)
	if err != nil {
		return fmt.Errorf("results: run summary: %w", err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?, finished_us = ?, summary = ? WHERE id = ?`,
		status, micros(time.Now()), sum, runID)
	if err != nil {
		return fmt.Errorf("results: finishing run %s: %w", runID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("results: run %s: %w", runID, ErrNotFound)
	}
	return nil
}

// queryer is what *sql.DB and *sql.Tx have in common here.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// rid returns the internal key of the run with exactly this id.
func rid(ctx context.Context, q queryer, runID string) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT rid FROM runs WHERE id = ?`, runID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("results: run %s: %w", runID, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("results: run %s: %w", runID, err)
	}
	return id, nil
}

// AddStep records a finished step, with its Points and Histograms, in one
// transaction: a kill (or a failure) leaves the step whole or absent, never
// a step without its histograms. Metrics must be a JSON document (empty:
// {}). A step index is written once; writing it again is an error.
func (s *Store) AddStep(ctx context.Context, st Step) error {
	metrics := st.Metrics
	if len(metrics) == 0 {
		metrics = json.RawMessage("{}")
	}
	if !json.Valid(metrics) {
		return fmt.Errorf("results: step %d of run %s: metrics are not valid JSON", st.Index, st.RunID)
	}
	if st.Index < 0 {
		return fmt.Errorf("results: step index %d of run %s is negative", st.Index, st.RunID)
	}
	for name := range st.Histograms {
		if name == "" {
			return fmt.Errorf("results: step %d of run %s: a histogram has no name", st.Index, st.RunID)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: step %d of run %s: %w", st.Index, st.RunID, err)
	}
	defer tx.Rollback()
	id, err := rid(ctx, tx, st.RunID)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO steps (rid, idx, name, started_us, measure_start_us, measure_end_us, metrics)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, st.Index, st.Name, micros(st.StartedAt), micros(st.MeasureStart), micros(st.MeasureEnd), string(metrics))
	if err != nil {
		return fmt.Errorf("results: step %d of run %s: %w", st.Index, st.RunID, err)
	}
	if len(st.Points) > 0 {
		if _, err := addPoints(ctx, tx, st.RunID, st.Points, nil); err != nil {
			return fmt.Errorf("results: step %d of run %s: %w", st.Index, st.RunID, err)
		}
	}
	for name, data := range st.Histograms {
		if data == nil {
			data = []byte{}
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO histograms (rid, step, name, data) VALUES (?, ?, ?, ?)`,
			id, st.Index, name, data); err != nil {
			return fmt.Errorf("results: histogram %s of step %d of run %s: %w", name, st.Index, st.RunID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: step %d of run %s: %w", st.Index, st.RunID, err)
	}
	return nil
}

// AddPoints stores points of one run in one transaction.
func (s *Store) AddPoints(ctx context.Context, runID string, pts []Point) error {
	return s.addPointsKnown(ctx, runID, pts, map[string]int64{})
}

// addPointsKnown is AddPoints with the ids of the run's series already
// looked up (by name), which it adds to: a SeriesWriter keeps them from
// one flush to the next, sparing two statements a series a second.
func (s *Store) addPointsKnown(ctx context.Context, runID string, pts []Point, known map[string]int64) error {
	if len(pts) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: points of run %s: %w", runID, err)
	}
	defer tx.Rollback()
	added, err := addPoints(ctx, tx, runID, pts, known)
	if err != nil {
		return fmt.Errorf("results: points of run %s: %w", runID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: points of run %s: %w", runID, err)
	}
	maps.Copy(known, added) // only now: a series created by a rolled-back transaction is gone
	return nil
}

// addPoints writes pts in tx. known maps series names to ids already in
// the store; it returns the ids it looked up or created besides.
func addPoints(ctx context.Context, tx *sql.Tx, runID string, pts []Point, known map[string]int64) (map[string]int64, error) {
	added := map[string]int64{}
	var newSeries, getSeries *sql.Stmt
	r := int64(-1)
	seriesID := func(name string) (int64, error) {
		if sid, ok := known[name]; ok {
			return sid, nil
		}
		if sid, ok := added[name]; ok {
			return sid, nil
		}
		if newSeries == nil {
			var err error
			if r, err = rid(ctx, tx, runID); err != nil {
				return 0, err
			}
			if newSeries, err = tx.PrepareContext(ctx, `INSERT INTO series (rid, name) VALUES (?, ?) ON CONFLICT (rid, name) DO NOTHING`); err != nil {
				return 0, err
			}
			if getSeries, err = tx.PrepareContext(ctx, `SELECT sid FROM series WHERE rid = ? AND name = ?`); err != nil {
				return 0, err
			}
		}
		if _, err := newSeries.ExecContext(ctx, r, name); err != nil {
			return 0, err
		}
		var sid int64
		if err := getSeries.QueryRowContext(ctx, r, name).Scan(&sid); err != nil {
			return 0, err
		}
		added[name] = sid
		return sid, nil
	}
	defer func() {
		if newSeries != nil {
			newSeries.Close()
		}
		if getSeries != nil {
			getSeries.Close()
		}
	}()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO points (sid, step, t_us, value) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	defer ins.Close()
	for _, p := range pts {
		if p.Name == "" {
			return nil, errors.New("a point has no series name")
		}
		if p.Step < NoStep {
			return nil, fmt.Errorf("series %s: step %d is not a step (use %d for none)", p.Name, p.Step, NoStep)
		}
		sid, err := seriesID(p.Name)
		if err != nil {
			return nil, err
		}
		// SQLite stores NaN as NULL; Points reads NULL back as NaN.
		v := sql.NullFloat64{Float64: p.Value, Valid: !math.IsNaN(p.Value)}
		if _, err := ins.ExecContext(ctx, sid, p.Step, micros(p.T), v); err != nil {
			return nil, err
		}
	}
	return added, nil
}

// AddHistogram stores an encoded histogram (e.g. HDR) of a step (or NoStep),
// replacing one of the same name.
func (s *Store) AddHistogram(ctx context.Context, runID string, step int, name string, data []byte) error {
	if name == "" {
		return fmt.Errorf("results: histogram of run %s has no name", runID)
	}
	if data == nil {
		data = []byte{}
	}
	id, err := rid(ctx, s.db, runID)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT OR REPLACE INTO histograms (rid, step, name, data) VALUES (?, ?, ?, ?)`,
		id, step, name, data)
	if err != nil {
		return fmt.Errorf("results: histogram %s of run %s: %w", name, runID, err)
	}
	return nil
}

const runColumns = `id, kind, status, started_us, finished_us, params, summary, grp, host, pid`

type scanner interface{ Scan(dest ...any) error }

func (s *Store) scanRun(sc scanner) (Run, error) {
	var (
		r           Run
		started     int64
		finished    sql.NullInt64
		params, sum sql.NullString
	)
	if err := sc.Scan(&r.ID, &r.Kind, &r.Status, &started, &finished, &params, &sum, &r.Group, &r.Host, &r.PID); err != nil {
		return Run{}, err
	}
	r.StartedAt = fromMicros(started)
	if finished.Valid {
		t := fromMicros(finished.Int64)
		r.FinishedAt = &t
	}
	if params.Valid {
		r.Params = json.RawMessage(params.String)
	}
	if sum.Valid {
		r.Summary = json.RawMessage(sum.String)
	}
	// A run still marked running whose process is gone was killed: it
	// reads as incomplete. The row is left alone (a reader may be read-
	// only, and the truth is "nobody finished it"). Another host's PIDs
	// say nothing here, so its runs stay as written.
	if r.Status == StatusRunning && r.Host == s.host && !pidAlive(r.PID) {
		r.Status = StatusIncomplete
	}
	return r, nil
}

// Runs returns every run, newest first.
func (s *Store) Runs(ctx context.Context) ([]Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+` FROM runs ORDER BY started_us DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("results: listing runs: %w", err)
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		r, err := s.scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("results: listing runs: %w", err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: listing runs: %w", err)
	}
	return runs, nil
}

// Run returns one run by its id, a unique prefix of it, or "latest" (the
// newest run). It returns an error wrapping ErrNotFound when nothing
// matches and ErrAmbiguous when a prefix matches several runs.
func (s *Store) Run(ctx context.Context, id string) (Run, error) {
	if id == "" {
		return Run{}, fmt.Errorf("results: empty run id: %w", ErrNotFound)
	}
	if id == "latest" {
		r, err := s.scanRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs ORDER BY started_us DESC, id DESC LIMIT 1`))
		if errors.Is(err, sql.ErrNoRows) {
			return Run{}, fmt.Errorf("results: no runs yet: %w", ErrNotFound)
		}
		if err != nil {
			return Run{}, fmt.Errorf("results: latest run: %w", err)
		}
		return r, nil
	}
	r, err := s.scanRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("results: run %s: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 3`, len(id), id)
	if err != nil {
		return Run{}, fmt.Errorf("results: run %s: %w", id, err)
	}
	defer rows.Close()
	var found []Run
	for rows.Next() {
		r, err := s.scanRun(rows)
		if err != nil {
			return Run{}, fmt.Errorf("results: run %s: %w", id, err)
		}
		found = append(found, r)
	}
	if err := rows.Err(); err != nil {
		return Run{}, fmt.Errorf("results: run %s: %w", id, err)
	}
	switch len(found) {
	case 0:
		return Run{}, fmt.Errorf("results: run %s: %w", id, ErrNotFound)
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, r := range found {
		ids[i] = r.ID
	}
	more := ""
	if len(found) > 2 {
		ids, more = ids[:2], ", …"
	}
	return Run{}, fmt.Errorf("results: run %s matches %s%s: %w", id, strings.Join(ids, ", "), more, ErrAmbiguous)
}

// Steps returns a run's steps in index order.
func (s *Store) Steps(ctx context.Context, runID string) ([]Step, error) {
	r, err := rid(ctx, s.db, runID)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT idx, name, started_us, measure_start_us, measure_end_us, metrics
		FROM steps WHERE rid = ? ORDER BY idx`, r)
	if err != nil {
		return nil, fmt.Errorf("results: steps of run %s: %w", runID, err)
	}
	defer rows.Close()
	var steps []Step
	for rows.Next() {
		st := Step{RunID: runID}
		var started, ms, me int64
		var metrics string
		if err := rows.Scan(&st.Index, &st.Name, &started, &ms, &me, &metrics); err != nil {
			return nil, fmt.Errorf("results: steps of run %s: %w", runID, err)
		}
		st.StartedAt, st.MeasureStart, st.MeasureEnd = fromMicros(started), fromMicros(ms), fromMicros(me)
		st.Metrics = json.RawMessage(metrics)
		steps = append(steps, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: steps of run %s: %w", runID, err)
	}
	return steps, nil
}

// Points returns the points of one series of a run, for one step or, with
// step AllSteps, for all of them; ordered by step, then time.
func (s *Store) Points(ctx context.Context, runID, name string, step int) ([]Point, error) {
	r, err := rid(ctx, s.db, runID)
	if err != nil {
		return nil, err
	}
	q := `SELECT p.step, p.t_us, p.value FROM points p JOIN series s ON s.sid = p.sid
		WHERE s.rid = ? AND s.name = ?`
	args := []any{r, name}
	if step != AllSteps {
		q += ` AND p.step = ?`
		args = append(args, step)
	}
	q += ` ORDER BY p.step, p.t_us`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("results: series %s of run %s: %w", name, runID, err)
	}
	defer rows.Close()
	var pts []Point
	for rows.Next() {
		p := Point{Name: name}
		var t int64
		var v sql.NullFloat64
		if err := rows.Scan(&p.Step, &t, &v); err != nil {
			return nil, fmt.Errorf("results: series %s of run %s: %w", name, runID, err)
		}
		p.T = fromMicros(t)
		p.Value = v.Float64
		if !v.Valid {
			p.Value = math.NaN()
		}
		pts = append(pts, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: series %s of run %s: %w", name, runID, err)
	}
	return pts, nil
}

// SeriesNames returns the names of a run's series, sorted.
func (s *Store) SeriesNames(ctx context.Context, runID string) ([]string, error) {
	r, err := rid(ctx, s.db, runID)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM series WHERE rid = ? ORDER BY name`, r)
	if err != nil {
		return nil, fmt.Errorf("results: series of run %s: %w", runID, err)
	}
	defer rows.Close()
	names := []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("results: series of run %s: %w", runID, err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: series of run %s: %w", runID, err)
	}
	return names, nil
}

// Histogram returns a stored histogram, or an error wrapping ErrNotFound.
func (s *Store) Histogram(ctx context.Context, runID string, step int, name string) ([]byte, error) {
	r, err := rid(ctx, s.db, runID)
	if err != nil {
		return nil, err
	}
	var data []byte
	err = s.db.QueryRowContext(ctx, `SELECT data FROM histograms WHERE rid = ? AND step = ? AND name = ?`, r, step, name).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("results: histogram %s of step %d of run %s: %w", name, step, runID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("results: histogram %s of run %s: %w", name, runID, err)
	}
	return data, nil
}

// Well-known document names.
const (
	DocEnvironment = "environment" // stored.Environment, captured at the start
	DocCheck       = "check"       // a consistency check after the run
	DocThresholds  = "thresholds"  // []threshold.Verdict: the run's thresholds judged per step or point
)

// SetDocument attaches a JSON document (v marshalled) to a run under name,
// replacing one of the same name.
func (s *Store) SetDocument(ctx context.Context, runID, name string, v any) error {
	if name == "" {
		return fmt.Errorf("results: document of run %s has no name", runID)
	}
	doc, err := jsonText(v)
	if err != nil {
		return fmt.Errorf("results: document %s of run %s: %w", name, runID, err)
	}
	if !doc.Valid {
		doc = sql.NullString{String: "null", Valid: true}
	}
	id, err := rid(ctx, s.db, runID)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT OR REPLACE INTO documents (rid, name, doc) VALUES (?, ?, ?)`, id, name, doc.String)
	if err != nil {
		return fmt.Errorf("results: document %s of run %s: %w", name, runID, err)
	}
	return nil
}

// Document returns a run's document by name, or an error wrapping
// ErrNotFound.
func (s *Store) Document(ctx context.Context, runID, name string) (json.RawMessage, error) {
	id, err := rid(ctx, s.db, runID)
	if err != nil {
		return nil, err
	}
	if s.version < 2 {
		return nil, fmt.Errorf("results: document %s of run %s: %w", name, runID, ErrNotFound)
	}
	var doc string
	err = s.db.QueryRowContext(ctx, `SELECT doc FROM documents WHERE rid = ? AND name = ?`, id, name).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("results: document %s of run %s: %w", name, runID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("results: document %s of run %s: %w", name, runID, err)
	}
	return json.RawMessage(doc), nil
}
