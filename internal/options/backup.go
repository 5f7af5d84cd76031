package options

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/units"
)

// BackupRun are the options of a backup run (`backup run`), but its
// database: each front end says where the DSN comes from.
type BackupRun struct {
	Target     string
	Cycles     int
	Spacing    string // from one cycle's start to the next's: the --interval option
	StartAt    string // when the first cycle starts: the --start-at option
	Logical    bool
	Jobs       int
	Results    string
	DataDir    string
	PgBin      string
	Keep       bool
	Verify     bool
	Sampling   string // telemetry's sampling interval: the --sample-interval option
	BlockTrace bool
	// NodeExporters are --node-exporter NAME=URL, sampled at --sample-interval.
	NodeExporters []string
	Repetitions
	Noisy
}

// AddFlags registers the options.
func (o *BackupRun) AddFlags(fs *pflag.FlagSet) {
	d := experiment.NewBackupConfig()
	fs.StringVar(&o.Target, "target", "", "directory on the storage under test for the backups (created by tierbench, or an empty one)")
	fs.IntVar(&o.Cycles, "cycles", d.Cycles, "backup and restore cycles")
	fs.StringVar(&o.Spacing, "interval", units.FormatDuration(d.Spacing), "time from one cycle's start to the next's (0: back to back), e.g. 100s")
	fs.StringVar(&o.StartAt, "start-at", "", "when the first cycle starts, as an RFC 3339 time on this host's clock, e.g. 2026-11-26T17:40:00.250Z "+
		"(default: as soon as the run is set up; a time already past starts at once, with a note): how a controller lines up backups on several hosts")
	fs.BoolVar(&o.Logical, "logical", d.Logical, "a parallel dump, restored into a new database on the same server (PostgreSQL: pg_dump -Fd -j / pg_restore -j; "+
		"MariaDB: tierbench-dump / tierbench-load), instead of a physical backup and a restored server")
	fs.IntVar(&o.Jobs, "jobs", d.Jobs, "parallel jobs of the logical dump and restore (--logical)")
	fs.StringVar(&o.Results, "results", d.Results, "results store directory")
	fs.StringVar(&o.DataDir, "datadir", "", "the source's managed data directory (default: found from the server, when tierbench manages it on this host)")
	fs.StringVar(&o.PgBin, "pg-bin", "", "PostgreSQL only: directory of pg_basebackup, pg_dump and pg_restore (default: beside the server's binaries, else PATH); "+
		"MariaDB's mariadb-backup is found on PATH")
	fs.BoolVar(&o.Keep, "keep", d.Keep, "keep the backups in --target (restored copies are always removed)")
	fs.BoolVar(&o.Verify, "verify", d.Verify, "check each restored database: TPC-C consistency conditions and row counts equal to the source's")
	// --interval is this command's cycle spacing (the white paper's "a
	// backup every 100 s"), so sampling has its own option.
	fs.StringVar(&o.Sampling, "sample-interval", units.FormatDuration(d.Telemetry.Interval), "telemetry sampling interval (0: no telemetry)")
	fs.BoolVar(&o.BlockTrace, "block-trace", d.Telemetry.BlockTrace, "device latency percentiles from block tracepoints, where the kernel allows it")
	AddNodeExporterFlag(fs, &o.NodeExporters)
	o.Repetitions.AddFlags(fs, "cycle", "--cycles × N cycles in all, each a backup then its restore")
	// A restore needs its backup first, so a cycle's phases cannot be run
	// back to back. The option is kept, out of the help, only so that
	// giving it (as tpcc run takes it) is refused with that reason (Config)
	// rather than as an unknown one.
	_ = fs.MarkHidden("back-to-back")
	o.Noisy.AddFlags(fs, "phase")
}

// backupFlags name a backup run's fields by their options where the names
// differ.
var backupFlags = map[string]string{"telemetry_interval": "--sample-interval"}

// Config turns the options into a run's config, its DSN left for the front
// end, which then judges the whole with ValidateBackup.
func (o *BackupRun) Config() (experiment.BackupConfig, error) {
	cfg := experiment.BackupConfig{Target: o.Target, Cycles: o.Cycles, Logical: o.Logical, Jobs: o.Jobs,
		DataDir: o.DataDir, PgBin: o.PgBin, Keep: o.Keep, Verify: o.Verify, Repeat: o.Repeat}
	cfg.Results = o.Results
	cfg.Noisy = o.Judge()
	if o.BackToBack {
		return cfg, Badf("back-to-back", "--back-to-back does not apply to backup run: a restore needs its backup first, so each cycle is already a backup then its restore; leave it out")
	}
	var err error
	if cfg.Spacing, err = units.ParseDuration(o.Spacing); err != nil {
		return cfg, Badf("interval", "--interval: %v", err)
	}
	if o.StartAt != "" {
		if cfg.StartAt, err = time.Parse(time.RFC3339Nano, o.StartAt); err != nil {
			return cfg, Badf("start-at", "--start-at %q is not an RFC 3339 time; give e.g. 2026-11-26T17:40:00.250Z or 2026-11-26T18:40:00+01:00", o.StartAt)
		}
	}
	if cfg.Telemetry, err = Sampling(o.Sampling, "sample-interval", o.BlockTrace, o.NodeExporters); err != nil {
		return cfg, err
	}
	return cfg, Flagged(experiment.Except(cfg.Validate(), "dsn"), backupFlags)
}

// ValidateBackup judges a backup run's config once its DSN is filled in,
// naming its fields by these options: the rules that read the DSN too
// (--pg-bin's) are judged only then.
func ValidateBackup(cfg experiment.BackupConfig) error {
	return Flagged(cfg.Validate(), backupFlags)
}
