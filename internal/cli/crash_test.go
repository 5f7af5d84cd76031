package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/clustertest"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/fio/fiotest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// TestCrash SIGKILLs a real tierbench process once its first step is
// stored — during `tpcc run`, `disk run` and `scenario run` — and then
// reads what it left: the store opens, `results list` and `results show`
// work, the run reads as incomplete with every finished step whole (its
// numbers, per-second series and histograms), and `report` writes a report
// that says so. The scenario's managed server outlives it: `server status`
// lists it as orphaned until `server stop` stops it.
func TestCrash(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	bin := clustertest.Tierbench(t)

	t.Run("tpcc", func(t *testing.T) {
		dsn := tpcctest.Database(t, 1)
		res := t.TempDir()
		k := startTierbench(t, bin, nil, "tpcc", "run", "--dsn", dsn, "--vus", "1,1,1,1,1,1,1,1", "--rampup", "0s",
			"--duration", "2s", "--results", res)
		runID := k.killAfterFirstStep(t, res, "tpcc")
		show := checkKilledRun(t, bin, res, runID, "tpcc")
		store := openStore(t, res)
		for _, st := range show.Steps {
			var m struct {
				TPM  float64 `json:"tpm"`
				NOPM float64 `json:"nopm"`
			}
			if err := json.Unmarshal(st.Metrics, &m); err != nil || m.TPM <= 0 {
				t.Errorf("step %d: TPM %.0f (%v); want > 0: %s", st.Index, m.TPM, err, st.Metrics)
			}
			if pts, err := store.Points(context.Background(), runID, "tpm", st.Index); err != nil || len(pts) == 0 {
				t.Errorf("step %d: %d points of the tpm series (%v); want its seconds", st.Index, len(pts), err)
			}
			if h, err := store.Histogram(context.Background(), runID, st.Index, "new_order"); err != nil || len(h) == 0 {
				t.Errorf("step %d: no new_order histogram (%v)", st.Index, err)
			}
		}
	})

	t.Run("disk", func(t *testing.T) {
		fiotest.Require(t)
		res, target := t.TempDir(), t.TempDir()
		// fio's work directory goes under TMPDIR: one the test removes.
		env := []string{"TMPDIR=" + t.TempDir()}
		k := startTierbench(t, bin, env, "disk", "run", "--target", target, "--bs", "4k", "--rw", "randread",
			"--iodepth", "1,2,4,8,16,32", "--jobs", "1", "--duration", "2s", "--ramp", "0s", "--size", "16MiB", "--results", res)
		runID := k.killAfterFirstStep(t, res, "disk")
		show := checkKilledRun(t, bin, res, runID, "disk")
		store := openStore(t, res)
		for _, st := range show.Steps {
			var m struct {
				Read struct {
					IOPS float64 `json:"iops"`
				} `json:"read"`
			}
			if err := json.Unmarshal(st.Metrics, &m); err != nil || m.Read.IOPS <= 0 {
				t.Errorf("point %d: read IOPS %.0f (%v); want > 0: %s", st.Index, m.Read.IOPS, err, st.Metrics)
			}
			if pts, err := store.Points(context.Background(), runID, "read.iops", st.Index); err != nil || len(pts) == 0 {
				t.Errorf("point %d: %d points of read.iops (%v); want its seconds", st.Index, len(pts), err)
			}
			if h, err := store.Histogram(context.Background(), runID, st.Index, "read.clat_ns"); err != nil || len(h) == 0 {
				t.Errorf("point %d: no read.clat_ns histogram (%v)", st.Index, err)
			}
		}
	})

	t.Run("scenario", func(t *testing.T) {
		dir := pgtest.TempDir(t)
		dataDir := filepath.Join(dir, "data", "db")
		// Whatever happens below, the server the scenario starts is stopped.
		t.Cleanup(func() { server.Stop(context.Background(), dataDir, "immediate") })
		res := filepath.Join(dir, "results")
		file := filepath.Join(dir, "crash.yaml")
		yaml := `name: crash
title: "A managed server, one warehouse, short TPC-C steps: killed in the middle"
targets:
  - name: local
    path: ` + filepath.Join(dir, "data") + `
servers:
  - name: db
    engine: postgres
    target: local
steps:
  - tpcc-build: {server: db, warehouses: 1}
  - tpcc-run: {server: db, vus: "1,1,1,1,1,1,1,1", rampup: 0s, duration: 2s}
  - report: {}
`
		if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := runTierbench(t, "scenario", "validate", file); code != 0 {
			t.Fatalf("scenario validate: exit %d: %s", code, errOut)
		}
		k := startTierbench(t, bin, nil, "scenario", "run", file, "--results", res)
		runID := k.killAfterFirstStep(t, res, "tpcc")
		show := checkKilledRun(t, bin, res, runID, "tpcc")
		if !strings.HasPrefix(show.Run.Group, "crash-") {
			t.Errorf("run group %q; want the scenario's", show.Run.Group)
		}

		// The orphan: the server runs on, its tierbench gone.
		st, err := server.Status(context.Background(), dataDir)
		if err != nil || !st.Running {
			t.Fatalf("the scenario's server after the kill: %+v, %v; want it left running", st, err)
		}
		orphan, ok := listedServer(t, dataDir)
		if !ok {
			t.Fatalf("server status does not list %s", dataDir)
		}
		if !orphan.Orphaned || orphan.PID != st.PID || orphan.Port != st.Port || orphan.StartedBy == nil ||
			orphan.StartedBy.PID != k.pid || orphan.StartedBy.Alive || orphan.StartedBy.Command != "tierbench scenario run "+file {
			t.Errorf("server status --json lists %+v (started by %+v); want it orphaned, started by pid %d", orphan, orphan.StartedBy, k.pid)
		}
		code, out, errOut := runTierbench(t, "server", "status")
		want := "orphaned: its tierbench (pid " + itoa(k.pid) + ") is gone; stop it with: tierbench server stop --datadir " + dataDir
		if code != 0 || !strings.Contains(out, dataDir+": PostgreSQL") || !strings.Contains(out, want) {
			t.Errorf("server status: exit %d, stdout %q, stderr %q; want a line saying %q", code, out, errOut, want)
		}

		code, out, errOut = runTierbench(t, "server", "stop", "--json", "--datadir", dataDir)
		if m, _ := jsonKeys(t, out); code != 0 || m["was_running"] != true {
			t.Fatalf("server stop of the orphan: exit %d, %s, stderr %q", code, out, errOut)
		}
		if _, ok := listedServer(t, dataDir); ok {
			t.Errorf("server status still lists %s after server stop", dataDir)
		}
	})
}

// TestServerStatusList: `server status` without --datadir lists the managed
// servers running here, with who started them; `server start` leaves its
// server running on purpose, so it is not an orphan.
func TestServerStatusList(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	dataDir := filepath.Join(pgtest.TempDir(t), "data")
	t.Cleanup(func() { server.Stop(context.Background(), dataDir, "immediate") })
	code, out, errOut := runTierbench(t, "server", "start", "--json", "--datadir", dataDir)
	if code != 0 {
		t.Fatalf("server start: exit %d: %s", code, errOut)
	}
	started, _ := jsonKeys(t, out)

	rs, ok := listedServer(t, dataDir)
	if !ok {
		t.Fatalf("server status does not list %s", dataDir)
	}
	if float64(rs.PID) != started["pid"] || float64(rs.Port) != started["port"] || rs.Orphaned || rs.Since.IsZero() ||
		rs.StartedBy == nil || !rs.StartedBy.KeepRunning || rs.StartedBy.PID != os.Getpid() || !rs.StartedBy.Alive {
		t.Errorf("listed %+v (started by %+v); want pid %v, port %v, started by this process, meant to keep running",
			rs, rs.StartedBy, started["pid"], started["port"])
	}
	code, out, errOut = runTierbench(t, "server", "status")
	if code != 0 || !strings.Contains(out, dataDir+": PostgreSQL") || strings.Contains(out, "postgres://") {
		t.Errorf("server status: exit %d, stdout %q, stderr %q; want a line for %s, no DSN", code, out, errOut, dataDir)
	}

	code, _, errOut = runTierbench(t, "server", "stop", "--all", "--datadir", dataDir)
	oneErrorLine(t, code, errOut, 2, "--all")

	if code, _, errOut := runTierbench(t, "server", "stop", "--datadir", dataDir); code != 0 {
		t.Fatalf("server stop: exit %d: %s", code, errOut)
	}
	if _, ok := listedServer(t, dataDir); ok {
		t.Errorf("server status lists %s after server stop", dataDir)
	}
}

// listedServer runs `server status --json` (no --datadir) and returns its
// entry for dataDir.
func listedServer(t *testing.T, dataDir string) (server.RunningServer, bool) {
	t.Helper()
	code, out, errOut := runTierbench(t, "server", "status", "--json")
	if code != 0 {
		t.Fatalf("server status --json: exit %d: %s", code, errOut)
	}
	var doc struct {
		Servers []server.RunningServer `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Servers == nil {
		t.Fatalf("server status --json: %v\n%s", err, out)
	}
	for _, rs := range doc.Servers {
		if rs.DataDir == dataDir {
			return rs, true
		}
	}
	return server.RunningServer{}, false
}

// killable is a tierbench process to kill.
type killable struct {
	pid    int
	done   chan struct{} // closed once it has exited and been reaped
	mu     sync.Mutex
	output bytes.Buffer // stdout and stderr
}

func (k *killable) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.output.Write(p)
}

func (k *killable) String() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.output.String()
}

func (k *killable) exited() bool {
	select {
	case <-k.done:
		return true
	default:
		return false
	}
}

// startTierbench starts bin in a process group of its own. Cleanup kills
// the group: what the killed tierbench leaves of it (fio) goes too, while
// PostgreSQL, which pg_ctl puts in a session of its own, stays.
func startTierbench(t *testing.T, bin string, env []string, args ...string) *killable {
	t.Helper()
	cmd := exec.Command(bin, args...)
	k := &killable{done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = k, k
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	k.pid = cmd.Process.Pid
	go func() {
		cmd.Wait()
		close(k.done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-k.pid, syscall.SIGKILL)
		<-k.done
	})
	return k
}

// killAfterFirstStep waits until the store in res holds a run of this kind
// with a step, SIGKILLs the process (the process alone, as a kill -9
// would) and waits until it is reaped: a zombie's PID still answers. It
// returns the run's id.
func (k *killable) killAfterFirstStep(t *testing.T, res, kind string) string {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(3 * time.Minute)
	var store *results.Store
	defer func() {
		if store != nil {
			store.Close()
		}
	}()
	for {
		if k.exited() {
			t.Fatalf("tierbench exited before its first step was stored:\n%s", k)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no step stored in 3 minutes:\n%s", k)
		}
		time.Sleep(100 * time.Millisecond)
		if store == nil {
			s, err := results.OpenReadOnly(res)
			if errors.Is(err, results.ErrNoStore) {
				continue
			}
			if err != nil {
				t.Fatalf("opening the store while tierbench writes: %v", err)
			}
			store = s
		}
		run, err := store.Run(ctx, "latest")
		if err != nil || run.Kind != kind {
			continue
		}
		if steps, err := store.Steps(ctx, run.ID); err != nil || len(steps) == 0 {
			continue
		}
		if err := syscall.Kill(k.pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-k.done
		t.Logf("killed tierbench (pid %d) in run %s", k.pid, run.ID)
		return run.ID
	}
}

// killedShow is what `results show --json` says of the killed run.
type killedShow struct {
	Run    results.Run    `json:"run"`
	Steps  []results.Step `json:"steps"`
	Series []string       `json:"series"`
}

// checkKilledRun runs the built tierbench on the store a killed one left:
// `results list` and `results show` succeed and read the run as incomplete,
// with its steps numbered from 0 without a gap; `report` writes a report
// that says the run is incomplete.
func checkKilledRun(t *testing.T, bin, res, runID, kind string) killedShow {
	t.Helper()
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	}

	code, out, errOut := run("results", "list", "--json", "--results", res)
	if code != 0 {
		t.Fatalf("results list: exit %d: %s", code, errOut)
	}
	var list struct {
		Runs []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Steps  int    `json:"steps"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("results list --json: %v\n%s", err, out)
	}
	listed := false
	for _, r := range list.Runs {
		if r.ID == runID {
			listed = true
			if r.Status != results.StatusIncomplete || r.Steps < 1 {
				t.Errorf("results list: run %s is %s with %d steps; want incomplete with at least 1", runID, r.Status, r.Steps)
			}
		}
	}
	if !listed {
		t.Errorf("results list does not list run %s:\n%s", runID, out)
	}

	code, out, errOut = run("results", "show", runID, "--json", "--results", res)
	if code != 0 {
		t.Fatalf("results show: exit %d: %s", code, errOut)
	}
	var show killedShow
	if err := json.Unmarshal([]byte(out), &show); err != nil {
		t.Fatalf("results show --json: %v\n%s", err, out)
	}
	if show.Run.Status != results.StatusIncomplete || show.Run.Kind != kind || show.Run.FinishedAt != nil {
		t.Errorf("results show: run %+v; want a %s run, incomplete, never finished", show.Run, kind)
	}
	if len(show.Steps) == 0 || len(show.Series) == 0 {
		t.Fatalf("results show: %d steps, series %v; want the finished steps and their series", len(show.Steps), show.Series)
	}
	for i, st := range show.Steps {
		if st.Index != i {
			t.Errorf("step %d has index %d: the finished steps are not all there", i, st.Index)
		}
	}
	t.Logf("run %s: %d finished steps, series %v", runID, len(show.Steps), show.Series)

	html := filepath.Join(t.TempDir(), "crash.html")
	code, _, errOut = run("report", "--results", res, "--out", html) // the latest run: the killed one
	if code != 0 {
		t.Fatalf("report on the killed run's store: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "is incomplete: it shows the steps it finished") {
		t.Errorf("the report does not say the run is incomplete")
	}
	return show
}

func openStore(t *testing.T, dir string) *results.Store {
	t.Helper()
	s, err := results.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
