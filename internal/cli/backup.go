package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
)

func newBackupCommand(g *Globals) *cobra.Command {
	cmd := newGroupCommand("backup", "Back up and restore a database on the storage under test, timing each phase")
	cmd.AddCommand(newBackupRunCommand(g))
	return cmd
}

// BackupRunOptions are the flags of `backup run`: a run's options, its
// --dsn and the live metrics endpoint's.
type BackupRunOptions struct {
	dsnOption
	options.BackupRun
	metricsOptions
}

// AddFlags registers the options' flags.
func (o *BackupRunOptions) AddFlags(fs *pflag.FlagSet) {
	o.addFlag(fs)
	o.BackupRun.AddFlags(fs)
	o.metricsOptions.addFlags(fs)
}

func newBackupRunCommand(g *Globals) *cobra.Command {
	var opts BackupRunOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Back up and restore the database N times: duration and MB/s per phase, with the storage's telemetry",
		Long: `Back up the database at --dsn into --target and restore it from there, --cycles times.

Physical (default): a copy of the whole server into TARGET/cycle-N
(PostgreSQL: pg_basebackup -X stream -c fast; MariaDB: mariadb-backup
--backup); the restore makes TARGET/restore-N of it (a copy; MariaDB:
mariadb-backup --prepare and --copy-back) and starts it as a second managed
server (a free port) until it accepts connections. The source must be a server
tierbench manages on this host (--datadir, found from the server by default).
Logical (--logical): a parallel dump into TARGET/cycle-N, restored into a new
database on the source server (PostgreSQL: pg_dump -Fd -j and pg_restore -j;
MariaDB: tierbench-dump, --jobs connections sharing one consistent snapshot,
and tierbench-load, a parallel LOAD DATA).

Each restored database is checked (TPC-C consistency, row counts), then
removed; the backups too unless --keep. tierbench writes only into a target it
created, an empty directory, or one it prepared before.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := runBackupRun(cmd.Context(), g, opts)
			return err
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runBackupRun(ctx context.Context, g *Globals, opts BackupRunOptions) (*experiment.BackupResult, error) {
	cfg, err := opts.Config()
	if err != nil {
		return nil, err
	}
	if cfg.DSN, err = opts.check(g); err != nil {
		return nil, err
	}
	// With the DSN known, the rules that read it too (--pg-bin's).
	if err := options.ValidateBackup(cfg); err != nil {
		return nil, err
	}
	v := newView(g)
	obs, done, err := opts.metricsOptions.begin(ctx, g, &cfg.Record, v)
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := experiment.RunBackup(ctx, cfg, obs)
	return out, printRun(v, out, err, func() {
		printBackupStats(g.Stdout, out.Stats)
		fmt.Fprintf(g.Stdout, "run %s %s; stored in %s\n", out.RunID, out.Status, v.store)
	})
}

// printBackupStats prints a line per phase kind over the run's cycles:
// "backup: 12.3 s ± 0.8 (95% CI, n=6), 210 MB/s ± 15", the mean ± half
// the 95% interval, or the mean alone for one cycle.
func printBackupStats(w io.Writer, st stored.PhaseStats) {
	for _, kind := range phaseKinds(st) {
		secs, mbps := st[kind]["seconds"], st[kind]["mbps"]
		ci := fmt.Sprintf("n=%d", secs.N)
		if secs.HasCI() {
			ci = "95% CI, " + ci
		}
		fmt.Fprintf(w, "%s: %s (%s), %s\n", kind, meanUnitCI(secs, "s"), ci, meanUnitCI(mbps, "MB/s"))
	}
}

// meanUnitCI is a summary as "12.3 s ± 0.8", or "12.3 s" without an
// interval.
func meanUnitCI(s stats.Summary, unit string) string {
	f := figureFormat(s.Mean)
	if !s.HasCI() {
		return fmt.Sprintf(f+" %s", s.Mean, unit)
	}
	return fmt.Sprintf(f+" %s ± "+f, s.Mean, unit, (s.High-s.Low)/2)
}

// phaseKinds are st's phase kinds in a cycle's order, backup then restore,
// then any other by name.
func phaseKinds(st stored.PhaseStats) []string {
	rank := func(kind string) int {
		switch kind {
		case stored.PhaseBackup:
			return 0
		case stored.PhaseRestore:
			return 1
		}
		return 2
	}
	kinds := slices.Collect(maps.Keys(st))
	slices.SortFunc(kinds, func(a, b string) int { return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b)) })
	return kinds
}

// figureFormat keeps three significant digits or so: a test database's
// phases take a fraction of a second, a real one's minutes.
func figureFormat(x float64) string {
	switch x = math.Abs(x); {
	case x < 10:
		return "%.2f"
	case x < 100:
		return "%.1f"
	}
	return "%.0f"
}
