// Package backup is the backup and restore benchmark: it backs up a
// PostgreSQL server onto the storage under test and restores it from there,
// timing each phase, the way the white papers' backup test does.
//
// Physical (the default): pg_basebackup copies the whole cluster into
// TARGET/cycle-N; a restore copies that backup into a fresh data directory,
// TARGET/restore-N, and starts it as a managed server, which replays the WAL
// the backup carries. Logical: pg_dump -Fd -j N writes TARGET/cycle-N; a
// restore is pg_restore -j N into a fresh database on the same server.
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

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/server"
)

// Methods, as a Phase names them.
const (
	MethodBasebackup = "pg_basebackup"
	MethodDump       = "pg_dump"
	MethodRestore    = "pg_restore"
)

// Phases of a cycle.
const (
	PhaseBackup  = "backup"
	PhaseRestore = "restore"
)

// restoreStartTimeout bounds the wait for a restored server to replay its
// WAL and accept connections (ctx can end it sooner).
const restoreStartTimeout = 6 * time.Hour

// Options say what to back up, where to, and how.
type Options struct {
	// DSN is the source server (password inside; never printed: engine.Redact).
	DSN string
	// DataDir is the source's managed data directory when tierbench manages
	// it, "" otherwise. A physical backup is given to its owner, so that a
	// restored copy starts as the same user.
	DataDir string
	// Target is the directory on the storage under test where backups go
	// (see Prepare).
	Target string
	// Logical uses pg_dump -Fd -j Jobs / pg_restore -j Jobs instead of
	// pg_basebackup.
	Logical bool
	// Jobs is the parallel jobs of the logical mode (default: number of CPUs).
	Jobs int
	// PgBin is the directory of pg_basebackup/pg_dump/pg_restore; default:
	// the server's binaries (server.FindBinaries), else PATH.
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
	// a phase's I/O starts inside the group (cgroup.Command): pg_basebackup,
	// pg_dump and pg_restore, the restore's copy and its fsync, and the
	// restored server's postmaster, so that on a throttled tier a backup or
	// a restore is as slow as the tier. What does not run inside is the
	// source server, reading its files for pg_basebackup or pg_dump (in its
	// own group, when it has one), and the untimed work around the phases
	// (dropping the page cache, chown, removing a restored copy). On cgroup
	// v1, buffered writes the kernel writes back on its own escape the group
	// (cgroup.V1WritebackNote); each phase fsyncs what it wrote from inside.
	CgroupProcs []string
}

// Phase is one timed backup or restore.
type Phase struct {
	Cycle   int     `json:"cycle"`
	Phase   string  `json:"phase"`  // "backup" | "restore"
	Method  string  `json:"method"` // "pg_basebackup" | "pg_dump" | "pg_restore"
	Seconds float64 `json:"seconds"`
	Bytes   int64   `json:"bytes"`
	MBps    float64 `json:"mbps"` // bytes / 1e6 / seconds
	// Started and Ended bound what Seconds measures.
	Started time.Time `json:"-"`
	Ended   time.Time `json:"-"`
	// Verified says Verify passed on the restored database (restore only).
	Verified bool `json:"verified,omitempty"`
	// ColdCache says what the phase reads was dropped from the page cache
	// before it started (see Options.KeepCache).
	ColdCache bool `json:"cold_cache"`
}

func (p *Phase) finish(bytes int64) {
	p.Bytes = bytes
	p.Seconds = p.Ended.Sub(p.Started).Seconds()
	if p.Seconds > 0 {
		p.MBps = float64(bytes) / 1e6 / p.Seconds
	}
}

// Method is the method of o's backups.
func (o Options) Method() string {
	if o.Logical {
		return MethodDump
	}
	return MethodBasebackup
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

// errNeedManaged says why a physical restore needs a managed source.
var errNeedManaged = engine.InputErrorf("a physical restore starts the backup as a managed server, so the source must be a server " +
	"tierbench manages on this host (give its data directory); for any other server use the logical mode (pg_dump/pg_restore)")

// Check finds what o needs before anything runs: a DSN, a target, the
// source's data directory for a physical restore, and the PostgreSQL tools.
// Bad input is engine.ErrBadInput.
func (o Options) Check() error {
	if _, _, err := clientConn(o.DSN); err != nil {
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
	tools := []string{MethodDump, MethodRestore}
	if !o.Logical {
		if o.DataDir == "" {
			return errNeedManaged
		}
		// The restored copy runs as the source's user, inside the target.
		if err := server.CheckReachable(o.restoreDir(1), o.DataDir); err != nil {
			return err
		}
		tools = []string{MethodBasebackup}
	}
	for _, t := range tools {
		if _, err := findTool(o.PgBin, t); err != nil {
			return err
		}
	}
	return nil
}

// Backup backs up the source into BackupDir(cycle) (replacing an earlier
// backup of that cycle that tierbench made) and returns the timed phase and
// the backup's directory. Bytes is the size of what was written. On any
// error, ctx's included, the partial backup is removed.
func Backup(ctx context.Context, o Options, cycle int) (Phase, string, error) {
	ph := Phase{Cycle: cycle, Phase: PhaseBackup, Method: o.Method()}
	if err := Prepare(o.Target); err != nil {
		return ph, "", err
	}
	tool, err := findTool(o.PgBin, ph.Method)
	if err != nil {
		return ph, "", err
	}
	conn, password, err := clientConn(o.DSN)
	if err != nil {
		return ph, "", err
	}
	dir := o.BackupDir(cycle)
	if err := os.RemoveAll(dir); err != nil { // ours: an earlier run's --keep
		return ph, "", err
	}
	var args []string
	if o.Logical {
		// Uncompressed: the benchmark measures the storage, not gzip on
		// the CPUs (pg_dump -Fd compresses by default).
		args = []string{"--format=directory", "--jobs=" + strconv.Itoa(o.jobs()), "--compress=0", "--file=" + dir,
			"--no-password", "--dbname=" + conn}
	} else {
		// Plain format with the WAL streamed beside it: a directory that
		// starts as is. -c fast: the backup does not wait for a scheduled
		// checkpoint. Synced (no --no-sync): a backup must be durable.
		args = []string{"--pgdata=" + dir, "--format=plain", "--wal-method=stream", "--checkpoint=fast",
			"--no-password", "--dbname=" + conn}
	}
	ph.ColdCache = o.dropCache(o.DataDir)
	ph.Started = time.Now()
	err = runTool(ctx, o.CgroupProcs, tool, args, password)
	ph.Ended = time.Now()
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
	ph.finish(size)
	if !o.Logical && o.DataDir != "" {
		// Root's pg_basebackup wrote root's files; the server's user must
		// own its restored copy.
		if err := server.ChownToManaged(dir, o.DataDir); err != nil {
			return ph, "", fmt.Errorf("giving the backup %s to the server's user: %w", dir, err)
		}
	}
	return ph, dir, nil
}

// Restore restores the backup in backupDir and times it; then, outside the
// timing, calls o.Verify on the restored database and removes it.
//
// Physical: Seconds is the copy of the backup into TARGET/restore-N plus the
// start of a managed server there (WAL replay included) until it accepts
// connections. Logical: Seconds is pg_restore into a fresh database on the
// source server. Bytes is the backup's size. A failed verification returns
// the phase (Verified false) with an error.
func Restore(ctx context.Context, o Options, cycle int, backupDir string) (Phase, error) {
	if o.Logical {
		return restoreLogical(ctx, o, cycle, backupDir)
	}
	return restorePhysical(ctx, o, cycle, backupDir)
}

func restorePhysical(ctx context.Context, o Options, cycle int, backupDir string) (ph Phase, err error) {
	ph = Phase{Cycle: cycle, Phase: PhaseRestore, Method: MethodBasebackup}
	if o.DataDir == "" {
		return ph, errNeedManaged
	}
	size, err := dirSize(backupDir)
	if err != nil {
		return ph, err
	}
	dir := o.restoreDir(cycle)
	bg := context.WithoutCancel(ctx)
	removeRestored(bg, dir) // an earlier run's, killed before its cleanup
	defer removeRestored(bg, dir)

	ph.ColdCache = o.dropCache(backupDir)
	ph.Started = time.Now()
	err = copyBackup(ctx, o.CgroupProcs, backupDir, dir)
	var info server.Info
	if err == nil {
		info, err = server.Start(ctx, server.Options{DataDir: dir, NewPort: true, KeepConfig: true,
			StartTimeout: restoreStartTimeout, CgroupProcs: o.CgroupProcs})
	}
	ph.Ended = time.Now()
	if err != nil {
		if ctx.Err() != nil {
			return ph, fmt.Errorf("restore %d interrupted: %w", cycle, ctx.Err())
		}
		return ph, fmt.Errorf("restore %d: %w", cycle, err)
	}
	ph.finish(size)
	dsn, err := withPort(o.DSN, info.Port)
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

func restoreLogical(ctx context.Context, o Options, cycle int, backupDir string) (ph Phase, err error) {
	ph = Phase{Cycle: cycle, Phase: PhaseRestore, Method: MethodRestore}
	tool, err := findTool(o.PgBin, MethodRestore)
	if err != nil {
		return ph, err
	}
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
	if err := adminExec(ctx, o.DSN, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0"); err != nil {
		return ph, fmt.Errorf("restore %d: creating database %s: %w", cycle, name, err)
	}
	defer func() {
		derr := adminExec(context.WithoutCancel(ctx), o.DSN, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		if derr != nil && err == nil {
			err = fmt.Errorf("restore %d: dropping the restored database %s: %w", cycle, name, derr)
		}
	}()
	dsn, err := withDatabase(o.DSN, name)
	if err != nil {
		return ph, err
	}
	conn, password, err := clientConn(dsn)
	if err != nil {
		return ph, err
	}
	// --no-owner: the restoring user owns what it restores, so a DSN that is
	// not a superuser restores too.
	args := []string{"--jobs=" + strconv.Itoa(o.jobs()), "--exit-on-error", "--no-owner", "--no-password",
		"--dbname=" + conn, backupDir}
	ph.ColdCache = o.dropCache(backupDir)
	ph.Started = time.Now()
	err = runTool(ctx, o.CgroupProcs, tool, args, password)
	ph.Ended = time.Now()
	if err != nil {
		if ctx.Err() != nil {
			return ph, fmt.Errorf("restore %d interrupted: %w", cycle, ctx.Err())
		}
		return ph, fmt.Errorf("restore %d: %w", cycle, err)
	}
	ph.finish(size)
	return ph, verify(ctx, o, &ph, dsn)
}

func verify(ctx context.Context, o Options, ph *Phase, dsn string) error {
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

// adminExec runs one statement on the source server.
func adminExec(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return errors.New(redact(err.Error(), dsn))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, sql); err != nil {
		return errors.New(redact(err.Error(), dsn))
	}
	return nil
}

func redact(s, dsn string) string {
	if pw := engine.PasswordOf(dsn); pw != "" {
		s = strings.ReplaceAll(s, pw, "xxxxx")
	}
	return s
}

// pgxOnly are DSN parameters pgx understands and libpq (pg_dump & co.)
// refuses.
var pgxOnly = []string{"statement_cache_capacity", "description_cache_capacity", "default_query_exec_mode",
	"min_read_buffer_size", "pool_max_conns", "pool_min_conns", "pool_max_conn_lifetime", "pool_max_conn_idle_time",
	"pool_health_check_period", "pool_max_conn_lifetime_jitter", "pool_min_idle_conns"}

// clientConn splits a DSN into a connection string for the PostgreSQL tools'
// command line, without the password (command lines are world-readable in
// /proc), and the password, which goes to them as PGPASSWORD.
func clientConn(dsn string) (conn, password string, err error) {
	u, err := url.Parse(dsn)
	if err == nil && (u.Scheme == "" || u.Opaque != "") {
		err = errors.New("no scheme://")
	}
	if err != nil {
		return "", "", engine.InputErrorf("DSN %q is not a URL: %s", engine.Redact(dsn), redact(err.Error(), dsn))
	}
	// The userinfo's password, or a password parameter's, which wins (in
	// libpq too).
	password = engine.PasswordOf(dsn)
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	q.Del("password")
	for _, k := range pgxOnly {
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	u.Fragment, u.RawFragment = "", "" // no client reads it, and it could hold anything
	return u.String(), password, nil
}

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
