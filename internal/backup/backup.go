// Package backup is the backup and restore benchmark: it backs up a database
// server onto the storage under test and restores it from there, timing each
// phase, the way the white papers' backup test does.
//
// The benchmark itself (the target, the phases and their timing, the page
// cache, the restored copy's life, verification and clean-up) is the same
// for every engine; what backs up and restores one engine's server is its
// method (the method interface), chosen by the engine of the DSN:
// postgres.go for PostgreSQL, mariadb.go and dump.go for MariaDB.
//
// Physical (the default): a copy of the whole server goes to TARGET/cycle-N
// (pg_basebackup; mariadb-backup --backup); a restore turns that backup into
// a fresh data directory, TARGET/restore-N, and starts it as a managed
// server, which replays the log the backup carries. Logical: a parallel dump
// writes TARGET/cycle-N (pg_dump -Fd -j N; tierbench's own dump of MariaDB);
// a restore loads it into a fresh database on the same server (pg_restore
// -j N; tierbench's parallel LOAD DATA).
//
// tierbench deletes only what it made: the target directory (when it created
// it), the marker file that says it prepared the target, and the cycle-N
// and restore-N directories in it.
package backup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// Methods, as a Phase names them.
const (
	MethodBasebackup = "pg_basebackup"
	MethodDump       = "pg_dump"
	MethodRestore    = "pg_restore"
	// MethodMariaBackup is MariaDB's physical backup and its restore
	// (mariadb-backup --backup; --prepare and --copy-back).
	MethodMariaBackup = "mariadb-backup"
	// MethodMariaDump and MethodMariaLoad are MariaDB's logical backup and
	// restore: tierbench's own parallel dump of one consistent snapshot,
	// and its parallel LOAD DATA (see dump.go).
	MethodMariaDump = "tierbench-dump"
	MethodMariaLoad = "tierbench-load"
)

// restoreStartTimeout bounds the wait for a restored server to replay its
// log and accept connections (ctx can end it sooner).
const restoreStartTimeout = 6 * time.Hour

// Options say what to back up, where to, and how.
type Options struct {
	// DSN is the source server (password inside; never printed: engine.Redact).
	DSN string
	// Engine is the source's engine, as internal/engine/all names it
	// ("postgres", "mariadb"); "" means the engine the DSN's scheme selects
	// (all.NameOf).
	Engine string
	// DataDir is the source's managed data directory when tierbench manages
	// it, "" otherwise. A physical backup is given to its owner, so that a
	// restored copy starts as the same user.
	DataDir string
	// Target is the directory on the storage under test where backups go
	// (see Prepare).
	Target string
	// Logical uses the engine's logical method with Jobs parallel workers
	// (pg_dump -Fd -j Jobs / pg_restore -j Jobs; tierbench-dump and
	// tierbench-load for MariaDB) instead of the physical one.
	Logical bool
	// Jobs is the parallel jobs of the logical mode (default: number of CPUs).
	Jobs int
	// PgBin is the directory of PostgreSQL's pg_basebackup/pg_dump/pg_restore;
	// default: the server's binaries (server.FindBinaries), else PATH. It
	// concerns PostgreSQL only: MariaDB's mariadb-backup is found on PATH.
	PgBin string
	// Verify, when set, is called on the restored database; its verdict is
	// Phase.Verified.
	Verify func(ctx context.Context, dsn string) error
	// KeepCache leaves the page cache as it is. By default what a phase
	// reads is dropped from it first (the source's data directory before a
	// backup, the backup before a restore), so that it reads from the
	// storage as the backup of a database larger than memory does, not
	// from memory as a small test database would.
	KeepCache bool
	// CgroupProcs are the cgroup.procs files of the I/O group every phase
	// runs in, typically within the budget of the emulated tier the target
	// is on (see cgroup.Limits.IOGroup); none: no group. Each process doing
	// a phase's I/O starts inside the group (cgroup.Command), so that on a
	// throttled tier a backup or a restore is as slow as the tier:
	//
	//   - PostgreSQL: pg_basebackup, pg_dump and pg_restore, the restore's
	//     copy and its fsync, and the restored server's postmaster. The source
	//     server reads its files for pg_basebackup or pg_dump in its own group.
	//   - MariaDB physical: mariadb-backup (which reads the source's files
	//     itself, so those reads are inside too) and the fsync of what it
	//     wrote, --prepare and --copy-back and their fsync, and the restored
	//     mariadbd.
	//   - MariaDB logical: the children that write each dump file (dd
	//     conv=fsync, fed through a pipe) and read it back for LOAD DATA
	//     (dd), and the fsync of the directory. tierbench itself, which turns
	//     rows into text and back, and the source server, which reads its
	//     tables and writes the restored ones, are not inside.
	//
	// Nor is the untimed work around the phases (dropping the page cache,
	// chown, removing a restored copy). On cgroup v1, buffered writes the
	// kernel writes back on its own escape the group
	// (cgroup.V1WritebackNote); each phase fsyncs what it wrote from inside.
	CgroupProcs []string
	// Workload, when set, holds a restored copy's server while it runs:
	// telemetry then counts its CPU as the workload's, not as other
	// processes'.
	Workload *telemetry.Workload
}

// finish sets what p measured, bytes over the time Started and Ended bound.
func finish(p *stored.Phase, bytes int64) {
	p.Bytes = bytes
	p.Seconds = p.Ended.Sub(p.Started).Seconds()
	if p.Seconds > 0 {
		p.MBps = float64(bytes) / 1e6 / p.Seconds
	}
}

// timePhase drops what the phase reads, under reads, from the page cache (unless
// o keeps it), then runs f: Started and Ended bound f.
func timePhase(p *stored.Phase, o Options, reads string, f func() error) error {
	before := time.Now()
	p.ColdCache = o.dropCache(reads)
	p.Started = time.Now()
	if p.ColdCache {
		p.DropCacheMs = float64(p.Started.Sub(before).Microseconds()) / 1e3
	}
	err := f()
	p.Ended = time.Now()
	return err
}

// method is how one engine's server is backed up and restored: the seam
// between the benchmark, which is the same for every engine, and the
// engine's tools. Its errors say what went wrong without the phase and
// cycle, which the caller adds, and never show the password.
type method interface {
	// names are the Phase.Method of a backup of this kind (logical or
	// physical) and of its restore.
	names(logical bool) (backup, restore string)
	// checkDSN says whether dsn is a DSN of this engine the tools can use.
	checkDSN(dsn string) error
	// checkTools finds the programs o needs, before anything runs.
	checkTools(o Options) error
	// backup writes the backup of o's source into dir, which does not
	// exist, timing with ph.time what the phase measures. On an error the
	// caller removes dir.
	backup(ctx context.Context, o Options, ph *stored.Phase, dir string) error
	// place turns the physical backup in backupDir into the data directory
	// dir (which does not exist), ready for server.Start: what a physical
	// restore times before the start.
	place(ctx context.Context, o Options, backupDir, dir string) error
	// restoredDSN is dsn pointed at a restored copy of its server,
	// listening on 127.0.0.1:port, with the source's users and databases.
	restoredDSN(dsn string, port int) (string, error)
	// createDatabase makes the empty database name on the server of dsn,
	// for a logical restore of the backup in backupDir; dropDatabase
	// removes it again.
	createDatabase(ctx context.Context, dsn, backupDir, name string) error
	dropDatabase(ctx context.Context, dsn, name string) error
	// load restores the logical backup in backupDir into the empty
	// database of dsn: what a logical restore times.
	load(ctx context.Context, o Options, backupDir, dsn string) error
	// countTPCC counts the rows of the nine TPC-C tables in one snapshot.
	countTPCC(ctx context.Context, dsn string) (Counts, error)
}

// methodOf is the method of the engine named (all's names); "" is the
// engine of dsn.
func methodOf(name, dsn string) (method, error) {
	if name == "" {
		n, err := all.NameOf(dsn)
		if err != nil {
			return nil, err
		}
		name = n
	}
	switch name {
	case server.EnginePostgres:
		return postgresMethod{}, nil
	case server.EngineMariaDB:
		return mariaMethod{}, nil
	}
	return nil, engine.InputErrorf("tierbench cannot back up %s servers; it backs up PostgreSQL and MariaDB", all.Display(name))
}

func (o Options) method() (method, error) { return methodOf(o.Engine, o.DSN) }

// Method is the method of o's backups ("" when o's engine is not one
// tierbench backs up).
func (o Options) Method() string {
	m, err := o.method()
	if err != nil {
		return ""
	}
	b, _ := m.names(o.Logical)
	return b
}

func (o Options) jobs() int {
	if o.Jobs > 0 {
		return o.Jobs
	}
	return runtime.NumCPU()
}

// BackupDir is where the backup of cycle goes.
func (o Options) BackupDir(cycle int) string {
	return filepath.Join(o.Target, "cycle-"+strconv.Itoa(cycle))
}

func (o Options) restoreDir(cycle int) string {
	return filepath.Join(o.Target, "restore-"+strconv.Itoa(cycle))
}

// needManaged says why a physical restore needs a managed source.
func needManaged(m method) error {
	b, r := m.names(true)
	return engine.InputErrorf("a physical restore starts the backup as a managed server, so the source must be a server "+
		"tierbench manages on this host (give its data directory); for any other server use the logical mode (%s/%s)", b, r)
}

// Check finds what o needs before anything runs: a DSN of an engine
// tierbench backs up, a target, the source's data directory for a physical
// restore, and the engine's tools. Bad input is engine.ErrBadInput.
func (o Options) Check() error {
	m, err := o.method()
	if err != nil {
		return err
	}
	if err := m.checkDSN(o.DSN); err != nil {
		return err
	}
	if strings.TrimSpace(o.Target) == "" {
		return engine.InputErrorf("no backup target given")
	}
	if o.DataDir != "" {
		t, err1 := filepath.Abs(o.Target)
		d, err2 := filepath.Abs(o.DataDir)
		if err1 == nil && err2 == nil && (t == d || strings.HasPrefix(t, d+string(filepath.Separator))) {
			return engine.InputErrorf("backup target %s is inside the source's data directory %s; a backup would copy itself: give a directory outside it", o.Target, o.DataDir)
		}
	}
	if !o.Logical {
		if o.DataDir == "" {
			return needManaged(m)
		}
		// The restored copy runs as the source's user, inside the target.
		if err := server.CheckReachable(o.restoreDir(1), o.DataDir); err != nil {
			return err
		}
	}
	return m.checkTools(o)
}

// Backup backs up the source into BackupDir(cycle) (replacing an earlier
// backup of that cycle that tierbench made) and returns the timed phase and
// the backup's directory. Bytes is the size of what was written. On any
// error, ctx's included, the partial backup is removed.
func Backup(ctx context.Context, o Options, cycle int) (stored.Phase, string, error) {
	ph := stored.Phase{Cycle: cycle, Phase: stored.PhaseBackup}
	m, err := o.method()
	if err != nil {
		return ph, "", err
	}
	ph.Method, _ = m.names(o.Logical)
	if err := Prepare(o.Target); err != nil {
		return ph, "", err
	}
	dir := o.BackupDir(cycle)
	if err := os.RemoveAll(dir); err != nil { // ours: an earlier run's --keep
		return ph, "", err
	}
	err = m.backup(ctx, o, &ph, dir)
	if err != nil {
		os.RemoveAll(dir)
		if ctx.Err() != nil {
			return ph, "", fmt.Errorf("backup %d interrupted: %w", cycle, ctx.Err())
		}
		return ph, "", fmt.Errorf("backup %d: %w", cycle, err)
	}
	size, err := dirSize(dir)
	if err != nil {
		return ph, "", err
	}
	finish(&ph, size)
	return ph, dir, nil
}

// Restore restores the backup in backupDir and times it; then, outside the
// timing, calls o.Verify on the restored database and removes it.
//
// Physical: Seconds is the making of TARGET/restore-N from the backup (a
// copy; for MariaDB mariadb-backup --prepare and --copy-back) plus the
// start of a managed server there (log replay included) until it accepts
// connections. Logical: Seconds is the load into a fresh database on the
// source server. Bytes is the backup's size. A failed verification returns
// the phase (Verified false) with an error.
func Restore(ctx context.Context, o Options, cycle int, backupDir string) (stored.Phase, error) {
	m, err := o.method()
	if err != nil {
		return stored.Phase{Cycle: cycle, Phase: stored.PhaseRestore}, err
	}
	if o.Logical {
		return restoreLogical(ctx, o, m, cycle, backupDir)
	}
	return restorePhysical(ctx, o, m, cycle, backupDir)
}

func restorePhysical(ctx context.Context, o Options, m method, cycle int, backupDir string) (ph stored.Phase, err error) {
	ph = stored.Phase{Cycle: cycle, Phase: stored.PhaseRestore}
	_, ph.Method = m.names(false)
	if o.DataDir == "" {
		return ph, needManaged(m)
	}
	size, err := dirSize(backupDir)
	if err != nil {
		return ph, err
	}
	dir := o.restoreDir(cycle)
	bg := context.WithoutCancel(ctx)
	removeRestored(bg, dir) // an earlier run's, killed before its cleanup
	var info server.Info
	defer func() { o.Workload.Remove(info.PID) }() // once it is stopped
	defer removeRestored(bg, dir)

	err = timePhase(&ph, o, backupDir, func() error {
		if err := m.place(ctx, o, backupDir, dir); err != nil {
			return err
		}
		var err error
		info, err = server.Start(ctx, server.Options{DataDir: dir, NewPort: true, KeepConfig: true,
			StartTimeout: restoreStartTimeout, CgroupProcs: o.CgroupProcs})
		o.Workload.Add(info.PID)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return ph, fmt.Errorf("restore %d interrupted: %w", cycle, ctx.Err())
		}
		return ph, fmt.Errorf("restore %d: %w", cycle, err)
	}
	finish(&ph, size)
	dsn, err := m.restoredDSN(o.DSN, info.Port)
	if err != nil {
		return ph, err
	}
	return ph, verify(ctx, o, &ph, dsn)
}

// removeRestored stops a restored server, if one runs in dir, and removes
// dir. dir is always TARGET/restore-N: tierbench's.
func removeRestored(ctx context.Context, dir string) {
	if _, err := os.Lstat(dir); err != nil {
		return
	}
	server.Stop(ctx, dir, "immediate") // not managed, or not running: nothing to stop
	os.RemoveAll(dir)
}

func restoreLogical(ctx context.Context, o Options, m method, cycle int, backupDir string) (ph stored.Phase, err error) {
	ph = stored.Phase{Cycle: cycle, Phase: stored.PhaseRestore}
	_, ph.Method = m.names(true)
	size, err := dirSize(backupDir)
	if err != nil {
		return ph, err
	}
	// A name of its own, so tierbench never drops a database it did not
	// make: tierbench_restore_CYCLE_RANDOM.
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return ph, err
	}
	name := fmt.Sprintf("tierbench_restore_%d_%s", cycle, hex.EncodeToString(b))
	if err := m.createDatabase(ctx, o.DSN, backupDir, name); err != nil {
		return ph, fmt.Errorf("restore %d: creating database %s: %w", cycle, name, err)
	}
	defer func() {
		derr := m.dropDatabase(context.WithoutCancel(ctx), o.DSN, name)
		if derr != nil && err == nil {
			err = fmt.Errorf("restore %d: dropping the restored database %s: %w", cycle, name, derr)
		}
	}()
	dsn, err := withDatabase(o.DSN, name)
	if err != nil {
		return ph, err
	}
	err = timePhase(&ph, o, backupDir, func() error { return m.load(ctx, o, backupDir, dsn) })
	if err != nil {
		if ctx.Err() != nil {
			return ph, fmt.Errorf("restore %d interrupted: %w", cycle, ctx.Err())
		}
		return ph, fmt.Errorf("restore %d: %w", cycle, err)
	}
	finish(&ph, size)
	return ph, verify(ctx, o, &ph, dsn)
}

func verify(ctx context.Context, o Options, ph *stored.Phase, dsn string) error {
	if o.Verify == nil {
		return nil
	}
	if err := o.Verify(ctx, dsn); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("restore %d interrupted while verifying: %w", ph.Cycle, ctx.Err())
		}
		return fmt.Errorf("restore %d: the restored database failed verification: %w", ph.Cycle, err)
	}
	ph.Verified = true
	return nil
}

// redact returns s (a driver's or a tool's error) with dsn, should s quote
// it or a part of it that holds the password, redacted: engine.RedactIn,
// never a search for the password itself, which would garble ordinary words.
func redact(s, dsn string) string { return engine.RedactIn(s, dsn) }

// withPort is dsn pointed at 127.0.0.1:port: the restored copy of a managed
// server, with the source's users, passwords and databases.
func withPort(dsn string, port int) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", engine.InputErrorf("DSN %s is not a URL", engine.Redact(dsn))
	}
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	q := u.Query()
	q.Del("host") // a socket directory or host in the query would win over u.Host
	q.Del("port")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// withDatabase is dsn pointed at database name.
func withDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", engine.InputErrorf("DSN %s is not a URL", engine.Redact(dsn))
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String(), nil
}

// dirSize is the bytes of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	return n, err
}

// ErrRefused marks a target tierbench will not write to: bad input.
var ErrRefused = errors.New("target refused")

type refusedError struct{ msg string }

func (e *refusedError) Error() string        { return e.msg }
func (e *refusedError) Is(target error) bool { return target == ErrRefused }

// MarkerFile, in a target, says tierbench prepared it and whether it created
// the directory itself.
const MarkerFile = ".tierbench-backup"

type marker struct {
	Created bool      `json:"created"`
	At      time.Time `json:"at"`
}

// Prepare makes target ready for backups: a missing directory is created
// (with its parents, searchable so a managed server's user can reach a
// restored copy inside), an empty one adopted, one tierbench prepared
// before reused. Anything else is refused (ErrRefused): tierbench writes and
// deletes only where it made its mark.
func Prepare(target string) error {
	if strings.TrimSpace(target) == "" {
		return &refusedError{"no backup target given"}
	}
	fi, err := os.Stat(target)
	created := false
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(target, 0o755); err != nil {
			return fmt.Errorf("creating the backup target: %w", err)
		}
		if err := os.Chmod(target, 0o755); err != nil {
			return err
		}
		created = true
	case err != nil:
		return err
	case !fi.IsDir():
		return &refusedError{fmt.Sprintf("backup target %s is not a directory; give a new or empty directory, or one tierbench prepared before", target)}
	default:
		if _, err := os.Stat(filepath.Join(target, MarkerFile)); err == nil {
			return nil
		}
		entries, err := os.ReadDir(target)
		if err != nil {
			return err
		}
		if len(entries) > 0 {
			return &refusedError{fmt.Sprintf("backup target %s is not empty and tierbench did not prepare it (no %s); give a new or empty directory",
				target, MarkerFile)}
		}
	}
	b, _ := json.Marshal(marker{Created: created, At: time.Now().UTC()})
	if err := os.WriteFile(filepath.Join(target, MarkerFile), append(b, '\n'), 0o644); err != nil {
		if created {
			os.Remove(target)
		}
		return fmt.Errorf("marking the backup target: %w", err)
	}
	return nil
}

// Cleanup removes what tierbench made in target: restored copies (stopping
// their servers), and unless keep the backups, the marker and the target
// itself when tierbench created it. A target without the marker is left
// alone.
func Cleanup(ctx context.Context, target string, keep bool) error {
	mb, err := os.ReadFile(filepath.Join(target, MarkerFile))
	if err != nil {
		return nil // not prepared by tierbench (or gone): nothing of ours
	}
	var m marker
	_ = json.Unmarshal(mb, &m) // unreadable: treat as adopted, keep the directory
	entries, err := os.ReadDir(target)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		p := filepath.Join(target, e.Name())
		switch {
		case isOurs(e.Name(), "restore-"):
			removeRestored(ctx, p)
			if _, err := os.Lstat(p); err == nil {
				errs = append(errs, fmt.Errorf("could not remove %s", p))
			}
		case isOurs(e.Name(), "cycle-") && !keep:
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if keep || len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := os.Remove(filepath.Join(target, MarkerFile)); err != nil {
		return err
	}
	if m.Created {
		if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing the backup target tierbench created: %w", err)
		}
	}
	return nil
}

// isOurs matches the names tierbench gives: prefix and a cycle number.
func isOurs(name, prefix string) bool {
	n, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil
}
