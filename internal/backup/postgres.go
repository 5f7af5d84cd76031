package backup

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// postgresMethod backs up PostgreSQL with its own tools. Physical:
// pg_basebackup copies the whole cluster, WAL streamed beside it, into
// TARGET/cycle-N; a restore copies that into TARGET/restore-N (copyBackup)
// and starts it as a managed server, which replays the WAL. Logical:
// pg_dump -Fd -j N writes TARGET/cycle-N; a restore is pg_restore -j N
// into a fresh database on the same server.
type postgresMethod struct{}

func (postgresMethod) names(logical bool) (string, string) {
	if logical {
		return MethodDump, MethodRestore
	}
	return MethodBasebackup, MethodBasebackup
}

func (postgresMethod) checkDSN(dsn string) error {
	_, _, err := clientConn(dsn)
	return err
}

func (postgresMethod) checkTools(o Options) error {
	tools := []string{MethodDump, MethodRestore}
	if !o.Logical {
		tools = []string{MethodBasebackup}
	}
	for _, t := range tools {
		if _, err := findTool(o.PgBin, t); err != nil {
			return err
		}
	}
	return nil
}

func (postgresMethod) backup(ctx context.Context, o Options, ph *stored.Phase, dir string) error {
	tool, err := findTool(o.PgBin, ph.Method)
	if err != nil {
		return err
	}
	conn, password, err := clientConn(o.DSN)
	if err != nil {
		return err
	}
	var args []string
	if o.Logical {
		// Uncompressed: the benchmark measures the storage, not gzip on
		// the CPUs (pg_dump -Fd compresses by default).
		args = []string{"--format=directory", "--jobs=" + strconv.Itoa(o.jobs()), "--compress=0", "--file=" + dir,
			"--no-password", "--dbname=" + conn}
	} else {
		release, err := holdWAL(ctx, o.DSN)
		if err != nil {
			return err
		}
		defer release()
		// Plain format with the WAL streamed beside it: a directory that
		// starts as is. -c fast: the backup does not wait for a scheduled
		// checkpoint. Synced (no --no-sync): a backup must be durable.
		args = []string{"--pgdata=" + dir, "--format=plain", "--wal-method=stream", "--checkpoint=fast",
			"--no-password", "--dbname=" + conn}
	}
	if err := timePhase(ph, o, o.DataDir, func() error { return runTool(ctx, o.CgroupProcs, tool, args, password) }); err != nil {
		return err
	}
	if !o.Logical && o.DataDir != "" {
		// Root's pg_basebackup wrote root's files; the server's user must
		// own its restored copy.
		if err := server.ChownToManaged(dir, o.DataDir); err != nil {
			return fmt.Errorf("giving the backup %s to the server's user: %w", dir, err)
		}
	}
	return nil
}

// holdWAL keeps the server from removing WAL written from now on, until
// release: a temporary physical replication slot, its WAL reserved at once,
// on a session of its own. pg_basebackup makes its own slot only once the
// backup has begun, when it starts streaming from the backup's first WAL
// segment, and a checkpoint in between (another session's, or one that a
// busy server's WAL volume forces) can remove that segment: the backup then
// fails with "requested WAL segment ... has already been removed". The
// server drops a temporary slot when its session ends, so a tierbench that
// is killed leaves none behind to hold WAL for ever.
func holdWAL(ctx context.Context, dsn string) (release func(), err error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, errors.New(redact(err.Error(), dsn))
	}
	release = func() { conn.Close(context.WithoutCancel(ctx)) }
	name := "tierbench_backup_" + strconv.FormatUint(uint64(conn.PgConn().PID()), 10)
	if _, err := conn.Exec(ctx, "SELECT pg_create_physical_replication_slot($1, true, true)", name); err != nil {
		release()
		msg := err.Error()
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Hint != "" {
			msg += "; " + pe.Hint
		}
		return nil, fmt.Errorf("holding the server's WAL for the backup (a temporary replication slot beside pg_basebackup's own): %s",
			redact(msg, dsn))
	}
	return release, nil
}

func (postgresMethod) place(ctx context.Context, o Options, backupDir, dir string) error {
	return copyBackup(ctx, o.CgroupProcs, backupDir, dir)
}

func (postgresMethod) restoredDSN(dsn string, port int) (string, error) { return withPort(dsn, port) }

func (postgresMethod) createDatabase(ctx context.Context, dsn, _, name string) error {
	return adminExec(ctx, dsn, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0")
}

func (postgresMethod) dropDatabase(ctx context.Context, dsn, name string) error {
	return adminExec(ctx, dsn, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

func (postgresMethod) load(ctx context.Context, o Options, backupDir, dsn string) error {
	tool, err := findTool(o.PgBin, MethodRestore)
	if err != nil {
		return err
	}
	conn, password, err := clientConn(dsn)
	if err != nil {
		return err
	}
	// --no-owner: the restoring user owns what it restores, so a DSN that is
	// not a superuser restores too.
	args := []string{"--jobs=" + strconv.Itoa(o.jobs()), "--exit-on-error", "--no-owner", "--no-password",
		"--dbname=" + conn, backupDir}
	return runTool(ctx, o.CgroupProcs, tool, args, password)
}

// countTPCC counts in a repeatable-read, read-only transaction.
func (postgresMethod) countTPCC(ctx context.Context, dsn string) (Counts, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, errors.New(redact(err.Error(), dsn))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	c := Counts{}
	for _, t := range tpcc.Tables {
		var n int64
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{t}.Sanitize()).Scan(&n); err != nil {
			return nil, fmt.Errorf("counting %s: %w", t, err)
		}
		c[t] = n
	}
	return c, nil
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
		return "", "", engine.InputErrorf("DSN %q is not a URL: %s", engine.Redact(dsn), urlErrText(err, dsn))
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

// urlErrText is why url.Parse refused dsn, without url.Error's copy of the
// DSN (the message shows engine.Redact's) and without a quoted piece of it
// (an escape, a port), which may be a piece of the password.
func urlErrText(err error, dsn string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if why := ue.Err.Error(); !strings.Contains(why, `"`) {
			return redact(why, dsn)
		}
		return "it does not parse as a URL"
	}
	return redact(err.Error(), dsn)
}

// findTool locates a PostgreSQL client program: in pgBin when given; else
// beside the server's binaries (server.FindBinaries: a matching version),
// else on PATH.
func findTool(pgBin, name string) (string, error) {
	if pgBin != "" {
		p := filepath.Join(pgBin, name)
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s is not in --pg-bin %s; install it with `apt-get install postgresql-client` (or the PostgreSQL server package)", name, pgBin)
	}
	var looked []string
	if b, err := server.FindBinaries(""); err == nil {
		p := filepath.Join(b.Dir, name)
		if isExecutable(p) {
			return p, nil
		}
		looked = append(looked, b.Dir)
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	looked = append(looked, "PATH")
	return "", fmt.Errorf("%s not found (looked in %s); install it with `apt-get install postgresql-client` (or the PostgreSQL server package), or pass --pg-bin DIR",
		name, strings.Join(looked, " and "))
}

// runTool runs a PostgreSQL client program to its end, inside the cgroups of
// procs from its first I/O when there are any (cgroup.Command). The password
// reaches it as PGPASSWORD, never on the command line; our own PG* variables
// are left out so they cannot steer it. A failure carries the last lines the
// tool printed.
func runTool(ctx context.Context, procs []string, path string, args []string, password string) error {
	cmd := cgroup.Command(ctx, procs, path, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PGAPPNAME=tierbench-backup", "PGCONNECT_TIMEOUT=30")
	if password != "" {
		cmd.Env = append(cmd.Env, "PGPASSWORD="+password)
	}
	out, err := runGroup(ctx, cmd)
	if err == nil {
		return nil
	}
	name := filepath.Base(path)
	// The tools get the password out of band (PGPASSWORD) and do not echo
	// it; should one write it as an option, it goes. Never a search for the
	// password itself, which would garble ordinary words.
	msg := engine.RedactPasswordOptions(strings.TrimSpace(out), password)
	msg = lastLines(msg, 4)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return fmt.Errorf("%s: %w", name, err)
	}
	hint := ""
	if strings.Contains(msg, "pg_hba.conf") && strings.Contains(msg, "replication") {
		hint = "; pg_basebackup needs a replication entry in pg_hba.conf: a managed server started by an older tierbench gets one when restarted (tierbench server stop, then start)"
	}
	return fmt.Errorf("%s failed (%v): %s%s", name, err, msg, hint)
}
