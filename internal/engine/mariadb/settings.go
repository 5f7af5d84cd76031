package mariadb

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/stored"
)

var _ engine.SettingsReader = (*DB)(nil)

// settingNames are the settings the environment inventory records, grouped
// as a reader of a result would look for them: memory, connections,
// durability, the redo log, flushing and I/O, then what the data directory
// fixed. transaction_isolation is tx_isolation on MariaDB before 11.1.
var settingNames = []string{
	"innodb_buffer_pool_size", "innodb_log_buffer_size", "table_open_cache",
	"max_connections",
	"innodb_flush_log_at_trx_commit", "innodb_doublewrite", "sync_binlog", "log_bin",
	"innodb_log_file_size",
	"innodb_flush_method", "innodb_use_native_aio", "innodb_io_capacity", "innodb_io_capacity_max",
	"innodb_flush_neighbors", "innodb_adaptive_flushing", "innodb_max_dirty_pages_pct",
	"innodb_read_io_threads", "innodb_write_io_threads",
	"transaction_isolation", "performance_schema",
	"innodb_file_per_table", "innodb_page_size",
}

// aliases are older names of settings, read when the server lacks the new one.
var aliases = map[string]string{"transaction_isolation": "tx_isolation"}

// byteSettings are in bytes; they are shown with a unit, as PostgreSQL
// shows its sizes ("128MB").
var byteSettings = map[string]bool{
	"innodb_buffer_pool_size": true, "innodb_log_buffer_size": true,
	"innodb_log_file_size": true, "innodb_page_size": true,
}

// Settings returns the server's version and the settings in settingNames
// that it has, in that order, sizes with their unit, on a connection of its
// own.
func (db *DB) Settings(ctx context.Context) (string, []stored.Setting, error) {
	conn, err := db.connect(ctx)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close()
	var version string
	if err := conn.QueryRowContext(ctx, `SELECT VERSION()`).Scan(&version); err != nil {
		return "", nil, fmt.Errorf("asking MariaDB/MySQL for its version: %s", db.redact(err))
	}
	names := append([]string(nil), settingNames...)
	for _, old := range aliases {
		names = append(names, old)
	}
	// SHOW GLOBAL VARIABLES works on both servers, with or without
	// performance_schema; a name the server lacks is simply not listed.
	rows, err := conn.QueryContext(ctx, "SHOW GLOBAL VARIABLES WHERE Variable_name IN "+inList(names))
	if err != nil {
		return version, nil, fmt.Errorf("reading MariaDB/MySQL settings: %s", db.redact(err))
	}
	defer rows.Close()
	values := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return version, nil, fmt.Errorf("reading MariaDB/MySQL settings: %s", db.redact(err))
		}
		values[name] = value
	}
	if err := rows.Err(); err != nil {
		return version, nil, fmt.Errorf("reading MariaDB/MySQL settings: %s", db.redact(err))
	}
	settings := make([]stored.Setting, 0, len(settingNames))
	for _, name := range settingNames {
		v, ok := values[name]
		if !ok {
			if v, ok = values[aliases[name]]; !ok {
				continue
			}
		}
		if byteSettings[name] {
			v = formatBytes(v)
		}
		settings = append(settings, stored.Setting{Name: name, Value: v})
	}
	return version, settings, nil
}

// formatBytes shows a byte count in the largest unit that divides it, as
// PostgreSQL does: "1GB", "128MB", "16kB", "1000B"; a value that is not a
// count is left as it is.
func formatBytes(v string) string {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return v
	}
	if n == 0 {
		return "0"
	}
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 40, "TB"}, {1 << 30, "GB"}, {1 << 20, "MB"}, {1 << 10, "kB"}} {
		if n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
