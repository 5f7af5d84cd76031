package cli

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
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
	cfg, err := opts.config() // its engine is the source's
	if err != nil {
		return err
	}
	res, err := experiment.CloneServer(ctx, experiment.CloneConfig{From: opts.From, Replace: opts.Replace, ServerConfig: cfg}, newView(g))
	if err != nil {
		return options.Flagged(err, serverFlags)
	}
	return printStarted(g, res)
}
