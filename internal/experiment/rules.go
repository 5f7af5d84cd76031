package experiment

import (
	"os"
	"path/filepath"
	"time"

	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/repeat"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpch"
)

// The limits of the rules every front end applies through the configs'
// Validate: each is written here once.
const (
	// MaxVUs is the most virtual users one TPC-C step runs on one server.
	MaxVUs = 10000
	// MinTPCCDuration is the shortest measured interval of a TPC-C step.
	MinTPCCDuration = time.Second
	// MaxRate bounds an open-loop step's offered transactions a minute:
	// 10 million, some 170,000 a second, beyond what one client schedules.
	MaxRate = 10_000_000
	// MaxRateIOPS bounds a disk point's rate per job.
	MaxRateIOPS = 10_000_000
	// MaxRatePct bounds a rate given as a percentage of the measured
	// maximum: beyond it a step only measures a queue.
	MaxRatePct = 1000
	// DefaultProbe is the closed-loop step that measures the maximum a
	// sweep's fractions are of.
	DefaultProbe = 10 * time.Second
	// MinServiceTime is the least time a TPC-C transaction of the mix is
	// taken to need, for the check that a pool of VUs can serve a rate at
	// all: a round trip and a commit, on any host. Above VUs x 60 s /
	// MinServiceTime a minute, arrivals can only queue. One VU on this
	// project's 2-core VM served 120,116 TPM on PostgreSQL (500 µs a
	// transaction, client and server sharing the cores), so the floor is
	// well below that: 500 µs, as it was, warned of rates a pool could
	// serve.
	MinServiceTime = 200 * time.Microsecond
	// MaxThinkTime bounds a closed loop's mean think time: 10 minutes,
	// whose draws reach 100 (10 x the mean, as 5.2.5.4 truncates them).
	MaxThinkTime = 10 * time.Minute
	// MaxRetry bounds the retries of a transaction that hit a
	// serialization failure, deadlock or lock-wait timeout.
	MaxRetry = 100
	// MinDiskSize is the smallest test file (or share of a device) of a
	// disk run.
	MinDiskSize = 1 << 20
	// MinDiskDuration is the shortest measured time of a disk point.
	MinDiskDuration = time.Second
	// MaxDiskPoints bounds a disk run's points (a sweep's cross product).
	MaxDiskPoints = 1000
	// MaxBackupCycles bounds a backup run's (and a neighbours step's)
	// cycles: at one every 100 s, more than a day of them.
	MaxBackupCycles = 1000
	// MaxBackupJobs bounds a logical backup's parallel jobs.
	MaxBackupJobs = 256
	// MaxDurabilityCycles bounds a durability test's fault cycles.
	MaxDurabilityCycles = 10000
	// MinSampling is the shortest telemetry sampling interval (0: none).
	MinSampling = 100 * time.Millisecond
	// MaxWarehouses bounds a TPC-C schema's size.
	MaxWarehouses = 1000000
	// MaxBuildVUs bounds a schema build's loader connections.
	MaxBuildVUs = 1024
)

// DefaultResults is the results store's directory unless told otherwise.
const DefaultResults = "./tierbench-results"

// DefaultRecord is where and how a run is recorded unless told otherwise:
// in DefaultResults, sampled each second, noisy repetitions judged by the
// default limits.
func DefaultRecord() Record {
	return Record{Results: DefaultResults, Telemetry: DefaultTelemetry, Noisy: DefaultNoisy()}
}

// validate checks what every recorded run shares: its results directory,
// its telemetry and how it judges noisy repetitions.
func (r Record) validate(ps *problems) {
	resultsDir(ps, r.Results)
	r.Telemetry.validate(ps)
	noisyLimits(ps, r.Noisy)
}

// CheckResults checks a results store's directory alone, for a front end
// that reads a store or hands the directory to many runs (a scenario's);
// each run's Validate checks it too.
func CheckResults(dir string) error {
	var ps problems
	resultsDir(&ps, dir)
	return ps.err()
}

// resultsDir checks a results store's directory: given, and not under a
// file (it is created when missing).
func resultsDir(ps *problems, dir string) {
	if dir == "" {
		ps.missing("results", "is empty; give the results store's directory, e.g. ./tierbench-results")
		return
	}
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			if !fi.IsDir() {
				ps.add("results", Verbatim(dir), "is not a directory: %s is a file; give the results store's directory (created when missing)", p)
			}
			return
		}
		if parent := filepath.Dir(p); parent == p {
			return
		}
	}
}

// validate checks the sampling: none (0) or at least MinSampling, and an
// interval to scrape node_exporters at.
func (t Telemetry) validate(ps *problems) {
	switch {
	case t.Interval < 0 || (t.Interval > 0 && t.Interval < MinSampling):
		ps.add("telemetry_interval", t.Interval, "is too short; give at least %s (or 0 for no telemetry)", MinSampling)
	case t.Interval == 0 && len(t.Nodes) > 0:
		ps.add("telemetry_interval", t.Interval, "samples nothing, and node_exporter hosts are sampled at each interval; give one such as 1s")
	}
	seen := map[string]bool{}
	for _, n := range t.Nodes {
		if seen[n.Name] {
			ps.add("node_exporter", n.Name, "is given twice; name each host once")
		}
		seen[n.Name] = true
	}
}

// CheckNoisy checks the noisy limits alone, for a front end that hands them
// to many runs (a scenario's); each run's Validate checks them too.
func CheckNoisy(n stored.Noisy) error {
	var ps problems
	noisyLimits(&ps, n)
	return ps.err()
}

// noisyLimits checks the noisy limits: percentages of all cores, 0 for never.
func noisyLimits(ps *problems, n stored.Noisy) {
	if v := n.Limits.StealPct; v < 0 || v > 100 {
		ps.add("noisy_steal", v, "is not a percentage; give 0 (never) to 100")
	}
	if v := n.Limits.ForeignPct; v < 0 || v > 100 {
		ps.add("noisy_cpu", v, "is not a percentage; give 0 (never) to 100")
	}
}

// repetitions checks a count of repetitions: 1 to repeat.MaxRepeat.
func repetitions(ps *problems, n int) {
	if n < 1 || n > repeat.MaxRepeat {
		ps.add("repeat", n, "is out of range; give a count of repetitions from 1 to %d, e.g. 3", repeat.MaxRepeat)
	}
}

// dsn checks a database's DSN: given, and naming an engine tierbench
// drives. Its value is never quoted: it may hold a password.
func dsn(ps *problems, s string) {
	if s == "" {
		ps.missing("dsn", "is empty; give the database, e.g. postgres://user:password@host:5432/dbname")
		return
	}
	if _, err := all.NameOf(s); err != nil {
		ps.missing("dsn", "%v", err)
	}
}

// MaxRefreshSets is the most TPC-H update sets tierbench makes.
const MaxRefreshSets = tpch.MaxRefreshSets
