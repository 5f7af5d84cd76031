package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/cli"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

type runDoc struct {
	RunID     string `json:"run_id"`
	Status    string `json:"status"`
	NOPMAgree bool   `json:"nopm_agree"`
	Steps     []struct {
		VUs        int     `json:"vus"`
		TPM        int64   `json:"tpm"`
		NOPM       int64   `json:"nopm"`
		ClientTPM  int64   `json:"client_tpm"`
		ClientNOPM int64   `json:"client_nopm"`
		Errors     int64   `json:"errors"`
		Reconnects int64   `json:"reconnects"`
		CPU        float64 `json:"client_cpu_us_per_txn"`
		Seconds    float64 `json:"measured_seconds"`
		Retries    int64   `json:"retries"`
		Txn        map[string]struct {
			Count int64   `json:"count"`
			P50   float64 `json:"p50_ms"`
			P95   float64 `json:"p95_ms"`
			P99   float64 `json:"p99_ms"`
			Max   float64 `json:"max_ms"`
		} `json:"txn"`
		NOPMCheck struct {
			Database int64 `json:"database_new_orders"`
			Client   int64 `json:"client_committed_new_orders"`
			Bound    int64 `json:"bound"`
			OK       bool  `json:"ok"`
		} `json:"nopm_check"`
		Host   map[string]float64 `json:"host"`
		Device map[string]float64 `json:"device"`
		DB     map[string]float64 `json:"db"`
		Audit  []struct {
			Name    string  `json:"name"`
			Value   float64 `json:"value"`
			Samples int64   `json:"samples"`
			Verdict string  `json:"verdict"`
		} `json:"audit"`
	} `json:"steps"`
}

func parseRun(t *testing.T, out string) runDoc {
	t.Helper()
	var d runDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("tpcc run --json: %v\n%s", err, out)
	}
	return d
}

func itoa(n int) string { return strconv.Itoa(n) }

// tpccRunStopped runs `tpcc run` with args on a TPC-C database of its own,
// results in a new directory, and stop to call cancel (Ctrl-C) when it
// will; it returns the exit code, standard error and the directory.
func tpccRunStopped(t *testing.T, stop func(ctx context.Context, cancel context.CancelFunc, dir string), args ...string) (int, string, string) {
	t.Helper()
	dsn := tpcctest.Database(t, 1)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	go stop(ctx, cancel, dir)
	var stdout, stderr bytes.Buffer
	code := cli.Execute(ctx, append([]string{"tpcc", "run", "--dsn", dsn, "--results", dir}, args...), envOf(nil), strings.NewReader(""), &stdout, &stderr)
	return code, stderr.String(), dir
}

// Ctrl-C in the middle of a run: exit 130, and the store holds the run,
// marked interrupted, with the step that finished; the next, still in its
// ramp-up, measured nothing to keep.
func TestTPCCRunInterrupted(t *testing.T) {
	t.Parallel()
	afterFirst := func(ctx context.Context, cancel context.CancelFunc, dir string) {
		cancelOnceStored(ctx, cancel, dir, 1, 0) // step 2 is cut off in its ramp-up, however long step 1 took on a busy host
	}
	code, stderr, dir := tpccRunStopped(t, afterFirst, "--vus", "1,2", "--rampup", "1s", "--duration", "2s")
	if code != 130 || !strings.Contains(stderr, "interrupted") {
		t.Fatalf("interrupted run: exit %d, stderr %s", code, stderr)
	}
	run, steps := interruptedRun(t, dir)
	if len(steps) != 1 {
		t.Fatalf("stored steps %d, want the one that finished", len(steps))
	}
	if code, out, _ := runTierbench(t, "results", "show", run.ID, "--results", dir); code != 0 || !strings.Contains(out, "interrupted") {
		t.Fatalf("results show of the interrupted run: exit %d\n%s", code, out)
	}
}

// Ctrl-C before there is a run to keep anything in, during the
// closed-loop step that finds the maximum a sweep's fractions are of, is
// an interruption all the same: exit 130, not a failure.
func TestTPCCRunInterruptedProbe(t *testing.T) {
	t.Parallel()
	inProbe := func(_ context.Context, cancel context.CancelFunc, _ string) {
		time.Sleep(1500 * time.Millisecond) // well inside the 60 s probe
		cancel()
	}
	code, stderr, _ := tpccRunStopped(t, inProbe, "--rate", "50%", "--probe", "60s", "--rampup", "0s", "--duration", "1s")
	if code != cli.ExitInterrupted || !strings.HasPrefix(stderr, "finding the maximum") ||
		!strings.Contains(stderr, "\ntierbench: interrupted: the closed-loop step finding the maximum rate") {
		t.Fatalf("Ctrl-C during the probe: exit %d, stderr:\n%s\nwant 130 and a line saying it was interrupted there", code, stderr)
	}
}

// interruptedRun opens the store in dir and returns its latest run, which
// must be marked interrupted, and that run's stored steps.
func interruptedRun(t *testing.T, dir string) (results.Run, []results.Step) {
	t.Helper()
	store, err := results.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	run, err := store.Run(context.Background(), "latest")
	if err != nil || run.Status != results.StatusInterrupted {
		t.Fatalf("stored run %+v (%v), want one marked interrupted", run, err)
	}
	steps, err := store.Steps(context.Background(), run.ID)
	if err != nil {
		t.Fatalf("stored steps: %v", err)
	}
	return run, steps
}

func TestTPCCRunBadInput(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t) // no schema in it
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--vus", "0"}, "--vus"},
		{[]string{"--vus", "1,x"}, "--vus"},
		{[]string{"--duration", "-1s"}, "negative"},
		{[]string{"--rampup", "soon"}, "--rampup"},
		{[]string{"--mix", "no=45,p=43,os=4,d=4,xx=4"}, "--mix"},
		{[]string{"--mix", "no=60,p=30,os=4,d=3,sl=3"}, "minimum"},
		{[]string{"--mode", "magic"}, "--mode"},
		{[]string{"--retry", "-1"}, "--retry"},
		{[]string{"--repeat", "0"}, "--repeat 0 is out of range; give a count of repetitions from 1 to 1000"},
		{[]string{"--repeat", "-1"}, "--repeat -1 is out of range"},
		{[]string{}, "no TPC-C schema"},
	}
	for _, tc := range cases {
		args := append([]string{"tpcc", "run", "--dsn", dsn, "--duration", "2s", "--results", t.TempDir()}, tc.args...)
		code, _, errOut := runTierbench(t, args...)
		oneErrorLine(t, code, errOut, 2, tc.want)
	}
}

// The contract of `tpcc run --json` with repetitions, cheaply: exit 0 and
// one document with the keys scripts read, for the run, each step, its
// transactions, its telemetry and its repetitions. What the figures are is
// tested where the run is measured (internal/experiment, tpcc_test.go).
// Each repetition measures 3 s: a loaded CI host once left the first of
// two 2 s repetitions without a host sample inside it.
func TestTPCCRunJSON(t *testing.T) {
	t.Parallel()
	dsn := tpcctest.Database(t, 1)
	res := t.TempDir()
	code, out, errOut := runTierbench(t, "tpcc", "run", "--json", "--dsn", dsn, "--vus", "1", "--repeat", "2",
		"--rampup", "0s", "--duration", "3s", "--results", res)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	doc := hasKeys(t, "the document", object(t, "tpcc run --json", out), "run_id", "status", "mode", "mix", "nopm_agree", "repeat", "steps")
	if doc["status"] != "complete" || doc["repeat"] != 2.0 {
		t.Errorf("status %v, repeat %v; want complete and 2", doc["status"], doc["repeat"])
	}
	step := hasKeys(t, "a step", first(t, "steps", doc["steps"]), "vus", "tpm", "nopm", "client_tpm", "client_nopm", "errors",
		"reconnects", "client_cpu_us_per_txn", "measured_seconds", "retries", "txn", "nopm_check", "host", "device", "db", "audit",
		"stats", "txn_pooled", "repetitions")
	hasKeys(t, "new_order", hasKeys(t, "txn", step["txn"], "new_order", "payment", "order_status", "delivery", "stock_level")["new_order"],
		"count", "p50_ms", "p95_ms", "p99_ms", "max_ms")
	hasKeys(t, "nopm_check", step["nopm_check"], "database_new_orders", "client_committed_new_orders", "bound", "ok")
	hasKeys(t, "an audit item", first(t, "audit", step["audit"]), "name", "value", "samples", "verdict")
	hasKeys(t, "stats of nopm", hasKeys(t, "stats", step["stats"], "nopm", "new_order.p95_ms")["nopm"], "mean", "stddev", "n", "ci95_low", "ci95_high")
	hasKeys(t, "a repetition", first(t, "repetitions", step["repetitions"]), "index", "vus", "repetition", "nopm", "host")
	// The run is in the store with its steps (`results show`).
	if code, out, _ := runTierbench(t, "results", "show", doc["run_id"].(string), "--results", res, "--json"); code != 0 || !strings.Contains(out, `"vus=1"`) {
		t.Fatalf("results show: exit %d %s", code, out)
	}
}
