package backup_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/backup"
	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/clustertest"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/mariadb"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/mariatest"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/internal/tier"
)

func mariaContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// mariaDB is a pool on the database of dsn, closed when the test ends.
func mariaDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := openPool(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openPool(dsn string) (*sql.DB, error) {
	cfg, err := mariadb.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// oddSQL is a table whose values LOAD DATA's text format has to escape
// (tabs, line breaks, backslashes, NUL, \N as text, NULL), in two character
// sets and as bytes, with a generated column, a secondary and a unique
// index, a view over it and a trigger on it: what tierbench-dump must copy
// exactly besides TPC-C's plain tables.
var oddSQL = []string{
	`CREATE TABLE odd (
		id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
		s varchar(100) CHARACTER SET latin1 NULL,
		u varchar(100) CHARACTER SET utf8mb4 NULL,
		b blob NULL,
		g int AS (id * 2) VIRTUAL,
		ts timestamp NULL,
		n int NULL,
		KEY odd_s (s),
		UNIQUE KEY odd_u (u)) ENGINE=InnoDB`,
	`INSERT INTO odd (s, u, b, ts, n) VALUES
		('tab\there', 'new\nline', X'00010209095C0A0D4E', '2024-02-29 12:34:56', 1),
		('back\\slash \\N', 'Grüße, 東京', X'', NULL, NULL),
		(NULL, NULL, NULL, NULL, 0),
		('', '', X'5C4E', '1999-12-31 23:59:59', -7),
		(CONCAT('nul', CHAR(0), 'byte'), 'ünïcödé\t\\', X'FF00FE', '2038-01-19 03:14:07', 42)`,
	`CREATE VIEW odd_view AS SELECT id, g, u FROM odd WHERE n IS NOT NULL`,
	`CREATE TABLE odd_log (id int NOT NULL, at varchar(20) NOT NULL) ENGINE=InnoDB`,
	`CREATE TRIGGER odd_ins AFTER INSERT ON odd FOR EACH ROW INSERT INTO odd_log VALUES (NEW.id, 'insert')`,
}

// oddDigest is the content of odd, odd_view and odd_log as text: equal
// digests are equal values, byte for byte.
const oddDigest = `SELECT CONCAT_WS('|', (SELECT GROUP_CONCAT(CONCAT_WS(',', id, COALESCE(HEX(s), 'null'), COALESCE(HEX(u), 'null'),
		COALESCE(HEX(b), 'null'), g, COALESCE(UNIX_TIMESTAMP(ts), 'null'), COALESCE(n, 'null')) ORDER BY id SEPARATOR ';') FROM odd),
	(SELECT GROUP_CONCAT(CONCAT(id, ':', g) ORDER BY id) FROM odd_view),
	(SELECT COUNT(*) FROM odd_log),
	(SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = DATABASE()),
	(SELECT COUNT(*) FROM information_schema.triggers WHERE trigger_schema = DATABASE()),
	(SELECT GROUP_CONCAT(table_name, '.', index_name ORDER BY table_name, index_name)
	   FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name NOT LIKE 'pair\_%'))`

// startMaria starts a managed MariaDB of the test's own with a one-warehouse
// TPC-C schema (its stored procedures included) and the odd tables: a copy
// of a server built once per test process.
func startMaria(t *testing.T, ctx context.Context) (dataDir, dsn string) {
	t.Helper()
	info := mariatest.StartCloned(t, ctx, "tpcc1-odd", func(ctx context.Context, dsn string) error {
		db, err := mariadb.Open(ctx, dsn)
		if err != nil {
			return err
		}
		defer db.Close()
		start := time.Now()
		if _, err := db.BuildTPCC(ctx, engine.BuildOptions{Warehouses: 1, Workers: 2}); err != nil {
			return err
		}
		t.Logf("TPC-C, 1 warehouse, built in %v", time.Since(start).Round(time.Millisecond))
		pool, err := openPool(dsn)
		if err != nil {
			return err
		}
		defer pool.Close()
		for _, s := range oddSQL {
			if _, err := pool.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	})
	return info.DataDir, info.DSN
}

// procWatch samples the command line and environment of every process on
// the host until stopped (clustertest.WatchProcs), looking for a secret.
// It also keeps the option files (--defaults-file) given to the
// mariadb-backup processes whose command line names a directory under
// target: the ones this test's cycle started, not other tests' cycles'.
type procWatch struct {
	procs    *clustertest.Procs
	mu       sync.Mutex
	leaks    []string
	seen     map[string]bool // comm of every process sampled
	optFiles map[string]bool
}

func watchProcs(t *testing.T, secret, target string) *procWatch {
	w := &procWatch{seen: map[string]bool{}, optFiles: map[string]bool{}}
	w.procs = clustertest.WatchProcs(t, func(pid string) bool {
		comm, err := os.ReadFile("/proc/" + pid + "/comm")
		if err != nil {
			return false
		}
		name := strings.TrimSpace(string(comm))
		w.mu.Lock()
		defer w.mu.Unlock()
		w.seen[name] = true
		for _, f := range []string{"cmdline", "environ"} {
			b, err := os.ReadFile("/proc/" + pid + "/" + f)
			if err != nil {
				continue
			}
			if bytes.Contains(b, []byte(secret)) {
				w.leaks = append(w.leaks, fmt.Sprintf("%s (pid %s) %s", name, pid, f))
			}
			if f == "cmdline" && name == "mariadb-backup" && bytes.Contains(b, []byte("="+target+"/")) {
				for _, arg := range strings.Split(string(b), "\x00") {
					if file, ok := strings.CutPrefix(arg, "--defaults-file="); ok {
						w.optFiles[file] = true
					}
				}
			}
		}
		return true
	})
	return w
}

// end stops the watch and returns what it found and how many passes it
// made.
func (w *procWatch) end() (leaks []string, seen map[string]bool, samples int64) {
	samples = w.procs.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.leaks, w.seen, samples
}

// optionFiles lists the option files the watched cycle's processes were
// given; call it after end.
func (w *procWatch) optionFiles() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.optFiles))
}

// secretFiles lists the files under dir that hold secret.
func secretFiles(t *testing.T, dir, secret string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(secret)) {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// pairWriter commits rows into pair_a and pair_b together, one transaction
// each, until stopped: a dump that does not see one snapshot in all its
// connections finds the two tables' counts apart.
func pairWriter(t *testing.T, ctx context.Context, dsn string) (stop func() int64) {
	t.Helper()
	db := mariaDB(t, dsn)
	for _, s := range []string{"CREATE TABLE pair_a (id int PRIMARY KEY) ENGINE=InnoDB", "CREATE TABLE pair_b (id int PRIMARY KEY) ENGINE=InnoDB"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	var n atomic.Int64
	done := make(chan error, 1)
	go func() {
		var err error
		for i := 1; cctx.Err() == nil; i++ {
			var tx *sql.Tx
			if tx, err = db.BeginTx(cctx, nil); err != nil {
				break
			}
			_, err = tx.ExecContext(cctx, "INSERT INTO pair_a VALUES (?)", i)
			if err == nil {
				_, err = tx.ExecContext(cctx, "INSERT INTO pair_b VALUES (?)", i)
			}
			if err == nil {
				err = tx.Commit()
			} else {
				tx.Rollback()
			}
			if err != nil {
				break
			}
			n.Add(1)
		}
		if cctx.Err() != nil {
			err = nil
		}
		done <- err
	}()
	return func() int64 {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the writer beside the backup: %v", err)
		}
		return n.Load()
	}
}

// A physical and a logical cycle of a managed MariaDB with TPC-C: both
// phases timed, the restored copy verified (TPC-C's consistency
// conditions, row counts, every odd value, the routines, view and
// trigger), then gone; the logical dump sees one snapshot while a writer
// commits beside it; the password is on no process's command line or
// environment while the phases run, and in no file of the backup but the
// state file (0600) a physical backup carries.
func TestMariaDBBackupRestore(t *testing.T) {
	t.Parallel()
	ctx := mariaContext(t)
	dataDir, dsn := startMaria(t, ctx)
	cfg, err := mariadb.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	password := cfg.Passwd
	if len(password) < 8 {
		t.Fatalf("the managed server's password %q is too short to look for", password)
	}
	var srcDigest string
	if err := mariaDB(t, dsn).QueryRowContext(ctx, oddDigest).Scan(&srcDigest); err != nil {
		t.Fatal(err)
	}
	srcCounts, err := backup.CountTPCC(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}

	for _, logical := range []bool{false, true} {
		name := map[bool]string{false: "physical", true: "logical"}[logical]
		t.Run(name, func(t *testing.T) {
			target := filepath.Join(filepath.Dir(dataDir), "backups-"+name)
			var stopWriter func() int64
			if logical {
				stopWriter = pairWriter(t, ctx, dsn)
			}
			var verifiedDSN, digest string
			var pairs [2]int64
			o := backup.Options{DSN: dsn, DataDir: dataDir, Target: target, Logical: logical, Jobs: 3,
				Verify: func(ctx context.Context, dsn string) error {
					verifiedDSN = dsn
					counts, err := backup.CountTPCC(ctx, dsn)
					if err != nil {
						return err
					}
					if err := backup.CompareCounts(counts, srcCounts, srcCounts); err != nil {
						return err
					}
					db, err := mariadb.Open(ctx, dsn)
					if err != nil {
						return err
					}
					defer db.Close()
					res, err := db.CheckTPCC(ctx, engine.CheckOptions{Seed: 1})
					if err != nil {
						return err
					}
					if !res.OK {
						return fmt.Errorf("the consistency check failed: %+v", res)
					}
					pool := mariaDB(t, dsn)
					if err := pool.QueryRowContext(ctx, oddDigest).Scan(&digest); err != nil {
						return err
					}
					if logical {
						return pool.QueryRowContext(ctx, "SELECT (SELECT COUNT(*) FROM pair_a), (SELECT COUNT(*) FROM pair_b)").Scan(&pairs[0], &pairs[1])
					}
					return nil
				}}
			if err := o.Check(); err != nil {
				t.Fatal(err)
			}
			watch := watchProcs(t, password, target)
			b, dir, err := backup.Backup(ctx, o, 1)
			if err != nil {
				watch.end()
				t.Fatal(err)
			}
			wantMethod := map[bool][2]string{false: {"mariadb-backup", "mariadb-backup"}, true: {"tierbench-dump", "tierbench-load"}}[logical]
			if dir != o.BackupDir(1) || b.Phase != "backup" || b.Method != wantMethod[0] || b.Method != o.Method() || b.Cycle != 1 ||
				b.Bytes < 40<<20 || b.Seconds <= 0 || b.MBps <= 0 || b.Ended.Before(b.Started) {
				t.Errorf("backup phase %+v in %s", b, dir)
			}
			// The password: in the state file a physical backup carries
			// (0600), nowhere else.
			for _, f := range secretFiles(t, dir, password) {
				fi, err := os.Stat(f)
				switch {
				case err != nil:
					t.Error(err)
				case logical || filepath.Base(f) != server.StateFile:
					t.Errorf("the backup's %s holds the password", f)
				case fi.Mode().Perm() != 0o600:
					t.Errorf("the backup's state file %s has mode %v; want 0600", f, fi.Mode().Perm())
				}
			}
			if _, err := os.Stat(filepath.Join(dir, server.StateFile)); logical == (err == nil) {
				t.Errorf("the backup's state file: %v (logical %v)", err, logical)
			}
			var written int64
			if logical {
				written = stopWriter()
			}
			r, err := backup.Restore(ctx, o, 1, dir)
			leaks, seen, samples := watch.end()
			if err != nil {
				t.Fatal(err)
			}
			if r.Phase != "restore" || r.Method != wantMethod[1] || !r.Verified || r.Bytes != b.Bytes || r.Seconds <= 0 || r.MBps <= 0 {
				t.Errorf("restore phase %+v", r)
			}
			t.Logf("%s: backup %d bytes in %.2fs (%.0f MB/s), restore in %.2fs (%.0f MB/s)", name, b.Bytes, b.Seconds, b.MBps, r.Seconds, r.MBps)
			if len(leaks) > 0 {
				t.Errorf("the password was in %s", strings.Join(leaks, "; "))
			}
			tool := map[bool]string{false: "mariadb-backup", true: "dd"}[logical]
			if !seen[tool] || samples < 10 {
				t.Errorf("the process watch took %d samples and never saw %s: it proves nothing", samples, tool)
			}
			if digest != srcDigest {
				t.Errorf("the restored odd tables differ:\n got %s\nwant %s", digest, srcDigest)
			}
			if logical {
				t.Logf("the writer committed %d pairs; the restored copy has %d and %d", written, pairs[0], pairs[1])
				if pairs[0] != pairs[1] || pairs[0] == 0 {
					t.Errorf("the restored pair tables have %d and %d rows: not one snapshot (or the writer never wrote)", pairs[0], pairs[1])
				}
			}
			if verifiedDSN == dsn || verifiedDSN == "" || strings.Contains(verifiedDSN, "socket=") {
				t.Errorf("Verify was given %s, not the restored copy", verifiedDSN)
			}
			// The restored copy is gone: no directory, no server, no database.
			if exists(filepath.Join(target, "restore-1")) {
				t.Error("the restored data directory was left")
			}
			if err := mariaDB(t, verifiedDSN).PingContext(ctx); err == nil {
				t.Error("the restored database still answers")
			}
			// The source still answers, with its row counts.
			if c, err := backup.CountTPCC(ctx, dsn); err != nil || backup.CompareCounts(c, srcCounts, srcCounts) != nil {
				t.Errorf("source after the cycle: %v, %v", c, err)
			}
			if err := backup.Cleanup(ctx, target, false); err != nil || exists(target) {
				t.Errorf("Cleanup: %v; target left: %v", err, exists(target))
			}
			// Other tests' cycles run beside this one, on clones of the
			// same server (the same password), each with an option file of
			// its own: this cycle's is the one its mariadb-backup was given.
			files := watch.optionFiles()
			if !logical && len(files) == 0 {
				t.Error("the watch saw no mariadb-backup of this cycle given an option file")
			}
			for _, f := range files {
				if exists(filepath.Dir(f)) {
					t.Errorf("mariadb-backup's option file %s was left", f)
				}
			}
		})
	}
}

// Interrupted mid-phase: the context's error, the tools stopped, nothing
// partial left behind, for both methods.
func TestMariaDBInterrupted(t *testing.T) {
	t.Parallel()
	ctx := mariaContext(t)
	dataDir, dsn := startMaria(t, ctx)
	for _, logical := range []bool{false, true} {
		name := map[bool]string{false: "physical", true: "logical"}[logical]
		t.Run(name, func(t *testing.T) {
			target := filepath.Join(filepath.Dir(dataDir), "backups-"+name)
			o := backup.Options{DSN: dsn, DataDir: dataDir, Target: target, Logical: logical, Jobs: 2}
			first := map[bool]string{false: "ibdata1", true: "stock.0001.tsv"}[logical]
			cctx, cancel := cancelWhen(ctx, filepath.Join(o.BackupDir(1), first))
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
			if logical {
				cctx, cancel = cancelWhenLoading(ctx, t, dsn)
			} else {
				cctx, cancel = cancelWhen(ctx, filepath.Join(target, "restore-2", "ibdata1"))
			}
			_, err = backup.Restore(cctx, o, 2, dir)
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted restore: err = %v", err)
			}
			if exists(filepath.Join(target, "restore-2")) {
				t.Error("an interrupted restore left its data directory")
			}
			var n int
			if err := mariaDB(t, dsn).QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name LIKE 'tierbench\\_restore\\_%'").Scan(&n); err != nil || n != 0 {
				t.Errorf("restored databases left: %d, %v", n, err)
			}
			if !exists(dir) {
				t.Error("an interrupted restore removed the backup")
			}
			if err := backup.Cleanup(ctx, target, false); err != nil || exists(target) {
				t.Errorf("Cleanup: %v", err)
			}
		})
	}
}

// cancelWhenLoading cancels ctx once a logical restore on the server of
// dsn has created its stock table.
func cancelWhenLoading(ctx context.Context, t *testing.T, dsn string) (context.Context, func()) {
	db := mariaDB(t, dsn)
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		for cctx.Err() == nil {
			var n int
			err := db.QueryRowContext(cctx, `SELECT COUNT(*) FROM information_schema.tables
				WHERE table_schema LIKE 'tierbench\\_restore\\_%' AND table_name = 'stock'`).Scan(&n)
			if err == nil && n > 0 {
				cancel()
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return cctx, cancel
}

// Bad input is refused before anything runs, in one line that says what
// to do.
func TestMariaDBCheck(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	for _, tc := range []struct {
		name string
		o    backup.Options
		want string
	}{
		{"no database", backup.Options{DSN: "mariadb://u:pw@127.0.0.1:3306", Target: base, Logical: true}, "names no database"},
		{"pg-bin", backup.Options{DSN: "mariadb://u:pw@127.0.0.1:3306/db", Target: base, Logical: true, PgBin: "/usr/lib/postgresql/16/bin"}, "--pg-bin"},
		{"physical unmanaged", backup.Options{DSN: "mysql://u:pw@127.0.0.1:3306/db", Target: base}, "tierbench-dump/tierbench-load"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Check()
			if err == nil || !errors.Is(err, engine.ErrBadInput) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), ":pw@") {
				t.Errorf("Check: %v; want bad input about %s", err, tc.want)
			}
		})
	}
	if m := (backup.Options{DSN: "mysql://u:pw@h/db", Logical: true}).Method(); m != "tierbench-dump" {
		t.Errorf("Method() = %q", m)
	}
}

// A physical and a logical cycle with CgroupProcs do their I/O on the
// target inside the group: its byte counters account for what the backup
// wrote and what the restore read (and, physically, wrote), and the
// restored mariadbd runs in the group.
func TestMariaDBCycleInGroup(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "placing processes in a cgroup needs root")
	}
	ctx := mariaContext(t)
	dataDir, dsn := startMaria(t, ctx)
	base := filepath.Dir(dataDir)
	target := filepath.Join(base, "backups")
	dev, maj, min, err := server.DeviceFor(base)
	if err != nil {
		t.Logf("%v: the backups go to a loop-backed image", err)
		im, err := tier.Create(ctx, base, "backup-test", 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := im.Remove(context.Background()); err != nil {
				t.Errorf("removing the image: %v", err)
			}
		})
		target = filepath.Join(im.MountPoint, "backups")
		if dev, maj, min, err = server.DeviceFor(im.MountPoint); err != nil {
			t.Fatal(err)
		}
	}
	name := fmt.Sprintf("test-mbackup-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	const fast = 10e9 // bytes/s: a limit, so the device is the group's, that never holds anything back
	g, ap, err := cgroup.Create(name, cgroup.Limits{IO: []stored.IOLimit{{Major: maj, Minor: min, ReadBPS: fast, WriteBPS: fast}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Errorf("removing the group: %v", err)
		}
	})
	if len(ap.IO) == 0 {
		testenv.SkipOrFail(t, "no blkio/io cgroup controller to count the group's I/O: %s", ap.IONote)
	}
	statDir := ap.IOPath
	if statDir == "" {
		statDir = ap.Path
	}
	t.Logf("device %s (%d:%d), cgroup v%d, counters in %s", dev, maj, min, ap.Version, statDir)
	mb := func(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

	for _, logical := range []bool{false, true} {
		t.Run(map[bool]string{false: "physical", true: "logical"}[logical], func(t *testing.T) {
			var restoredIn string
			o := backup.Options{DSN: dsn, DataDir: dataDir, Target: target, Logical: logical, Jobs: 2, CgroupProcs: g.ProcsFiles(),
				Verify: func(ctx context.Context, dsn string) error {
					if logical {
						return nil
					}
					pid, err := os.ReadFile(filepath.Join(target, "restore-1", "mariadbd.pid"))
					if err != nil {
						return err
					}
					b, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/cgroup")
					restoredIn = string(b)
					return err
				}}
			if err := o.Check(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { backup.Cleanup(context.Background(), target, false) })
			r0, w0 := ioBytes(t, statDir, ap.Version, maj, min)
			b, dir, err := backup.Backup(ctx, o, 1)
			if err != nil {
				t.Fatal(err)
			}
			r1, w1 := ioBytes(t, statDir, ap.Version, maj, min)
			r, err := backup.Restore(ctx, o, 1, dir)
			if err != nil {
				t.Fatal(err)
			}
			r2, w2 := ioBytes(t, statDir, ap.Version, maj, min)
			t.Logf("backup of %s in %.2fs: the group read %s, wrote %s; restore in %.2fs: read %s, wrote %s",
				mb(b.Bytes), b.Seconds, mb(r1-r0), mb(w1-w0), r.Seconds, mb(r2-r1), mb(w2-w1))
			half := b.Bytes / 2
			if b.Bytes < 20<<20 {
				t.Fatalf("a backup of %d bytes is too small to tell", b.Bytes)
			}
			if w1-w0 < half {
				t.Errorf("the backup wrote %s inside the group; want at least half the backup's %s", mb(w1-w0), mb(b.Bytes))
			}
			if r2-r1 < half {
				t.Errorf("the restore read %s inside the group; want at least half the backup's %s", mb(r2-r1), mb(b.Bytes))
			}
			if logical {
				return // the restored database is the source server's to write
			}
			if w2-w1 < half {
				t.Errorf("the restore wrote %s inside the group; want at least half the backup's %s", mb(w2-w1), mb(b.Bytes))
			}
			if want := "/tierbench/" + name + "\n"; !strings.Contains(restoredIn, want) {
				t.Errorf("the restored mariadbd is not in the group; its /proc/PID/cgroup:\n%s", restoredIn)
			}
		})
	}
}
