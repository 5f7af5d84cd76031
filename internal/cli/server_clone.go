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

	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/server"
)

// ServerCloneOptions are the flags of `server clone`: the source, and how
// the copy runs (those of `server start` but --engine: a copy has its
// source's).
type ServerCloneOptions struct {
	From string
	// Replace removes a stopped managed data directory at --datadir first
	// (a copy made before).
	Replace bool
	ServerStartOptions
}

// AddFlags registers the options' flags.
func (o *ServerCloneOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.From, "from", "", "the managed data directory to copy; its server must be stopped")
	fs.StringVar(&o.DataDir, "datadir", "", "where the copy goes: a new or empty directory")
	fs.BoolVar(&o.Replace, "replace", false, "replace a stopped managed data directory already at --datadir (a copy made before)")
	o.addServerFlags(fs, "TCP port of the copy (default: a free one, so that it runs beside its source)")
}

func newServerCloneCommand(g *Globals) *cobra.Command {
	var opts ServerCloneOptions
	cmd := &cobra.Command{
		Use:   "clone",
		Short: "Copy the stopped managed server in --from to --datadir and start the copy on a port of its own",
		Long: `Copy the managed server in --from, which must be stopped, to --datadir, a new
or empty directory, and start the copy: a second server with the same data,
password and engine, on a free port (or --port). The copy is made with plain
reads and writes (never a reflink), and is on stable storage before it starts.

The copy starts as server start starts a server, with the same flags:
--memory, --set, --listen, the I/O throttles, --no-cgroup. Like every start,
it states its whole configuration: what the source's last start was given is
not carried over. --json prints server start's document, with cloned_from.

--replace first removes a managed data directory already at --datadir, if its
server is stopped: a copy made by an earlier clone.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.PortSet = cmd.Flags().Changed("port")
			return runServerClone(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runServerClone(ctx context.Context, g *Globals, opts ServerCloneOptions) error {
	if strings.TrimSpace(opts.From) == "" {
		return usagef("server clone needs --from DIR (the stopped managed data directory to copy)")
	}
	if strings.TrimSpace(opts.DataDir) == "" {
		return usagef("server clone needs --datadir DIR (a new or empty directory for the copy)")
	}
	from, err := filepath.Abs(opts.From)
	if err != nil {
		return err
	}
	dst, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return err
	}
	switch {
	case dst == from:
		return usagef("--datadir %s is --from itself; give another directory for the copy", dst)
	case within(dst, from):
		return usagef("--datadir %s is inside --from %s; give a directory outside it", dst, from)
	case within(from, dst):
		return usagef("--datadir %s holds --from %s; give a directory outside it", dst, from)
	}
	src, err := server.Status(ctx, from)
	if err != nil {
		var de *server.DataDirError
		if errors.As(err, &de) {
			return usagef("--from: %v", err)
		}
		return err
	}
	if src.Running {
		return usagef("--from %s: its %s server is running (pid %d); stop it before cloning (tierbench server stop --datadir %s): a running server's files are not a consistent copy",
			from, all.Display(src.Engine), src.PID, from)
	}
	opts.Engine, opts.EngineSet = src.Engine, false // the copy is its source's engine
	so, err := opts.options()
	if err != nil {
		return err
	}
	io, wantIO, err := opts.throttle()
	if err != nil {
		return err
	}
	if so.Listen != "" {
		// Before copying what may be many GB.
		if err := server.CheckListen(src.Engine, so.Listen); err != nil {
			return serverError(err)
		}
	}
	if err := clearCloneTarget(ctx, dst, opts.Replace); err != nil {
		return err
	}
	g.progressf("cloning %s into %s\n", from, dst)
	if err := server.Clone(ctx, from, dst); err != nil {
		return serverError(err)
	}
	so.DataDir = dst
	so.NewPort = so.Port == 0 // not the source's port: the source may run again beside it
	return startServer(ctx, g, opts.ServerStartOptions, so, io, wantIO, serverStartResult{ClonedFrom: from})
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
		return usagef("--datadir %s holds a managed %s server already; give a new or empty directory, or add --replace to replace it",
			dst, all.Display(st.Engine))
	case st.Running:
		return usagef("--datadir %s holds a managed %s server that is running (pid %d); stop it first (tierbench server stop --datadir %s)",
			dst, all.Display(st.Engine), st.PID, dst)
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
