package experiment_test

// What a backup run measures, stores and leaves behind, tested where
// RunBackup is: these were the CLI's TestBackupRun and TestBackupRunRepeat.
// internal/cli keeps `backup run`'s flags, its TIERBENCH_DSN, its document's
// keys and its exit codes (TestBackupRunJSON, TestBackupRunRefuses).

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/backup"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/report"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

type backupPhaseDoc struct {
	Cycle    int                `json:"cycle"`
	Phase    string             `json:"phase"`
	Method   string             `json:"method"`
	Seconds  float64            `json:"seconds"`
	Bytes    int64              `json:"bytes"`
	MBps     float64            `json:"mbps"`
	Verified bool               `json:"verified"`
	Host     map[string]float64 `json:"host"`
}

type backupRunDoc struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Cycles []struct {
		Cycle   int             `json:"cycle"`
		Backup  *backupPhaseDoc `json:"backup"`
		Restore *backupPhaseDoc `json:"restore"`
	} `json:"cycles"`
}

// A managed server with a one-warehouse schema, backed up and restored once
// physically (its data directory found from the server) and once logically
// (the backup kept): both phases complete, the restore is verified, and
// the store holds the two steps the report reads.
func TestRunBackup(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := pgtest.TempDir(t)
	info := tpcctest.Postgres(t, ctx, 1)
	dataDir := info.DataDir
	res := filepath.Join(base, "results")
	password := strings.Split(strings.TrimPrefix(info.DSN, "postgres://tierbench:"), "@")[0]

	for _, tc := range []struct {
		name    string
		cfg     experiment.BackupConfig
		method  string
		restore string
	}{
		{name: "physical", method: "pg_basebackup", restore: "pg_basebackup"},
		{name: "logical", cfg: experiment.BackupConfig{Logical: true, Jobs: 2, Keep: true, DataDir: dataDir},
			method: "pg_dump", restore: "pg_restore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := filepath.Join(base, "backups-"+tc.name)
			cfg := tc.cfg
			cfg.Results, cfg.Telemetry = res, experiment.DefaultTelemetry
			cfg.DSN, cfg.Target, cfg.Cycles, cfg.Verify, cfg.Repeat = info.DSN, target, 1, true, 1
			if cfg.Jobs == 0 {
				cfg.Jobs = 2 // the command line's default here: one a core
			}
			start := time.Now()
			result, err := experiment.RunBackup(ctx, cfg, experiment.Nop{})
			if err != nil {
				t.Fatalf("backup run: %v", err)
			}
			t.Logf("backup run, 1 cycle (%s): %v", tc.name, time.Since(start).Round(time.Millisecond))
			var d backupRunDoc
			out := asDoc(t, result, &d)
			if d.Status != "complete" || len(d.Cycles) != 1 || d.Cycles[0].Cycle != 1 || d.Cycles[0].Backup == nil || d.Cycles[0].Restore == nil {
				t.Fatalf("backup run: %s", out)
			}
			b, r := d.Cycles[0].Backup, d.Cycles[0].Restore
			for _, p := range []struct {
				doc           *backupPhaseDoc
				phase, method string
			}{{b, "backup", tc.method}, {r, "restore", tc.restore}} {
				if p.doc.Cycle != 1 || p.doc.Phase != p.phase || p.doc.Method != p.method || p.doc.Seconds <= 0 ||
					p.doc.Bytes < 10<<20 || p.doc.MBps <= 0 || p.doc.Host == nil {
					t.Errorf("%s phase: %+v", p.phase, p.doc)
				}
			}
			if !r.Verified || b.Verified {
				t.Errorf("verified: backup %v, restore %v; want the restore verified", b.Verified, r.Verified)
			}
			t.Logf("%s: backup %d bytes in %.2fs (%.0f MB/s); restore %.2fs (%.0f MB/s)", tc.name, b.Bytes, b.Seconds, b.MBps, r.Seconds, r.MBps)
			if strings.Contains(out, password) {
				t.Error("the run's document shows the password")
			}

			// The store: a run of kind backup with two steps, as the report reads them.
			run, steps := storedRun(t, res, d.RunID)
			if run.Kind != "backup" || run.Status != "complete" || len(steps) != 2 {
				t.Fatalf("stored run: %+v with %d steps", run, len(steps))
			}
			if strings.Contains(string(run.Params), "tierbench:") && !strings.Contains(string(run.Params), "xxxxx") {
				t.Errorf("params keep the password: %s", run.Params)
			}
			for i, want := range []string{"backup 1", "restore 1"} {
				st := steps[i]
				var m backupPhaseDoc
				if err := json.Unmarshal(st.Metrics, &m); err != nil {
					t.Fatal(err)
				}
				if st.Index != i || st.Name != want || m.Phase != strings.Fields(want)[0] || m.MBps <= 0 {
					t.Errorf("step %d: %+v %+v", i, st, m)
				}
			}

			// What is left in the target: nothing, or the kept backup.
			if tc.name == "physical" {
				if _, err := os.Stat(target); !os.IsNotExist(err) {
					t.Errorf("the target tierbench created is still there: %v", err)
				}
			} else {
				for _, name := range []string{"cycle-1", backup.MarkerFile} {
					if _, err := os.Stat(filepath.Join(target, name)); err != nil {
						t.Errorf("Keep: %v", err)
					}
				}
				if _, err := os.Stat(filepath.Join(target, "restore-1")); !os.IsNotExist(err) {
					t.Errorf("restored copy kept: %v", err)
				}
			}
		})
	}

	// The report has its backup section.
	htmlPath := filepath.Join(base, "report.html")
	writeReport(t, res, report.Options{Out: htmlPath})
	if html, _ := os.ReadFile(htmlPath); !strings.Contains(string(html), `<section id="backup">`) {
		t.Error("the report has no backup section")
	}
}

// summaryDoc is a stats.Summary as the document gives it.
type summaryDoc struct {
	Mean   float64  `json:"mean"`
	Stddev float64  `json:"stddev"`
	N      int      `json:"n"`
	Low    *float64 `json:"ci95_low"`
	High   *float64 `json:"ci95_high"`
}

// One cycle repeated twice runs two cycles, numbered 1 and 2 and stored as
// such, and the document's stats summarise each phase kind over both: n =
// 2, the mean of the two cycles' figures, an interval around it, and the
// telemetry's figures beside seconds and MB/s. Logical, on the shared
// server: no server of its own to start, and the cheapest cycle there is.
func TestRunBackupRepeat(t *testing.T) {
	t.Parallel()
	dsn := tpcctest.Database(t, 1)
	base := pgtest.TempDir(t)
	res := filepath.Join(base, "results")
	start := time.Now()
	// Sampling at 200ms gives a sub-second phase samples of its own, where
	// the default 1s would wait out a sample after each phase.
	result, err := experiment.RunBackup(context.Background(), experiment.BackupConfig{
		Record: experiment.Record{Results: res, Telemetry: experiment.Telemetry{Interval: 200 * time.Millisecond, BlockTrace: true}},
		DSN:    dsn, Target: filepath.Join(base, "backups"), Logical: true, Jobs: 2, Verify: true, Cycles: 1, Repeat: 2,
	}, experiment.Nop{})
	if err != nil {
		t.Fatalf("backup run, repeated: %v", err)
	}
	t.Logf("backup run, 1 cycle repeated twice: %v", time.Since(start).Round(time.Millisecond))
	var d struct {
		backupRunDoc
		Repeat int                              `json:"repeat"`
		Stats  map[string]map[string]summaryDoc `json:"stats"`
	}
	out := asDoc(t, result, &d)
	if d.Status != "complete" || d.Repeat != 2 || len(d.Cycles) != 2 {
		t.Fatalf("want 2 complete cycles (1 × 2): %s", out)
	}
	phases := map[string][]*backupPhaseDoc{}
	for i, c := range d.Cycles {
		if c.Cycle != i+1 || c.Backup == nil || c.Restore == nil || c.Backup.Cycle != i+1 || c.Restore.Cycle != i+1 || !c.Restore.Verified {
			t.Fatalf("cycle %d: %s", i+1, out)
		}
		phases["backup"] = append(phases["backup"], c.Backup)
		phases["restore"] = append(phases["restore"], c.Restore)
	}
	if len(d.Stats) != 2 {
		t.Errorf("stats for %d phase kinds; want backup and restore: %s", len(d.Stats), out)
	}
	for kind, ps := range phases {
		for figure, of := range map[string]func(*backupPhaseDoc) float64{
			"seconds": func(p *backupPhaseDoc) float64 { return p.Seconds },
			"mbps":    func(p *backupPhaseDoc) float64 { return p.MBps },
		} {
			s, ok := d.Stats[kind][figure]
			a, b := of(ps[0]), of(ps[1])
			mean, sd := (a+b)/2, math.Abs(a-b)/math.Sqrt2 // n = 2: the sample standard deviation is |a − b|/√2
			if !ok || s.N != 2 || math.Abs(s.Mean-mean) > 1e-9*mean || math.Abs(s.Stddev-sd) > 1e-9*mean ||
				s.Low == nil || s.High == nil || !(*s.Low <= s.Mean && s.Mean <= *s.High) {
				t.Errorf("stats %s %s = %+v (found %v); want n 2, mean %v, stddev %v, within its interval", kind, figure, s, ok, mean, sd)
			}
		}
		if s, ok := d.Stats[kind]["host.cpu_user_pct"]; !ok || s.N != 2 {
			t.Errorf("stats %s: no telemetry over both cycles (%+v, %v): %s", kind, s, ok, out)
		}
	}

	// The store keeps every cycle's phases under their cycle numbers, and
	// the repetitions among the parameters.
	run, steps := storedRun(t, res, d.RunID)
	var params struct {
		Cycles int `json:"cycles"`
		Repeat int `json:"repeat"`
	}
	if err := json.Unmarshal(run.Params, &params); err != nil {
		t.Fatal(err)
	}
	if params.Cycles != 1 || params.Repeat != 2 {
		t.Errorf("stored params: cycles %d, repeat %d; want 1 and 2", params.Cycles, params.Repeat)
	}
	var names []string
	for i, st := range steps {
		if st.Index != i {
			t.Errorf("step %d has index %d", i, st.Index)
		}
		names = append(names, st.Name)
	}
	if got := strings.Join(names, ", "); got != "backup 1, restore 1, backup 2, restore 2" {
		t.Errorf("stored steps: %s", got)
	}
}
