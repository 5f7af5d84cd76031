// Package cli holds tierbench's commands: one file per verb, each with an
// options struct, its flags and a run function that tests call directly.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
)

// Exit codes of the command-line contract (docs/cli.md).
const (
	ExitOK      = 0
	ExitFailure = 1 // a runtime failure, or a check that did not pass
	ExitUsage   = 2 // bad input or usage
	// ExitThreshold is a run that finished but breached a --threshold.
	ExitThreshold = 3
	// ExitInterrupted is a run stopped by Ctrl-C, keeping what it measured
	// (128 + SIGINT, as shells report it).
	ExitInterrupted = 130
)

// exitCodes maps the experiment layer's outcomes to the contract's codes.
var exitCodes = map[experiment.Outcome]int{
	experiment.Succeeded:          ExitOK,
	experiment.Failed:             ExitFailure,
	experiment.VerdictFailed:      ExitFailure,
	experiment.BadInput:           ExitUsage,
	experiment.ThresholdsBreached: ExitThreshold,
	experiment.InterruptedRun:     ExitInterrupted,
}

// UsageError marks bad input: it maps to exit code 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// usagef builds a UsageError; the message should say what was wrong and what
// would be right.
func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ExitError carries a chosen exit code with an optional message. A command
// that already printed its verdict (a failed check) returns it with an empty
// message so nothing more is printed.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// Globals are the settings every command shares, and what it reads and
// writes of its process: its standard streams and its environment.
type Globals struct {
	JSON   bool
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads an environment variable, as os.Getenv does.
	Getenv func(key string) string
}

// printJSON writes v as the single JSON document of a --json command.
func (g *Globals) printJSON(v any) error {
	enc := json.NewEncoder(g.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// progressf writes progress to stderr, which never carries the JSON document.
func (g *Globals) progressf(format string, args ...any) {
	fmt.Fprintf(g.Stderr, format, args...)
}

// Execute runs tierbench with args and returns the process exit code. Errors
// are printed as one line starting "tierbench: ". getenv and stdin are the
// environment and standard input the commands read: the process's
// (os.Getenv, os.Stdin) in the binary, a test's own in tests, which can
// then run in parallel.
func Execute(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	g := &Globals{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv}
	root := newRootCommand(g)
	started := false
	root.PersistentPreRun = func(*cobra.Command, []string) { started = true }
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ue *UsageError
	var ee *ExitError
	var code int
	switch {
	case errors.As(err, &ee):
		code = ee.Code
	case errors.As(err, &ue), !started:
		// cobra's own errors (unknown command or flag, bad arguments) come
		// before any command starts: they are usage errors too.
		code = ExitUsage
	default:
		code = exitCodes[experiment.OutcomeOf(err)]
	}
	if code == ExitFailure && ctx.Err() != nil {
		// Ctrl-C stopped the command before it had a run to keep what it
		// measured in (a sweep's probe, a build, a connection): that is
		// an interruption too, not a failure.
		code = ExitInterrupted
		err = fmt.Errorf("interrupted: %w", err)
	}
	if msg := oneLine(scrubPasswords(err.Error(), getenv("TIERBENCH_DSN"), args)); msg != "" {
		fmt.Fprintf(stderr, "tierbench: %s\n", msg)
	}
	return code
}

// scrubPasswords redacts in an error message every DSN among the arguments
// (also as --dsn=DSN) or in envDSN ($TIERBENCH_DSN), wherever the message quotes it
// or a part of it that holds the password (engine.RedactIn). The engines
// redact their own errors; this catches the rest, e.g. cobra quoting a DSN
// given without --dsn ("unknown command \"postgres://…\""). It never looks
// for a bare password: a short or common one ("p", "postgres") is inside
// ordinary words, which masking it would garble.
func scrubPasswords(msg, envDSN string, args []string) string {
	for _, a := range append([]string{envDSN}, args...) {
		if i := strings.IndexByte(a, '='); strings.HasPrefix(a, "-") && i > 0 {
			a = a[i+1:] // --dsn=DSN
		}
		msg = engine.RedactIn(msg, a)
	}
	return msg
}

// oneLine folds a multi-line message so an error is always one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

func newRootCommand(g *Globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "tierbench",
		Short:         "How will this database behave on this storage, at this memory size, next to these neighbours?",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
	}
	root.PersistentFlags().BoolVar(&g.JSON, "json", false, "print exactly one JSON document on stdout (progress goes to stderr)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Msg: flagError(err)} })
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		newVersionCommand(g),
		newServerCommand(g),
		newTPCCCommand(g),
		newTPCHCommand(g),
		newRunCommand(g),
		newResultsCommand(g),
		newDiskCommand(g),
		newMonitorCommand(g),
		newSpaceCommand(g),
		newReportCommand(g),
		newScenarioCommand(g),
		newBackupCommand(g),
		newDurabilityCommand(g),
		newServeCommand(g),
	)
	return root
}

// thresholds passes on an error of an options' Config, or, when it is
// several problems of --threshold (options.Thresholds.Parse), prints each
// on a line of its own, as scenario validation prints them, and returns
// bad input. Other problems stay one line, joined by "; ".
func thresholds(g *Globals, err error) error {
	es := options.List(err)
	if len(es) < 2 {
		return err
	}
	for _, e := range es {
		if e.Field != "threshold" {
			return err
		}
	}
	for _, e := range es {
		fmt.Fprintf(g.Stderr, "tierbench: %s\n", e.Msg)
	}
	return &ExitError{Code: ExitUsage}
}

// needArgs is cobra.ExactArgs with a message that says what to give.
func needArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s (got %d arguments)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

// newGroupCommand returns a command that only groups subcommands: called
// alone or with an unknown subcommand it is a usage error, not help and
// exit 0.
func newGroupCommand(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var names []string
			for _, c := range cmd.Commands() {
				if c.IsAvailableCommand() {
					names = append(names, c.Name())
				}
			}
			if len(args) > 0 {
				return usagef("unknown command %q for %q; use one of: %s", args[0], cmd.CommandPath(), strings.Join(names, ", "))
			}
			return usagef("%s needs a command: %s", cmd.CommandPath(), strings.Join(names, ", "))
		},
	}
}

// isTerminal reports whether w is a terminal, where progress is redrawn in
// place rather than printed line by line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// printRun ends a run's command: what is drawn in place is cleared, then,
// when the run was recorded (out is not nil, even if it then failed), its
// document is printed with --json and summary runs otherwise. It returns
// the run's error.
func printRun[T any](v *view, out *T, err error, summary func()) error {
	v.done()
	if out == nil {
		return err
	}
	if v.g.JSON {
		if perr := v.g.printJSON(out); perr != nil && err == nil {
			return perr
		}
		return err
	}
	summary()
	return err
}

// badFlagValue is pflag's error for a value its type refuses, e.g.
// `invalid argument "abc" for "--scale" flag: strconv.ParseFloat: parsing
// "abc": invalid syntax`.
var badFlagValue = regexp.MustCompile(`^invalid argument "(.*)" for "(.*)" flag: strconv\.Parse(Float|Int|Uint|Bool)`)

// flagError words a flag parsing error as the other bad input is worded:
// the value, and what a right one is.
func flagError(err error) string {
	m := badFlagValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	want := map[string]string{"Float": "a number, e.g. 0.1 or 10", "Int": "a whole number", "Uint": "a whole number of 0 or more",
		"Bool": "true or false"}[m[3]]
	return fmt.Sprintf("%s %q is not %s", m[2], m[1], want)
}
