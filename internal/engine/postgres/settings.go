package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/stored"
)

var _ engine.SettingsReader = (*DB)(nil)

// settingNames are the settings the environment inventory records, grouped
// as a reader of a result would look for them: memory, connections,
// durability, WAL, checkpoints and background writing, the planner's view
// of I/O, then what initdb fixed.
var settingNames = []string{
	"shared_buffers", "effective_cache_size", "work_mem", "maintenance_work_mem", "huge_pages",
	"max_connections",
	"fsync", "synchronous_commit", "full_page_writes",
	"wal_level", "wal_buffers", "wal_compression", "wal_sync_method", "commit_delay",
	"max_wal_size", "min_wal_size", "checkpoint_timeout", "checkpoint_completion_target",
	"bgwriter_lru_maxpages",
	"effective_io_concurrency", "random_page_cost", "jit", "autovacuum",
	"data_checksums", "block_size",
}

// current_setting(name, true) is NULL for a name this server version does
// not know (wal_compression before 9.5, jit before 11), so those drop out
// instead of failing the query.
const settingsQuery = `SELECT s.name, current_setting(s.name, true)
	FROM unnest($1::text[]) WITH ORDINALITY AS s(name, i)
	WHERE current_setting(s.name, true) IS NOT NULL
	ORDER BY s.i`

// Settings returns the server's version and the settings in settingNames,
// in that order, as the server prints them (units included), on a
// connection of its own.
func (db *DB) Settings(ctx context.Context) (string, []stored.Setting, error) {
	conn, err := db.connect(ctx)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close(context.Background())
	var version string
	if err := conn.QueryRow(ctx, `SHOW server_version`).Scan(&version); err != nil {
		return "", nil, fmt.Errorf("asking PostgreSQL for its version: %s", db.redact(err))
	}
	rows, err := conn.Query(ctx, settingsQuery, settingNames)
	if err != nil {
		return version, nil, fmt.Errorf("reading PostgreSQL settings: %s", db.redact(err))
	}
	settings := make([]stored.Setting, 0, len(settingNames))
	var s stored.Setting
	if _, err := pgx.ForEachRow(rows, []any{&s.Name, &s.Value}, func() error {
		settings = append(settings, s)
		return nil
	}); err != nil {
		return version, nil, fmt.Errorf("reading PostgreSQL settings: %s", db.redact(err))
	}
	return version, settings, nil
}
