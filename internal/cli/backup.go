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
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stats"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/units"
)

func newBackupCommand(g *Globals) *cobra.Command {
	cmd := newGroupCommand("backup", "Back up and restore a database on the storage under test, timing each phase")
	cmd.AddCommand(newBackupRunCommand(g))
	return cmd
}

// BackupRunOptions are the flags of `backup run`.
type BackupRunOptions struct {
	dsnOption
	Target     string
	Cycles     int
	Spacing    string // from one cycle's start to the next's: the --interval flag
	StartAt    string // when the first cycle starts: the --start-at flag
	Logical    bool
	Jobs       int
	Results    string
	DataDir    string
	PgBin      string
	Keep       bool
	Verify     bool
	Sampling   string // telemetry's sampling interval: the --sample-interval flag
	BlockTrace bool
	// NodeExporters are --node-exporter NAME=URL, sampled at --sample-interval.
	NodeExporters []string
	repeatOptions
	noisyOptions
	metricsOptions
}

// AddFlags registers the options' flags.
func (o *BackupRunOptions) AddFlags(fs *pflag.FlagSet) {
	d := experiment.NewBackupConfig()
	o.addFlag(fs)
	fs.StringVar(&o.Target, "target", "", "directory on the storage under test for the backups (created by tierbench, or an empty one)")
	fs.IntVar(&o.Cycles, "cycles", d.Cycles, "backup and restore cycles")
	fs.StringVar(&o.Spacing, "interval", "0s", "time from one cycle's start to the next's (0: back to back), e.g. 100s")
	fs.StringVar(&o.StartAt, "start-at", "", "when the first cycle starts, as an RFC 3339 time on this host's clock, e.g. 2026-11-26T17:40:00.250Z "+
		"(default: as soon as the run is set up; a time already past starts at once, with a note): how a controller lines up backups on several hosts")
	fs.BoolVar(&o.Logical, "logical", false, "a parallel dump, restored into a new database on the same server (PostgreSQL: pg_dump -Fd -j / pg_restore -j; "+
		"MariaDB: tierbench-dump / tierbench-load), instead of a physical backup and a restored server")
	fs.IntVar(&o.Jobs, "jobs", d.Jobs, "parallel jobs of the logical dump and restore (--logical)")
	fs.StringVar(&o.Results, "results", d.Results, "results store directory")
	fs.StringVar(&o.DataDir, "datadir", "", "the source's managed data directory (default: found from the server, when tierbench manages it on this host)")
	fs.StringVar(&o.PgBin, "pg-bin", "", "PostgreSQL only: directory of pg_basebackup, pg_dump and pg_restore (default: beside the server's binaries, else PATH); "+
		"MariaDB's mariadb-backup is found on PATH")
	fs.BoolVar(&o.Keep, "keep", false, "keep the backups in --target (restored copies are always removed)")
	fs.BoolVar(&o.Verify, "verify", d.Verify, "check each restored database: TPC-C consistency conditions and row counts equal to the source's")
	// --interval is this command's cycle spacing (the white paper's "a
	// backup every 100 s"), so sampling has its own flag.
	fs.StringVar(&o.Sampling, "sample-interval", "1s", "telemetry sampling interval (0: no telemetry)")
	fs.BoolVar(&o.BlockTrace, "block-trace", true, "device latency percentiles from block tracepoints, where the kernel allows it")
	addNodeExporterFlag(fs, &o.NodeExporters)
	o.repeatOptions.addFlags(fs, "cycle", "--cycles × N cycles in all, each a backup then its restore")
	// A restore needs its backup first, so a cycle's phases cannot be run
	// back to back. The flag is kept, out of the help, only so that giving
	// it (as tpcc run takes it) is refused with that reason (validate)
	// rather than as an unknown flag.
	_ = fs.MarkHidden("back-to-back")
	o.noisyOptions.addFlags(fs, "phase")
	o.metricsOptions.addFlags(fs)
}

// validate turns the flags into a run's config (its DSN not yet checked).
func (o *BackupRunOptions) validate() (experiment.BackupConfig, error) {
	cfg := experiment.BackupConfig{Target: o.Target, Cycles: o.Cycles, Logical: o.Logical, Jobs: o.Jobs,
		DataDir: o.DataDir, PgBin: o.PgBin, Keep: o.Keep, Verify: o.Verify, Repeat: o.Repeat}
	cfg.Results = o.Results
	cfg.Noisy = o.noisyOptions.noisy()
	if o.BackToBack {
		return cfg, usagef("--back-to-back does not apply to backup run: a restore needs its backup first, so each cycle is already a backup then its restore; leave it out")
	}
	var err error
	if cfg.Spacing, err = units.ParseDuration(o.Spacing); err != nil {
		return cfg, usagef("--interval: %v", err)
	}
	if o.StartAt != "" {
		if cfg.StartAt, err = time.Parse(time.RFC3339Nano, o.StartAt); err != nil {
			return cfg, usagef("--start-at %q is not an RFC 3339 time; give e.g. 2026-11-26T17:40:00.250Z or 2026-11-26T18:40:00+01:00", o.StartAt)
		}
	}
	if cfg.Telemetry, err = sampling(o.Sampling, "--sample-interval", o.BlockTrace, o.NodeExporters); err != nil {
		return cfg, err
	}
	return cfg, flagged(experiment.Except(cfg.Validate(), "dsn"), backupFlags)
}

// backupFlags name a backup run's fields by their flags where the names
// differ.
var backupFlags = map[string]string{"telemetry_interval": "--sample-interval"}

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
	cfg, err := opts.validate()
	if err != nil {
		return nil, err
	}
	if cfg.DSN, err = opts.check(g); err != nil {
		return nil, err
	}
	// With the DSN known, the rules that read it too (--pg-bin's).
	if err := flagged(cfg.Validate(), backupFlags); err != nil {
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
