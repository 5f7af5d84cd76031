package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
)

// tpchSettingNames are the settings a TPC-H session records: work_mem,
// which it sets, then the server's that it keeps. A name the server does
// not know (hash_mem_multiplier before 13) drops out.
var tpchSettingNames = []string{"work_mem", "hash_mem_multiplier", "max_parallel_workers_per_gather", "max_parallel_workers"}

// TPCHWorkMem is the work_mem, in bytes, of a TPC-H session on a server
// sized for memory m (bytes) with sessions at once: m/(32 × sessions),
// clamped to [4MB, 1GB] (engine.TPCHShare). A session takes the larger
// of this and the server's own work_mem.
//
// The server's sizing (server.MemorySettings) gives work_mem M/1200, for
// TPC-C's hundreds of connections, at least 4MB: the sorts and hashes of
// Q1, Q9, Q13 and Q18 would spill to temporary files, on the tier under
// test. hash_mem_multiplier and the parallel workers stay the server's:
// max_parallel_workers_per_gather (2 by default) workers each have their
// own work_mem, and a hash twice it, which the rule's eighth of M leaves
// room for.
func TPCHWorkMem(m int64, sessions int) int64 {
	return engine.TPCHShare(m, sessions, 4*engine.MiB, engine.GiB)
}

// setTPCHSettings sets a TPC-H session's work_mem from the memory the
// server is sized for (4 × shared_buffers: a managed server's
// shared_buffers is a quarter of --memory) and returns the session's
// settings in tpchSettingNames, as the server shows them.
func setTPCHSettings(ctx context.Context, conn *pgx.Conn, sessions int) (map[string]string, error) {
	var shared, workMem int64
	if err := conn.QueryRow(ctx, `SELECT pg_size_bytes(current_setting('shared_buffers')), pg_size_bytes(current_setting('work_mem'))`).Scan(
		&shared, &workMem); err != nil {
		return nil, err
	}
	if want := TPCHWorkMem(4*shared, sessions); want > workMem {
		if _, err := conn.Exec(ctx, "SET work_mem = '"+strconv.FormatInt(want>>10, 10)+"kB'"); err != nil {
			return nil, err
		}
	}
	rows, err := conn.Query(ctx, settingsQuery, tpchSettingNames)
	if err != nil {
		return nil, err
	}
	settings := map[string]string{}
	var name, value string
	if _, err := pgx.ForEachRow(rows, []any{&name, &value}, func() error {
		settings[name] = value
		return nil
	}); err != nil {
		return nil, err
	}
	return settings, nil
}

// ServerSeconds is the server's time of the last statement, as the
// session's backend reported it in pg_stat_activity: from query_start,
// when the server read the statement, to state_change, when the backend
// went idle after sending its last row (and before telling the client it
// was ready for the next, so the entry is there when Query has returned).
// PostgreSQL reports no statement's time over the protocol, and its own
// backend's entry would show the reading statement itself, so it is read
// on the connection that telemetry's statistics keep open, under their
// lock: no extension, setting or connection of its own. 0 when the entry
// is not the statement's (track_activities off, or the reading failed).
func (s *tpchSession) ServerSeconds(ctx context.Context) float64 {
	if s.last == "" {
		return 0
	}
	db := s.db
	db.statsMu.Lock()
	defer db.statsMu.Unlock()
	if err := db.keepOpen(ctx, &db.statsConn); err != nil {
		return 0
	}
	var state, query *string
	var secs *float64
	err := db.statsConn.QueryRow(ctx, `SELECT state, query, extract(epoch FROM state_change - query_start)::float8
		FROM pg_stat_activity WHERE pid = $1`, s.conn.PgConn().PID()).Scan(&state, &query, &secs)
	if err != nil {
		closeKept(&db.statsConn)
		return 0
	}
	db.own.Add(1) // Counters leaves it out of the database's count, as Stats's
	// The entry's query is cut at track_activity_query_size.
	if state == nil || *state != "idle" || query == nil || *query == "" || !strings.HasPrefix(s.last, *query) || secs == nil || *secs < 0 {
		return 0
	}
	return *secs
}
