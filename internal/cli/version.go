package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/tierbench/tierbench/internal/version"
)

type versionInfo struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	Commit  string `json:"commit,omitempty"`
}

func currentVersion() versionInfo {
	v := versionInfo{Version: version.Version, Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v.Commit = s.Value
			}
		}
	}
	return v
}

func newVersionCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print tierbench's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := currentVersion()
			if g.JSON {
				return g.printJSON(v)
			}
			fmt.Fprintf(g.Stdout, "tierbench %s (%s)\n", v.Version, v.Go)
			return nil
		},
	}
}
