package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/serve"
)

// ServeOptions are the flags of `serve`.
type ServeOptions struct {
	Listen           string
	Results          string
	TokenFile        string
	AllowDestructive bool
}

// AddFlags registers the options' flags.
func (o *ServeOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Listen, "listen", serve.DefaultListen, "address to serve the API and the console on (another host's address needs --token-file)")
	fs.StringVar(&o.Results, "results", defaultResultsDir, "results store directory every run goes into")
	fs.StringVar(&o.TokenFile, "token-file", "", "file whose first line is a secret token every request must send as Authorization: Bearer TOKEN")
	fs.BoolVar(&o.AllowDestructive, "allow-destructive", false, "let requests write to block devices and files tierbench did not create, and name programs to run")
}

func newServeCommand(g *Globals) *cobra.Command {
	var opts ServeOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve an HTTP API and a web console that queue experiments and scenarios and show them live (docs/api.md)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runServe(ctx context.Context, g *Globals, opts ServeOptions) error {
	so := serve.Options{Listen: opts.Listen, Results: opts.Results, AllowDestructive: opts.AllowDestructive, Log: g.Stderr}
	if opts.TokenFile != "" {
		data, err := os.ReadFile(opts.TokenFile)
		if err != nil {
			return usagef("--token-file: %v; give a file holding the token on its first line", err)
		}
		so.Token, _, _ = strings.Cut(strings.TrimSpace(string(data)), "\n")
		if so.Token = strings.TrimSpace(so.Token); len(so.Token) < 16 {
			return usagef("--token-file %s: the token on its first line has %d characters; give at least 16, e.g. from: openssl rand -hex 16", opts.TokenFile, len(so.Token))
		}
	}
	if err := options.Flagged(so.Validate(), nil); err != nil {
		return err
	}
	srv, err := serve.New(so)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return fmt.Errorf("serving on %s: %w", opts.Listen, err)
	}
	g.progressf("serve: the console and the API at http://%s/ (results in %s; Ctrl-C stops)\n", ln.Addr(), opts.Results)
	return srv.Run(ctx, ln)
}
