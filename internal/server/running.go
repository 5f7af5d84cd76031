package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// starter is the process that started a server, as the state file keeps it.
type starter struct {
	PID int `json:"pid"`
	// StartTicks is field 22 of /proc/PID/stat (start time in clock ticks
	// since boot): a later process that got the same PID has another.
	StartTicks  uint64 `json:"start_ticks,omitempty"`
	Command     string `json:"command"`
	KeepRunning bool   `json:"keep_running,omitempty"`
}

// thisProcess describes the running tierbench as a server's starter.
func thisProcess(keepRunning bool) *starter {
	pid := os.Getpid()
	s := &starter{PID: pid, Command: commandName(os.Args), KeepRunning: keepRunning}
	if p, err := procfs.NewProc(pid); err == nil {
		if st, err := p.Stat(); err == nil {
			s.StartTicks = st.Starttime
		}
	}
	return s
}

// commandName names a command by its program and the words before its
// first flag ("tierbench scenario run quick"): flags are left out, as their
// values may be secrets (a DSN's password).
func commandName(args []string) string {
	if len(args) == 0 {
		return ""
	}
	words := []string{filepath.Base(args[0])}
	for _, a := range args[1:] {
		if len(words) == 4 || strings.HasPrefix(a, "-") || strings.Contains(a, "://") || strings.ContainsAny(a, "@=") {
			break
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// RunningServer is a managed server found running on this host: an entry of
// `server status --json` without --datadir. It carries no DSN: `server
// status --datadir DIR --json` gives that one server's.
type RunningServer struct {
	Engine  string    `json:"engine"`
	DataDir string    `json:"datadir"`
	PID     int       `json:"pid"`
	Port    int       `json:"port"`
	Version string    `json:"version"`
	Since   time.Time `json:"since"` // when the postmaster started (zero: unknown)
	// StartedBy is the process that started it; nil when the tierbench
	// that did did not record itself (an older version).
	StartedBy *Starter `json:"started_by,omitempty"`
	// Orphaned: its starter meant to stop it when done, and is gone (it was
	// killed). Nothing will stop the server but `server stop`.
	Orphaned bool `json:"orphaned"`
}

// Starter is the process that started a managed server.
type Starter struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
	// KeepRunning: the starter meant the server to outlive it (`server
	// start`, `tierbench run`).
	KeepRunning bool `json:"keep_running"`
	Alive       bool `json:"alive"`
}

// Running finds every managed server running on this host: PostgreSQL
// postmasters and MariaDB servers whose data directory holds tierbench's
// state file, sorted by data directory. It sees the processes this user may inspect: as root,
// all of them.
func Running(ctx context.Context) ([]RunningServer, error) {
	return findRunning(ctx, procfs.DefaultMountPoint)
}

func findRunning(ctx context.Context, procRoot string) ([]RunningServer, error) {
	pfs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, err
	}
	procs, err := pfs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	found := []RunningServer{}
	seen := map[string]bool{}
	for _, p := range procs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dir, ok := postmasterDir(pfs, p)
		manage := managedServer
		if !ok {
			dir, ok = mariadbdDir(p)
			manage = managedMariaDB
		}
		if !ok || seen[dir] {
			continue
		}
		if rs, ok := manage(pfs, p.PID, dir); ok {
			seen[dir] = true
			found = append(found, rs)
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].DataDir < found[j].DataDir })
	return found, nil
}

// postmasterDir reports whether p is a PostgreSQL postmaster — a postgres
// process whose parent is not one (its children rename themselves
// "postgres: checkpointer" and the like, and have it as parent) — and
// returns its data directory: -D's value, else its working directory, to
// which a postmaster changes once started.
func postmasterDir(pfs procfs.FS, p procfs.Proc) (string, bool) {
	args, err := p.CmdLine()
	if err != nil || len(args) == 0 || !isPostgres(args[0]) {
		return "", false
	}
	st, err := p.Stat()
	if err != nil || st.State == "Z" {
		return "", false
	}
	if parent, err := pfs.Proc(st.PPID); err == nil {
		if pargs, err := parent.CmdLine(); err == nil && len(pargs) > 0 && isPostgres(pargs[0]) {
			return "", false
		}
	}
	// A relative -D was relative to where it started: the working directory
	// says more.
	if dir := flagD(args[1:]); filepath.IsAbs(dir) {
		return filepath.Clean(dir), true
	}
	cwd, err := p.Cwd()
	if err != nil || !filepath.IsAbs(cwd) {
		return "", false
	}
	return filepath.Clean(cwd), true
}

// flagD is the value of the first -D in args ("-D DIR" or "-DDIR").
func flagD(args []string) string {
	for i, a := range args {
		switch {
		case a == "-D" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "-D") && len(a) > 2:
			return a[2:]
		}
	}
	return ""
}

func isPostgres(argv0 string) bool {
	base := filepath.Base(argv0)
	return base == "postgres" || base == "postmaster"
}

// managedServer describes the postmaster pid of data directory dir, if dir
// is a managed one and its postmaster.pid names pid (a directory whose
// server has stopped may hold a stale one).
func managedServer(pfs procfs.FS, pid int, dir string) (RunningServer, bool) {
	for _, name := range []string{"PG_VERSION", StateFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return RunningServer{}, false
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return RunningServer{}, false
	}
	// Line 1: PID; 3: start time (Unix seconds); 4: port.
	lines := strings.Split(string(b), "\n")
	if p, err := strconv.Atoi(strings.TrimSpace(lines[0])); err != nil || p != pid {
		return RunningServer{}, false
	}
	// A damaged state file still marks the directory as tierbench's; what
	// it held is reported as far as it reads.
	st, _ := readState(dir)
	rs := RunningServer{Engine: EnginePostgres, DataDir: dir, PID: pid, Port: st.Port, Version: st.Version}
	if len(lines) > 2 {
		if sec, err := strconv.ParseInt(strings.TrimSpace(lines[2]), 10, 64); err == nil && sec > 0 {
			rs.Since = time.Unix(sec, 0)
		}
	}
	if len(lines) > 3 {
		if port, err := strconv.Atoi(strings.TrimSpace(lines[3])); err == nil && port > 0 {
			rs.Port = port
		}
	}
	rs.describeStarter(pfs, st)
	return rs, true
}

// describeStarter fills in who started the server and whether it is orphaned.
func (rs *RunningServer) describeStarter(pfs procfs.FS, st state) {
	if s := st.StartedBy; s != nil {
		rs.StartedBy = &Starter{PID: s.PID, Command: s.Command, KeepRunning: s.KeepRunning,
			Alive: processRuns(pfs, s.PID, s.StartTicks)}
		rs.Orphaned = !rs.StartedBy.Alive && !s.KeepRunning
	}
}

// mariadbdDir reports whether p is a managed MariaDB server — mariadbd
// started with --defaults-file=DIR/tierbench.cnf — and returns DIR.
func mariadbdDir(p procfs.Proc) (string, bool) {
	args, err := p.CmdLine()
	if err != nil || len(args) < 2 {
		return "", false
	}
	if b := filepath.Base(args[0]); b != "mariadbd" && b != "mysqld" {
		return "", false
	}
	conf, ok := strings.CutPrefix(args[1], "--defaults-file=")
	if !ok || filepath.Base(conf) != MariaConfFile || !filepath.IsAbs(conf) {
		return "", false
	}
	return filepath.Dir(filepath.Clean(conf)), true
}

// managedMariaDB describes the mariadbd pid of data directory dir, if dir
// is a managed one whose pid file names pid.
func managedMariaDB(pfs procfs.FS, pid int, dir string) (RunningServer, bool) {
	if _, err := os.Stat(filepath.Join(dir, StateFile)); err != nil {
		return RunningServer{}, false
	}
	if p, _, ok := mariaRunning(dir); !ok || p != pid {
		return RunningServer{}, false
	}
	st, _ := readState(dir)
	rs := RunningServer{Engine: EngineMariaDB, DataDir: dir, PID: pid, Port: st.Port, Version: st.Version}
	if proc, err := pfs.Proc(pid); err == nil {
		if t, err := proc.Stat(); err == nil {
			if sec, err := t.StartTime(); err == nil {
				rs.Since = time.Unix(int64(sec), 0)
			}
		}
	}
	rs.describeStarter(pfs, st)
	return rs, true
}

// processRuns reports whether pid still runs and, when startTicks is
// known, is the same process (not a later one given the same PID). A
// zombie is gone: it only waits for its parent to read its exit status.
func processRuns(pfs procfs.FS, pid int, startTicks uint64) bool {
	if pid <= 0 {
		return false
	}
	p, err := pfs.Proc(pid)
	if err != nil {
		return false
	}
	st, err := p.Stat()
	if err != nil {
		return false // gone between the two reads
	}
	if st.State == "Z" || st.State == "X" {
		return false
	}
	return startTicks == 0 || st.Starttime == startTicks
}
