package postgres

import (
	"context"
	"testing"

	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// The server's I/O times are reported only when it times I/O: a server of
// tierbench's (track_io_timing on) gives them, and a session that turns
// timing off reads none, rather than a latency of zero.
func TestStatsIOTiming(t *testing.T) {
	ctx := context.Background()
	db, conn := openTest(t, pgtest.NewDatabase(t))
	exec(t, conn, "CREATE TABLE t AS SELECT g FROM generate_series(1, 100000) g")
	exec(t, conn, "SELECT count(*) FROM t")
	st, err := db.Stats(ctx) // another session, as telemetry's
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{StatBlockReadMs, StatWALSyncMs, StatWALSyncs} {
		if _, ok := st.Counters[name]; !ok {
			t.Errorf("with track_io_timing and track_wal_io_timing on, %s is missing: %v", name, st.Counters)
		}
	}
	if st.Counters[StatWALBytes] == 0 {
		t.Errorf("%s = 0 although tables were created", StatWALBytes)
	}
	exec(t, conn, "SET track_io_timing = off")
	exec(t, conn, "SET track_wal_io_timing = off")
	if st, err = readStats(ctx, conn); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{StatBlockReadMs, StatWALSyncMs, StatWALSyncs} {
		if v, ok := st.Counters[name]; ok {
			t.Errorf("with I/O timing off, %s = %v; want it absent", name, v)
		}
	}
}
