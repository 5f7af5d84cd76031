package postgres

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/tpch"
	"github.com/tierbench/tierbench/internal/tpch/tpchtest"
)

// A TPC-H build at SF 0.01 holds exactly the generator's rows, read back
// with COPY; has its keys and foreign-key indexes; and is refused a
// second time without --drop and replaced with it. Tables of TPC-H's names
// that no TPC-H build made are never dropped.
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
