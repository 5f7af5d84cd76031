// Package experiment runs tierbench's experiments: a TPC-C run, a disk run
// (fio storage profiles), backup and restore cycles, the durability test and
// a telemetry monitor. Each takes a typed config and reports through an
// Observer; none parses flags, prints or picks an exit code. Every run is
// recorded through one lifecycle (see lifecycle.go): the results store, the
// environment, the per-second series, telemetry and a final status that an
// interrupted or killed run keeps.
//
// Front ends (the command line, the scenario executor, an HTTP API) build a
// config, pass an Observer that turns events into their own output, and map
// the errors: errors.Is(err, ErrInvalid) is bad input, *Interrupted a run
// that was stopped and kept what it measured.
package experiment

import (
	"errors"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/internal/driver"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/threshold"
	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/tpch"
)

// ErrInvalid marks a config that cannot run as given (bad input): a front
// end shows its message and lets the user correct it.
var ErrInvalid = errors.New("invalid configuration")

// invalidf returns an error that wraps ErrInvalid; its message is the text
// alone.
func invalidf(format string, args ...any) error {
	return &invalidError{err: fmt.Errorf(format, args...)}
}

// Invalid marks err as bad input, keeping its message and what it wraps.
func Invalid(err error) error { return &invalidError{err: err} }

type invalidError struct{ err error }

func (e *invalidError) Error() string        { return e.err.Error() }
func (e *invalidError) Unwrap() error        { return e.err }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

// Interrupted is the error of a run whose context ended before it finished:
// what it measured so far is stored, the run marked interrupted.
type Interrupted struct {
	RunID string
	Kept  string // what the run keeps, e.g. "2 finished steps"
}

func (e *Interrupted) Error() string {
	return fmt.Sprintf("interrupted; %s kept in run %s", e.Kept, e.RunID)
}

// Telemetry is how a run samples the host, its target's devices and the
// database while it runs.
type Telemetry struct {
	Interval   time.Duration // 0: no telemetry
	BlockTrace bool          // device latency percentiles from block tracepoints, where the kernel allows it
	// Nodes are hosts whose Prometheus node_exporter is scraped at each
	// sample (their CPU and devices, in each step's hosts); they need an
	// Interval.
	Nodes []telemetry.Node
	// Workload holds the experiment's processes beside tierbench's own and
	// the run's server (a scenario's other instances, restored copies),
	// whose CPU is not other processes' (nil: none but a backup run's
	// restored copies, which it adds itself).
	Workload *telemetry.Workload
}

// DefaultTelemetry is what the command line samples unless told otherwise.
var DefaultTelemetry = Telemetry{Interval: time.Second, BlockTrace: true}

// Record says where a run is recorded and what it is part of.
type Record struct {
	Results string // the results store's directory
	Group   string // the results group, e.g. a scenario's ("": none)
	// RunID is the id the run is recorded under ("": a new one), e.g. one
	// an HTTP API gave out when it queued the run (results.NewRunID).
	RunID     string
	Placement stored.Placement
	Telemetry Telemetry
	// LatencyBuckets, when set, makes each TPC-C Tick carry its latencies
	// counted in these buckets (ascending upper bounds): what a live
	// metrics exporter needs. Nil costs the workload nothing.
	LatencyBuckets []time.Duration
	// Noisy is how the run judges repetitions measured on a noisy host.
	Noisy stored.Noisy
}

// DefaultNoisy is how runs judge noisy repetitions unless told otherwise:
// telemetry.DefaultNoisy's limits, noisy repetitions kept in the means. The
// zero stored.Noisy judges nothing.
func DefaultNoisy() stored.Noisy { return stored.Noisy{Limits: telemetry.DefaultNoisy} }

// judgeNoisy says why a repetition whose telemetry is a was noisy ("" when
// it was not, or without telemetry).
func judgeNoisy(n stored.Noisy, a *stored.Aggregate) string {
	if a == nil {
		return ""
	}
	return telemetry.Noisy(*a, n.Limits)
}

// Observer hears what an experiment does. Its methods are called from the
// experiment's goroutines, one at a time per run; they must return quickly
// and must not block the workload.
type Observer interface {
	// Note is a line of information: what cannot be sampled or applied and
	// why, a schedule that slips, a schema reused.
	Note(msg string)
	// Started says the run is recorded in the store.
	Started(Started)
	// Progress is the state of a running part, about once a second or when
	// it starts.
	Progress(Progress)
	// Tick is one sampling interval of a TPC-C step or of a monitor.
	Tick(Tick)
	// Result is a finished part, as it is stored.
	Result(Result)
}

// Started describes a recorded run.
type Started struct {
	RunID     string
	Kind      string
	StorePath string
	// Params is the run's stored parameters: *stored.TPCCParams, DiskParams,
	// BackupParams, DurabilityParams, MonitorParams or SpaceParams.
	Params any
	// Resolution is how telemetry resolved the target to devices (nil: no
	// target, or not sampled).
	Resolution *telemetry.Resolution
}

// Progress is one of: a schema build's progress, a test file's layout, a
// disk point starting, a backup phase running, a durability cycle running;
// or, with only Telemetry set, a telemetry sample just taken (one per
// sampling interval, whatever the run is doing).
type Progress struct {
	Build     *tpcc.BuildProgress
	TPCHBuild *tpch.BuildProgress
	Layout    *LayoutProgress
	Point     *PointProgress
	Phase     *PhaseProgress
	Cycle     *CycleProgress
	Scan      *SpaceProgress // a space scan's bytes read so far
	// Telemetry is the latest sample while a phase runs (nil: none yet).
	Telemetry *telemetry.Sample
}

// LayoutProgress is fio's test file being written before the first point.
type LayoutProgress struct {
	File       string
	Have, Want int64
}

// PointProgress says a disk point starts.
type PointProgress struct {
	Index, Count   int // 0-based index of Count points
	Spec           fio.Spec
	Ramp, Duration time.Duration
}

// PhaseProgress is a backup or restore running.
type PhaseProgress struct {
	Cycle, Cycles int
	Phase         string // backup, restore, or verify once the restore is timed
	Elapsed       time.Duration
}

// CycleProgress is a durability cycle's TPC-C running before its fault.
type CycleProgress struct {
	Cycle, Cycles int
	Elapsed       time.Duration
	Acknowledged  int64
}

// Tick is a TPC-C second (TPCC set) or a monitor's sample (TPCC nil).
type Tick struct {
	TPCC      *driver.Tick
	Telemetry *telemetry.Sample // the latest sample (nil: none)
}

// Result is one of a finished TPC-C step, disk point, backup phase or
// durability cycle, a schema built or a consistency check.
type Result struct {
	TPCC      *stored.TPCCStep
	Point     *stored.Point
	Phase     *stored.PhaseResult
	Cycle     *stored.DurabilityCycle
	Build     *tpcc.BuildResult
	TPCHBuild *tpch.BuildResult
	TPCHQuery *stored.TPCHQuery // a TPC-H query or refresh function, as stored
	Check     *tpcc.CheckResult
	// Thresholds are the verdicts on the step or point just reported, or,
	// at a complete run's end, on thresholds that no step had a figure for.
	Thresholds []threshold.Verdict
}

// Nop is an Observer that ignores everything; embed it to hear only some
// events.
type Nop struct{}

func (Nop) Note(string)       {}
func (Nop) Started(Started)   {}
func (Nop) Progress(Progress) {}
func (Nop) Tick(Tick)         {}
func (Nop) Result(Result)     {}

var _ Observer = Nop{}
