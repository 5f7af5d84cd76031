package mariadb

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/engine"
)

// TPCHBuffers are the per-query buffers of a TPC-H session, in bytes, on
// a server sized for memory m (bytes) with sessions at once: each is
// m/(32 × sessions) (engine.TPCHShare) within its bounds. A session takes
// the larger of each and the server's own value.
type TPCHBuffers struct {
	// JoinBuffer is join_buffer_size, clamped to [256KB, 256MB]: the
	// buffer of a join without an index to use (block nested loop, hash
	// join), 256KB by default.
	JoinBuffer int64
	// JoinSpace is join_buffer_space_limit, 4 × JoinBuffer: all of one
	// query's join buffers together, 2MB by default, which would
	// otherwise cap a larger join_buffer_size (MariaDB only).
	JoinSpace int64
	// SortBuffer is sort_buffer_size, clamped to [256KB, 256MB]: an ORDER
	// BY's or GROUP BY's sort (2MB by default), allocated as the rows need.
	SortBuffer int64
	// TmpTable is tmp_table_size and max_heap_table_size, clamped to
	// [16MB, 1GB]: how large a GROUP BY's or a derived table's temporary
	// table grows in memory before it goes to disk (Q13, Q18), M/64 on a
	// managed server.
	TmpTable int64
}

// NewTPCHBuffers is the rule of TPCHBuffers.
func NewTPCHBuffers(m int64, sessions int) TPCHBuffers {
	join := engine.TPCHShare(m, sessions, 256*engine.KiB, 256*engine.MiB)
	return TPCHBuffers{
		JoinBuffer: join,
		JoinSpace:  4 * join,
		SortBuffer: engine.TPCHShare(m, sessions, 256*engine.KiB, 256*engine.MiB),
		TmpTable:   engine.TPCHShare(m, sessions, 16*engine.MiB, engine.GiB),
	}
}

// values are the settings the buffers are, by name.
func (b TPCHBuffers) values() map[string]int64 {
	return map[string]int64{
		"join_buffer_size": b.JoinBuffer, "join_buffer_space_limit": b.JoinSpace, "sort_buffer_size": b.SortBuffer,
		"tmp_table_size": b.TmpTable, "max_heap_table_size": b.TmpTable,
	}
}

// tpchSettingNames are the settings a TPC-H session sets and records. A
// name the server does not have (join_buffer_space_limit on MySQL) is
// neither set nor recorded.
var tpchSettingNames = []string{"join_buffer_size", "join_buffer_space_limit", "sort_buffer_size", "tmp_table_size", "max_heap_table_size"}

// setTPCHSettings sets a TPC-H session's buffers (TPCHBuffers) from the
// memory the server is sized for (8/5 × innodb_buffer_pool_size: a
// managed server's buffer pool is 5/8 of --memory) and returns them as the
// server shows them, sizes with their unit.
func setTPCHSettings(ctx context.Context, conn *sql.Conn, sessions int) (map[string]string, error) {
	var pool int64
	if err := conn.QueryRowContext(ctx, "SELECT @@innodb_buffer_pool_size").Scan(&pool); err != nil {
		return nil, err
	}
	have, err := sessionValues(ctx, conn)
	if err != nil {
		return nil, err
	}
	var sets []string
	for name, want := range NewTPCHBuffers(pool/5*8, sessions).values() {
		if v, ok := have[name]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && want > n {
				sets = append(sets, name+" = "+strconv.FormatInt(want, 10))
			}
		}
	}
	if len(sets) > 0 {
		if _, err := conn.ExecContext(ctx, "SET SESSION "+strings.Join(sets, ", ")); err != nil {
			return nil, err
		}
		if have, err = sessionValues(ctx, conn); err != nil {
			return nil, err
		}
	}
	for name, v := range have {
		have[name] = formatBytes(v)
	}
	return have, nil
}

// sessionValues reads the session's values of tpchSettingNames, in bytes.
func sessionValues(ctx context.Context, conn *sql.Conn) (map[string]string, error) {
	values := map[string]string{}
	err := rowsOf(ctx, conn, "SHOW SESSION VARIABLES WHERE Variable_name IN "+inList(tpchSettingNames), func(rows *sql.Rows) error {
		var name, value string
		err := rows.Scan(&name, &value)
		values[name] = value
		return err
	})
	if err != nil {
		return nil, err
	}
	return values, nil
}

// sendStages are the profile's stages in which the server sends the end
// of a statement's result (its final OK or EOF packet) and then tidies up:
// MariaDB's "Updating status", MySQL 8.0's "freeing items". The stages
// before them end before the client has the result.
var sendStages = []string{"updating status", "freeing items"}

// ServerSeconds is the server's time of the last statement, from its
// profile (the session profiles its statements): SHOW PROFILES finds it,
// the last one, by its text, and SHOW PROFILE FOR QUERY lists its stages.
// Neither SHOW is profiled itself. The time is the sum of the stages before
// the one that sends the end of the result (sendStages): from the
// statement's start, after the server read it, through its execution and
// the sending of its rows. The profile's own total also counts the
// bookkeeping after the last packet, which a busy server may do after the
// client has the result. The profile's stages are all it has when none is
// a send stage. 0 when the server does not profile, or its last profile
// is not the statement's.
func (s *tpchSession) ServerSeconds(ctx context.Context) float64 {
	if s.last == "" || !s.profiling {
		return 0
	}
	var id int64
	var query string
	found := false
	if err := rowsOf(ctx, s.conn, "SHOW PROFILES", func(rows *sql.Rows) error {
		var secs float64
		found = true
		return rows.Scan(&id, &secs, &query)
	}); err != nil || !found || query == "" || !strings.HasPrefix(s.last, query) { // the profile's text is cut at a length of its own
		return 0
	}
	var total float64
	sending := false
	if err := rowsOf(ctx, s.conn, "SHOW PROFILE FOR QUERY "+strconv.FormatInt(id, 10), func(rows *sql.Rows) error {
		var stage string
		var secs float64
		if err := rows.Scan(&stage, &secs); err != nil {
			return err
		}
		sending = sending || slices.Contains(sendStages, strings.ToLower(stage))
		if !sending {
			total += secs
		}
		return nil
	}); err != nil {
		return 0
	}
	return total
}

// rowsOf runs query on conn and calls row for each row.
func rowsOf(ctx context.Context, conn *sql.Conn, query string, row func(*sql.Rows) error) error {
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
