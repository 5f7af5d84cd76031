package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/units"
)

func newServerCommand(g *Globals) *cobra.Command {
	cmd := newGroupCommand("server", "Start, stop and query a managed database server (initdb on first use)")
	cmd.AddCommand(newServerStartCommand(g), newServerStopCommand(g), newServerStatusCommand(g), newServerCloneCommand(g))
	return cmd
}

// ServerStartOptions are the flags of `server start`.
type ServerStartOptions struct {
	Engine  string
	DataDir string
	Port    int
	// PortSet records that --port was given, so that --port 0 is refused
	// rather than read as "not given".
	PortSet bool
	// EngineSet records that --engine was given: without it, a managed
	// directory keeps its own engine.
	EngineSet bool
	// Listen is an address of this host to listen on besides 127.0.0.1
	// (server.Options.Listen); empty: 127.0.0.1 only.
	Listen string
	Memory string
	Set    []string
	PgBin  string
	// Throttles of the device holding the data directory; 0: none.
	ReadIOPS, WriteIOPS int64
	ReadMBps, WriteMBps float64 // MB = 10^6 bytes, as disk run reports
	// NoCgroup keeps --memory to sizing the buffers: no cap, no throttle.
	NoCgroup bool
}

// AddFlags registers the options' flags.
func (o *ServerStartOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Engine, "engine", all.Names(true)[0], "database engine ("+strings.Join(all.Names(true), ", ")+")")
	fs.StringVar(&o.DataDir, "datadir", "", "data directory; created with initdb on first use, reused afterwards")
	o.addServerFlags(fs, "TCP port (default: the port of the last start, unless another process holds it now, else a free one)")
}

// addServerFlags registers the flags `server start` and `server clone`
// share: how the server runs.
func (o *ServerStartOptions) addServerFlags(fs *pflag.FlagSet, portHelp string) {
	fs.IntVar(&o.Port, "port", 0, portHelp)
	fs.StringVar(&o.Listen, "listen", "", "an IPv4 or IPv6 address of this host to listen on besides 127.0.0.1, for other hosts: password logins from its network (the interface's prefix) are then accepted, and the DSN names it (default: 127.0.0.1 only; every start says where it listens)")
	fs.StringVar(&o.Memory, "memory", "", "memory to size the server for, e.g. 4GiB: PostgreSQL's shared_buffers = 1/4 of it, MariaDB's buffer pool 5/8, and more (default: the engine's defaults)")
	fs.StringArrayVar(&o.Set, "set", nil, "a server setting name=value, applied last (repeatable)")
	fs.StringVar(&o.PgBin, "pg-bin", "", "directory of initdb, pg_ctl and postgres (default: found on PATH or in /usr/lib/postgresql/*/bin)")
	fs.Int64Var(&o.ReadIOPS, "read-iops", 0, "throttle the server's reads from the data directory's device to N IOPS (cgroup; 0: no limit)")
	fs.Int64Var(&o.WriteIOPS, "write-iops", 0, "throttle the server's writes to the data directory's device to N IOPS (cgroup; 0: no limit)")
	fs.Float64Var(&o.ReadMBps, "read-mbps", 0, "throttle the server's reads from the data directory's device to N MB/s (10^6 bytes; 0: no limit)")
	fs.Float64Var(&o.WriteMBps, "write-mbps", 0, "throttle the server's writes to the data directory's device to N MB/s (10^6 bytes; 0: no limit)")
	fs.BoolVar(&o.NoCgroup, "no-cgroup", false, "do not use cgroups: --memory only sizes the buffers, and nothing is throttled")
}

// serverFlags names the fields of a managed server (experiment.ServerConfig,
// CloneConfig and StopServer's) whose flag is not --FIELD (flagged).
var serverFlags = map[string]string{"settings": "--set"}

// config checks what only the command line can get wrong (--port 0 given,
// a --memory that is not a size, a --set that is not name=value) and turns
// the flags into the experiment layer's config, whose Validate has every
// other rule.
func (o *ServerStartOptions) config() (experiment.ServerConfig, error) {
	cfg := experiment.ServerConfig{DataDir: o.DataDir, Port: o.Port, Listen: o.Listen, PgBin: o.PgBin, NoCgroup: o.NoCgroup,
		Throttle:    experiment.Throttle{ReadIOPS: o.ReadIOPS, WriteIOPS: o.WriteIOPS, ReadMBps: o.ReadMBps, WriteMBps: o.WriteMBps},
		KeepRunning: true} // it is meant to outlive this command: not an orphan once it exits
	if o.EngineSet {
		cfg.Engine = o.Engine // otherwise a managed directory keeps its engine, and a new one is PostgreSQL's
	}
	if o.PortSet && o.Port == 0 {
		// The flag's zero is "not given"; given, it is no port.
		return cfg, usagef("--port 0 is not a TCP port; give one in 1..65535")
	}
	if o.Memory != "" {
		m, err := units.ParseSize(o.Memory)
		if err != nil {
			return cfg, usagef("--memory: %v", err)
		}
		cfg.Memory = m
	}
	for _, s := range o.Set {
		name, value, ok := strings.Cut(s, "=")
		if !ok {
			return cfg, usagef("--set %q is not name=value, e.g. --set work_mem=64MB", s)
		}
		if cfg.Settings == nil {
			cfg.Settings = map[string]string{}
		}
		cfg.Settings[strings.TrimSpace(name)] = value // a later --set of the same name wins
	}
	return cfg, nil
}

func dataDirFlag(dir, command string) (string, error) {
	if strings.TrimSpace(dir) == "" {
		return "", usagef("%s needs --datadir DIR (the server's data directory)", command)
	}
	return dir, nil
}

func newServerStartCommand(g *Globals) *cobra.Command {
	var opts ServerStartOptions
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start a managed server in --datadir (initdb on first use) and print its DSN",
		Long: `Start a managed PostgreSQL or MariaDB server in --datadir and print its DSN.

The first start creates the data directory (initdb or mariadb-install-db, a
superuser "tierbench" with a random password kept in DIR/tierbench-server.json).
Later starts reuse it, its engine, port and password. --memory sizes the server
from one number (PostgreSQL: shared_buffers, effective_cache_size,
maintenance_work_mem, work_mem; MariaDB: innodb_buffer_pool_size and the log and
temporary-table buffers; see docs/server.md); --set overrides any setting.
Durability settings stay at their safe values unless you --set them. When run
as root, the server runs as the system user "tierbench".

The server listens on 127.0.0.1 only, unless --listen ADDR names an address of
this host: it then listens on ADDR too, accepts password logins (PostgreSQL:
scram-sha-256) from ADDR's network (the prefix of the interface that has it,
e.g. 10.0.0.0/24), and the DSN names ADDR, so other hosts can use it. Every
start says where it listens: a start without --listen is on 127.0.0.1 only.

--memory also caps the memory of the server's processes, page cache included,
through a cgroup; --read-iops, --write-iops, --read-mbps and --write-mbps
throttle its I/O on the device holding the data directory (see docs/tiers.md).
--no-cgroup keeps --memory to sizing the buffers. What could not be applied
is said, with the reason; it is not an error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.PortSet = cmd.Flags().Changed("port")
			opts.EngineSet = cmd.Flags().Changed("engine")
			return runServerStart(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runServerStart(ctx context.Context, g *Globals, opts ServerStartOptions) error {
	cfg, err := opts.config()
	if err != nil {
		return err
	}
	res, err := experiment.StartServer(ctx, cfg, newView(g))
	if err != nil {
		return options.Flagged(err, serverFlags)
	}
	return printStarted(g, res)
}

// printStarted prints a started server (`server start`, `server clone`):
// its JSON document, or what started, where it listens, what its limits
// are and its DSN.
func printStarted(g *Globals, res *experiment.ServerStarted) error {
	if g.JSON {
		return g.printJSON(res)
	}
	info := res.Info
	verb := "started"
	if info.AlreadyRunning {
		verb = "was already running"
	}
	if res.ClonedFrom != "" {
		fmt.Fprintf(g.Stdout, "cloned %s into %s\n", res.ClonedFrom, info.DataDir)
	}
	fmt.Fprintf(g.Stdout, "%s %s %s in %s (pid %d, port %d)\n", all.Display(info.Engine), info.Version, verb, info.DataDir, info.PID, info.Port)
	if info.Network != "" {
		fmt.Fprintf(g.Stdout, "listening on %s; password logins from %s and this host\n", strings.Join(info.Listen, " and "), info.Network)
	}
	if res.LimitsText != "" {
		fmt.Fprintln(g.Stdout, res.LimitsText)
	}
	// The one place the password is shown: the user asked for the DSN.
	fmt.Fprintf(g.Stdout, "dsn: %s\n", info.DSN)
	return nil
}

// ServerStopOptions are the flags of `server stop`.
type ServerStopOptions struct {
	DataDir string
	Mode    string
	All     bool
}

// AddFlags registers the options' flags.
func (o *ServerStopOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "datadir", "", "data directory of the managed server")
	fs.StringVar(&o.Mode, "mode", "fast", "shutdown mode: fast (roll back sessions, checkpoint) or immediate (no checkpoint; the next start recovers, as after a crash)")
	fs.BoolVar(&o.All, "all", false, "stop every managed server running on this host (those `server status` lists)")
}

func newServerStopCommand(g *Globals) *cobra.Command {
	var opts ServerStopOptions
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the managed server in --datadir, or with --all every one on this host (not an error if stopped already)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServerStop(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

// serverStopAllResult is the JSON of `server stop --all`.
type serverStopAllResult struct {
	Servers []experiment.ServerStopped `json:"servers"`
}

func runServerStop(ctx context.Context, g *Globals, opts ServerStopOptions) error {
	v := newView(g)
	if opts.All {
		if opts.DataDir != "" {
			return usagef("--all stops every managed server; drop --datadir, or --all to stop one")
		}
		stopped, err := experiment.StopServers(ctx, opts.Mode, v)
		if err != nil && stopped == nil {
			return options.Flagged(err, serverFlags)
		}
		if g.JSON {
			if perr := g.printJSON(serverStopAllResult{Servers: stopped}); perr != nil {
				return errors.Join(err, perr)
			}
			return err
		}
		for _, res := range stopped {
			printStopped(g, res)
		}
		if len(stopped) == 0 && err == nil {
			fmt.Fprintln(g.Stdout, "no managed server is running on this host")
		}
		return err
	}
	if strings.TrimSpace(opts.DataDir) == "" {
		return usagef("server stop needs --datadir DIR (the server's data directory), or --all")
	}
	res, err := experiment.StopServer(ctx, opts.DataDir, opts.Mode, v)
	if err != nil {
		return options.Flagged(err, serverFlags)
	}
	if g.JSON {
		return g.printJSON(res)
	}
	printStopped(g, *res)
	return nil
}

func printStopped(g *Globals, res experiment.ServerStopped) {
	if res.WasRunning {
		fmt.Fprintf(g.Stdout, "stopped %s in %s (%s)\n", all.Display(res.Engine), res.DataDir, res.Mode)
		if res.Fallback != "" {
			fmt.Fprintf(g.Stdout, "  %s\n", res.Fallback)
		}
	} else {
		fmt.Fprintf(g.Stdout, "%s in %s was not running\n", all.Display(res.Engine), res.DataDir)
	}
}

// ServerStatusOptions are the flags of `server status`.
type ServerStatusOptions struct {
	DataDir string
}

// AddFlags registers the options' flags.
func (o *ServerStatusOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "datadir", "", "data directory of the managed server (default: list every managed server running on this host)")
}

func newServerStatusCommand(g *Globals) *cobra.Command {
	var opts ServerStatusOptions
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say whether the managed server in --datadir runs, and where (--json includes its DSN); without --datadir, list every one running here",
		Long: `Say whether the managed server in --datadir runs, and where; --json includes its DSN.

Without --datadir, list every managed server running on this host — PostgreSQL
postmasters whose data directory tierbench created — one line each: data
directory, pid, port, since when, and who started it. A server whose tierbench
was killed before it could stop it is "orphaned"; stop it with
tierbench server stop --datadir DIR (or every one with server stop --all).
--json prints {"servers":[…]}, without DSNs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServerStatus(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runServerStatus(ctx context.Context, g *Globals, opts ServerStatusOptions) error {
	if opts.DataDir == "" {
		return runServerStatusAll(ctx, g)
	}
	dir, err := dataDirFlag(opts.DataDir, "server status")
	if err != nil {
		return err
	}
	st, err := server.Status(ctx, dir)
	if err != nil {
		return experiment.ServerError(err)
	}
	if g.JSON {
		return g.printJSON(st)
	}
	where := ""
	if st.Network != "" {
		where = ", listening on " + strings.Join(st.Listen, " and ") + ", logins from " + st.Network
	}
	if st.Running {
		fmt.Fprintf(g.Stdout, "%s %s in %s: running (pid %d, port %d%s)\n", all.Display(st.Engine), st.Version, st.DataDir, st.PID, st.Port, where)
	} else {
		fmt.Fprintf(g.Stdout, "%s %s in %s: stopped (port %d at the last start%s)\n", all.Display(st.Engine), st.Version, st.DataDir, st.Port, where)
	}
	return nil
}

// serverStatusAllResult is the JSON of `server status` without --datadir.
type serverStatusAllResult struct {
	Servers []server.RunningServer `json:"servers"`
}

func runServerStatusAll(ctx context.Context, g *Globals) error {
	found, err := server.Running(ctx)
	if err != nil {
		return err
	}
	if g.JSON {
		return g.printJSON(serverStatusAllResult{Servers: found})
	}
	if len(found) == 0 {
		fmt.Fprintln(g.Stdout, "no managed server is running on this host")
		return nil
	}
	for _, rs := range found {
		fmt.Fprintln(g.Stdout, runningLine(rs))
	}
	return nil
}

// runningLine is one server of `server status` without --datadir.
func runningLine(rs server.RunningServer) string {
	since := "since an unknown time"
	if !rs.Since.IsZero() {
		since = "up since " + localTime(rs.Since)
	}
	line := fmt.Sprintf("%s: %s %s, pid %d, port %d, %s; ", rs.DataDir, all.Display(rs.Engine), rs.Version, rs.PID, rs.Port, since)
	by := rs.StartedBy
	switch {
	case by == nil:
		return line + "started by a tierbench that did not record itself"
	case rs.Orphaned:
		return line + fmt.Sprintf("started by %s; orphaned: its tierbench (pid %d) is gone; stop it with: tierbench server stop --datadir %s",
			by.Command, by.PID, rs.DataDir)
	case by.Alive:
		return line + fmt.Sprintf("started by %s (pid %d), still running", by.Command, by.PID)
	default:
		return line + fmt.Sprintf("started by %s (pid %d), meant to keep running; stop it with: tierbench server stop --datadir %s",
			by.Command, by.PID, rs.DataDir)
	}
}
