// Command tierbench benchmarks databases on storage: TPC-C, storage profiles,
// telemetry and reports. main only wires signals and exit codes; the commands
// live in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tierbench/tierbench/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// A second Ctrl-C exits at once; the first one only cancels ctx so
		// the running command can stop gracefully and keep its results.
		<-ctx.Done()
		stop()
		second := make(chan os.Signal, 1)
		signal.Notify(second, os.Interrupt, syscall.SIGTERM)
		<-second
		os.Stderr.WriteString("tierbench: interrupted twice, exiting now\n")
		os.Exit(130)
	}()
	os.Exit(cli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
