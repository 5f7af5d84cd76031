package server

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// EngineMariaDB is the engine name of a managed MariaDB server.
const EngineMariaDB = "mariadb"

// MariaDBBinaries are the programs a managed MariaDB server needs.
type MariaDBBinaries struct {
	Mariadbd  string // the server
	InstallDB string // mariadb-install-db
	Version   string // e.g. "10.11.19"
}

// mariaDirs are where distributions put mariadbd besides $PATH.
var mariaDirs = []string{"/usr/sbin", "/usr/bin", "/usr/local/mysql/bin", "/usr/local/bin"}

// errNoMariaDB is the one line a user without MariaDB gets.
var errNoMariaDB = errors.New("the MariaDB server (mariadbd, mariadb-install-db) is not installed; install it with: sudo apt-get install mariadb-server mariadb-backup")

// FindMariaDB finds mariadbd and mariadb-install-db, and the server's version.
func FindMariaDB() (MariaDBBinaries, error) {
	find := func(name string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, d := range mariaDirs {
			if p := filepath.Join(d, name); isExecutable(p) {
				return p
			}
		}
		return ""
	}
	b := MariaDBBinaries{Mariadbd: find("mariadbd"), InstallDB: find("mariadb-install-db")}
	if b.Mariadbd == "" || b.InstallDB == "" {
		return b, errNoMariaDB
	}
	out, err := exec.Command(b.Mariadbd, "--version").Output()
	if err != nil {
		return b, fmt.Errorf("%s --version: %v", b.Mariadbd, err)
	}
	m := mariaVersion.FindStringSubmatch(string(out))
	if m == nil {
		return b, fmt.Errorf("%s --version printed %q, which names no version", b.Mariadbd, strings.TrimSpace(string(out)))
	}
	b.Version = m[1]
	return b, nil
}

// mariaVersion finds "10.11.19" in "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for …".
var mariaVersion = regexp.MustCompile(`Ver (\d+\.\d+\.\d+)`)

// Files of a managed MariaDB data directory besides MariaDB's own and the
// state file and log every managed directory has.
const (
	MariaConfFile = "tierbench.cnf" // the whole option file, rewritten on every start (--defaults-file)
	mariaPIDFile  = "mariadbd.pid"  // written by mariadbd
	mariaSocket   = "mariadb.sock"  // the Unix socket, unless the path is too long (socketDir)
	mariaDatabase = "tierbench"     // the database a managed server's DSN names
)

// isMariaDir says whether dir holds a MariaDB or MySQL data directory: the
// system schema's directory and InnoDB's system tablespace.
func isMariaDir(dir string) bool {
	_, e1 := os.Stat(filepath.Join(dir, "mysql"))
	_, e2 := os.Stat(filepath.Join(dir, "ibdata1"))
	return e1 == nil && e2 == nil
}

// MariaDBMemorySettings sizes MariaDB from one number, the memory M (bytes)
// the server is meant to have. InnoDB reads and writes its data files with
// O_DIRECT, so unlike PostgreSQL it does not lean on the page cache: the
// buffer pool takes most of M, and the rest is left for connections, the
// log buffer, temporary tables and the server's own code.
//
//	innodb_buffer_pool_size = 5M/8, in whole MB
//	innodb_log_buffer_size  = M/64, clamped to [16MB, 256MB]
//	tmp_table_size          = M/64, clamped to [16MB, 256MB]
//	max_heap_table_size     = as tmp_table_size
//
// The redo log's size (innodb_log_file_size) is disk, not memory: every
// start sets it to 1GB (MariaDBFixedSettings) so that a bulk load does not
// measure forced checkpoints. M <= 0 means "not set": nil, and MariaDB keeps
// its defaults (a 128MB buffer pool).
func MariaDBMemorySettings(m int64) map[string]string {
	if m <= 0 {
		return nil
	}
	small := clamp(m/64, 16*mib, 256*mib)
	return map[string]string{
		"innodb_buffer_pool_size": mariaSize(max(m/8*5, 5*mib)),
		"innodb_log_buffer_size":  mariaSize(small),
		"tmp_table_size":          mariaSize(small),
		"max_heap_table_size":     mariaSize(small),
	}
}

// mariaSize writes bytes rounded down to whole MB, or GB when exact, as
// option files take them (1024-based).
func mariaSize(b int64) string {
	mb := b / mib
	if mb > 0 && mb%1024 == 0 {
		return strconv.FormatInt(mb/1024, 10) + "G"
	}
	return strconv.FormatInt(mb, 10) + "M"
}

// mariaFixed are the settings every managed MariaDB starts with, before the
// memory-derived ones and --set overrides. The durability settings are
// InnoDB's safe ones, stated rather than assumed.
var mariaFixed = [][2]string{
	{"max_connections", strconv.Itoa(MaxConnections)},
	{"skip_name_resolve", "ON"},
	{"character_set_server", "utf8mb4"},
	{"collation_server", "utf8mb4_general_ci"},
	// tpcc build streams rows with LOAD DATA LOCAL INFILE: the client sends
	// them, the server reads no file of its own.
	{"local_infile", "ON"},
	{"innodb_flush_log_at_trx_commit", "1"},
	{"innodb_doublewrite", "ON"},
	{"innodb_flush_method", "O_DIRECT"},
	// A bulk load writes GBs of redo: with the 96MB default it would be
	// dominated by forced checkpoints (PostgreSQL's max_wal_size is 4GB
	// for the same reason).
	{"innodb_log_file_size", "1G"},
	// Every start is cold, as PostgreSQL's is: no buffer pool reloaded from
	// the last shutdown's dump.
	{"innodb_buffer_pool_dump_at_shutdown", "OFF"},
	{"innodb_buffer_pool_load_at_startup", "OFF"},
	// The server's own file I/O latency for telemetry
	// (performance_schema.file_summary_by_event_name).
	{"performance_schema", "ON"},
}

// ValidMariaSettingName reports whether name can be a MariaDB option name
// (letters, digits, '_' and '-').
func ValidMariaSettingName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case (r >= '0' && r <= '9' || r == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// mariaConfFile is the option file of a start: where to listen and keep
// files, the fixed settings, the memory-derived ones and the --set
// overrides, in that order (a later line wins).
func mariaConfFile(dir string, st *state) (string, error) {
	var b strings.Builder
	b.WriteString("# Written by tierbench on every start; change it with `tierbench server start --set name=value`.\n")
	b.WriteString("[mariadbd]\n")
	fmt.Fprintf(&b, "datadir = %s\n", dir)
	if st.Listen == "" {
		b.WriteString("bind_address = 127.0.0.1\n")
	} else {
		b.WriteString("# Other hosts reach it at " + st.Listen + " (tierbench server start --listen); the tierbench account of\n")
		b.WriteString("# " + st.Network + " says who.\n")
		fmt.Fprintf(&b, "bind_address = 127.0.0.1,%s\n", st.Listen)
	}
	fmt.Fprintf(&b, "port = %d\n", st.Port)
	fmt.Fprintf(&b, "socket = %s\n", filepath.Join(st.SocketDir, mariaSocket))
	fmt.Fprintf(&b, "pid_file = %s\n", filepath.Join(dir, mariaPIDFile))
	fmt.Fprintf(&b, "tmpdir = %s\n", mariaTmpDir(dir))
	fmt.Fprintf(&b, "log_error = %s\n", filepath.Join(dir, LogFile))
	for _, kv := range mariaFixed {
		fmt.Fprintf(&b, "%s = %s\n", kv[0], kv[1])
	}
	if mem := MariaDBMemorySettings(st.Memory); mem != nil {
		fmt.Fprintf(&b, "# Sized from --memory %d bytes (see MariaDBMemorySettings).\n", st.Memory)
		writeSortedPlain(&b, mem)
	}
	if len(st.Settings) > 0 {
		for k, v := range st.Settings {
			if strings.ContainsAny(v, "\n\r") {
				return "", fmt.Errorf("the value of setting %s holds a line break, which a MariaDB option file cannot", k)
			}
		}
		b.WriteString("# --set overrides.\n")
		writeSortedPlain(&b, st.Settings)
	}
	return b.String(), nil
}

func writeSortedPlain(b *strings.Builder, m map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(b, "%s = %s\n", k, m[k])
	}
}

// mariaRunning reads the pid file and reports whether that process is alive
// and is a MariaDB server; the port is the state file's.
func mariaRunning(dir string) (pid, port int, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, mariaPIDFile))
	if err != nil {
		return 0, 0, false
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || !liveProcess(pid) {
		return 0, 0, false
	}
	if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
		c := strings.TrimSpace(string(comm))
		if c != "mariadbd" && c != "mysqld" {
			return 0, 0, false
		}
	}
	st, _ := readState(dir)
	return pid, st.Port, true
}

// mariaDSN is the DSN of a managed MariaDB at host (127.0.0.1, or its
// Listen address).
func mariaDSN(password, host string, port int) string {
	u := url.URL{
		Scheme: "mariadb",
		User:   url.UserPassword(DBUser, password),
		Host:   net.JoinHostPort(host, strconv.Itoa(port)),
		Path:   "/" + mariaDatabase,
	}
	return u.String()
}

// startMariaDB is Start for a MariaDB data directory (kind tells a new one
// from a managed one; a managed one's state is st).
func startMariaDB(ctx context.Context, dir string, kind dirKind, st state, opts Options) (Info, error) {
	for name := range opts.Settings {
		if !ValidMariaSettingName(name) {
			return Info{}, fmt.Errorf("setting name %q is not a valid MariaDB option name", name)
		}
	}
	var acct account
	var err error
	if opts.Listen != "" {
		if err := CheckListen(EngineMariaDB, opts.Listen); err != nil {
			return Info{}, err
		}
	}
	if kind == dirManaged {
		if pid, port, ok := mariaRunning(dir); ok {
			if err := sameListen(dir, st, opts.Listen); err != nil {
				return Info{}, err
			}
			return runningInfo(EngineMariaDB, dir, st, pid, port), nil
		}
		if acct, err = managedAccount(ctx, dir); err != nil {
			return Info{}, err
		}
	} else if acct, err = serviceAccount(ctx); err != nil {
		return Info{}, err
	}
	bins, err := FindMariaDB()
	if err != nil {
		return Info{}, err
	}
	if opts.Listen != "" && !mariaBindsMany(bins.Version) {
		return Info{}, &ListenError{Addr: opts.Listen, Problem: fmt.Sprintf("cannot be listened on besides %s: MariaDB %s binds one address only (bind_address takes a list from 10.11 on)",
			loopback, bins.Version)}
	}
	// The bootstrap's and the server's temporary directories are both in
	// the system's: one check of its path serves both.
	if err := tmpReachable(acct, mariaTmpDir(dir)); err != nil {
		return Info{}, err
	}
	if kind == dirManaged {
		if err := acct.checkReachable(dir); err != nil {
			return Info{}, err
		}
	} else if st, err = mariaInitialize(ctx, dir, kind, acct, bins); err != nil {
		return Info{}, err
	}
	st.Engine, st.User, st.PgBin, st.Version = EngineMariaDB, DBUser, filepath.Dir(bins.Mariadbd), bins.Version
	st.Memory, st.Settings = opts.Memory, opts.Settings
	if err := resolveListen(EngineMariaDB, opts.Listen, &st); err != nil {
		if kind != dirManaged {
			emptyDir(dir)
		}
		return Info{}, err
	}
	st.StartedBy = thisProcess(opts.KeepRunning)
	picked, err := st.choosePort(opts.Port, opts.NewPort)
	if err != nil {
		return Info{}, err
	}
	wait := 60 * time.Second
	if opts.StartTimeout > 0 {
		wait = opts.StartTimeout
	}
	var pid int
	err = launchOnPort(&st, picked, filepath.Join(dir, LogFile), func() error {
		err := mariaConfigure(dir, &st, acct)
		if err != nil && kind != dirManaged {
			emptyDir(dir)
		}
		return err
	}, func() (err error) {
		pid, err = mariaLaunch(ctx, dir, acct, bins, opts.CgroupProcs, wait)
		return err
	})
	if err != nil {
		return Info{}, err
	}
	// The accounts of the network it listens to: made (or dropped) now,
	// while nothing but this process knows the server runs.
	err = mariaNetworkAccount(ctx, st)
	if err == nil {
		err = checkListening(ctx, st, st.Port)
	}
	if err != nil {
		mariaStop(context.WithoutCancel(ctx), dir, st, "fast")
		return Info{}, fmt.Errorf("MariaDB in %s: %w (stopped again)", dir, err)
	}
	return startedInfo(EngineMariaDB, dir, st, pid, st.Port), nil
}

// mariaBindsMany reports whether MariaDB version v (e.g. "10.11.19") takes
// a list of addresses in bind_address: from 10.11 on.
func mariaBindsMany(v string) bool {
	f := strings.SplitN(v, ".", 3)
	if len(f) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(f[0])
	minor, err2 := strconv.Atoi(f[1])
	return err1 == nil && err2 == nil && (major > 10 || major == 10 && minor >= 11)
}

// mariaNetworkAccount makes the tierbench account of st.Network (a host
// pattern such as '10.0.0.0/255.255.255.0', the password and privileges
// of the others) and drops the network accounts of earlier starts, so that
// logins come from the network of this start's Listen only. It connects as
// tierbench over the server's Unix socket: the password goes nowhere but
// to the server.
func mariaNetworkAccount(ctx context.Context, st state) error {
	want := ""
	if st.Network != "" {
		var err error
		if want, err = mariaHostPattern(st.Network); err != nil {
			return err
		}
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = DBUser, st.Password
	cfg.Net, cfg.Addr = "unix", filepath.Join(st.SocketDir, mariaSocket)
	cfg.Timeout = 10 * time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT Host FROM mysql.user WHERE User = ?", DBUser)
	if err != nil {
		return fmt.Errorf("reading the tierbench accounts: %w", err)
	}
	var hosts []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return err
		}
		hosts = append(hosts, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	have := false
	for _, h := range hosts {
		switch {
		case h == want:
			have = true
		case strings.Contains(h, "/"): // a network of an earlier start's Listen
			if _, err := db.ExecContext(ctx, "DROP USER "+mariaQuote(DBUser)+"@"+mariaQuote(h)); err != nil {
				return fmt.Errorf("dropping the tierbench account of %s: %w", h, err)
			}
		}
	}
	if want == "" || have {
		return nil
	}
	account := mariaQuote(DBUser) + "@" + mariaQuote(want)
	for _, stmt := range []string{
		"CREATE USER " + account + " IDENTIFIED BY " + mariaQuote(st.Password),
		"GRANT ALL PRIVILEGES ON *.* TO " + account + " WITH GRANT OPTION",
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("creating the tierbench account of %s: %s", st.Network, strings.ReplaceAll(err.Error(), st.Password, "xxxxx"))
		}
	}
	return nil
}

// mariaQuote is s as a MariaDB string literal.
func mariaQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`).Replace(s) + "'"
}

// mariaConfigure picks the socket of st.Port and writes the option file and
// the state file.
func mariaConfigure(dir string, st *state, acct account) error {
	st.SocketDir = dir
	if len(filepath.Join(dir, mariaSocket)) >= maxSocketPath {
		st.SocketDir = socketDir(dir+"\x00mariadb", st.Port) // a short directory in /tmp
		if err := ensureSocketDir(st.SocketDir, acct); err != nil {
			return err
		}
	}
	// Temporary tables and files go to a directory of the server's own, not
	// the shared /tmp: a CI run's restored copy found its temporary table's
	// file gone from /tmp while other servers ran beside it.
	if err := ensurePrivateDir(mariaTmpDir(dir), "temporary directory", acct); err != nil {
		return err
	}
	conf, err := mariaConfFile(dir, st)
	if err != nil {
		return err
	}
	if err := writeFileAs(filepath.Join(dir, MariaConfFile), []byte(conf), 0o600, acct); err != nil {
		return err
	}
	return writeState(dir, *st, acct)
}

// mariaInitialize creates the data directory (owned by acct) and its system
// tables (mariadb-install-db), then the tierbench user with a fresh
// password and the tierbench database. The password reaches the server on
// its standard input, in a bootstrap run: never in a file or an argument.
func mariaInitialize(ctx context.Context, dir string, kind dirKind, acct account, bins MariaDBBinaries) (st state, err error) {
	if err := prepareDir(dir, kind, acct); err != nil {
		return st, err
	}
	if st.Password, err = newPassword(); err != nil {
		return st, err
	}
	defer func() {
		if err != nil {
			emptyDir(dir)
		}
	}()
	logPath := filepath.Join(dir, LogFile)
	// The bootstrap's temporary tables go to a directory of its own: in
	// the shared /tmp, one vanished under a CI run's concurrent bootstraps.
	tmp, err := os.MkdirTemp("", "tierbench-mariadb-boot-")
	if err != nil {
		return st, err
	}
	defer os.RemoveAll(tmp)
	if err := acct.chown(tmp); err != nil {
		return st, err
	}
	cmd := acct.command(ctx, bins.InstallDB, "--no-defaults", "--datadir="+dir, "--skip-test-db",
		"--auth-root-authentication-method=socket", "--auth-root-socket-user="+acct.name, "--skip-name-resolve",
		"--tmpdir="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		return st, fmt.Errorf("mariadb-install-db %s: %v: %s", dir, err, errorLines(string(out), 5))
	}
	// install-db made a user named after the account, authenticated by
	// its Unix socket; tierbench's is a password user.
	boot := fmt.Sprintf(`FLUSH PRIVILEGES;
DROP USER IF EXISTS '%[1]s'@'localhost';
CREATE USER '%[1]s'@'localhost' IDENTIFIED BY '%[2]s';
CREATE USER '%[1]s'@'127.0.0.1' IDENTIFIED BY '%[2]s';
GRANT ALL PRIVILEGES ON *.* TO '%[1]s'@'localhost' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO '%[1]s'@'127.0.0.1' WITH GRANT OPTION;
CREATE DATABASE IF NOT EXISTS %[3]s;
`, DBUser, st.Password, mariaDatabase)
	cmd = acct.command(ctx, bins.Mariadbd, "--no-defaults", "--datadir="+dir, "--bootstrap", "--skip-networking",
		"--log-error="+logPath, "--skip-name-resolve", "--tmpdir="+tmp)
	cmd.Stdin = strings.NewReader(boot)
	if out, err := cmd.CombinedOutput(); err != nil {
		return st, fmt.Errorf("creating the tierbench user in %s: %v: %s; last lines of %s: %s",
			dir, err, lastLines(string(out), 3), logPath, tailLines(logPath, 5))
	}
	return st, nil
}

// mariaLaunch starts mariadbd as acct, in its own session (a Ctrl-C in the
// terminal is not its), inside the cgroups of procs from its first
// instruction, and waits until it says it is ready for connections. It
// returns the server's PID. The server outlives this process; while this
// process lives, it reaps the server when it ends, so that a killed server
// leaves no zombie behind.
func mariaLaunch(ctx context.Context, dir string, acct account, bins MariaDBBinaries, procs []string, wait time.Duration) (int, error) {
	logPath := filepath.Join(dir, LogFile)
	logStart := fileSize(logPath)
	// Not bound to ctx: the server must outlive the start.
	cmd, err := acct.commandIn(context.Background(), procs, bins.Mariadbd, "--defaults-file="+filepath.Join(dir, MariaConfFile))
	if err != nil {
		return 0, err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", bins.Mariadbd, err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()

	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			return 0, fmt.Errorf("MariaDB in %s exited while starting; last lines of %s: %s", dir, logPath, tailLines(logPath, 5))
		case <-deadline.C:
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return 0, fmt.Errorf("MariaDB in %s was not ready within %s; last lines of %s: %s", dir, wait, logPath, tailLines(logPath, 5))
		case <-ctx.Done():
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return 0, ctx.Err()
		case <-tick.C:
			if logSays(logPath, logStart, "ready for connections") {
				return pid, nil
			}
		}
	}
}

// logSays reports whether the log, from byte offset from on, holds s.
func logSays(path string, from int64, s string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	return err == nil && strings.Contains(string(b), s)
}

// mariaStop stops the MariaDB of dir: "fast" is a clean shutdown (SIGTERM:
// InnoDB flushes and writes a checkpoint), "immediate" a kill (SIGKILL: the
// next start runs crash recovery from the redo log, as after a power loss).
func mariaStop(ctx context.Context, dir string, st state, mode string) (bool, error) {
	pid, _, ok := mariaRunning(dir)
	if !ok {
		return false, nil
	}
	sig, grace := syscall.SIGTERM, 10*time.Minute // a clean shutdown flushes the buffer pool's dirty pages
	if mode == "immediate" {
		sig, grace = syscall.SIGKILL, time.Minute
	}
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return true, fmt.Errorf("signalling MariaDB (pid %d): %w", pid, err)
	}
	if !waitFor(ctx, []int{pid}, processExists, grace) {
		return true, fmt.Errorf("MariaDB in %s (pid %d) did not stop within %s", dir, pid, grace)
	}
	mariaStopped(dir, st)
	return true, nil
}

// mariaStopped removes what a stopped server had outside its data
// directory: the short socket directory, and its temporary directory, of
// no use once the server is gone.
func mariaStopped(dir string, st state) {
	if st.SocketDir != "" && st.SocketDir != dir {
		os.Remove(st.SocketDir)
	}
	os.RemoveAll(mariaTmpDir(dir))
}

// tmpReachable says, in one line, when the server's user cannot reach the
// temporary directory dir (TMPDIR inside a private home, say).
func tmpReachable(acct account, dir string) error {
	var dd *DataDirError
	if err := acct.checkReachable(dir); errors.As(err, &dd) {
		return fmt.Errorf("MariaDB's temporary directory %s %s; set TMPDIR to such a directory", dir, dd.Problem)
	} else if err != nil {
		return err
	}
	return nil
}

// mariaTmpDir is the server's own temporary directory in the system's (its
// name from the data directory's path), made on every start.
func mariaTmpDir(dataDir string) string {
	sum := sha256.Sum256([]byte(dataDir))
	return filepath.Join(os.TempDir(), "tierbench-mariadb-tmp-"+hex.EncodeToString(sum[:6]))
}

// errorLines is what a failed tool's output says about why: its lines that
// name an error (mariadb-install-db ends any failure with the same advice
// on where to report bugs, which says nothing), or else its last n lines.
func errorLines(out string, n int) string {
	var errs []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(strings.ToLower(l), "error") {
			errs = append(errs, strings.TrimSpace(l))
		}
	}
	if len(errs) == 0 {
		return lastLines(out, n)
	}
	return lastLines(strings.Join(errs, "\n"), n)
}
