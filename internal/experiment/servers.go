package experiment

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/stored"
)

// The managed servers both front ends compose: `server start`, `server
// stop` and `server clone` on the command line (here or, over SSH, on a
// scenario's host), and a scenario's servers on the controller. Their rules
// (ServerConfig.Validate) are written once, here: a scenario validates its
// remote hosts' servers with the rules those hosts' tierbench applies.

// MinServerMemory is the least memory a managed server is sized for: below
// it the sizing rules give a server too small to load even a one-warehouse
// TPC-C schema sensibly.
const MinServerMemory = 128 << 20

// MaxMBps bounds a throttle's MB/s (1 PB/s): far above any device, and far
// below where bytes per second overflow an int64.
const MaxMBps = 1e9

// Throttle is an I/O limit on the device holding a data directory (or an
// emulated tier's): zero fields are no limit; MB are 10^6 bytes, as disk
// runs report them. Its fields are "read_iops", "write_iops", "read_mbps"
// and "write_mbps".
type Throttle struct {
	ReadIOPS  int64   `json:"read_iops,omitempty"`
	WriteIOPS int64   `json:"write_iops,omitempty"`
	ReadMBps  float64 `json:"read_mbps,omitempty"`
	WriteMBps float64 `json:"write_mbps,omitempty"`
}

// Asked says whether any limit is set.
func (t Throttle) Asked() bool {
	return t.ReadIOPS > 0 || t.WriteIOPS > 0 || t.ReadMBps > 0 || t.WriteMBps > 0
}

// Limit is the throttle as cgroups take it, without its device.
func (t Throttle) Limit() stored.IOLimit {
	return stored.IOLimit{ReadIOPS: t.ReadIOPS, WriteIOPS: t.WriteIOPS, ReadBPS: int64(t.ReadMBps * 1e6), WriteBPS: int64(t.WriteMBps * 1e6)}
}

// Validate checks the limits: not negative, a bandwidth a number of MB/s up
// to MaxMBps and not below one byte per second.
func (t Throttle) Validate() error {
	var ps problems
	t.check(&ps)
	return ps.err()
}

func (t Throttle) check(ps *problems) {
	for _, x := range []struct {
		field string
		v     int64
	}{{"read_iops", t.ReadIOPS}, {"write_iops", t.WriteIOPS}} {
		if x.v < 0 {
			ps.add(x.field, x.v, "is negative; give I/Os per second, or 0 for no limit")
		}
	}
	for _, x := range []struct {
		field string
		v     float64
	}{{"read_mbps", t.ReadMBps}, {"write_mbps", t.WriteMBps}} {
		switch {
		case !(x.v >= 0) || math.IsInf(x.v, 0) || x.v > MaxMBps: // NaN fails >= too
			ps.add(x.field, x.v, "is not a bandwidth; give MB/s (10^6 bytes) up to 1e9, e.g. 200, or 0 for no limit")
		case x.v > 0 && int64(x.v*1e6) == 0:
			ps.add(x.field, x.v, "is below one byte per second; give MB/s (10^6 bytes), e.g. 200, or 0 for no limit")
		}
	}
}

// ServerConfig is a managed server as a front end asks for it: what `server
// start` takes on the command line, and what a scenario's server gives each
// of its instances. Its fields are named, in Problems, by the paths in
// quotes.
type ServerConfig struct {
	// Engine ("engine") is a managed engine (postgres, mariadb), for a new
	// data directory; "": an existing managed directory keeps its own, a
	// new one is PostgreSQL.
	Engine string
	// DataDir ("datadir") is the data directory: created on first use,
	// reused afterwards.
	DataDir string
	// Port ("port") is the TCP port; 0: the last start's, else a free one.
	Port int
	// NewPort picks a free port rather than the last start's (a copy that
	// runs beside its source). Port, when given, wins.
	NewPort bool
	// Listen ("listen") is an address of this host the server listens on
	// besides 127.0.0.1, for other hosts (server.Options.Listen); "":
	// 127.0.0.1 only.
	Listen string
	// Memory ("memory") sizes the server's buffers and, with cgroups, caps
	// its memory, page cache included; 0: the engine's defaults, no cap.
	Memory int64
	// Settings ("settings") are server settings applied last (name =
	// value).
	Settings map[string]string
	// PgBin is the directory of PostgreSQL's programs; "": found.
	PgBin string
	// Throttle limits the server's I/O on the device of its data directory.
	Throttle
	// IOGroup is the cgroup of an emulated tier's I/O budget: the throttle
	// is then that group's, shared with every server and workload in it;
	// "": the server's own. Tier names the tier in messages.
	IOGroup, Tier string
	// NoCgroup ("no_cgroup") keeps Memory to sizing the buffers: no cap,
	// no throttle.
	NoCgroup bool
	// KeepRunning says the server is meant to outlive its starter (`server
	// start`, `tierbench run`), which is then not its orphan once gone.
	KeepRunning bool
}

// Validate checks what can be checked before anything starts, on any host:
// the engine, a data directory given, the port, the memory (at least
// MinServerMemory), setting names the engine takes, the throttles, and no
// throttle without cgroups. Whether Listen is an address of this host is
// the host's to say, when the server starts (StartServer).
func (c ServerConfig) Validate() error {
	var ps problems
	if c.Engine != "" {
		managedEngine(&ps, c.Engine)
	}
	if strings.TrimSpace(c.DataDir) == "" {
		ps.missing("datadir", "is missing; give the server's data directory")
	}
	if c.Port < 0 || c.Port > 65535 {
		ps.add("port", c.Port, "is not a TCP port; give one in 1..65535")
	}
	if c.Listen != "" && strings.TrimSpace(c.Listen) == "" {
		ps.missing("listen", "is empty; give an address of this host, or none to listen on 127.0.0.1 only")
	}
	if c.Memory < 0 || c.Memory > 0 && c.Memory < MinServerMemory {
		ps.add("memory", Bytes(c.Memory), "is too little for a managed server; give at least %s", Bytes(MinServerMemory).String())
	}
	for _, name := range slices.Sorted(maps.Keys(c.Settings)) {
		if msg := settingNameProblem(c.Engine, name); msg != "" {
			ps.add("settings", name, "%s", msg)
		}
	}
	c.Throttle.check(&ps)
	if c.NoCgroup && c.Throttle.Asked() {
		ps.missing("no_cgroup", "leaves nothing to throttle through; drop it, or the I/O throttles (they act through cgroups)")
	}
	return ps.err()
}

// managedEngine checks that name is an engine whose server tierbench runs
// (the "engine" of a managed server); it says whether it is.
func managedEngine(ps *problems, name string) bool {
	if e, ok := all.Lookup(name); !ok || !e.ManagedServer {
		ps.add("engine", name, "has no managed server; use %s", strings.Join(all.Names(true), " or "))
		return false
	}
	return true
}

// String is the size in binary units (100MiB).
func (b Bytes) String() string { return valueText(b) }

// settingNameProblem says what is wrong with a setting name for engine
// ("" when nothing): PostgreSQL's are letters, digits, _ and, for
// extensions' settings, .; MariaDB's letters, digits, _ and -. An engine
// not yet known ("") takes either.
func settingNameProblem(engine, name string) string {
	pg, maria := server.ValidSettingName(name), server.ValidMariaSettingName(name)
	switch {
	case strings.TrimSpace(name) == "":
		return "is an empty setting name; write name=value, e.g. work_mem=64MB"
	case engine == server.EngineMariaDB && !maria:
		return "is not a MariaDB option name; use letters, digits, _ and -, starting with a letter or _"
	case engine == server.EnginePostgres && !pg:
		return "is not a PostgreSQL setting name; use letters, digits, _ and . (an extension's), starting with a letter or _"
	case engine == "" && !pg && !maria:
		return "is not a setting name; use letters, digits, _, . (PostgreSQL) or - (MariaDB), starting with a letter or _"
	}
	return ""
}

// ServerStarted is a started managed server, as `server start --json` and
// `server clone --json` print it: its Info, the limits applied when any
// were asked, and the source of a copy.
type ServerStarted struct {
	server.Info
	Limits     *stored.Applied `json:"limits,omitempty"`
	ClonedFrom string          `json:"cloned_from,omitempty"`
	// LimitsText says in one line what applied and what did not, and why
	// ("" when no limits were asked).
	LimitsText string `json:"-"`
}

// StartServer starts the managed server cfg describes (initialising its
// data directory on first use) and places it under its memory cap and I/O
// throttle: the device holding the data directory, or the tier's budget
// (IOGroup). What cgroups cannot do on this machine is said in LimitsText,
// not an error; a server that was already running is left as it runs. Bad
// input is a Problem: cfg's (Validate), a listen address this host does not
// have ("listen"), a data directory that cannot be used ("datadir"). When
// the server started but its limits could not be placed, the result comes
// with the error: the server runs.
func StartServer(ctx context.Context, cfg ServerConfig, obs Observer) (*ServerStarted, error) {
	check := cfg
	if check.Engine == "" && strings.TrimSpace(cfg.DataDir) != "" {
		// The engine the server will be: a managed directory's own, else
		// PostgreSQL; its setting names are that engine's.
		check.Engine = server.EngineOf(cfg.DataDir)
	}
	if err := check.Validate(); err != nil {
		return nil, err
	}
	info, err := server.Start(ctx, server.Options{Engine: cfg.Engine, DataDir: cfg.DataDir, Port: cfg.Port, NewPort: cfg.NewPort,
		Listen: strings.TrimSpace(cfg.Listen), Memory: cfg.Memory, Settings: cfg.Settings, PgBin: cfg.PgBin, KeepRunning: cfg.KeepRunning})
	if err != nil {
		return nil, serverProblem(err)
	}
	res := &ServerStarted{Info: info}
	if info.MovedFromPort != 0 {
		obs.Note(fmt.Sprintf("note: port %d, the last start's, is held by another process; %s in %s now listens on %d, and its DSN changed",
			info.MovedFromPort, all.Display(info.Engine), info.DataDir, info.Port))
	}
	if p, err := netip.ParsePrefix(info.Network); err == nil && p.Bits() == p.Addr().BitLen() {
		obs.Note(fmt.Sprintf("note: %s is a /%d address: its network is this host alone, so other hosts' logins are refused; give an address whose interface has the network's prefix",
			info.Listen[0], p.Bits()))
	}
	wantIO := cfg.Throttle.Asked()
	asked := !cfg.NoCgroup && (cfg.Memory > 0 || wantIO)
	switch {
	case asked && info.AlreadyRunning:
		res.LimitsText = "limits not applied: the server was already running (stop it, then start it with them)"
	case asked:
		ap, device, err := ApplyServerLimits(ctx, info.DataDir, cfg.Memory, cfg.Throttle.Limit(), wantIO, cfg.IOGroup)
		if err != nil {
			return res, fmt.Errorf("%s started in %s, but placing it under its limits failed: %w (`tierbench server stop --datadir %s` stops it)",
				all.Display(info.Engine), info.DataDir, err, info.DataDir)
		}
		res.Limits = &ap
		res.LimitsText = LimitsText(ap, cfg.Memory > 0, wantIO, device, cfg.Tier)
	case !info.AlreadyRunning:
		// Started without limits: a group left by an earlier start with
		// them (the server crashed, or was stopped by other means than
		// StopServer) must go, or a restart after a fault
		// (server.Restart) would put the server back under them.
		if err := server.RemoveLimits(info.DataDir); err != nil && !errors.Is(err, cgroup.ErrNotFound) {
			obs.Note(fmt.Sprintf("warning: removing the cgroup an earlier start of the server in %s left: %v", info.DataDir, err))
		}
	}
	return res, nil
}

// serverProblem makes a managed server's refusal of its input a Problem of
// the field it is about: a listen address this host cannot take, a data
// directory that cannot be used as asked. Anything else stays a failure.
func serverProblem(err error) error {
	var le *server.ListenError
	var de *server.DataDirError
	switch {
	case errors.As(err, &le):
		return &Problem{Field: "listen", Value: Quote(le.Addr), Msg: le.Problem}
	case errors.As(err, &de):
		return &Problem{Field: "datadir", Value: Quote(de.Dir), Msg: de.Problem}
	}
	return err
}

// ServerStopped is a stopped managed server, as `server stop --json`
// prints it.
type ServerStopped struct {
	Engine     string `json:"engine"`
	DataDir    string `json:"datadir"`
	WasRunning bool   `json:"was_running"`
	// Mode is the shutdown that stopped it, and Fallback why it was an
	// immediate one when another was asked for and hung.
	Mode     string `json:"mode,omitempty"`
	Fallback string `json:"fallback,omitempty"`
}

// Shutdown modes of StopServer.
const (
	StopFast      = "fast"      // roll back sessions, checkpoint
	StopImmediate = "immediate" // no checkpoint; the next start recovers, as after a crash
)

// StopServer stops the managed server in dataDir (not an error when it is
// stopped already) with a shutdown of mode ("": fast), and releases its
// limits: its own cgroup goes (a tier's shared budget stays for the others
// in it). A cgroup that cannot be removed is a note.
func StopServer(ctx context.Context, dataDir, mode string, obs Observer) (*ServerStopped, error) {
	var ps problems
	if mode == "" {
		mode = StopFast
	}
	if mode != StopFast && mode != StopImmediate {
		ps.add("mode", mode, "is not a shutdown mode; use %s or %s", StopFast, StopImmediate)
	}
	if strings.TrimSpace(dataDir) == "" {
		ps.missing("datadir", "is missing; give the server's data directory")
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	st, err := server.StopDetailed(ctx, dataDir, mode)
	if err != nil {
		return nil, serverProblem(err)
	}
	// The cgroup a start with limits made; a server started without any has none.
	if err := server.RemoveLimits(dataDir); err != nil && !errors.Is(err, cgroup.ErrNotFound) {
		obs.Note(fmt.Sprintf("warning: removing the cgroup of the server in %s: %v", dataDir, err))
	}
	res := &ServerStopped{Engine: server.EngineOf(dataDir), DataDir: dataDir, WasRunning: st.WasRunning, Fallback: st.Fallback}
	if st.WasRunning {
		res.Mode = st.Mode
	}
	if abs, err := filepath.Abs(dataDir); err == nil {
		res.DataDir = abs
	}
	return res, nil
}

// StopServers stops every managed server running on this host (those
// server.Running finds), each as StopServer does; one that fails does not
// keep the others running. It returns those stopped.
func StopServers(ctx context.Context, mode string, obs Observer) ([]ServerStopped, error) {
	if mode != "" && mode != StopFast && mode != StopImmediate {
		var ps problems
		ps.add("mode", mode, "is not a shutdown mode; use %s or %s", StopFast, StopImmediate)
		return nil, ps.err()
	}
	found, err := server.Running(ctx)
	if err != nil {
		return nil, err
	}
	out := []ServerStopped{}
	var errs []error
	for _, rs := range found {
		res, err := StopServer(ctx, rs.DataDir, mode, obs)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rs.DataDir, err))
			continue
		}
		out = append(out, *res)
	}
	return out, errors.Join(errs...)
}

// CloneConfig is a copy of a stopped managed server: From, copied into
// the ServerConfig's DataDir and started as that config says, on a free
// port unless it gives one. Its engine is its source's.
type CloneConfig struct {
	// From ("from") is the managed data directory to copy; its server must
	// be stopped.
	From string
	// Replace ("replace") removes a stopped managed data directory at
	// DataDir first (a copy made before).
	Replace bool
	ServerConfig
}

// Validate checks the config as far as it can before the source is read:
// a source given, and the copy's ServerConfig.
func (c CloneConfig) Validate() error {
	var ps problems
	if strings.TrimSpace(c.From) == "" {
		ps.missing("from", "is missing; give the stopped managed data directory to copy")
	}
	for _, p := range Problems(c.ServerConfig.Validate()) {
		ps.list = append(ps.list, p)
	}
	return ps.err()
}

// CloneServer copies the stopped managed server in cfg.From into
// cfg.DataDir, a new or empty directory (or, with Replace, a stopped copy
// made before), with plain reads and writes, and starts the copy as
// StartServer does: a second server with the same data, password and
// engine, on a port other than its source's unless cfg.Port gives one.
func CloneServer(ctx context.Context, cfg CloneConfig, obs Observer) (*ServerStarted, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	from, err := filepath.Abs(cfg.From)
	if err != nil {
		return nil, err
	}
	dst, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	switch {
	case dst == from:
		return nil, &Problem{Field: "datadir", Value: Quote(dst), Msg: "is the source itself; give another directory for the copy"}
	case within(dst, from):
		return nil, &Problem{Field: "datadir", Value: Quote(dst), Msg: "is inside the source " + from + "; give a directory outside it"}
	case within(from, dst):
		return nil, &Problem{Field: "datadir", Value: Quote(dst), Msg: "holds the source " + from + "; give a directory outside it"}
	}
	src, err := server.Status(ctx, from)
	if err != nil {
		var de *server.DataDirError
		if errors.As(err, &de) {
			return nil, &Problem{Field: "from", Value: Quote(from), Msg: de.Problem}
		}
		return nil, err
	}
	if src.Running {
		return nil, &Problem{Field: "from", Value: Quote(from), Msg: fmt.Sprintf("has its %s server running (pid %d); stop it before cloning (tierbench server stop --datadir %s): a running server's files are not a consistent copy",
			all.Display(src.Engine), src.PID, from)}
	}
	if cfg.Engine != "" && cfg.Engine != src.Engine {
		return nil, &Problem{Field: "engine", Value: Quote(cfg.Engine), Msg: "is not the source's (" + src.Engine + "); leave it out: a copy has its source's engine"}
	}
	cfg.Engine = src.Engine
	if err := cfg.ServerConfig.Validate(); err != nil { // the setting names, now that the engine is known
		return nil, err
	}
	if l := strings.TrimSpace(cfg.Listen); l != "" {
		// Before copying what may be many GB.
		if err := server.CheckListen(src.Engine, l); err != nil {
			return nil, serverProblem(err)
		}
	}
	if err := clearCloneTarget(ctx, dst, cfg.Replace); err != nil {
		return nil, err
	}
	obs.Note(fmt.Sprintf("cloning %s into %s", from, dst))
	if err := server.Clone(ctx, from, dst); err != nil {
		return nil, serverProblem(err)
	}
	sc := cfg.ServerConfig
	sc.DataDir = dst
	// Unless a port is given, a free one other than the source's (which
	// the copy's state file holds): the source may run again beside it.
	sc.NewPort = true
	res, err := StartServer(ctx, sc, obs)
	if res != nil {
		res.ClonedFrom = from
	}
	if err != nil && res == nil {
		return nil, fmt.Errorf("cloned %s into %s, but starting the copy failed: %w", from, dst, err)
	}
	return res, err
}

// clearCloneTarget refuses a managed data directory at dst, or with
// replace removes it when its server is stopped. Anything else at dst is
// left to server.Clone, which takes a new or empty directory only.
func clearCloneTarget(ctx context.Context, dst string, replace bool) error {
	st, err := server.Status(ctx, dst)
	if err != nil {
		return nil // not a managed data directory
	}
	switch {
	case !replace:
		return &Problem{Field: "datadir", Value: Quote(dst), Msg: fmt.Sprintf("holds a managed %s server already; give a new or empty directory, or add {replace} to replace it",
			all.Display(st.Engine))}
	case st.Running:
		return &Problem{Field: "datadir", Value: Quote(dst), Msg: fmt.Sprintf("holds a managed %s server that is running (pid %d); stop it first (tierbench server stop --datadir %s)",
			all.Display(st.Engine), st.PID, dst)}
	}
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("removing the old copy in %s: %w", dst, err)
	}
	return nil
}

// within reports whether path is inside dir (not dir itself).
func within(path, dir string) bool {
	return strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
