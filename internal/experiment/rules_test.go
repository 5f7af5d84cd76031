package experiment_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// fields lists the fields a Validate's problems name, checking that each
// problem is bad input and that the error holds nothing else.
func fields(t *testing.T, err error) []string {
	t.Helper()
	ps := experiment.Problems(err)
	if err != nil && len(ps) == 0 {
		t.Fatalf("error %v holds no Problem", err)
	}
	var out []string
	for _, p := range ps {
		if !errors.Is(p, experiment.ErrInvalid) {
			t.Errorf("problem %v is not ErrInvalid", p)
		}
		if strings.Contains(p.Error(), "\n") {
			t.Errorf("problem %q is not one line", p)
		}
		out = append(out, p.Field)
	}
	return out
}

// Every config reports all of its problems at once, each naming its field,
// and the defaults a front end starts from are valid as soon as what only
// the user can say (a DSN, a target) is given.
func TestValidateReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tp := experiment.NewTPCCConfig()
	tp.DSN, tp.Results = "postgres://u@127.0.0.1:1/db", dir
	if err := tp.Validate(); err != nil {
		t.Errorf("the TPC-C defaults with a DSN: %v", err)
	}
	tp.VUs, tp.Duration, tp.RampUp, tp.Mode, tp.Retry, tp.Repeat = []int{1, 20000}, 500*time.Millisecond, -time.Second, "fast", 101, 0
	tp.Noisy.Limits.StealPct, tp.Telemetry.Interval, tp.Results = 150, 10*time.Millisecond, filepath.Join(file, "r")
	want := []string{"results", "telemetry_interval", "noisy_steal", "vus", "rampup", "duration", "mode", "retry", "repeat"}
	if got := fields(t, tp.Validate()); !slices.Equal(got, want) {
		t.Errorf("TPC-C problems in %v; want %v", got, want)
	}

	d, err := experiment.ProfileConfig("quick", 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.Target, d.Results = dir, dir
	if err := d.Validate(); err != nil {
		t.Errorf("the quick profile on a directory: %v", err)
	}
	d.Points = append(d.Points, fio.Spec{Name: "bad", BS: 1000, RW: "sideways", RWMixRead: 101, IODepth: 0, Jobs: 300, RateIOPS: -1})
	d.Settings.Duration, d.Settings.IOEngine, d.TargetOptions.Size, d.Target = 0, "spdk", 1000, "/x;y"
	want = []string{"target", "rw", "bs", "rwmix", "iodepth", "jobs", "rate_iops", "duration", "size", "ioengine"}
	if got := fields(t, d.Validate()); !slices.Equal(got, want) {
		t.Errorf("disk problems in %v; want %v", got, want)
	}

	b := experiment.NewBackupConfig()
	b.DSN, b.Target, b.Results = "postgres://u@127.0.0.1:1/db", filepath.Join(dir, "backups"), dir
	if err := b.Validate(); err != nil {
		t.Errorf("the backup defaults with a DSN and a target: %v", err)
	}
	b.Target, b.Cycles, b.Spacing, b.Jobs, b.StartAt, b.Repeat = file, 1001, -time.Second, 0, time.Now().Add(48*time.Hour), 1001
	want = []string{"target", "cycles", "interval", "jobs", "start_at", "repeat"}
	if got := fields(t, b.Validate()); !slices.Equal(got, want) {
		t.Errorf("backup problems in %v; want %v", got, want)
	}

	m := experiment.MonitorConfig{Results: dir, DSN: "ftp://x", Duration: -1, Telemetry: experiment.Telemetry{
		Nodes: []telemetry.Node{{Name: "a", URL: "http://127.0.0.1:9/metrics"}, {Name: "a", URL: "http://127.0.0.1:9/metrics"}}}}
	want = []string{"dsn", "duration", "telemetry_interval", "telemetry_interval", "node_exporter"}
	if got := fields(t, m.Validate()); !slices.Equal(got, want) {
		t.Errorf("monitor problems in %v; want %v", got, want)
	}

	du := experiment.DurabilityConfig{DSN: "postgres://u@127.0.0.1:1/db", Managed: dir, Engine: "sqlite", Cycles: 0, VUs: 10001, Rate: -1,
		RunBeforeFault: 0, RecoverTimeout: 0, Fault: "kill", FaultCommand: "true", Mode: "x", Warehouses: 0, Results: dir}
	want = []string{"managed", "engine", "cycles", "vus", "rate", "run_before_fault", "recover_timeout", "fault_command", "mode", "warehouses"}
	if got := fields(t, du.Validate()); !slices.Equal(got, want) {
		t.Errorf("durability problems in %v; want %v", got, want)
	}
}

// A problem shows its value as the user writes it (a size in binary units,
// a duration in Go's form), cut to MaxQuoted characters, and names other
// fields the front end's way.
func TestProblemText(t *testing.T) {
	d, err := experiment.ProfileConfig("quick", 0, 0, 100<<10)
	if err != nil {
		t.Fatal(err)
	}
	d.Target, d.Results = t.TempDir(), t.TempDir()
	if got := d.Validate().Error(); got != "size 100KiB is too small; give at least 1MiB" {
		t.Errorf("size problem %q", got)
	}
	tp := experiment.NewTPCCConfig()
	tp.DSN, tp.Results, tp.Mode = "postgres://u@127.0.0.1:1/db", t.TempDir(), strings.Repeat("x", 500)
	ps := experiment.Problems(tp.Validate())
	if len(ps) != 1 || len([]rune(ps[0].Value)) != experiment.MaxQuoted || !strings.HasSuffix(ps[0].Value, "…") {
		t.Errorf("problems %v; want the mode's value cut to %d characters", ps, experiment.MaxQuoted)
	}
	du := experiment.DurabilityConfig{DSN: "postgres://u@127.0.0.1:1/db", Cycles: 1, VUs: 1, RunBeforeFault: time.Second,
		RecoverTimeout: time.Second, Fault: "kill", FaultCommand: "true", Results: t.TempDir()}
	ps = experiment.Problems(du.Validate())
	flag := func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }
	if len(ps) != 1 || ps[0].Render(flag) != "--fault-command is only used with --fault command (got --fault kill)" {
		t.Errorf("problems %v; want --fault-command's, naming --fault", ps)
	}
}

// A run refused for bad input leaves nothing in the store: no store at
// all, since Validate comes before it is opened.
func TestRefusedRunRecordsNothing(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	tp := experiment.NewTPCCConfig()
	tp.DSN, tp.Results, tp.VUs = "postgres://u@127.0.0.1:1/db", dir, nil
	d, _ := experiment.ProfileConfig("quick", 0, 0, 0)
	d.Target, d.Results, d.Repeat = dir, dir, 0
	b := experiment.NewBackupConfig()
	b.DSN, b.Target, b.Results, b.Cycles = "postgres://u@127.0.0.1:1/db", filepath.Join(dir, "b"), dir, 0
	du := experiment.DurabilityConfig{DSN: "postgres://u@127.0.0.1:1/db", Fault: "kill", Results: dir}
	m := experiment.MonitorConfig{Results: dir, Target: dir}
	for name, run := range map[string]func() error{
		"tpcc":       func() error { _, err := experiment.RunTPCC(ctx, tp, experiment.Nop{}); return err },
		"disk":       func() error { _, err := experiment.RunDisk(ctx, d, experiment.Nop{}); return err },
		"backup":     func() error { _, err := experiment.RunBackup(ctx, b, experiment.Nop{}); return err },
		"durability": func() error { _, err := experiment.RunDurability(ctx, du, experiment.Nop{}); return err },
		"monitor":    func() error { _, err := experiment.RunMonitor(ctx, m, experiment.Nop{}); return err },
	} {
		err := run()
		if experiment.OutcomeOf(err) != experiment.BadInput || len(experiment.Problems(err)) == 0 {
			t.Errorf("%s: %v (%s); want its problems, bad input", name, err, experiment.OutcomeOf(err))
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the results directory holds %v (%v); want nothing", entries, err)
	}
}

// Every outcome a front end maps comes from one classification.
func TestOutcomeOf(t *testing.T) {
	wrapped := func(err error) error { return errors.Join(errors.New("while running"), err) }
	for err, want := range map[error]experiment.Outcome{
		nil:                           experiment.Succeeded,
		errors.New("the server died"): experiment.Failed,
		wrapped(experiment.Invalid(errors.New("bad"))): experiment.BadInput,
		&experiment.Breached{RunID: "r"}:               experiment.ThresholdsBreached,
		wrapped(&experiment.Interrupted{RunID: "r"}):   experiment.InterruptedRun,
		&experiment.Verdict{RunID: "r", Msg: "lost"}:   experiment.VerdictFailed,
	} {
		if got := experiment.OutcomeOf(err); got != want {
			t.Errorf("OutcomeOf(%v) = %s; want %s", err, got, want)
		}
	}
}

// A rate its pool of VUs could never serve is valid but warned about, with
// the arithmetic; one within the pool's reach is not.
func TestRateBeyondPoolWarns(t *testing.T) {
	c := experiment.NewTPCCConfig()
	c.DSN, c.VUs, c.Rates = "postgres://u@127.0.0.1:1/db", []int{2}, []float64{60000, 900000}
	if err := c.Validate(); err != nil {
		t.Fatalf("a rate beyond the pool is refused: %v", err)
	}
	w := c.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "900,000 transactions a minute is more than 2 VUs can serve: 7,500 a second each, one every 133µs") ||
		!strings.Contains(w[0], "at most 2 x 60 s / 200µs = 600,000 a minute") {
		t.Errorf("warnings %q", w)
	}
	c.Rates = []float64{60000, 600000}
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("a rate the pool can reach warns: %q", w)
	}
}
