package mariadb

import (
	"context"
	"database/sql"
	"io"
)

// What the tests of package mariadb_test reach inside for. (They are an
// external test package because mariatest imports this one.)

// SettingNames are the settings Settings reads, in order.
var SettingNames = settingNames

// LoadRows loads rows of the generator's text format into table, as the
// loader does, on a loader connection of its own.
func (db *DB) LoadRows(ctx context.Context, table string, r io.Reader) (int64, error) {
	conn, err := db.loaderConn(ctx)
	if err != nil {
		return 0, err
	}
	l := infileLoader{db, conn}
	defer l.Close()
	return l.LoadStream(ctx, table, 0, r)
}

// ConditionQuery is condition id's query restricted to warehouses ws.
func ConditionQuery(id string, ws []int) string { return conditionQuery(id, ws) }

// ReadFileIO adds performance_schema's file timings to c, as Stats does, on
// conn.
func ReadFileIO(ctx context.Context, conn *sql.Conn, c map[string]float64) error {
	return readFileIO(ctx, conn, c)
}
