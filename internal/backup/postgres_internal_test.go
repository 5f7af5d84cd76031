package backup

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// walFiles lists pg_wal's segment files.
func walFiles(t *testing.T, ctx context.Context, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(ctx, "SELECT name FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// moveOn writes into three new WAL segments and checkpoints: without a
// slot, the server then removes (or recycles under a new name) every
// segment before the checkpoint's.
func moveOn(t *testing.T, ctx context.Context, conn *pgx.Conn) {
	t.Helper()
	for range 3 {
		if _, err := conn.Exec(ctx, "INSERT INTO churn SELECT g FROM generate_series(1, 1000) g"); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "SELECT pg_switch_wal()"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
}

// While a backup runs, the WAL from its start stays, whatever checkpoints
// happen before pg_basebackup's own slot exists; when it ends, nothing is
// left holding WAL.
func TestHoldWAL(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	info := pgtest.StartManaged(t, ctx)
	conn, err := pgx.Connect(ctx, info.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE churn (n int)"); err != nil {
		t.Fatal(err)
	}
	var first string
	if err := conn.QueryRow(ctx, "SELECT pg_walfile_name(pg_current_wal_insert_lsn())").Scan(&first); err != nil {
		t.Fatal(err)
	}

	release, err := holdWAL(ctx, info.DSN)
	if err != nil {
		t.Fatal(err)
	}
	moveOn(t, ctx, conn)
	if files := walFiles(t, ctx, conn); !slices.Contains(files, first) {
		release()
		t.Fatalf("held, segment %s was removed by a checkpoint; pg_wal has %v", first, files)
	}
	var slots int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_replication_slots WHERE temporary AND slot_name LIKE 'tierbench_backup_%'").Scan(&slots); err != nil {
		t.Fatal(err)
	}
	if slots != 1 {
		t.Errorf("%d temporary tierbench slots while held, want 1", slots)
	}

	release()
	// The slot goes with its session, which the server ends a moment after
	// the client closes it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_replication_slots").Scan(&slots); err != nil {
			t.Fatal(err)
		}
		if slots == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if slots != 0 {
		t.Fatalf("%d replication slots after the release, want none", slots)
	}
	// And the hold was what kept the segment.
	moveOn(t, ctx, conn)
	if files := walFiles(t, ctx, conn); slices.Contains(files, first) {
		t.Errorf("released, segment %s is still in pg_wal after a checkpoint: %v", first, files)
	}
}
