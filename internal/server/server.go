// Package server runs managed database servers: a PostgreSQL instance in a
// data directory of the user's choosing (initdb on first use), sized from one
// memory number, reachable at a DSN, started, stopped and queried by the
// data directory alone.
//
// What a managed data directory holds beside PostgreSQL's own files:
// tierbench-server.json (port, password, settings; mode 0600),
// tierbench.conf (rewritten on every start, included last by postgresql.conf)
// and tierbench-server.log (the server's log).
package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/freeport"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// EnginePostgres is the engine name of a managed PostgreSQL server (initdb,
// pg_ctl); mariadb.go is MariaDB's. Which engines have a managed server is
// internal/engine/all's table, whose names these are.
const EnginePostgres = "postgres"

// engineDisplay names an engine in messages.
func engineDisplay(engine string) string {
	if engine == EngineMariaDB {
		return "MariaDB"
	}
	return "PostgreSQL"
}

// Options say how to start a managed server.
type Options struct {
	// Engine is "postgres" (the default) or "mariadb", for a new data
	// directory; an existing managed directory keeps its own.
	Engine  string
	DataDir string
	// Port to listen on at 127.0.0.1; 0 keeps the port of the last start, or
	// picks a free one for a new data directory.
	Port int
	// Listen is an address of this host (ListenNetwork) the server listens
	// on besides 127.0.0.1, so that other hosts reach it; it then accepts
	// password logins from that address's network (its interface's prefix)
	// too, and the DSN names that address. Empty: 127.0.0.1 only. Like
	// Memory it applies to this start only, and KeepConfig does not keep
	// it: a start without it listens on 127.0.0.1 only.
	Listen string
	// Memory sizes the server (see MemorySettings); 0 keeps PostgreSQL's
	// defaults. It applies to this start only: every start states its whole
	// configuration, so a later start without it goes back to the defaults.
	Memory int64
	// Settings are applied last and override everything (--set name=value).
	Settings map[string]string
	// KeepConfig starts a managed directory with the Memory and Settings of
	// its last start, from its state file, in place of the two above. A
	// restored copy of a managed server then runs as its source ran when it
	// was backed up, rather than with PostgreSQL's defaults. Without Port
	// or NewPort it keeps the last start's port as if asked for it: it is
	// never moved to another.
	KeepConfig bool
	// PgBin is the directory of initdb/pg_ctl/postgres; empty finds them
	// (FindBinaries), or reuses those of the last start.
	PgBin string
	// NewPort picks a free port instead of keeping the last one: a restored
	// or cloned copy of a data directory must not collide with its source,
	// which may still be running. Port, when given, wins.
	NewPort bool
	// StartTimeout is how long to wait for the server to accept connections
	// (default 60s). A restored copy may have much WAL to replay first.
	StartTimeout time.Duration
	// KeepRunning says the server is meant to outlive the process starting
	// it (`server start`, `tierbench run`). Otherwise the starter stops it
	// when done, and once the starter is gone without doing so (killed),
	// `server status` calls the server orphaned.
	KeepRunning bool
	// CgroupProcs are cgroup.procs files pg_ctl start runs in from its first
	// instruction (cgroup.Command): the postmaster it forks, and every
	// process of the server after it, is born inside those groups, so that
	// even the startup's I/O (WAL replay, the fsync of the data directory
	// after a base backup or a crash) draws from their budgets. A backup's
	// restored copy starts so. Unlike ApplyLimits, which moves a running
	// server, nothing of the server runs outside first.
	CgroupProcs []string
}

// Info describes a started server; it is the JSON of `server start`.
type Info struct {
	Engine  string `json:"engine"`
	DSN     string `json:"dsn"`
	DataDir string `json:"datadir"`
	Port    int    `json:"port"`
	PID     int    `json:"pid"`
	Version string `json:"version"`
	// Listen are the addresses the server listens on: Options.Listen's
	// first when given, then 127.0.0.1.
	Listen []string `json:"listen"`
	// Network is the network whose hosts may log in besides this host
	// (e.g. 10.0.0.0/24), when the server listens on an Options.Listen.
	Network        string `json:"network,omitempty"`
	AlreadyRunning bool   `json:"already_running,omitempty"`
	// MovedFromPort is the last start's port when another process held it:
	// the server then started on a free one (Port), and its DSN changed.
	MovedFromPort int `json:"moved_from_port,omitempty"`
}

// StatusInfo describes a managed data directory; it is the JSON of `server
// status`. (Named so the function can be Status.)
type StatusInfo struct {
	Engine  string `json:"engine"`
	DataDir string `json:"datadir"`
	Running bool   `json:"running"`
	PID     int    `json:"pid,omitempty"`
	Port    int    `json:"port"`
	DSN     string `json:"dsn,omitempty"`
	Version string `json:"version"`
	// Listen and Network are Info's: where the server listens (a stopped
	// one: listened at its last start) and who else may log in.
	Listen  []string `json:"listen"`
	Network string   `json:"network,omitempty"`
}

// DataDirError says a data directory cannot be used as asked. It is bad
// input rather than a failure of the server.
type DataDirError struct {
	Dir     string
	Problem string
}

func (e *DataDirError) Error() string { return "data directory " + e.Dir + " " + e.Problem }

// dirKind is what Start finds at the data directory path.
type dirKind int

const (
	dirMissing dirKind = iota // create it, then initdb
	dirEmpty                  // initdb
	dirManaged                // PG_VERSION and our state file: reuse
)

// classify tells a new, empty or managed data directory from anything tierbench
// must not touch.
func classify(dir string) (dirKind, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return dirMissing, nil
	}
	if err != nil {
		return 0, err
	}
	if !fi.IsDir() {
		return 0, &DataDirError{Dir: dir, Problem: "is a file, not a directory; give a new or empty directory"}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	if len(entries) == 0 {
		return dirEmpty, nil
	}
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	switch {
	case (has("PG_VERSION") || isMariaDir(dir)) && has(StateFile):
		return dirManaged, nil
	case has("PG_VERSION"):
		return 0, &DataDirError{Dir: dir, Problem: "is a PostgreSQL data directory that tierbench did not create (no " +
			StateFile + "); tierbench will not take it over: give a new or empty directory"}
	case isMariaDir(dir):
		return 0, &DataDirError{Dir: dir, Problem: "is a MariaDB/MySQL data directory that tierbench did not create (no " +
			StateFile + "); tierbench will not take it over: give a new or empty directory"}
	case len(entries) == 1 && entries[0].Name() == "lost+found":
		return 0, &DataDirError{Dir: dir, Problem: "looks like the root of a file system (it holds lost+found); use a subdirectory such as " +
			filepath.Join(dir, "pgdata")}
	default:
		return 0, &DataDirError{Dir: dir, Problem: "is not empty and is not a database data directory; give a new or empty directory"}
	}
}

// managed opens an existing managed data directory for Stop and Status.
func managed(dataDir string) (string, state, error) {
	dir, err := absDir(dataDir)
	if err != nil {
		return "", state{}, err
	}
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() {
		return dir, state{}, &DataDirError{Dir: dir, Problem: "is a file, not a directory"}
	}
	if kind, _ := classify(dir); kind != dirManaged {
		return dir, state{}, &DataDirError{Dir: dir, Problem: "is not a tierbench-managed data directory (it has no " + StateFile + " beside a PostgreSQL or MariaDB data directory)"}
	}
	st, err := readState(dir)
	return dir, st, err
}

func absDir(dataDir string) (string, error) {
	if strings.TrimSpace(dataDir) == "" {
		return "", errors.New("no data directory given")
	}
	return filepath.Abs(dataDir)
}

// Start starts the managed server in opts.DataDir, creating it (initdb) on
// first use. A server that is already running is not an error: its Info comes
// back with AlreadyRunning set, and opts are not applied to it.
func Start(ctx context.Context, opts Options) (Info, error) {
	dir, err := absDir(opts.DataDir)
	if err != nil {
		return Info{}, err
	}
	if opts.Port < 0 || opts.Port > 65535 {
		return Info{}, fmt.Errorf("port %d is not in 1..65535", opts.Port)
	}
	if opts.Memory < 0 {
		return Info{}, fmt.Errorf("memory %d is negative", opts.Memory)
	}
	if opts.Listen != "" {
		// Before anything is made; the engine's own rule comes below.
		if _, _, err := ListenNetwork(opts.Listen); err != nil {
			return Info{}, err
		}
	}
	kind, err := classify(dir)
	if err != nil {
		return Info{}, err
	}
	var st state
	engine := opts.Engine
	if engine == "" {
		engine = EnginePostgres
	}
	if kind == dirManaged {
		if st, err = readState(dir); err != nil {
			return Info{}, err
		}
		if opts.KeepConfig {
			opts.Memory, opts.Settings = st.Memory, st.Settings
			if opts.Port == 0 && !opts.NewPort {
				opts.Port = st.Port // as it last ran: its port too, never moved (a supervisor's restart)
			}
		}
		have := dirEngine(dir)
		if opts.Engine != "" && opts.Engine != have {
			return Info{}, &DataDirError{Dir: dir, Problem: fmt.Sprintf("holds a managed %s server, not %s; give a new or empty directory for a %s server",
				engineDisplay(have), engineDisplay(opts.Engine), engineDisplay(opts.Engine))}
		}
		engine = have
	}
	switch engine {
	case EngineMariaDB:
		return startMariaDB(ctx, dir, kind, st, opts)
	case EnginePostgres:
	default:
		return Info{}, fmt.Errorf("engine %q has no managed server; use %s or %s", engine, EnginePostgres, EngineMariaDB)
	}
	for name := range opts.Settings {
		if !ValidSettingName(name) {
			return Info{}, fmt.Errorf("setting name %q is not valid", name)
		}
	}

	var acct account
	pgBin := opts.PgBin
	if kind == dirManaged {
		if pid, port, ok := running(dir); ok {
			if err := sameListen(dir, st, opts.Listen); err != nil {
				return Info{}, err
			}
			return runningInfo(EnginePostgres, dir, st, pid, port), nil
		}
		if pgBin == "" && st.PgBin != "" && hasServerBinaries(st.PgBin) {
			pgBin = st.PgBin
		}
		if acct, err = managedAccount(ctx, dir); err != nil {
			return Info{}, err
		}
	} else {
		if acct, err = serviceAccount(ctx); err != nil {
			return Info{}, err
		}
	}
	bins, err := FindBinaries(pgBin)
	if err != nil {
		return Info{}, err
	}

	if kind == dirManaged {
		if err := acct.checkReachable(dir); err != nil {
			return Info{}, err
		}
		if err := checkMajor(dir, bins); err != nil {
			return Info{}, err
		}
	} else {
		if st, err = initialize(ctx, dir, kind, acct, bins); err != nil {
			return Info{}, err
		}
	}

	st.Engine, st.User, st.PgBin, st.Version = EnginePostgres, DBUser, bins.Dir, bins.Version
	st.Memory, st.Settings = opts.Memory, opts.Settings
	if err := resolveListen(EnginePostgres, opts.Listen, &st); err != nil {
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

	logPath := filepath.Join(dir, LogFile)
	wait := 60
	if opts.StartTimeout > 0 {
		wait = int(max(opts.StartTimeout.Round(time.Second), time.Second) / time.Second)
	}
	err = launchOnPort(&st, picked, logPath, func() error {
		err := configure(dir, &st, bins.Major, acct)
		if err != nil && kind != dirManaged {
			emptyDir(dir) // no half-made cluster that a retry would refuse as foreign
		}
		return err
	}, func() error {
		cmd, err := acct.commandIn(ctx, opts.CgroupProcs, bins.PgCtl, "start", "-w", "-t", strconv.Itoa(wait), "-s", "-D", dir, "-l", logPath)
		if err != nil {
			return err
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			msg := lastLines(string(out), 5)
			if msg != "" {
				msg = ": " + msg
			}
			return fmt.Errorf("PostgreSQL did not start in %s (pg_ctl: %v%s); last lines of %s: %s",
				dir, err, msg, logPath, tailLines(logPath, 5))
		}
		return nil
	})
	if err != nil {
		return Info{}, err
	}
	pid, port, ok := running(dir)
	if !ok {
		return Info{}, fmt.Errorf("PostgreSQL in %s exited right after it started; last lines of %s: %s",
			dir, logPath, tailLines(logPath, 5))
	}
	if err := checkListening(ctx, st, port); err != nil {
		Stop(context.WithoutCancel(ctx), dir, "fast")
		return Info{}, fmt.Errorf("PostgreSQL in %s: %w (stopped again); last lines of %s: %s", dir, err, logPath, tailLines(logPath, 5))
	}
	return startedInfo(EnginePostgres, dir, st, pid, port), nil
}

// startedInfo is the Info of a server just started with state st.
func startedInfo(engine, dir string, st state, pid, port int) Info {
	dsn := pgDSN(st.Password, st.dsnHost(), port)
	if engine == EngineMariaDB {
		dsn = mariaDSN(st.Password, st.dsnHost(), port)
	}
	return Info{Engine: engine, DSN: dsn, DataDir: dir, Port: port, PID: pid, Version: st.Version,
		Listen: st.listenAddrs(), Network: st.Network, MovedFromPort: st.movedFrom}
}

// runningInfo is the Info of a server found running, whose last start
// wrote st.
func runningInfo(engine, dir string, st state, pid, port int) Info {
	info := startedInfo(engine, dir, st, pid, port)
	info.AlreadyRunning = true
	return info
}

// commandIn is a.command started inside the cgroups of procs
// (cgroup.Command; with none, a.command itself). Writing a cgroup.procs file
// takes root's rights when root owns it, so when a is the unprivileged user
// root starts the server as, the wrapper stays root and setpriv (util-linux)
// becomes a just before exec'ing name: a's uid and gid and no supplementary
// groups, as a.command's credential gives.
func (a account) commandIn(ctx context.Context, procs []string, name string, args ...string) (*exec.Cmd, error) {
	if len(procs) == 0 {
		return a.command(ctx, name, args...), nil
	}
	base := a.command(ctx, name, args...) // the working directory and environment a's commands get
	if a.switchTo {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			return nil, fmt.Errorf("starting PostgreSQL as user %s inside a cgroup needs setpriv, which is not installed (it is part of util-linux)", a.name)
		}
		args = append([]string{"--reuid=" + strconv.FormatUint(uint64(a.uid), 10), "--regid=" + strconv.FormatUint(uint64(a.gid), 10),
			"--clear-groups", "--", name}, args...)
		name = setpriv
	}
	cmd := cgroup.Command(ctx, procs, name, args...)
	cmd.Dir, cmd.Env = base.Dir, base.Env
	return cmd, nil
}

// configure writes the socket directory of st.Port, pg_hba.conf,
// tierbench.conf and the state file. pg_hba.conf is tierbench's own in a
// managed directory: rewriting it on every start brings directories made by
// an older tierbench up to date.
func configure(dir string, st *state, major int, acct account) error {
	st.SocketDir = socketDir(dir, st.Port)
	if st.SocketDir != dir {
		if err := ensureSocketDir(st.SocketDir, acct); err != nil {
			return err
		}
	}
	if err := writeFileAs(filepath.Join(dir, "pg_hba.conf"), []byte(hbaConf(st.Network)), 0o600, acct); err != nil {
		return err
	}
	conf := configFile(st.Port, st.SocketDir, st.Listen, st.Memory, major, st.Settings)
	if err := writeFileAs(filepath.Join(dir, ConfFile), []byte(conf), 0o600, acct); err != nil {
		return err
	}
	return writeState(dir, *st, acct)
}

// choosePort sets the port of this start: the one asked for, else with
// newPort or for a new data directory a free one other than the last
// start's, else the last start's, unless another process holds it: then a
// free one, and st.movedFrom says so. It reports whether it picked a free
// port itself, which launchOnPort may then replace.
func (st *state) choosePort(asked int, newPort bool) (picked bool, err error) {
	last := st.Port
	switch {
	case asked != 0:
		st.Port = asked
		return false, nil
	case !newPort && last != 0 && !st.portHeld(last, portHeldFor):
		return false, nil // the last start's, so that the DSN stays the same
	}
	p, err := pickPort(last)
	if err != nil {
		return false, err
	}
	if !newPort && last != 0 {
		st.movedFrom = last
	}
	st.Port = p
	return true, nil
}

// portHeldFor is how long the last start's port must stay taken before a
// start moves to another: a server just killed (a durability fault, which
// a supervisor restarts at once) can hold it for a moment while it goes.
const portHeldFor = time.Second

// portHeld reports whether another process listens on port where the
// server would (on 127.0.0.1, or on the address it listens on besides),
// and has for at least d. A stopped server's port can be taken by anyone
// meanwhile (a test's server in a parallel package took one), and a start
// that kept it failed; it now moves to a free one and says so.
func (st *state) portHeld(port int, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if !st.portTakenNow(port) {
			return false
		}
		if time.Now().After(deadline) {
			return true
		}
	}
}

func (st *state) portTakenNow(port int) bool {
	for _, addr := range st.listenAddrs() {
		l, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
		if err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				return true
			}
			continue
		}
		l.Close()
	}
	return false
}

// pickPort is how a start picks a free port: freeport.Pick, but for tests
// that play the race a pick cannot rule out.
var pickPort = freeport.Pick

// portTries is how many free ports a start tries in all, when the one it
// picked is taken by someone else before the server binds it.
const portTries = 3

// launchOnPort writes the server's configuration for st.Port (configure)
// and starts it (launch). A free port is free only when checked: when
// picked says tierbench chose st.Port itself and the server could not bind
// it, it picks another and tries again, portTries times in all. A port the
// user gave is never changed, nor the last start's once choosePort found
// it free.
func launchOnPort(st *state, picked bool, logPath string, configure, launch func() error) error {
	for try := 1; ; try++ {
		if err := configure(); err != nil {
			return err
		}
		from := fileSize(logPath)
		err := launch()
		if err == nil || !picked || try == portTries || !portTaken(logPath, from, st.Port) {
			return err
		}
		p, perr := pickPort(st.Port)
		if perr != nil {
			return err
		}
		st.Port = p
	}
}

// portTaken reports whether a start that failed lost its port: the
// server's log since byte from says so, or 127.0.0.1:port cannot be bound
// now (the log may be in another language).
func portTaken(logPath string, from int64, port int) bool {
	if logSays(logPath, from, "Address already in use") {
		return true
	}
	l, err := net.Listen("tcp", net.JoinHostPort(loopback, strconv.Itoa(port)))
	if err != nil {
		return errors.Is(err, syscall.EADDRINUSE)
	}
	l.Close()
	return false
}

// fileSize is the size of the file at path, 0 when there is none.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// managedAccount is who runs an existing managed server: the owner of the
// data directory, or when root owns it (copied in by root), the service
// user, who is then given the whole tree.
func managedAccount(ctx context.Context, dir string) (account, error) {
	if os.Geteuid() != 0 {
		return currentAccount(), nil
	}
	if fi, err := os.Stat(dir); err == nil && ownerUID(fi) != 0 {
		return ownerAccount(dir)
	}
	acct, err := serviceAccount(ctx)
	if err != nil {
		return account{}, err
	}
	if err := acct.chownTree(dir); err != nil {
		return account{}, fmt.Errorf("giving %s to user %s: %w", dir, acct.name, err)
	}
	return acct, nil
}

func checkMajor(dir string, bins Binaries) error {
	b, err := os.ReadFile(filepath.Join(dir, "PG_VERSION"))
	if err != nil {
		return err
	}
	have, want := strings.TrimSpace(string(b)), majorString(bins.Version, bins.Major)
	if have != want {
		return &DataDirError{Dir: dir, Problem: fmt.Sprintf("was created by PostgreSQL %s but the binaries in %s are %s; pass --pg-bin with PostgreSQL %s's bin directory",
			have, bins.Dir, bins.Version, have)}
	}
	return nil
}

// initialize creates the data directory (owned by acct), runs initdb with a
// fresh password and writes the tierbench parts of the configuration. If a
// step after initdb fails, the directory is emptied again so the next start
// can retry instead of finding a half-made, unmanaged cluster.
func initialize(ctx context.Context, dir string, kind dirKind, acct account, bins Binaries) (st state, err error) {
	if err := prepareDir(dir, kind, acct); err != nil {
		return st, err
	}
	st.Password, err = newPassword()
	if err != nil {
		return st, err
	}
	if err := initdb(ctx, dir, acct, bins, st.Password); err != nil {
		return st, err
	}
	defer func() {
		if err != nil {
			emptyDir(dir)
		}
	}()
	// pg_hba.conf is written by configure, on this and every later start.
	f, err := os.OpenFile(filepath.Join(dir, "postgresql.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return st, err
	}
	_, err = f.WriteString(includeLine)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return st, err
}

// prepareDir creates a new data directory, or takes an empty one: mode
// 0700, owned by acct, every parent searchable by it.
func prepareDir(dir string, kind dirKind, acct account) error {
	// Before creating anything: the parents that exist already.
	if err := acct.checkReachable(dir); err != nil {
		return err
	}
	if kind == dirMissing {
		// Parents the service user must walk through: 0755 (before umask).
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return err
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
	}
	// Again, for the parents just made (a strict umask may have closed them).
	if err := acct.checkReachable(dir); err != nil {
		if kind == dirMissing {
			os.Remove(dir)
		}
		return err
	}
	if err := acct.chown(dir); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// initdb creates the cluster. The password reaches it through a 0600 file
// that exists only while initdb runs.
func initdb(ctx context.Context, dir string, acct account, bins Binaries, password string) error {
	// The temporary directory, unless the service user cannot reach into it
	// (a TMPDIR private to root); then beside the data directory, which it can.
	pwDir := os.TempDir()
	if acct.checkReachable(filepath.Join(pwDir, "pw")) != nil {
		pwDir = filepath.Dir(dir)
	}
	pw, err := os.CreateTemp(pwDir, "tierbench-pw-*")
	if err != nil {
		return err
	}
	defer os.Remove(pw.Name())
	_, err = pw.WriteString(password + "\n")
	if cerr := pw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = acct.chown(pw.Name())
	}
	if err != nil {
		return fmt.Errorf("writing initdb's password file: %w", err)
	}
	cmd := acct.command(ctx, bins.Initdb, "-D", dir, "-U", DBUser, "--auth=scram-sha-256",
		"--pwfile="+pw.Name(), "-E", "UTF8", "--locale=C", "--no-instructions")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb %s: %v: %s", dir, err, lastLines(string(out), 5))
	}
	return nil
}

func emptyDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// newPassword is 24 URL-safe characters from crypto/rand.
func newPassword() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// pgDSN is the DSN of a managed PostgreSQL at host (127.0.0.1, or its
// Listen address).
func pgDSN(password, host string, port int) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(DBUser, password),
		Host:     net.JoinHostPort(host, strconv.Itoa(port)),
		Path:     "/postgres",
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// running reports whether the server of data directory dir (either
// engine) runs: its main process and port.
func running(dir string) (pid, port int, ok bool) {
	if dirEngine(dir) == EngineMariaDB {
		return mariaRunning(dir)
	}
	return pgRunning(dir)
}

// EngineOf is the engine whose managed data directory dataDir is:
// "postgres" or "mariadb".
func EngineOf(dataDir string) string {
	dir, err := absDir(dataDir)
	if err != nil {
		return EnginePostgres
	}
	return dirEngine(dir)
}

// dirEngine is the engine whose data directory dir is, by its files.
func dirEngine(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err != nil && isMariaDir(dir) {
		return EngineMariaDB
	}
	return EnginePostgres
}

// pgRunning reads postmaster.pid (line 1: PID, line 4: port) and reports
// whether that process is alive and is a PostgreSQL server.
func pgRunning(dir string) (pid, port int, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0, 0, false
	}
	lines := strings.Split(string(b), "\n")
	pid, err = strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 {
		return 0, 0, false
	}
	if len(lines) > 3 {
		port, _ = strconv.Atoi(strings.TrimSpace(lines[3]))
	}
	if !liveProcess(pid) { // a killed postmaster may linger as a zombie
		return 0, 0, false
	}
	// A stale pid file after a crash may name a PID reused by another program.
	if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
		c := strings.TrimSpace(string(comm))
		if !strings.HasPrefix(c, "postgres") && !strings.HasPrefix(c, "postmaster") {
			return 0, 0, false
		}
	}
	return pid, port, true
}

// tailLines is the last n lines of a file, folded into one line.
func tailLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return lastLines(string(b), n)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(string(bytes.ToValidUTF8([]byte(s), []byte("?")))), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func ownerUID(fi fs.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return 0
}

// Stop stops the managed server in dataDir; mode is "fast" (the default:
// roll back sessions, checkpoint), "smart" (PostgreSQL only: wait for the
// sessions to end first) or "immediate" (no checkpoint: the next start runs
// crash recovery, as after a power loss). For PostgreSQL these are pg_ctl's
// shutdown modes; for MariaDB, SIGTERM and SIGKILL.
//
// A fast or smart shutdown that hangs (seen after an out-of-memory kill:
// PostgreSQL in crash recovery takes the request and never finishes it) is
// not waited out: once the server's processes have done nothing for two
// minutes (or the shutdown has taken ten), Stop stops it with an immediate
// one instead. The server is stopped then, so that is no error; the
// fallback is noted in the server's log, and StopDetailed reports it.
// Stopping a stopped server is not an error: wasRunning says which it was.
func Stop(ctx context.Context, dataDir, mode string) (wasRunning bool, err error) {
	r, err := StopDetailed(ctx, dataDir, mode)
	return r.WasRunning, err
}

// StopResult is how a server was stopped.
type StopResult struct {
	WasRunning bool
	// Mode is the shutdown that stopped the server: the one asked for, or
	// "immediate" when that one hung and Stop fell back.
	Mode string
	// Fallback, when not empty, says that and why Stop fell back to an
	// immediate shutdown (a sentence, for the user).
	Fallback string
}

// StopDetailed is Stop, reporting how it stopped the server: whether it had
// to fall back from a hung fast or smart shutdown to an immediate one.
func StopDetailed(ctx context.Context, dataDir, mode string) (StopResult, error) {
	return stop(ctx, dataDir, mode, defaultStopWaits)
}

// stopWaits bounds the waits of a stop.
type stopWaits struct {
	// stall: a fast or smart shutdown whose processes have shown no sign of
	// progress (see activity) for this long has hung.
	stall time.Duration
	// limit: nor may a fast or smart shutdown take longer than this in all.
	limit time.Duration
	// immediate is how long PostgreSQL's immediate shutdown may take.
	immediate time.Duration
}

// defaultStopWaits are Stop's waits; tests call stop with shorter ones.
// A shutdown checkpoint of large shared_buffers on a slow (or throttled)
// device can take minutes, but it keeps writing, or waits on the device,
// all along: only a shutdown doing neither for stall has hung.
var defaultStopWaits = stopWaits{stall: 2 * time.Minute, limit: 10 * time.Minute, immediate: 10 * time.Minute}

func stop(ctx context.Context, dataDir, mode string, w stopWaits) (StopResult, error) {
	switch mode {
	case "":
		mode = "fast"
	case "fast", "immediate", "smart":
	default:
		return StopResult{}, fmt.Errorf("stop mode %q is not one of fast, smart, immediate", mode)
	}
	dir, st, err := managed(dataDir)
	if err != nil {
		return StopResult{}, err
	}
	var r StopResult
	if dirEngine(dir) == EngineMariaDB {
		r, err = mariaStopWithin(ctx, dir, st, mode, w)
	} else {
		r, err = pgStop(ctx, dir, st, mode, w)
	}
	if r.Fallback != "" {
		noteInLog(dir, r.Fallback)
	}
	return r, err
}

// pgStop stops the PostgreSQL of dir (stop's half for it).
func pgStop(ctx context.Context, dir string, st state, mode string, w stopWaits) (StopResult, error) {
	r := StopResult{Mode: mode}
	pid, _, ok := running(dir)
	if !ok {
		return r, nil
	}
	r.WasRunning = true
	pgBin := st.PgBin
	if !hasServerBinaries(pgBin) {
		pgBin = ""
	}
	bins, err := FindBinaries(pgBin)
	if err != nil {
		return r, err
	}
	acct, err := ownerAccount(dir)
	if err != nil {
		return r, err
	}
	if mode != "immediate" {
		if err := pgCtlStop(ctx, acct, bins, dir, mode, 0); err != nil {
			return r, err
		}
		// Gone means the main process too: PostgreSQL removes its PID file
		// just before it exits, and a copy or a restart must not start
		// while it still runs.
		stopped, hung, err := awaitStop(ctx, pid, func() bool { _, _, ok := running(dir); return !ok && !liveProcess(pid) }, w)
		if err != nil {
			return r, fmt.Errorf("waiting for PostgreSQL in %s to stop: %w", dir, err)
		}
		if !stopped {
			r.Mode = "immediate"
			r.Fallback = fmt.Sprintf("the %s shutdown of PostgreSQL in %s %s, so it was stopped with an immediate shutdown (SIGQUIT: no shutdown checkpoint; the next start runs crash recovery)",
				mode, dir, hung)
		}
	}
	if r.Mode == "immediate" {
		if err := pgCtlStop(ctx, acct, bins, dir, "immediate", w.immediate); err != nil {
			if r.Fallback != "" {
				err = fmt.Errorf("%s, which failed too: %w", r.Fallback, err)
			}
			return r, err
		}
		// pg_ctl saw the PID file go; the main process exits just after.
		if !waitFor(ctx, []int{pid}, liveProcess, w.immediate) {
			err := ctx.Err()
			if err == nil {
				err = fmt.Errorf("process %d still runs after %s", pid, w.immediate)
			}
			return r, fmt.Errorf("waiting for PostgreSQL in %s to exit after an immediate shutdown: %w", dir, err)
		}
	}
	if st.SocketDir != "" && st.SocketDir != dir {
		os.Remove(st.SocketDir) // the short socket directory in /tmp, now empty
	}
	return r, nil
}

// pgCtlStop runs pg_ctl stop in mode, waiting up to wait for the server to
// be gone, or not at all when wait is 0. A server gone meanwhile is no error.
func pgCtlStop(ctx context.Context, acct account, bins Binaries, dir, mode string, wait time.Duration) error {
	args := []string{"stop", "-W"}
	if wait > 0 {
		args = []string{"stop", "-w", "-t", strconv.Itoa(max(1, int(wait.Round(time.Second)/time.Second)))}
	}
	cmd := acct.command(ctx, bins.PgCtl, append(args, "-s", "-D", dir, "-m", mode)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		if _, _, still := running(dir); !still {
			return nil // it went away on its own meanwhile
		}
		return fmt.Errorf("pg_ctl stop -m %s %s: %v: %s", mode, dir, err, lastLines(string(out), 5))
	}
	return nil
}

// awaitStop waits, after a fast or smart shutdown request, until stopped
// says the server whose main process is pid is gone, and reports whether it
// went. It gives up (false, and hung says how long it waited) once the
// server's processes have shown no progress for w.stall, or w.limit has
// passed; err is ctx's when ctx ends first.
func awaitStop(ctx context.Context, pid int, stopped func() bool, w stopWaits) (ok bool, hung string, err error) {
	start := time.Now()
	lastProgress, lastSample := start, start
	prev := sampleActivity(pid)
	for {
		if stopped() {
			return true, "", nil
		}
		now := time.Now()
		if now.Sub(lastSample) >= 500*time.Millisecond {
			cur := sampleActivity(pid)
			if cur.progressSince(prev) {
				lastProgress = now
			}
			prev, lastSample = cur, now
		}
		switch {
		case now.Sub(lastProgress) >= w.stall:
			return false, fmt.Sprintf("showed no progress for %s", w.stall), nil
		case now.Sub(start) >= w.limit:
			return false, fmt.Sprintf("had not finished after %s", w.limit), nil
		}
		select {
		case <-ctx.Done():
			return false, "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// activity is what the processes of a server (its main process and those
// it started) have done so far, by PID; nil when it could not be read.
type activity map[int]procActivity

type procActivity struct {
	work    uint64 // bytes read and written (or CPU ticks when its io file is unreadable)
	waiting bool   // a thread of it waits on the kernel, e.g. for the device (state D)
}

// sampleActivity reads the activity of pid's process tree from /proc.
func sampleActivity(pid int) activity {
	pfs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil
	}
	tree, err := telemetry.ProcTree("/proc", pid)
	if err != nil {
		return nil
	}
	a := activity{}
	for _, p := range tree {
		proc, err := pfs.Proc(p)
		if err != nil {
			continue
		}
		stat, err := proc.Stat()
		if err != nil {
			continue // gone meanwhile
		}
		var pa procActivity
		if pio, err := proc.IO(); err == nil {
			pa.work = pio.WChar + pio.ReadBytes + pio.WriteBytes
		} else {
			pa.work = uint64(stat.UTime + stat.STime)
		}
		pa.waiting = stat.State == "D"
		if stat.NumThreads > 1 && !pa.waiting {
			threads, _ := pfs.AllThreads(p)
			for _, t := range threads {
				if ts, err := t.Stat(); err == nil && ts.State == "D" {
					pa.waiting = true
					break
				}
			}
		}
		a[p] = pa
	}
	return a
}

// progressSince reports whether a shows progress since the earlier sample
// prev: a process wrote or read (rchar is left out: an idle postmaster
// rereads its pid file every minute), waits on the device, or has exited.
// Unreadable samples count as progress: a stall must be seen, not guessed.
func (a activity) progressSince(prev activity) bool {
	if a == nil || prev == nil {
		return true
	}
	for p, now := range a {
		if now.waiting {
			return true
		}
		if was, ok := prev[p]; ok && was.work != now.work {
			return true
		}
	}
	for p := range prev {
		if _, ok := a[p]; !ok {
			return true
		}
	}
	return false
}

// mariaStopWithin is mariaStop with the fallback of a hung clean shutdown:
// SIGTERM, and SIGKILL (mariaStop's immediate) when it stalls.
func mariaStopWithin(ctx context.Context, dir string, st state, mode string, w stopWaits) (StopResult, error) {
	r := StopResult{Mode: mode}
	if mode == "immediate" {
		was, err := mariaStop(ctx, dir, st, mode)
		r.WasRunning = was
		return r, err
	}
	pid, _, ok := mariaRunning(dir)
	if !ok {
		return r, nil
	}
	r.WasRunning = true
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return r, fmt.Errorf("signalling MariaDB (pid %d): %w", pid, err)
	}
	stopped, hung, err := awaitStop(ctx, pid, func() bool { return !processExists(pid) }, w)
	if err != nil {
		return r, fmt.Errorf("waiting for MariaDB in %s to stop: %w", dir, err)
	}
	if stopped {
		mariaStopped(dir, st)
		return r, nil
	}
	r.Mode = "immediate"
	r.Fallback = fmt.Sprintf("the %s shutdown of MariaDB in %s %s, so it was killed (SIGKILL: the next start recovers from the redo log)",
		mode, dir, hung)
	if _, err := mariaStop(ctx, dir, st, "immediate"); err != nil {
		return r, fmt.Errorf("%s, which failed too: %w", r.Fallback, err)
	}
	return r, nil
}

// noteInLog appends a line of tierbench's own to the server's log, where
// whoever reads why the next start ran crash recovery looks.
func noteInLog(dir, note string) {
	f, err := os.OpenFile(filepath.Join(dir, LogFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s tierbench: %s\n", time.Now().Format("2006-01-02 15:04:05.000 MST"), note)
}

// Status reports on the managed data directory dataDir.
func Status(ctx context.Context, dataDir string) (StatusInfo, error) {
	dir, st, err := managed(dataDir)
	if err != nil {
		return StatusInfo{}, err
	}
	s := StatusInfo{Engine: dirEngine(dir), DataDir: dir, Port: st.Port, Version: st.Version,
		Listen: st.listenAddrs(), Network: st.Network}
	if pid, port, ok := running(dir); ok {
		if port != 0 {
			s.Port = port
		}
		s.Running, s.PID, s.DSN = true, pid, startedInfo(s.Engine, dir, st, pid, s.Port).DSN
	}
	return s, ctx.Err()
}
