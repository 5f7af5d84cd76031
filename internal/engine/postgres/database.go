package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	defer conn.Close(context.WithoutCancel(ctx))
	var there bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&there); err != nil {
		return "", fmt.Errorf("looking for database %s: %s", name, db.redact(err))
	}
	if there {
		return dsn, nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if err != nil && !(errors.As(err, &pgErr) && pgErr.Code == "42P04") { // duplicate_database: made meanwhile
		return "", fmt.Errorf("creating database %s: %s", name, db.redact(err))
	}
	return dsn, nil
}
