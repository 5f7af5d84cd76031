// Command tierbench benchmarks databases on storage: TPC-C, storage profiles,
// telemetry and reports. main only wires signals and exit codes; the commands
// live in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/pprof"
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
	os.Exit(run(ctx))
}

func run(ctx context.Context) int {
	// TIERBENCH_CPUPROFILE=FILE writes a Go CPU profile of the whole run,
	// for `go tool pprof` (a developer's aid, not part of the CLI contract).
	if path := os.Getenv("TIERBENCH_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer func() { pprof.StopCPUProfile(); f.Close() }()
			}
		}
	}
	return cli.Execute(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
}
