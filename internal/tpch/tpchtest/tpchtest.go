// Package tpchtest checks a database's TPC-H tables against tierbench's
// generator, for the engines' tests.
package tpchtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/tpch"
)

// CheckTables compares every table of a build at scale sc with the rows
// the generator makes for it. dump returns a table's rows in any order,
// each as its fields' text joined by '|' (money with two decimals, dates
// as YYYY-MM-DD); a field's trailing blanks and a decimal's trailing zeros
// are ignored on both sides (see trimFields).
func CheckTables(t *testing.T, sc tpch.Scale, dump func(table string) ([]string, error)) {
	t.Helper()
	for _, table := range tpch.Tables {
		var want []string
		for _, task := range tpch.LoadTasks(sc, 1) {
			if task.Table != table {
				continue
			}
			sc := bufio.NewScanner(task.Reader(sc))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				want = append(want, trimFields(sc.Text()))
			}
		}
		got, err := dump(table)
		if err != nil {
			t.Fatalf("reading %s back: %v", table, err)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d rows; want the generator's %d", table, len(got), len(want))
			continue
		}
		for i := range got {
			got[i] = trimFields(got[i])
		}
		// PARTSUPP's file is not in key order: compare the rows as sets.
		slices.Sort(got)
		slices.Sort(want)
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: the rows differ from the generator's; in sorted order, row %d is\n  %s\nwant\n  %s", table, i+1, got[i], want[i])
				break
			}
		}
	}
}

// trimFields drops the trailing blanks of each '|'-separated field, and a
// decimal's trailing zeros: dbgen writes a quantity as 23, a numeric(15,2)
// column gives it back as 23.00.
func trimFields(row string) string {
	fs := strings.Split(row, "|")
	for i, f := range fs {
		f = strings.TrimRight(f, " ")
		if decimal.MatchString(f) {
			f = strings.TrimRight(strings.TrimRight(f, "0"), ".")
		}
		fs[i] = f
	}
	return strings.Join(fs, "|")
}

var decimal = regexp.MustCompile(`^-?[0-9]+\.[0-9]+$`)

// Lines splits text into its lines, without the last newline.
func Lines(r io.Reader) ([]string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	if len(b) == 0 {
		return nil, nil
	}
	return strings.Split(string(b), "\n"), nil
}

// CheckRunner runs RF1 and RF2 of update set 1 on a fresh build at SF 0.01
// and checks the rows and the meta table's counts; then a query, and one
// cancelled on the server at its timeout. count returns a table's rows.
func CheckRunner(t *testing.T, r engine.TPCHRunner, count func(table string) int64) {
	t.Helper()
	ctx := context.Background()
	info, err := r.TPCHBuild(ctx)
	if err != nil || info.Scale != 0.01 || info.RF1Sets != 0 || info.RF2Sets != 0 {
		t.Fatalf("build %+v, %v; want SF 0.01 and no update sets", info, err)
	}
	sess, err := r.NewTPCHSession(ctx, engine.TPCHSessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	sc, _ := tpch.NewScale(0.01)
	set, err := tpch.NewRefreshSet(sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	lines := int64(bytes.Count(set.LineItems, []byte{'\n'}))
	if err := sess.RF1(ctx, set); err != nil {
		t.Fatal(err)
	}
	if o, l := count("orders"), count("lineitem"); o != 15010 || l != 60175+lines {
		t.Errorf("after RF1: %d orders, %d line items; want 15,010 and %d", o, l, 60175+lines)
	}
	if err := sess.RF2(ctx, set); err != nil {
		t.Fatal(err)
	}
	if o := count("orders"); o != 15000 {
		t.Errorf("after RF2: %d orders; want 15,000", o)
	}
	if info, err := r.TPCHBuild(ctx); err != nil || info.RF1Sets != 1 || info.RF2Sets != 1 {
		t.Errorf("after RF1 and RF2: %+v, %v; want one set each", info, err)
	}
	rows, err := sess.Query(ctx, []string{"SELECT count(*), sum(r_regionkey) FROM region"}, time.Minute)
	if err != nil || len(rows) != 1 || len(rows[0]) != 2 || rows[0][0] != "5" || rows[0][1] != "10" {
		t.Errorf("a query: %v, %v; want one row 5, 10", rows, err)
	}
	_, err = sess.Query(ctx, []string{"SELECT count(*) FROM lineitem a, lineitem b, lineitem c"}, 100*time.Millisecond)
	if !errors.Is(err, engine.ErrQueryTimeout) {
		t.Errorf("a query past its timeout: %v; want ErrQueryTimeout", err)
	}
	if rows, err := sess.Query(ctx, []string{"SELECT count(*) FROM nation"}, 0); err != nil || rows[0][0] != "25" {
		t.Errorf("the session after a timeout: %v, %v; want 25 nations", rows, err)
	}
}

// CheckAnswers runs the 22 queries with the validation parameters on a
// fresh build at SF 0.01 and compares every answer with the reference's.
func CheckAnswers(t *testing.T, r engine.TPCHRunner) {
	t.Helper()
	queries := make([]int, 22)
	for i := range queries {
		queries[i] = i + 1
	}
	validationQueries(t, r, queries, func(sess engine.TPCHSession, n int, q tpch.Query) {
		rows, err := sess.Query(context.Background(), append(slices.Clone(q.Setup), q.Answer), time.Minute)
		if err != nil {
			t.Errorf("Q%d: %v", n, err)
			return
		}
		if err := tpch.CheckAnswer(0.01, n, rows); err != nil {
			t.Error(err)
		}
	})
}

// CheckServerSeconds runs Q1, Q15 (a view's creation, the query, its
// dropping) and Q18 with the validation parameters: each query's time on
// the server, as the engine reports it, is above 0 and no more than the
// client's. A failed query has none.
func CheckServerSeconds(t *testing.T, r engine.TPCHRunner) {
	t.Helper()
	ctx := context.Background()
	sess := validationQueries(t, r, []int{1, 15, 18}, func(sess engine.TPCHSession, n int, q tpch.Query) {
		began := time.Now()
		_, err := sess.Query(ctx, append(slices.Clone(q.Setup), q.Answer), time.Minute)
		client := time.Since(began).Seconds()
		if server := sess.ServerSeconds(ctx); err != nil || server <= 0 || server > client {
			t.Errorf("Q%d: %v, %.6f s on the server, %.6f s on the client; want above 0 and no more than the client's", n, err, server, client)
		}
	})
	if _, err := sess.Query(ctx, []string{"SELECT no_such_column FROM region"}, 0); err == nil {
		t.Error("a query of a missing column succeeded")
	}
	if server := sess.ServerSeconds(ctx); server != 0 {
		t.Errorf("after a failed query: %.6f s on the server; want 0", server)
	}
}

// validationQueries opens one session on r (closed when the test ends)
// and, for each query of ns with the validation parameters at SF 0.01,
// calls run, which runs its setup and answer, then runs its teardown (a
// view's dropping). It returns the session.
func validationQueries(t *testing.T, r engine.TPCHRunner, ns []int, run func(sess engine.TPCHSession, n int, q tpch.Query)) engine.TPCHSession {
	t.Helper()
	ctx := context.Background()
	sess, err := r.NewTPCHSession(ctx, engine.TPCHSessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sess.Close)
	subs := tpch.ValidationSubstitutions(0.01)
	for _, n := range ns {
		q, err := tpch.Statements(r.TPCHDialect(), n, subs[n-1], 0)
		if err != nil {
			t.Fatal(err)
		}
		run(sess, n, q)
		if len(q.Teardown) > 0 {
			if _, err := sess.Query(ctx, q.Teardown, 0); err != nil {
				t.Errorf("Q%d's teardown: %v", n, err)
			}
		}
	}
	return sess
}

// CheckNoTPCCOver wants a TPC-C build with --drop (build) over r's TPC-H
// build at scale factor sf refused as bad input, and the TPC-H build
// intact: TPC-C's CUSTOMER and ORDERS have TPC-H's names, and --drop would
// take them from under it.
func CheckNoTPCCOver(t *testing.T, r engine.TPCHRunner, sf float64, build func() error) {
	t.Helper()
	if err := build(); !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), "holds a TPC-H build") {
		t.Errorf("a TPC-C build with drop over a TPC-H build: %v; want bad input", err)
	}
	if info, err := r.TPCHBuild(context.Background()); err != nil || info.Scale != sf {
		t.Errorf("the TPC-H build after the refused TPC-C build: %+v, %v; want SF %g, intact", info, err, sf)
	}
}
