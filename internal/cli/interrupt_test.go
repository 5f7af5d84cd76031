package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/cli"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// cancelOnceStored calls cancel after the latest run in the store at res
// has n stored steps (or ctx ends), and after that.
func cancelOnceStored(ctx context.Context, cancel context.CancelFunc, res string, n int, after time.Duration) {
	for ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		s, err := results.OpenReadOnly(res)
		if err != nil {
			continue
		}
		if run, err := s.Run(ctx, "latest"); err == nil {
			if steps, _ := s.Steps(ctx, run.ID); len(steps) >= n {
				s.Close()
				time.Sleep(after)
				cancel()
				return
			}
		}
		s.Close()
	}
}

// Ctrl-C a second into the second step's measured interval of `tierbench
// run --json`: the one document is printed all the same, with the step
// that finished and the one cut short, marked, and the run's status
// interrupted, no check and no report, and the exit code is 130, as `tpcc
// run --json` does.
func TestRunJSONInterrupted(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	dataDir := filepath.Join(pgtest.TempDir(t), "data")
	t.Cleanup(func() { server.Stop(context.Background(), dataDir, "immediate") })
	res := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// 2.5 s after the first step is stored, the second has started its
	// measured interval: its start edge took 1 s and more on a host busy
	// with other tests (an ordinary user's make test cut it before that).
	go cancelOnceStored(ctx, cancel, res, 1, 2500*time.Millisecond)
	var stdout, stderr bytes.Buffer
	code := cli.Execute(ctx, []string{"run", "--json", "--datadir", dataDir, "--results", res, "--warehouses", "1",
		"--build-vus", "2", "--vus", "1,2", "--rampup", "0s", "--duration", "6s"}, envOf(nil), strings.NewReader(""), &stdout, &stderr)
	if code != cli.ExitInterrupted || !regexp.MustCompile(`tierbench: interrupted; 1 finished step and the first [0-9.]+ s of step 2 kept in run `).MatchString(stderr.String()) {
		t.Fatalf("exit %d, want 130 and the line naming what was kept; stderr:\n%s", code, stderr.String())
	}
	var doc struct {
		Server struct {
			DataDir string `json:"datadir"`
		} `json:"server"`
		TPCC *struct {
			RunID  string `json:"run_id"`
			Status string `json:"status"`
			Steps  []struct {
				VUs         int     `json:"vus"`
				NOPM        int64   `json:"nopm"`
				Seconds     float64 `json:"measured_seconds"`
				Interrupted bool    `json:"interrupted"`
			} `json:"steps"`
		} `json:"tpcc"`
		Check  json.RawMessage `json:"check"`
		Report *string         `json:"report"`
	}
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not the run's document: %v\n%s", err, stdout.String())
	}
	if dec.More() {
		t.Errorf("more than one document on stdout")
	}
	if doc.TPCC == nil || doc.TPCC.Status != "interrupted" || len(doc.TPCC.Steps) != 2 || doc.TPCC.Steps[0].VUs != 1 || doc.TPCC.Steps[0].NOPM <= 0 ||
		doc.TPCC.Steps[0].Interrupted {
		t.Fatalf("tpcc %+v, want the interrupted run with its finished step of 1 VU", doc.TPCC)
	}
	if cut := doc.TPCC.Steps[1]; cut.VUs != 2 || !cut.Interrupted || cut.NOPM <= 0 || cut.Seconds >= 6 {
		t.Errorf("the second step %+v; want 2 VUs cut short, with the NOPM of the seconds it measured", cut)
	}
	if doc.Server.DataDir != dataDir || string(doc.Check) != "null" || doc.Report == nil || *doc.Report != "" {
		t.Errorf("server.datadir %q, check %s, report %v: want %s, no check and no report", doc.Server.DataDir, doc.Check, doc.Report, dataDir)
	}
	run, steps := interruptedRun(t, res)
	if run.ID != doc.TPCC.RunID || len(steps) != 2 {
		t.Errorf("stored run %s with %d steps, the document names %s with 2", run.ID, len(steps), doc.TPCC.RunID)
	}
}

// Ctrl-C before monitor's --duration is up is an interruption: exit 130,
// the document of what was sampled, the run stored as interrupted. Without
// --duration, Ctrl-C is how a monitor ends: exit 0, the run complete.
func TestMonitorInterrupted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		duration string
		code     int
		status   string
	}{
		{"10m", cli.ExitInterrupted, results.StatusInterrupted},
		{"0s", cli.ExitOK, results.StatusComplete},
	} {
		t.Run(tc.duration, func(t *testing.T) {
			res := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(2500*time.Millisecond, cancel)
			var stdout, stderr bytes.Buffer
			code := cli.Execute(ctx, []string{"monitor", "--json", "--target", t.TempDir(), "--duration", tc.duration,
				"--interval", "500ms", "--block-trace=false", "--results", res}, envOf(nil), strings.NewReader(""), &stdout, &stderr)
			interrupted := strings.Contains(stderr.String(), "tierbench: interrupted; ")
			if code != tc.code || interrupted != (tc.code == cli.ExitInterrupted) {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			var doc struct {
				RunID   string             `json:"run_id"`
				Status  string             `json:"status"`
				Seconds float64            `json:"seconds"`
				Host    map[string]float64 `json:"host"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
				t.Fatalf("stdout is not monitor's document: %v\n%s", err, stdout.String())
			}
			// The 2.5 s count from before the command set up: on a busy
			// host its sampling may have begun a second later.
			if doc.Status != tc.status || doc.Seconds < 0.5 || doc.Seconds > 10 || len(doc.Host) == 0 {
				t.Errorf("status %q over %.1f s, host %v: want %s over at least one interval, at most 2.5 s, with the host's averages", doc.Status, doc.Seconds, doc.Host, tc.status)
			}
			store, err := results.OpenReadOnly(res)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			if run, err := store.Run(context.Background(), doc.RunID); err != nil || run.Status != tc.status {
				t.Errorf("stored run %+v (%v), want status %s", run, err, tc.status)
			}
		})
	}
}
