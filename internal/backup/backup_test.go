package backup_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/backup"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/telemetry"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func TestPrepareAndCleanup(t *testing.T) {
	ctx := testContext(t)
	base := t.TempDir()

	// Missing: created, marked; Cleanup removes all of it.
	made := filepath.Join(base, "a", "b")
	if err := backup.Prepare(made); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(made, backup.MarkerFile)) {
		t.Fatal("no marker in a prepared target")
	}
	if err := backup.Prepare(made); err != nil { // prepared before: reused
		t.Fatalf("second Prepare: %v", err)
	}
	for _, d := range []string{"cycle-1", "restore-1", "cycle-2"} {
		if err := os.MkdirAll(filepath.Join(made, d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// --keep: the backups stay, restored copies never do.
	if err := backup.Cleanup(ctx, made, true); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(made, "cycle-1")) || !exists(filepath.Join(made, "cycle-2")) || exists(filepath.Join(made, "restore-1")) {
		t.Error("Cleanup with keep: want the cycles kept and the restored copy gone")
	}
	if err := backup.Cleanup(ctx, made, false); err != nil {
		t.Fatal(err)
	}
	if exists(made) {
		t.Error("Cleanup left the target it created")
	}
	if !exists(filepath.Join(base, "a")) {
		t.Error("Cleanup removed a parent it did not create as the target")
	}

	// Empty: adopted; Cleanup empties it again but keeps it, and leaves
	// what tierbench did not name.
	empty := filepath.Join(base, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := backup.Prepare(empty); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(empty, "cycle-1"), 0o755)
	os.WriteFile(filepath.Join(empty, "cycle-x"), []byte("not ours"), 0o644)
	if err := backup.Cleanup(ctx, empty, false); err != nil {
		t.Fatal(err)
	}
	if !exists(empty) || exists(filepath.Join(empty, "cycle-1")) || exists(filepath.Join(empty, backup.MarkerFile)) ||
		!exists(filepath.Join(empty, "cycle-x")) {
		t.Error("Cleanup of an adopted target: want it kept, our cycle and marker gone, other files kept")
	}

	// Foreign: refused, untouched; Cleanup leaves it alone too.
	foreign := filepath.Join(base, "foreign")
	os.MkdirAll(filepath.Join(foreign, "cycle-1"), 0o755)
	if err := backup.Prepare(foreign); !errors.Is(err, backup.ErrRefused) || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("Prepare of a foreign directory: %v", err)
	}
	if err := backup.Cleanup(ctx, foreign, false); err != nil || !exists(filepath.Join(foreign, "cycle-1")) {
		t.Errorf("Cleanup of a foreign directory: %v; want it untouched", err)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	if err := backup.Prepare(file); !errors.Is(err, backup.ErrRefused) {
		t.Errorf("Prepare of a file: %v", err)
	}
}

func TestCompareCounts(t *testing.T) {
	src := backup.Counts{"warehouse": 1, "district": 10, "customer": 30000, "history": 30000, "new_order": 9000,
		"orders": 30000, "order_line": 300000, "item": 100000, "stock": 100000}
	with := func(k string, v int64) backup.Counts {
		c := backup.Counts{}
		for kk, vv := range src {
			c[kk] = vv
		}
		c[k] = v
		return c
	}
	if err := backup.CompareCounts(src, src, src); err != nil {
		t.Errorf("equal counts: %v", err)
	}
	if err := backup.CompareCounts(with("stock", 99999), src, src); err == nil || !strings.Contains(err.Error(), "stock has 99999 rows") {
		t.Errorf("a missing stock row: %v", err)
	}
	// Under load: growing tables between before and after, NEW-ORDER free.
	after := with("orders", 30100)
	after["new_order"] = 9050
	got := with("orders", 30050)
	got["new_order"] = 8000
	if err := backup.CompareCounts(got, src, after); err != nil {
		t.Errorf("a snapshot taken under load: %v", err)
	}
	if err := backup.CompareCounts(with("orders", 30200), src, after); err == nil {
		t.Error("more orders than the source ever had: no error")
	}
	// NEW-ORDER grown by New-Orders and shrunk by Deliveries back to its
	// count before: the snapshot in between may have another.
	after["new_order"] = src["new_order"]
	if err := backup.CompareCounts(got, src, after); err != nil {
		t.Errorf("NEW-ORDER back to its count after New-Orders and Deliveries: %v", err)
	}
	// No orders added: NEW-ORDER could only have shrunk, so equal counts
	// before and after must be the restored count too.
	if err := backup.CompareCounts(with("new_order", 8999), src, src); err == nil || !strings.Contains(err.Error(), "new_order has 8999") {
		t.Errorf("NEW-ORDER of an idle source differs: %v", err)
	}
}

// sourceWorkMem is the source's work_mem, not PostgreSQL's default (4MB):
// a restored copy must run with it too.
const sourceWorkMem = "7MB"

// startSource starts a managed server with a table of about 100 MB, and
// with work_mem = sourceWorkMem (a restart, as `server start --set` does).
func startSource(t *testing.T, ctx context.Context) (dataDir, dsn string) {
	t.Helper()
	info := pgtest.StartManaged(t, ctx)
	if _, err := server.Stop(ctx, info.DataDir, "fast"); err != nil {
		t.Fatal(err)
	}
	info, err := server.Start(ctx, server.Options{DataDir: info.DataDir, Settings: map[string]string{"work_mem": sourceWorkMem}})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, info.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE big AS SELECT g AS id, repeat(md5(g::text), 24) AS pad FROM generate_series(1, 100000) g`); err != nil {
		t.Fatal(err)
	}
	return info.DataDir, info.DSN
}

// queryRow scans the one row of sql, on a connection of its own to dsn,
// into dest.
func queryRow(ctx context.Context, dsn, sql string, dest ...any) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dest...)
}

func countBig(ctx context.Context, dsn string) (int64, error) {
	var n int64
	err := queryRow(ctx, dsn, "SELECT count(*) FROM big", &n)
	return n, err
}

func TestBackupRestore(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	dataDir, dsn := startSource(t, ctx)
	for _, logical := range []bool{false, true} {
		name := map[bool]string{false: "physical", true: "logical"}[logical]
		t.Run(name, func(t *testing.T) {
			target := filepath.Join(filepath.Dir(dataDir), "backups-"+name)
			var verifiedDSN string
			var workload telemetry.Workload
			var during []int // the workload while the copy is checked
			var duringCmd []byte
			o := backup.Options{DSN: dsn, DataDir: dataDir, Target: target, Logical: logical, Jobs: 2, Workload: &workload,
				Verify: func(ctx context.Context, dsn string) error {
					verifiedDSN = dsn
					during = workload.PIDs()
					if len(during) > 0 {
						duringCmd, _ = os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", during[0]))
					}
					var n int64
					var workMem string
					err := queryRow(ctx, dsn, "SELECT count(*), current_setting('work_mem') FROM big", &n, &workMem)
					switch {
					case err != nil:
					case n != 100000:
						err = errors.New("rows lost")
					case workMem != sourceWorkMem:
						// The copy runs with its source's settings, not
						// PostgreSQL's defaults.
						err = fmt.Errorf("restored server's work_mem = %q, want the source's %s", workMem, sourceWorkMem)
					}
					return err
				}}
			if err := o.Check(); err != nil {
				t.Fatal(err)
			}
			b, dir, err := backup.Backup(ctx, o, 1)
			if err != nil {
				t.Fatal(err)
			}
			if dir != o.BackupDir(1) || b.Phase != "backup" || b.Method != o.Method() || b.Cycle != 1 ||
				b.Bytes < 10<<20 || b.Seconds <= 0 || b.MBps <= 0 || b.Ended.Before(b.Started) {
				t.Errorf("backup phase %+v in %s", b, dir)
			}
			r, err := backup.Restore(ctx, o, 1, dir)
			if err != nil {
				t.Fatal(err)
			}
			wantMethod := map[bool]string{false: "pg_basebackup", true: "pg_restore"}[logical]
			if r.Phase != "restore" || r.Method != wantMethod || !r.Verified || r.Bytes != b.Bytes || r.Seconds <= 0 || r.MBps <= 0 {
				t.Errorf("restore phase %+v", r)
			}
			t.Logf("%s: backup %d bytes in %.2fs (%.0f MB/s), restore in %.2fs (%.0f MB/s)", name, b.Bytes, b.Seconds, b.MBps, r.Seconds, r.MBps)
			if verifiedDSN == dsn || verifiedDSN == "" {
				t.Errorf("Verify was given %q, not the restored copy", verifiedDSN)
			}
			// A physical restore's server is the workload's while it runs
			// (its CPU is not other processes'); a logical one restores into
			// the source, which is already.
			if logical && len(during) != 0 {
				t.Errorf("logical restore: workload %v; want none", during)
			}
			if !logical {
				if len(during) != 1 {
					t.Fatalf("physical restore: workload %v during verification; want the restored server", during)
				}
				if cmd := string(bytes.ReplaceAll(duringCmd, []byte{0}, []byte{' '})); !strings.Contains(cmd, "restore-1") {
					t.Errorf("workload process %d runs %q; want the server of restore-1", during[0], cmd)
				}
			}
			if left := workload.PIDs(); len(left) != 0 {
				t.Errorf("workload after the restore: %v; want none", left)
			}
			// The restored copy is gone: no directory, no server, no database.
			if exists(filepath.Join(target, "restore-1")) {
				t.Error("the restored data directory was left")
			}
			if _, err := countBig(ctx, verifiedDSN); err == nil {
				t.Error("the restored database still answers")
			}
			// The source still answers, with its row count.
			if n, err := countBig(ctx, dsn); err != nil || n != 100000 {
				t.Errorf("source after the cycle: %d, %v", n, err)
			}
			if err := backup.Cleanup(ctx, target, false); err != nil || exists(target) {
				t.Errorf("Cleanup: %v; target left: %v", err, exists(target))
			}
		})
	}
}

// A failed verification keeps the timing, says Verified false, and is an error.
func TestRestoreVerifyFails(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	dataDir, dsn := startSource(t, ctx)
	o := backup.Options{DSN: dsn, DataDir: dataDir, Target: filepath.Join(filepath.Dir(dataDir), "backups"), Logical: true,
		Verify: func(context.Context, string) error { return errors.New("3.3.2.1 violated") }}
	_, dir, err := backup.Backup(ctx, o, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := backup.Restore(ctx, o, 1, dir)
	if err == nil || !strings.Contains(err.Error(), "3.3.2.1 violated") || r.Verified || r.Seconds <= 0 {
		t.Errorf("restore %+v, err %v", r, err)
	}
}

// cancelWhen cancels ctx once path exists.
func cancelWhen(ctx context.Context, path string) (context.Context, func()) {
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-cctx.Done():
				return
			case <-tick.C:
				if exists(path) {
					cancel()
					return
				}
			}
		}
	}()
	return cctx, cancel
}

// Interrupted mid-phase: the context's error, the child stopped, nothing
// partial left behind.
func TestInterrupted(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	dataDir, dsn := startSource(t, ctx)
	target := filepath.Join(filepath.Dir(dataDir), "backups")
	o := backup.Options{DSN: dsn, DataDir: dataDir, Target: target}

	cctx, cancel := cancelWhen(ctx, filepath.Join(o.BackupDir(1), "base"))
	_, _, err := backup.Backup(cctx, o, 1)
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted backup: err = %v", err)
	}
	if exists(o.BackupDir(1)) {
		t.Error("an interrupted backup left its partial output")
	}

	_, dir, err := backup.Backup(ctx, o, 2)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel = cancelWhen(ctx, filepath.Join(target, "restore-2", "base"))
	_, err = backup.Restore(cctx, o, 2, dir)
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted restore: err = %v", err)
	}
	if exists(filepath.Join(target, "restore-2")) {
		t.Error("an interrupted restore left its data directory")
	}
	// The backup itself is kept for the next try; Cleanup removes it.
	if !exists(dir) {
		t.Error("an interrupted restore removed the backup")
	}
	if err := backup.Cleanup(ctx, target, false); err != nil || exists(target) {
		t.Errorf("Cleanup: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dataDir)); len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("left beside the source: %v", names)
	}
}
