package job_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/job"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/threshold"
)

// The main job as one function: a managed server started, the schema
// built, the run, the check kept with it and the report of the run; the
// server keeps running. A second job reuses both, and a breached threshold
// is its verdict, given after the check and the report. Bad input starts
// nothing and records nothing.
func TestRunMain(t *testing.T) {
	pgtest.RequireBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := pgtest.TempDir(t)
	data, res := filepath.Join(dir, "data"), filepath.Join(dir, "results")
	t.Cleanup(func() { server.Stop(context.Background(), data, "immediate") })

	bad := job.MainConfig{Build: experiment.BuildConfig{Warehouses: 0, BuildVUs: 2}, Report: filepath.Join(dir, "r.txt"),
		Server: experiment.ServerConfig{DataDir: data, Memory: 64 << 20},
		TPCC:   tpccConfig(res, time.Second)}
	out, err := job.RunMain(ctx, bad, experiment.Nop{})
	var fields []string
	for _, p := range experiment.Problems(err) {
		fields = append(fields, p.Field)
	}
	if out != nil || experiment.OutcomeOf(err) != experiment.BadInput || strings.Join(fields, ",") != "warehouses,report,memory" {
		t.Errorf("bad input: %+v, %v; want the problems of warehouses, report and memory", out, err)
	}
	for _, d := range []string{data, res} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("bad input made %s: %v", d, err)
		}
	}

	cfg := job.MainConfig{Build: experiment.BuildConfig{Warehouses: 1, BuildVUs: 2},
		Server: experiment.ServerConfig{DataDir: data, KeepRunning: true},
		TPCC:   tpccConfig(res, 2*time.Second)}
	rec := experiment.Nop{}
	out, err = job.RunMain(ctx, cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	if out.Server.Engine != "postgres" || out.Server.Reused || out.Build == nil || out.TPCC == nil ||
		out.TPCC.Status != results.StatusComplete || len(out.TPCC.Steps) != 1 || out.Check == nil || !out.Check.OK {
		t.Fatalf("main job %+v; want a new server, a build, one complete step and a check that holds", out)
	}
	if want := filepath.Join(res, "report.html"); out.Report != want {
		t.Errorf("report %q; want %q", out.Report, want)
	}
	if html, err := os.ReadFile(out.Report); err != nil || !strings.Contains(string(html), out.TPCC.RunID) {
		t.Errorf("the report does not show run %s: %v", out.TPCC.RunID, err)
	}
	store, err := results.OpenReadOnly(res)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Document(ctx, out.TPCC.RunID, results.DocCheck); err != nil {
		t.Errorf("the check was not kept with the run: %v", err)
	}
	store.Close()
	if st, err := server.Status(ctx, data); err != nil || !st.Running {
		t.Errorf("the server after the job: %+v, %v; want it running", st, err)
	}

	// Again, with a threshold no run meets.
	if cfg.TPCC.Thresholds, err = threshold.Parse(stored.KindTPCC, []string{"nopm>=1000000000"}); err != nil {
		t.Fatal(err)
	}
	first := out.TPCC.RunID
	out, err = job.RunMain(ctx, cfg, rec)
	var breached *experiment.Breached
	if !errors.As(err, &breached) || experiment.OutcomeOf(err) != experiment.ThresholdsBreached || out == nil {
		t.Fatalf("a breached threshold: %+v, %v; want *Breached with the result", out, err)
	}
	if !out.Server.Reused || out.Build != nil || out.Check == nil || !out.Check.OK || out.Report == "" || out.TPCC.RunID == first {
		t.Errorf("second job %+v; want the server and schema reused, a new run, checked and reported", out)
	}
}

func TestMain(m *testing.M) { pgtest.Main(m) }

// tpccConfig is a run of one step of one virtual user, recorded in res.
func tpccConfig(res string, duration time.Duration) experiment.TPCCConfig {
	c := experiment.NewTPCCConfig()
	c.Results, c.VUs, c.RampUp, c.Duration = res, []int{1}, 0, duration
	return c
}
