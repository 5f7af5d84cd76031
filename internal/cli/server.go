package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/units"
)

// minServerMemory is the smallest --memory: below it the sizing rules give a
// server too small to load even a one-warehouse TPC-C schema sensibly.
const minServerMemory = 128 << 20

func newServerCommand(g *Globals) *cobra.Command {
	cmd := newGroupCommand("server", "Start, stop and query a managed database server (initdb on first use)")
	cmd.AddCommand(newServerStartCommand(g), newServerStopCommand(g), newServerStatusCommand(g))
	return cmd
}

// serverError turns a data directory that cannot be used as asked into bad
// input (exit 2); anything else stays a runtime failure.
func serverError(err error) error {
	var de *server.DataDirError
	if errors.As(err, &de) {
		return &UsageError{Msg: err.Error()}
	}
	return err
}

// ServerStartOptions are the flags of `server start`.
type ServerStartOptions struct {
	Engine  string
	DataDir string
	Port    int
	// PortSet records that --port was given, so that --port 0 is refused
	// rather than read as "not given".
	PortSet bool
	Memory  string
	Set     []string
	PgBin   string
}

// AddFlags registers the options' flags.
func (o *ServerStartOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Engine, "engine", server.EnginePostgres, "database engine (postgres)")
	fs.StringVar(&o.DataDir, "datadir", "", "data directory; created with initdb on first use, reused afterwards")
	fs.IntVar(&o.Port, "port", 0, "TCP port on 127.0.0.1 (default: the port of the last start, else a free one)")
	fs.StringVar(&o.Memory, "memory", "", "memory to size the server for, e.g. 4GiB: shared_buffers = 1/4 of it and more (default: PostgreSQL's defaults)")
	fs.StringArrayVar(&o.Set, "set", nil, "a server setting name=value, applied last (repeatable)")
	fs.StringVar(&o.PgBin, "pg-bin", "", "directory of initdb, pg_ctl and postgres (default: found on PATH or in /usr/lib/postgresql/*/bin)")
}

// options checks the flags and turns them into server.Options; every
// problem is a usage error, found before anything starts.
func (o *ServerStartOptions) options() (server.Options, error) {
	var so server.Options
	if o.Engine != server.EnginePostgres {
		return so, usagef("engine %q is not supported yet; use postgres", o.Engine)
	}
	dir, err := dataDirFlag(o.DataDir, "server start")
	if err != nil {
		return so, err
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return so, usagef("--datadir %s is a file, not a directory; give a new or empty directory", dir)
	}
	so.DataDir = dir
	if o.PortSet || o.Port != 0 {
		if o.Port < 1 || o.Port > 65535 {
			return so, usagef("--port %d is not a TCP port; give one in 1..65535", o.Port)
		}
		so.Port = o.Port
	}
	if o.Memory != "" {
		m, err := units.ParseSize(o.Memory)
		if err != nil {
			return so, usagef("--memory: %v", err)
		}
		if m < minServerMemory {
			return so, usagef("--memory %s is below the minimum of %s", o.Memory, units.FormatSize(minServerMemory))
		}
		so.Memory = m
	}
	for _, s := range o.Set {
		name, value, ok := strings.Cut(s, "=")
		name = strings.TrimSpace(name)
		switch {
		case !ok:
			return so, usagef("--set %q is not name=value, e.g. --set work_mem=64MB", s)
		case name == "":
			return so, usagef("--set %q has an empty name; write name=value, e.g. --set work_mem=64MB", s)
		case !server.ValidSettingName(name):
			return so, usagef("--set %q: %q is not a setting name (letters, digits, _ and .)", s, name)
		}
		if so.Settings == nil {
			so.Settings = map[string]string{}
		}
		so.Settings[name] = value // a later --set of the same name wins
	}
	so.PgBin = o.PgBin
	return so, nil
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
		Long: `Start a managed PostgreSQL server in --datadir and print its DSN.

The first start creates the data directory (initdb, a superuser "tierbench" with
a random password kept in DIR/tierbench-server.json). Later starts reuse it, and
its port and password. --memory sizes shared_buffers, effective_cache_size,
maintenance_work_mem and work_mem from one number (see docs/server.md); --set
overrides any setting. Durability settings are left alone unless you --set them.
When run as root, the server runs as the system user "tierbench".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.PortSet = cmd.Flags().Changed("port")
			return runServerStart(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runServerStart(ctx context.Context, g *Globals, opts ServerStartOptions) error {
	so, err := opts.options()
	if err != nil {
		return err
	}
	info, err := server.Start(ctx, so)
	if err != nil {
		return serverError(err)
	}
	if g.JSON {
		return g.printJSON(info)
	}
	verb := "started"
	if info.AlreadyRunning {
		verb = "was already running"
	}
	fmt.Fprintf(g.Stdout, "PostgreSQL %s %s in %s (pid %d, port %d)\n", info.Version, verb, info.DataDir, info.PID, info.Port)
	// The one place the password is shown: the user asked for the DSN.
	fmt.Fprintf(g.Stdout, "dsn: %s\n", info.DSN)
	return nil
}

// ServerStopOptions are the flags of `server stop`.
type ServerStopOptions struct {
	DataDir string
	Mode    string
}

// AddFlags registers the options' flags.
func (o *ServerStopOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "datadir", "", "data directory of the managed server")
	fs.StringVar(&o.Mode, "mode", "fast", "shutdown mode: fast (roll back sessions, checkpoint) or immediate (no checkpoint; the next start recovers, as after a crash)")
}

func newServerStopCommand(g *Globals) *cobra.Command {
	var opts ServerStopOptions
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the managed server in --datadir (not an error if it is stopped already)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServerStop(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

type serverStopResult struct {
	DataDir    string `json:"datadir"`
	WasRunning bool   `json:"was_running"`
}

func runServerStop(ctx context.Context, g *Globals, opts ServerStopOptions) error {
	dir, err := dataDirFlag(opts.DataDir, "server stop")
	if err != nil {
		return err
	}
	if opts.Mode == "" {
		opts.Mode = "fast"
	}
	if opts.Mode != "fast" && opts.Mode != "immediate" {
		return usagef("--mode %q is not a shutdown mode; use fast or immediate", opts.Mode)
	}
	was, err := server.Stop(ctx, dir, opts.Mode)
	if err != nil {
		return serverError(err)
	}
	res := serverStopResult{DataDir: dir, WasRunning: was}
	if abs, err := filepath.Abs(dir); err == nil {
		res.DataDir = abs
	}
	if g.JSON {
		return g.printJSON(res)
	}
	if was {
		fmt.Fprintf(g.Stdout, "stopped PostgreSQL in %s (%s)\n", res.DataDir, opts.Mode)
	} else {
		fmt.Fprintf(g.Stdout, "PostgreSQL in %s was not running\n", res.DataDir)
	}
	return nil
}

// ServerStatusOptions are the flags of `server status`.
type ServerStatusOptions struct {
	DataDir string
}

// AddFlags registers the options' flags.
func (o *ServerStatusOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "datadir", "", "data directory of the managed server")
}

func newServerStatusCommand(g *Globals) *cobra.Command {
	var opts ServerStatusOptions
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say whether the managed server in --datadir runs, and where (--json includes its DSN)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServerStatus(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runServerStatus(ctx context.Context, g *Globals, opts ServerStatusOptions) error {
	dir, err := dataDirFlag(opts.DataDir, "server status")
	if err != nil {
		return err
	}
	st, err := server.Status(ctx, dir)
	if err != nil {
		return serverError(err)
	}
	if g.JSON {
		return g.printJSON(st)
	}
	if st.Running {
		fmt.Fprintf(g.Stdout, "PostgreSQL %s in %s: running (pid %d, port %d)\n", st.Version, st.DataDir, st.PID, st.Port)
	} else {
		fmt.Fprintf(g.Stdout, "PostgreSQL %s in %s: stopped (port %d at the last start)\n", st.Version, st.DataDir, st.Port)
	}
	return nil
}
