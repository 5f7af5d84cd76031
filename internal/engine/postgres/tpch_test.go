package postgres

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/tpch"
	"github.com/tierbench/tierbench/internal/tpch/tpchtest"
)

// A TPC-H build at SF 0.01 holds exactly the generator's rows, read back
// with COPY; has its keys and foreign-key indexes; and is refused a
// second time without --drop and replaced with it. Tables of TPC-H's names
// that no TPC-H build made are never dropped, nor is a TPC-H build's by a
// TPC-C build with --drop.
func TestBuildTPCH(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, conn := openTest(t, pgtest.NewDatabase(t))
	sc, _ := tpch.NewScale(0.01)
	var phases []string
	res, err := db.BuildTPCH(ctx, engine.TPCHBuildOptions{Scale: sc, Workers: 3, Progress: func(p tpch.BuildProgress) {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(phases, ",") != "load,index,analyze" {
		t.Errorf("phases %v; want load, index, analyze", phases)
	}
	if res.Rows[tpch.LineItem] != 60175 || res.Rows[tpch.PartSupp] != 8000 || res.Rows[tpch.Nation] != 25 || res.Bytes <= res.CopyBytes/2 {
		t.Errorf("build %+v; want 60,175 line items, 8,000 partsupp rows, 25 nations, and its bytes on disk", res)
	}
	tpchtest.CheckTables(t, sc, func(table string) ([]string, error) {
		var buf bytes.Buffer
		if _, err := conn.PgConn().CopyTo(ctx, &buf, "COPY "+table+" TO STDOUT (DELIMITER '|')"); err != nil {
			return nil, err
		}
		return tpchtest.Lines(&buf)
	})
	tpchtest.CheckAnswers(t, db)
	tpchtest.CheckServerSeconds(t, db)
	tpchtest.CheckRunner(t, db, func(table string) int64 {
		var n int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	})
	var keys, indexes int
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE contype = 'p') FROM pg_constraint
		WHERE conrelid::regclass::text = ANY($1)`, tpch.Tables).Scan(&keys); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE indexname LIKE '%fkidx'`).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if keys != 8 || indexes != 6 {
		t.Errorf("%d primary keys and %d foreign-key indexes; want 8 and 6", keys, indexes)
	}

	_, err = db.BuildTPCH(ctx, engine.TPCHBuildOptions{Scale: sc, Workers: 2})
	if !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), "add --drop") {
		t.Errorf("a second build without drop: %v; want bad input naming --drop", err)
	}
	small, _ := tpch.NewScale(0.008)
	if res, err := db.BuildTPCH(ctx, engine.TPCHBuildOptions{Scale: small, Workers: 2, Drop: true}); err != nil || res.Rows[tpch.Orders] != 12000 {
		t.Errorf("a build with drop at SF 0.008: %+v, %v; want 12,000 orders", res, err)
	}

	// Nor is a TPC-C build over it dropped: its CUSTOMER and ORDERS would
	// go from under the TPC-H build.
	tpchtest.CheckNoTPCCOver(t, db, 0.008, func() error {
		_, err := db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 1, Workers: 1, Drop: true})
		return err
	})

	// A TPC-C schema's ORDERS is not TPC-H's: refused even with drop, and kept.
	odb, other := openTest(t, pgtest.NewDatabase(t))
	exec(t, other, "CREATE TABLE orders (o_id int)")
	exec(t, other, "INSERT INTO orders VALUES (1)")
	_, err = odb.BuildTPCH(ctx, engine.TPCHBuildOptions{Scale: small, Workers: 2, Drop: true})
	var n int
	if qerr := other.QueryRow(ctx, "SELECT count(*) FROM orders").Scan(&n); qerr != nil || n != 1 ||
		!errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), "no TPC-H build made") {
		t.Errorf("a build with drop over another schema's orders: %v; orders has %d rows (%v); want bad input and the row kept", err, n, qerr)
	}
}

// A TPC-H session raises work_mem to its share of the memory the server
// is sized for (M = 4 × shared_buffers): M/32 alone and M/96 beside two
// other sessions, within [4MB, 1GB] in steps of 64kB; it keeps the
// server's parallel workers, and a work_mem that the database already
// gives above the rule.
func TestTPCHSessionSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, conn := openTest(t, pgtest.NewDatabase(t))
	bytesOf := func(size string) int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, "SELECT pg_size_bytes($1)", size).Scan(&n); err != nil {
			t.Fatalf("%q: %v", size, err)
		}
		return n
	}
	var shared, serverWorkMem int64
	var workers string
	if err := conn.QueryRow(ctx, `SELECT pg_size_bytes(current_setting('shared_buffers')), pg_size_bytes(current_setting('work_mem')),
		current_setting('max_parallel_workers_per_gather')`).Scan(&shared, &serverWorkMem, &workers); err != nil {
		t.Fatal(err)
	}
	rule := func(sessions int64) int64 {
		v := min(max(4*shared/(32*sessions), 4<<20), 1<<30)
		return max(v/(64<<10)*(64<<10), serverWorkMem)
	}
	for _, sessions := range []int{1, 3} {
		got, err := engine.TPCHSettings(ctx, db, engine.TPCHSessionOptions{Sessions: sessions})
		if err != nil {
			t.Fatal(err)
		}
		if bytesOf(got["work_mem"]) != rule(int64(sessions)) || got["max_parallel_workers_per_gather"] != workers || got["hash_mem_multiplier"] == "" {
			t.Errorf("%d sessions with shared_buffers %d: %v; want work_mem %d bytes, the server's %s parallel workers per gather and its hash_mem_multiplier",
				sessions, shared, got, rule(int64(sessions)), workers)
		}
	}
	sess, err := db.NewTPCHSession(ctx, engine.TPCHSessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := sess.Query(ctx, []string{"SHOW work_mem"}, 0)
	sess.Close()
	if err != nil || len(rows) != 1 || bytesOf(rows[0][0]) != rule(1) || rule(1) == serverWorkMem {
		t.Errorf("a session's work_mem: %v, %v; want the rule's %d bytes, not the server's %d", rows, err, rule(1), serverWorkMem)
	}

	exec(t, conn, "ALTER DATABASE "+pgx.Identifier{conn.Config().Database}.Sanitize()+" SET work_mem = '1500MB'")
	if got, err := engine.TPCHSettings(ctx, db, engine.TPCHSessionOptions{Sessions: 1}); err != nil || got["work_mem"] != "1500MB" {
		t.Errorf("with the database's work_mem at 1500MB: %v, %v; want it kept", got, err)
	}
}
