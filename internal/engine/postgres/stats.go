package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/procfs"

	"github.com/tierbench/tierbench/internal/engine"
)

var _ engine.StatsReader = (*DB)(nil)

// Counter and gauge names Stats reports (telemetry turns counters into
// rates). Names are engine-neutral where the idea is.
const (
	StatCommits           = "commits"
	StatRollbacks         = "rollbacks"
	StatBlocksRead        = "blocks_read"
	StatBlocksHit         = "blocks_hit"
	StatTempBytes         = "temp_bytes"
	StatWALBytes          = "wal_bytes"
	StatCheckpointsTimed  = "checkpoints_timed"
	StatCheckpointsReq    = "checkpoints_requested"
	StatBuffersCheckpoint = "buffers_checkpoint"
	StatBuffersBgwriter   = "buffers_bgwriter"
	StatBuffersBackend    = "buffers_backend"
	// I/O time as the server saw it, when it times I/O (track_io_timing,
	// track_wal_io_timing): milliseconds spent reading data blocks, and
	// syncing WAL, with the number of syncs. Absent when not timed.
	StatBlockReadMs = "block_read_ms"
	StatWALSyncMs   = "wal_sync_ms"
	StatWALSyncs    = "wal_syncs"
	// Gauges: active sessions by what they wait on ("CPU" when not
	// waiting), as "active.<wait_event_type>".
	StatActivePrefix = "active."
)

// statsQueries read the counters: pg_stat_database of the connected
// database, WAL bytes (pg_stat_wal from PostgreSQL 14) and the checkpoint
// counters (pg_stat_bgwriter up to 16, pg_stat_checkpointer from 17, where
// backend writes moved to pg_stat_io).
const statsDatabase = `SELECT xact_commit, xact_rollback, blks_read, blks_hit, temp_bytes,
	blk_read_time, current_setting('track_io_timing')::bool, current_setting('server_version_num')::int
	FROM pg_stat_database WHERE datname = current_database()`

const statsWAL = `SELECT wal_bytes, wal_sync, wal_sync_time, current_setting('track_wal_io_timing')::bool FROM pg_stat_wal`

const statsBgwriter16 = `SELECT checkpoints_timed, checkpoints_req, buffers_checkpoint, buffers_clean, buffers_backend
	FROM pg_stat_bgwriter`

const statsBgwriter17 = `SELECT c.num_timed, c.num_requested, c.buffers_written, b.buffers_clean,
	(SELECT coalesce(sum(writes), 0) FROM pg_stat_io WHERE backend_type = 'client backend')
	FROM pg_stat_checkpointer c, pg_stat_bgwriter b`

const statsActive = `SELECT coalesce(wait_event_type, 'CPU'), count(*) FROM pg_stat_activity
	WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid() GROUP BY 1`

// Stats reads the server's counters and gauges on a connection kept open
// for the purpose (reopened after a failure).
func (db *DB) Stats(ctx context.Context) (engine.Stats, error) {
	db.statsMu.Lock()
	defer db.statsMu.Unlock()
	if err := db.keepOpen(ctx, &db.statsConn); err != nil {
		return engine.Stats{}, err
	}
	st, err := readStats(ctx, db.statsConn)
	if err == nil {
		db.own.Add(1) // Counters leaves it out of the database's count
	}
	if err != nil {
		closeKept(&db.statsConn)
		return engine.Stats{}, fmt.Errorf("reading PostgreSQL statistics: %s", db.redact(err))
	}
	return st, nil
}

// readStats reads the statistics in one read-only transaction, so that
// telemetry adds one transaction a second to the database's count (TPM),
// not one per query.
func readStats(ctx context.Context, conn *pgx.Conn) (engine.Stats, error) {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return engine.Stats{}, err
	}
	defer tx.Rollback(ctx)
	st, err := queryStats(ctx, tx)
	if err != nil {
		return st, err
	}
	return st, tx.Commit(ctx)
}

func queryStats(ctx context.Context, conn pgx.Tx) (engine.Stats, error) {
	st := engine.Stats{Counters: map[string]float64{}, Gauges: map[string]float64{}}
	c := st.Counters
	var commits, rollbacks, read, hit, temp int64
	var readMs float64
	var ioTiming bool
	// server_version_num is not among the parameters a server reports to
	// the client before PostgreSQL 16, so it is asked for.
	var version int
	if err := conn.QueryRow(ctx, statsDatabase).Scan(&commits, &rollbacks, &read, &hit, &temp, &readMs, &ioTiming, &version); err != nil {
		return st, err
	}
	c[StatCommits], c[StatRollbacks], c[StatBlocksRead], c[StatBlocksHit], c[StatTempBytes] =
		float64(commits), float64(rollbacks), float64(read), float64(hit), float64(temp)
	if ioTiming {
		c[StatBlockReadMs] = readMs
	}
	if version >= 140000 {
		var wal, syncs, syncMs float64
		var walTiming bool
		if err := conn.QueryRow(ctx, statsWAL).Scan(&wal, &syncs, &syncMs, &walTiming); err != nil {
			return st, err
		}
		c[StatWALBytes] = wal
		if walTiming {
			c[StatWALSyncMs], c[StatWALSyncs] = syncMs, syncs
		}
	}
	q := statsBgwriter16
	if version >= 170000 {
		q = statsBgwriter17
	}
	var timed, req, bufCkpt, bufClean, bufBackend int64
	if err := conn.QueryRow(ctx, q).Scan(&timed, &req, &bufCkpt, &bufClean, &bufBackend); err != nil {
		return st, err
	}
	c[StatCheckpointsTimed], c[StatCheckpointsReq] = float64(timed), float64(req)
	c[StatBuffersCheckpoint], c[StatBuffersBgwriter], c[StatBuffersBackend] = float64(bufCkpt), float64(bufClean), float64(bufBackend)
	rows, err := conn.Query(ctx, statsActive)
	if err != nil {
		return st, err
	}
	var kind string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&kind, &n}, func() error {
		st.Gauges[StatActivePrefix+kind] = float64(n)
		return nil
	})
	return st, err
}

// ServerInfo returns the server's data directory (when the role may read
// it: superusers and pg_read_all_settings) and, when the server runs on this
// host, its postmaster: the parent of the backend of the connection Stats
// keeps open (so that the backend is still there when it is looked up).
func (db *DB) ServerInfo(ctx context.Context) (string, int, error) {
	db.statsMu.Lock()
	defer db.statsMu.Unlock()
	if err := db.keepOpen(ctx, &db.statsConn); err != nil {
		return "", 0, err
	}
	var dir string
	if err := db.statsConn.QueryRow(ctx, `SELECT coalesce(current_setting('data_directory', true), '')`).Scan(&dir); err != nil {
		return "", 0, fmt.Errorf("asking PostgreSQL for its data directory: %s", db.redact(err))
	}
	return dir, postmasterOf(int(db.statsConn.PgConn().PID())), nil
}

// serverProcesses are the names of PostgreSQL's main process.
var serverProcesses = []string{"postgres", "postmaster"}

// postmasterOf returns the postmaster of the backend with PID backend, when
// that backend runs on this host: its parent, if the parent is a
// PostgreSQL process. 0 otherwise.
func postmasterOf(backend int) int {
	p, err := procfs.NewProc(backend)
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil || st.Comm != serverProcesses[0] {
		return 0
	}
	parent, err := procfs.NewProc(st.PPID)
	if err != nil {
		return 0
	}
	pst, err := parent.Stat()
	if err != nil || !slices.Contains(serverProcesses, pst.Comm) {
		return 0
	}
	return st.PPID
}
