package mariadb

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"

	"github.com/tierbench/tierbench/internal/engine"
)

var _ engine.StatsReader = (*DB)(nil)

// Counter and gauge names Stats reports (telemetry turns counters into
// rates). Where a name of the postgres engine means the same, it is the
// same name, so the derived ratios (cache hit %, read latency) and the
// monitor's columns work for both.
const (
	// Transactions ended by COMMIT or ROLLBACK statements, also inside
	// stored procedures (Com_commit, Com_rollback); a statement that
	// commits by autocommit is not counted.
	StatCommits   = "commits"
	StatRollbacks = "rollbacks"
	// Buffer-pool page reads that missed and read the page from disk
	// (Innodb_buffer_pool_reads), and those served from the pool
	// (Innodb_buffer_pool_read_requests minus the misses).
	StatBlocksRead = "blocks_read"
	StatBlocksHit  = "blocks_hit"
	// InnoDB's I/O to its data files (the tablespaces and the doublewrite
	// buffer): read and write operations and bytes (Innodb_data_reads,
	// Innodb_data_writes, Innodb_data_read, Innodb_data_written), and
	// fsyncs (Innodb_data_fsyncs).
	StatDataReads        = "data_reads"
	StatDataWrites       = "data_writes"
	StatDataReadBytes    = "data_read_bytes"
	StatDataWrittenBytes = "data_written_bytes"
	StatDataFsyncs       = "data_fsyncs"
	// Redo log: bytes written (Innodb_os_log_written; the postgres
	// engine's name for WAL bytes), write requests (Innodb_log_writes),
	// fsyncs (Innodb_os_log_fsyncs, MySQL and MariaDB before 10.8 only),
	// and the times a transaction waited for room in the log buffer
	// (Innodb_log_waits; innodb_log_buffer_size too small when it grows).
	StatWALBytes  = "wal_bytes"
	StatWALWrites = "wal_writes"
	StatWALSyncs  = "wal_syncs"
	StatLogWaits  = "log_waits"
	// Row-lock waits and the milliseconds spent in them
	// (Innodb_row_lock_waits, Innodb_row_lock_time).
	StatRowLockWaits  = "row_lock_waits"
	StatRowLockTimeMs = "row_lock_time_ms"
	// I/O time as the server saw it, from performance_schema's
	// file_summary_by_event_name, when performance_schema is on and the
	// file instrument is enabled and timed (absent otherwise): reading,
	// writing and syncing the data files (wait/io/file/innodb/
	// innodb_data_file), and writing and syncing the redo log
	// (innodb_log_file; MySQL only: MariaDB 10.8 and later do not
	// instrument the redo log). Asynchronous I/O is timed to its
	// submission only, so block_read_ms is the synchronous reads' time:
	// the reads of pages a query waits for, which are blocks_read less
	// read-ahead.
	StatBlockReadMs = "block_read_ms"
	StatDataWriteMs = "data_write_ms"
	StatDataSyncMs  = "data_sync_ms"
	StatWALWriteMs  = "wal_write_ms"
	StatWALSyncMs   = "wal_sync_ms"

	// Gauges: buffer-pool pages (Innodb_buffer_pool_pages_dirty, _total,
	// _free), the redo not yet checkpointed in bytes
	// (Innodb_checkpoint_age, MariaDB only), and client threads connected
	// and running a statement (Threads_connected, Threads_running; both
	// without Stats' own connection).
	StatPagesDirty       = "pages_dirty"
	StatPagesTotal       = "pages_total"
	StatPagesFree        = "pages_free"
	StatCheckpointAge    = "checkpoint_age_bytes"
	StatThreadsConnected = "threads_connected"
	StatThreadsRunning   = "threads_running"
)

// statusCounters and statusGauges map SHOW GLOBAL STATUS variables to the
// names above; a variable this server lacks is left out.
var statusCounters = map[string]string{
	"Com_commit":               StatCommits,
	"Com_rollback":             StatRollbacks,
	"Innodb_buffer_pool_reads": StatBlocksRead,
	"Innodb_data_reads":        StatDataReads,
	"Innodb_data_writes":       StatDataWrites,
	"Innodb_data_read":         StatDataReadBytes,
	"Innodb_data_written":      StatDataWrittenBytes,
	"Innodb_data_fsyncs":       StatDataFsyncs,
	"Innodb_os_log_written":    StatWALBytes,
	"Innodb_log_writes":        StatWALWrites,
	"Innodb_os_log_fsyncs":     StatWALSyncs,
	"Innodb_log_waits":         StatLogWaits,
	"Innodb_row_lock_waits":    StatRowLockWaits,
	"Innodb_row_lock_time":     StatRowLockTimeMs,
}

var statusGauges = map[string]string{
	"Innodb_buffer_pool_pages_dirty": StatPagesDirty,
	"Innodb_buffer_pool_pages_total": StatPagesTotal,
	"Innodb_buffer_pool_pages_free":  StatPagesFree,
	"Innodb_checkpoint_age":          StatCheckpointAge,
	"Threads_connected":              StatThreadsConnected,
	"Threads_running":                StatThreadsRunning,
}

// readRequests is the variable blocks_hit is derived from.
const readRequests = "Innodb_buffer_pool_read_requests"

// statusQuery reads the status variables in one statement. SHOW GLOBAL
// STATUS works on MariaDB and MySQL alike, with or without
// performance_schema (MySQL 8.0 has no information_schema.GLOBAL_STATUS),
// and starts no transaction, so it adds nothing to the commits it reads.
func statusQuery() string {
	names := []string{readRequests}
	for k := range statusCounters {
		names = append(names, k)
	}
	for k := range statusGauges {
		names = append(names, k)
	}
	return "SHOW GLOBAL STATUS WHERE Variable_name IN " + inList(names)
}

// fileIOQuery reads the server's timing of its data and redo files (timers
// in picoseconds), for the instruments that are enabled and timed; it
// returns no rows when performance_schema is off.
const fileIOQuery = `SELECT f.EVENT_NAME, f.SUM_TIMER_READ, f.SUM_TIMER_WRITE, f.SUM_TIMER_MISC
	FROM performance_schema.file_summary_by_event_name f
	JOIN performance_schema.setup_instruments i ON i.NAME = f.EVENT_NAME
	WHERE f.EVENT_NAME IN ('wait/io/file/innodb/innodb_data_file', 'wait/io/file/innodb/innodb_log_file')
	  AND i.ENABLED = 'YES' AND i.TIMED = 'YES'`

// Stats reads the server's counters and gauges on a connection of the pool
// kept for the purpose (given back and taken anew after a failure).
func (db *DB) Stats(ctx context.Context) (engine.Stats, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.keepStatsConn(ctx); err != nil {
		return engine.Stats{}, err
	}
	st, err := readStats(ctx, db.statsConn)
	if err != nil {
		db.statsConn.Close()
		db.statsConn = nil
		return engine.Stats{}, fmt.Errorf("reading MariaDB/MySQL statistics: %s", db.redact(err))
	}
	return st, nil
}

// keepStatsConn takes db.statsConn from the pool unless it is open.
// db.mu is held.
func (db *DB) keepStatsConn(ctx context.Context) error {
	if db.statsConn != nil {
		return nil
	}
	if db.pool == nil {
		return fmt.Errorf("the database is closed")
	}
	conn, err := db.pool.Conn(ctx)
	if err != nil {
		return db.connectError(err)
	}
	db.statsConn = conn
	return nil
}

func readStats(ctx context.Context, conn *sql.Conn) (engine.Stats, error) {
	st := engine.Stats{Counters: map[string]float64{}, Gauges: map[string]float64{}}
	rows, err := conn.QueryContext(ctx, statusQuery())
	if err != nil {
		return st, err
	}
	defer rows.Close()
	status := map[string]float64{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return st, err
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue // not a number: nothing to chart
		}
		status[name] = v
	}
	if err := rows.Err(); err != nil {
		return st, err
	}
	for k, name := range statusCounters {
		if v, ok := status[k]; ok {
			st.Counters[name] = v
		}
	}
	for k, name := range statusGauges {
		if v, ok := status[k]; ok {
			st.Gauges[name] = v
		}
	}
	if req, ok := status[readRequests]; ok {
		st.Counters[StatBlocksHit] = max(req-status["Innodb_buffer_pool_reads"], 0)
	}
	// Not counting this connection, which is connected and running SHOW.
	for _, name := range []string{StatThreadsConnected, StatThreadsRunning} {
		if v, ok := st.Gauges[name]; ok {
			st.Gauges[name] = max(v-1, 0)
		}
	}
	return st, readFileIO(ctx, conn, st.Counters)
}

// readFileIO adds the performance_schema file timings, in milliseconds, to
// c; it adds nothing when performance_schema is off or lacks the tables.
func readFileIO(ctx context.Context, conn *sql.Conn, c map[string]float64) error {
	rows, err := conn.QueryContext(ctx, fileIOQuery)
	if err != nil {
		switch errNumber(err) {
		case 1049, 1146, 1142: // no such database or table (a server built without it), or no SELECT on it
			return nil
		}
		return err // a lost connection has no number: never read rows then
	}
	defer rows.Close()
	const psPerMs = 1e9
	for rows.Next() {
		var event string
		var read, write, misc float64
		if err := rows.Scan(&event, &read, &write, &misc); err != nil {
			return err
		}
		if strings.HasSuffix(event, "innodb_data_file") {
			c[StatBlockReadMs], c[StatDataWriteMs], c[StatDataSyncMs] = read/psPerMs, write/psPerMs, misc/psPerMs
		} else {
			c[StatWALWriteMs], c[StatWALSyncMs] = write/psPerMs, misc/psPerMs
		}
	}
	return rows.Err()
}

// ServerInfo returns the server's data directory (@@datadir) and its
// process ID. MariaDB and MySQL serve every connection with a thread of one
// process, mariadbd (or mysqld), so the PID is that process's: the number in
// the file @@pid_file names, when that file is readable here and names a
// live mariadbd or mysqld working in @@datadir (the server runs on this
// host); 0 otherwise.
func (db *DB) ServerInfo(ctx context.Context) (dataDir string, serverPID int, err error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.keepStatsConn(ctx); err != nil {
		return "", 0, err
	}
	var dir, pidFile sql.NullString
	if err := db.statsConn.QueryRowContext(ctx, `SELECT @@datadir, @@pid_file`).Scan(&dir, &pidFile); err != nil {
		db.statsConn.Close()
		db.statsConn = nil
		return "", 0, fmt.Errorf("asking MariaDB/MySQL for its data directory: %s", db.redact(err))
	}
	return strings.TrimRight(dir.String, "/"), serverProcess(dir.String, pidFile.String), nil
}

// serverProcess reads the PID file (a relative name is in the data directory)
// and returns its number if that process is a MariaDB or MySQL server.
func serverProcess(dataDir, pidFile string) int {
	if pidFile == "" {
		return 0
	}
	if !strings.HasPrefix(pidFile, "/") && dataDir != "" {
		pidFile = strings.TrimRight(dataDir, "/") + "/" + pidFile
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	comm, err := p.Comm()
	if err != nil || !slices.Contains(serverProcesses, comm) {
		return 0
	}
	// mariadbd and mysqld work in their data directory: another server
	// here, whose PID file happens to have the same name as the remote
	// one's, works elsewhere. (Unreadable unless tierbench runs as the
	// server's user or root; then the name has to do.)
	if cwd, err := p.Cwd(); err == nil && dataDir != "" && strings.TrimRight(cwd, "/") != strings.TrimRight(dataDir, "/") {
		return 0
	}
	return pid
}

// serverProcesses are the names of MariaDB's and MySQL's server process.
var serverProcesses = []string{"mariadbd", "mysqld"}
