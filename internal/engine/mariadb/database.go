package mariadb

import (
	"context"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/internal/engine"
)

// CreateDatabase makes database name unless it exists (engine.DatabaseCreator).
func (db *DB) CreateDatabase(ctx context.Context, name string) (string, error) {
	dsn, err := engine.WithDatabase(db.dsn, name)
	if err != nil {
		return "", err
	}
	conn, err := db.connect(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+strings.ReplaceAll(name, "`", "``")+"`"); err != nil {
		return "", fmt.Errorf("creating database %s: %s", name, db.redact(err))
	}
	return dsn, nil
}
