// Package job holds what a front end runs as one job beyond a single
// experiment: the main job (`tierbench run`), which composes the
// experiment layer (a managed server, the schema, a TPC-C run, the check)
// and the report of its run. It sits beside internal/experiment rather
// than in it because it writes the report: internal/report's tests import
// the experiment package, which therefore cannot import internal/report.
package job

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/report"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/units"
	"github.com/tierbench/tierbench/internal/version"
)

// MainConfig is the main job (`tierbench run`): a managed server, the TPC-C
// schema built when no valid one is there, a TPC-C run, the consistency
// check after it and the report of the run. Its fields are named, in
// Problems, by the paths in quotes; the server's by ServerConfig's.
type MainConfig struct {
	// Server is the managed server; it keeps running afterwards.
	Server experiment.ServerConfig
	// Build is the schema built when no valid one is there: "warehouses"
	// and "build_vus".
	Build experiment.BuildConfig
	// TPCC is the run; its DSN is the server's.
	TPCC experiment.TPCCConfig
	// Report ("report") is the HTML report to write; "": report.html in
	// the results directory.
	Report string
}

// Validate checks the job's every part, every problem at once
// (*experiment.Problem): the build's, the run's (but its DSN, the
// server's), the report's and the server's.
func (c MainConfig) Validate() error {
	var ps []error
	add := func(err error) {
		for _, p := range experiment.Problems(err) {
			ps = append(ps, p)
		}
	}
	add(c.Build.Validate())
	add(experiment.Except(c.TPCC.Validate(), "dsn"))
	if ext := filepath.Ext(c.Report); c.Report != "" && ext != ".html" && ext != ".htm" {
		// Checked now, not after the run when the report is written.
		ps = append(ps, &experiment.Problem{Field: "report", Value: experiment.Quote(strconv.Quote(c.Report)),
			Msg: "is not an .html file name; give one (the Markdown and data directory are named after it)"})
	}
	add(c.Server.Validate())
	return errors.Join(ps...)
}

// MainServer is the main job's server, as its document shows it (no DSN:
// it carries the server's password).
type MainServer struct {
	Engine  string `json:"engine"`
	DataDir string `json:"datadir"`
	Port    int    `json:"port"`
	Version string `json:"version"`
	Reused  bool   `json:"reused"`
}

// MainResult is the main job's document (`tierbench run --json`).
type MainResult struct {
	Server MainServer             `json:"server"`
	Build  *tpcc.BuildResult      `json:"build"` // null when a valid schema was reused
	TPCC   *experiment.TPCCResult `json:"tpcc"`
	Check  *tpcc.CheckResult      `json:"check"`  // after the run
	Report string                 `json:"report"` // the HTML report's path
}

// RunMain runs the main job: it starts (or reuses) the managed server,
// builds the schema unless a valid one is there, runs TPC-C, checks
// consistency and writes the report of the run. The server keeps running.
//
// The result is returned once the server has started, with what was done
// (TPCC set once the run was recorded), even with an error. A run that
// breached thresholds is still checked and reported, and the error is then
// its *experiment.Breached; a consistency check that does not hold is an
// *experiment.Verdict (OutcomeOf: VerdictFailed), which wins over a breach.
// An interruption keeps what was measured and returns
// *experiment.Interrupted.
func RunMain(ctx context.Context, cfg MainConfig, obs experiment.Observer) (*MainResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	started, err := experiment.StartServer(ctx, cfg.Server, obs)
	if err != nil {
		return nil, err
	}
	info := started.Info
	res := &MainResult{Server: MainServer{Engine: info.Engine, DataDir: info.DataDir, Port: info.Port, Version: info.Version, Reused: info.AlreadyRunning}}
	obs.Note(fmt.Sprintf("server: %s %s on 127.0.0.1:%d, data in %s", info.Engine, info.Version, info.Port, info.DataDir))

	db, err := all.Open(ctx, info.DSN)
	if err != nil {
		return res, err
	}
	defer db.Close()
	if res.Build, err = experiment.EnsureSchema(ctx, db, cfg.Build.Warehouses, cfg.Build.BuildVUs, obs); err != nil {
		return res, err
	}
	run := cfg.TPCC
	run.DSN = info.DSN
	res.TPCC, err = experiment.RunTPCC(ctx, run, obs)
	// A breached threshold is the run's verdict, given at the end: the
	// check and the report still come.
	var breached *experiment.Breached
	if err != nil && !errors.As(err, &breached) {
		return res, err
	}
	if res.Check, err = db.CheckTPCC(ctx, engine.CheckOptions{Seed: 1}); err != nil {
		if ctx.Err() != nil { // stopped during the check: the run itself is whole
			return res, &experiment.Interrupted{RunID: res.TPCC.RunID, Kept: units.Plural(len(res.TPCC.Steps), "finished step", "finished steps")}
		}
		return res, err
	}
	if err := experiment.StoreCheck(ctx, run.Results, res.TPCC.RunID, res.Check); err != nil {
		return res, err
	}
	if res.Report, err = writeReport(ctx, run.Results, res.TPCC.RunID, cfg.Report); err != nil {
		return res, err
	}
	if !res.Check.OK {
		return res, &experiment.Verdict{RunID: res.TPCC.RunID, Msg: "the consistency check after the run failed: " + experiment.CheckFailures(res.Check)}
	}
	if breached != nil {
		return res, breached
	}
	return res, nil
}

// writeReport writes the report of one run to out (default: report.html
// in the results directory) and returns the HTML file's path.
func writeReport(ctx context.Context, dir, runID, out string) (string, error) {
	if out == "" {
		out = filepath.Join(dir, "report.html")
	}
	store, err := results.OpenReadOnly(dir)
	if err != nil {
		return "", fmt.Errorf("writing the report: opening the results store: %w", err)
	}
	defer store.Close()
	w, err := report.Write(ctx, store, report.Options{Runs: []string{runID}, Out: out, Version: version.Version})
	switch {
	case errors.Is(err, report.ErrNotOurs):
		return "", &experiment.Problem{Field: "report", Value: experiment.Quote(out), Msg: "holds files tierbench's report did not write; choose another report file"}
	case err != nil:
		return "", fmt.Errorf("writing the report: %w", err)
	}
	return w.HTML, nil
}
