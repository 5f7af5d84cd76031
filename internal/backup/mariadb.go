package backup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/mariadb"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// mariaMethod backs up MariaDB.
//
// Physical: mariadb-backup --backup copies the server's files and the redo
// log written meanwhile into TARGET/cycle-N, which is then synced, with the
// source's state file beside them (its port, password and settings: the
// restored copy starts as its source ran, as PostgreSQL's restored copy
// does with the state file pg_basebackup copies). A restore is
// mariadb-backup --prepare (the redo log applied to the backup, in place),
// --copy-back into TARGET/restore-N, a sync, and the start of a managed
// server there. mariadb-backup reads the source's files itself, so it runs
// as their owner, the user the source server runs as; so do --prepare and
// --copy-back, whose files that user's restored server then owns.
//
// Logical: tierbench's own parallel dump and load (dump.go).
//
// The password reaches mariadb-backup in an option file of a private
// directory (0700, the file 0600, both the tool's user's), removed when the
// tool is done: never on its command line nor in its environment, which
// other users can read in /proc. The file is given with --defaults-file,
// so the host's option files (/etc/mysql/my.cnf, ~/.my.cnf) are not read:
// the tool runs with what tierbench states, as the managed server it
// backs up does (mariadbd --defaults-file=tierbench.cnf). mariadb-backup
// asks the server for the InnoDB settings it needs.
type mariaMethod struct{}

func (mariaMethod) names(logical bool) (string, string) {
	if logical {
		return MethodMariaDump, MethodMariaLoad
	}
	return MethodMariaBackup, MethodMariaBackup
}

func (mariaMethod) checkDSN(dsn string) error {
	_, err := mariadb.ParseDSN(dsn)
	return err
}

func (mariaMethod) checkTools(o Options) error {
	if o.PgBin != "" {
		return engine.InputErrorf("--pg-bin %s names the directory of PostgreSQL's tools, which a MariaDB backup does not use "+
			"(it finds mariadb-backup on PATH or in /usr/bin); leave --pg-bin out", o.PgBin)
	}
	if o.Logical {
		for _, t := range []string{"dd", "sync", "find"} {
			if _, err := exec.LookPath(t); err != nil {
				return fmt.Errorf("%s (coreutils/findutils) is not on PATH; tierbench-dump writes and reads its files with it", t)
			}
		}
		return nil
	}
	tool, err := findMariaBackup()
	if err != nil {
		return err
	}
	return checkMariaBackupVersion(tool, o.DataDir)
}

// mariaBackupNames are mariadb-backup's names, the old one last.
var mariaBackupNames = []string{"mariadb-backup", "mariabackup"}

// mariaBackupDirs are where distributions put it besides $PATH.
var mariaBackupDirs = []string{"/usr/bin", "/usr/local/bin", "/usr/local/mysql/bin"}

// findMariaBackup locates mariadb-backup (or its older name, mariabackup):
// on PATH, else in mariaBackupDirs.
func findMariaBackup() (string, error) {
	for _, n := range mariaBackupNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	for _, d := range mariaBackupDirs {
		for _, n := range mariaBackupNames {
			if p := filepath.Join(d, n); isExecutable(p) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("mariadb-backup not found (looked on PATH and in %s); install it with `apt-get install mariadb-backup` "+
		"(of the server's version), or use --logical", strings.Join(mariaBackupDirs, ", "))
}

// mariaVersion finds "10.11" in "… based on MariaDB server 10.11.19-MariaDB …"
// and in the server's "10.11.19".
var mariaVersion = regexp.MustCompile(`(\d+\.\d+)\.\d+`)

// checkMariaBackupVersion refuses a mariadb-backup of another MariaDB
// release than the managed server in dataDir: it cannot read, or prepare,
// another release's files reliably.
func checkMariaBackupVersion(tool, dataDir string) error {
	st, err := server.Status(context.Background(), dataDir)
	if err != nil || st.Version == "" {
		return nil // Check's other tests say what is wrong with dataDir
	}
	out, err := exec.Command(tool, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %v: %s", tool, err, lastLines(strings.TrimSpace(string(out)), 2))
	}
	have, want := mariaVersion.FindStringSubmatch(string(out)), mariaVersion.FindStringSubmatch(st.Version)
	if have == nil || want == nil || have[1] == want[1] {
		return nil
	}
	return engine.InputErrorf("%s is of MariaDB %s and the server in %s is MariaDB %s; mariadb-backup must be of the server's release: "+
		"install mariadb-backup %s, or use --logical", tool, have[1], dataDir, want[1], want[1])
}

func (m mariaMethod) backup(ctx context.Context, o Options, ph *stored.Phase, dir string) error {
	if o.Logical {
		return dumpDatabase(ctx, o, ph, dir)
	}
	if o.DataDir == "" {
		return needManaged(m)
	}
	tool, err := findMariaBackup()
	if err != nil {
		return err
	}
	cfg, err := mariadb.ParseDSN(o.DSN)
	if err != nil {
		return err
	}
	// The tool runs as the server's user: the directory is that user's.
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	if err := server.ChownToManaged(dir, o.DataDir); err != nil {
		return fmt.Errorf("giving %s to the server's user: %w", dir, err)
	}
	optFile, cleanup, err := mariaOptionFile(o.DataDir, cfg.Passwd)
	if err != nil {
		return err
	}
	defer cleanup()
	// --defaults-file must come first.
	args := append([]string{"--defaults-file=" + optFile, "--backup", "--target-dir=" + dir, "--datadir=" + o.DataDir,
		"--user=" + cfg.User}, mariaConnArgs(cfg)...)
	return timePhase(ph, o, o.DataDir, func() error {
		if err := runMaria(ctx, o, tool, args, cfg.Passwd); err != nil {
			return err
		}
		// Within the timing, as pg_basebackup copies it with the rest.
		if err := copyStateFile(o.DataDir, dir); err != nil {
			return err
		}
		// mariadb-backup --backup does not fsync what it wrote.
		return syncTree(ctx, o.CgroupProcs, dir)
	})
}

// mariaConnArgs are mariadb-backup's options for the server cfg names:
// its socket, or TCP to its host and port (--protocol, or "localhost"
// would mean the socket).
func mariaConnArgs(cfg *mysql.Config) []string {
	if cfg.Net == "unix" {
		return []string{"--socket=" + cfg.Addr}
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		host, port = cfg.Addr, "3306"
	}
	return []string{"--protocol=TCP", "--host=" + host, "--port=" + port}
}

// mariaOptionFile writes the password into an option file that only the
// user of the server in dataDir (who runs mariadb-backup) can read: FILE in
// a new directory of the temporary directory, the directory 0700 and the
// file 0600, both that user's. cleanup removes them.
func mariaOptionFile(dataDir, password string) (file string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "tierbench-mariadb-backup-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", nil, err
	}
	file = filepath.Join(dir, "backup.cnf")
	text := "# Written by tierbench for one run of mariadb-backup, then removed.\n[mariadb-backup]\npassword = " + optionValue(password) + "\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		return "", nil, err
	}
	if err := server.ChownToManaged(dir, dataDir); err != nil {
		return "", nil, fmt.Errorf("giving %s to the server's user: %w", dir, err)
	}
	if err := server.CheckReachable(file, dataDir); err != nil {
		return "", nil, fmt.Errorf("mariadb-backup's option file: %w; set TMPDIR to a directory the server's user can reach", err)
	}
	return file, cleanup, nil
}

// optionValue quotes s for a MariaDB option file: in double quotes, with
// the escapes the option file reader undoes (mysys my_default.c), so any
// password reads back exactly (a NUL cannot be written).
func optionValue(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\'':
			b.WriteString(`\'`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// runMaria runs a MariaDB tool to its end as the user of the source's
// server, inside o's cgroups. Its environment has none of our MYSQL_* and
// MARIADB_* variables, which would steer it (MYSQL_PWD, MYSQL_HOST, …). A
// failure carries its error lines, never the password.
func runMaria(ctx context.Context, o Options, tool string, args []string, password string) error {
	cmd, err := server.CommandAsOwner(ctx, o.DataDir, o.CgroupProcs, tool, args...)
	if err != nil {
		return err
	}
	cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool {
		return strings.HasPrefix(kv, "MYSQL_") || strings.HasPrefix(kv, "MARIADB_")
	})
	out, err := runGroup(ctx, cmd)
	if err == nil {
		return nil
	}
	// mariadb-backup reads the password from its option file and says
	// only "password: set"; should it write it as an option, it goes. Never
	// a search for the password itself, which would garble ordinary words
	// ("password: set" with the password "p").
	out = engine.RedactPasswordOptions(out, password)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return fmt.Errorf("%s: %w", filepath.Base(tool), err)
	}
	return fmt.Errorf("%s %s failed (%v): %s", filepath.Base(tool), mariaMode(args), err, errorLines(out))
}

// mariaMode is the mode option of mariadb-backup's arguments (--backup, …).
func mariaMode(args []string) string {
	for _, a := range args {
		switch a {
		case "--backup", "--prepare", "--copy-back":
			return a
		}
	}
	return ""
}

// errorLines are the lines of a tool's output that say what went wrong:
// those that say "error", else the last ones; mariadb-backup logs every
// file it copies.
func errorLines(out string) string {
	var errs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(strings.ToLower(l), "error") {
			errs = append(errs, strings.TrimSpace(l))
		}
	}
	if len(errs) == 0 {
		return lastLines(strings.TrimSpace(out), 4)
	}
	return lastLines(strings.Join(errs, "\n"), 3)
}

// copyStateFile copies the managed server's state file from dataDir into
// dir, mode 0600 (it holds the password), owned by the server's user.
func copyStateFile(dataDir, dir string) error {
	b, err := os.ReadFile(filepath.Join(dataDir, server.StateFile))
	if err != nil {
		return fmt.Errorf("reading the source's state file: %w", err)
	}
	dst := filepath.Join(dir, server.StateFile)
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = server.ChownToManaged(dst, dataDir)
	}
	return err
}

func (m mariaMethod) place(ctx context.Context, o Options, backupDir, dir string) error {
	tool, err := findMariaBackup()
	if err != nil {
		return err
	}
	if err := makeLike(dir, backupDir); err != nil {
		return err
	}
	// --no-defaults first: no option file; --prepare reads the backup's own
	// backup-my.cnf, and --copy-back needs only where to.
	steps := [][]string{
		{"--no-defaults", "--prepare", "--target-dir=" + backupDir},
		{"--no-defaults", "--copy-back", "--target-dir=" + backupDir, "--datadir=" + dir},
	}
	for _, args := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := runMaria(ctx, o, tool, args, ""); err != nil {
			return err
		}
	}
	// --copy-back copied the state file as 0640; dir is 0700, so no one
	// else could reach it meanwhile.
	if err := os.Chmod(filepath.Join(dir, server.StateFile), 0o600); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("the backup %s holds no %s, so it cannot start as a managed server; back it up again with tierbench", backupDir, server.StateFile)
		}
		return err
	}
	return syncTree(ctx, o.CgroupProcs, dir)
}

// makeLike makes the directory dst, which must not exist, with the mode and
// (when root) the owner of like.
func makeLike(dst, like string) error {
	fi, err := os.Stat(like)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("restoring into %s: it exists already", dst)
		}
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		if err := os.Lchown(dst, int(st.Uid), int(st.Gid)); err != nil {
			return err
		}
	}
	return os.Chmod(dst, fi.Mode().Perm())
}

// restoredDSN is dsn at 127.0.0.1:port, without a socket= that would win.
func (mariaMethod) restoredDSN(dsn string, port int) (string, error) {
	d, err := withPort(dsn, port)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(d)
	if err != nil {
		return "", engine.InputErrorf("DSN %s is not a URL", engine.Redact(dsn))
	}
	q := u.Query()
	q.Del("socket")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// mariaOpen is a pool on the database of dsn; the caller closes it.
func mariaOpen(dsn string) (*sql.DB, error) {
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

// mariaConn is one connection to the database of dsn, with an error that
// names the server but not the password.
func mariaConn(ctx context.Context, db *sql.DB, dsn string) (*sql.Conn, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %s", engine.Redact(dsn), redact(err.Error(), dsn))
	}
	return c, nil
}

// mariaExec runs statements on a connection of its own to dsn.
func mariaExec(ctx context.Context, dsn string, stmts ...string) error {
	db, err := mariaOpen(dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := mariaConn(ctx, db, dsn)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return errors.New(redact(err.Error(), dsn))
		}
	}
	return nil
}

// quoteIdent quotes a MariaDB identifier.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// quoteString quotes a MariaDB string literal (NO_BACKSLASH_ESCAPES or not).
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
}

// createDatabase makes the database with the dump's character set and
// collation (the source database's).
func (mariaMethod) createDatabase(ctx context.Context, dsn, backupDir, name string) error {
	doc, err := readManifestHere(backupDir)
	if err != nil {
		return err
	}
	stmt := "CREATE DATABASE " + quoteIdent(name)
	if doc.Charset != "" {
		stmt += " CHARACTER SET " + quoteString(doc.Charset)
	}
	if doc.Collation != "" {
		stmt += " COLLATE " + quoteString(doc.Collation)
	}
	return mariaExec(ctx, dsn, stmt)
}

func (mariaMethod) dropDatabase(ctx context.Context, dsn, name string) error {
	return mariaExec(ctx, dsn, "DROP DATABASE IF EXISTS "+quoteIdent(name))
}

func (mariaMethod) load(ctx context.Context, o Options, backupDir, dsn string) error {
	return loadDatabase(ctx, o, backupDir, dsn)
}

// countTPCC counts in one consistent snapshot (START TRANSACTION WITH
// CONSISTENT SNAPSHOT, repeatable read, read only).
func (mariaMethod) countTPCC(ctx context.Context, dsn string) (Counts, error) {
	db, err := mariaOpen(dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conn, err := mariaConn(ctx, db, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	for _, s := range []string{"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
		"START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return nil, fmt.Errorf("%s: %w", s, err)
		}
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	c := Counts{}
	for _, t := range tpcc.Tables {
		var n int64
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+quoteIdent(t)).Scan(&n); err != nil {
			return nil, fmt.Errorf("counting %s: %w", t, err)
		}
		c[t] = n
	}
	return c, nil
}
