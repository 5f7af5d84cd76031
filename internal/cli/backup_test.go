package cli_test

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
	"github.com/tierbench/tierbench/internal/server"
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
// (the DSN from TIERBENCH_DSN, the backup kept): both phases complete, the
// restore is verified, and the store holds the two steps the report reads.
func TestBackupRun(t *testing.T) {
	pgtest.RequireBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := pgtest.TempDir(t)
	dataDir := filepath.Join(base, "data")
	t.Cleanup(func() { server.Stop(context.Background(), dataDir, "immediate") })
	info, err := server.Start(ctx, server.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	buildSchema(t, info.DSN, 1)
	res := filepath.Join(base, "results")

	for _, tc := range []struct {
		name    string
		args    []string
		env     bool
		method  string
		restore string
	}{
		{name: "physical", method: "pg_basebackup", restore: "pg_basebackup"},
		{name: "logical", args: []string{"--logical", "--jobs", "2", "--keep", "--datadir", dataDir}, env: true,
			method: "pg_dump", restore: "pg_restore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := filepath.Join(base, "backups-"+tc.name)
			args := append([]string{"backup", "run", "--json", "--target", target, "--cycles", "1", "--results", res}, tc.args...)
			if tc.env {
				t.Setenv("TIERBENCH_DSN", info.DSN)
			} else {
				args = append(args, "--dsn", info.DSN)
			}
			start := time.Now()
			code, out, errOut := runTierbench(t, args...)
			if code != 0 {
				t.Fatalf("backup run: exit %d: %s", code, errOut)
			}
			t.Logf("backup run --cycles 1 (%s): %v", tc.name, time.Since(start).Round(time.Millisecond))
			var d backupRunDoc
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatalf("backup run --json: %v\n%s", err, out)
			}
			if d.Status != "complete" || len(d.Cycles) != 1 || d.Cycles[0].Cycle != 1 || d.Cycles[0].Backup == nil || d.Cycles[0].Restore == nil {
				t.Fatalf("backup run --json: %s", out)
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
			if strings.Contains(out+errOut, strings.Split(strings.TrimPrefix(info.DSN, "postgres://tierbench:"), "@")[0]) {
				t.Error("the output shows the password")
			}

			// The store: a run of kind backup with two steps, as the report reads them.
			code, out, _ = runTierbench(t, "results", "show", d.RunID, "--results", res, "--json")
			if code != 0 {
				t.Fatalf("results show: exit %d", code)
			}
			var show struct {
				Run struct {
					Kind   string          `json:"kind"`
					Status string          `json:"status"`
					Params json.RawMessage `json:"params"`
				} `json:"run"`
				Steps []struct {
					Index   int            `json:"index"`
					Name    string         `json:"name"`
					Metrics backupPhaseDoc `json:"metrics"`
				} `json:"steps"`
			}
			if err := json.Unmarshal([]byte(out), &show); err != nil {
				t.Fatal(err)
			}
			if show.Run.Kind != "backup" || show.Run.Status != "complete" || len(show.Steps) != 2 {
				t.Fatalf("stored run: %s", out)
			}
			if strings.Contains(string(show.Run.Params), "tierbench:") && !strings.Contains(string(show.Run.Params), "xxxxx") {
				t.Errorf("params keep the password: %s", show.Run.Params)
			}
			for i, want := range []string{"backup 1", "restore 1"} {
				st := show.Steps[i]
				if st.Index != i || st.Name != want || st.Metrics.Phase != strings.Fields(want)[0] || st.Metrics.MBps <= 0 {
					t.Errorf("step %d: %+v", i, st)
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
						t.Errorf("--keep: %v", err)
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
	if code, _, errOut := runTierbench(t, "report", "--results", res, "--out", htmlPath); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	if html, _ := os.ReadFile(htmlPath); !strings.Contains(string(html), `<section id="backup">`) {
		t.Error("the report has no backup section")
	}
}

// summaryDoc is a stats.Summary as --json prints it.
type summaryDoc struct {
	Mean   float64  `json:"mean"`
	Stddev float64  `json:"stddev"`
	N      int      `json:"n"`
	Low    *float64 `json:"ci95_low"`
	High   *float64 `json:"ci95_high"`
}

// --cycles 1 --repeat 2 runs two cycles, numbered 1 and 2 and stored as
// such, and the document's stats summarise each phase kind over both: n =
// 2, the mean of the two cycles' figures, an interval around it, and the
// telemetry's figures beside seconds and MB/s. Logical, on the shared
// server: no server of its own to start, and the cheapest cycle there is.
func TestBackupRunRepeat(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	buildSchema(t, dsn, 1)
	base := pgtest.TempDir(t)
	res := filepath.Join(base, "results")
	start := time.Now()
	// Sampling at 200ms gives a sub-second phase samples of its own, where
	// the default 1s would wait out a sample after each phase.
	code, out, errOut := runTierbench(t, "backup", "run", "--json", "--dsn", dsn, "--target", filepath.Join(base, "backups"), "--logical",
		"--cycles", "1", "--repeat", "2", "--sample-interval", "200ms", "--results", res)
	if code != 0 {
		t.Fatalf("backup run --repeat 2: exit %d: %s", code, errOut)
	}
	t.Logf("backup run --cycles 1 --repeat 2: %v", time.Since(start).Round(time.Millisecond))
	var d struct {
		backupRunDoc
		Repeat int                              `json:"repeat"`
		Stats  map[string]map[string]summaryDoc `json:"stats"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("backup run --json: %v\n%s", err, out)
	}
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
	code, out, _ = runTierbench(t, "results", "show", d.RunID, "--results", res, "--json")
	if code != 0 {
		t.Fatalf("results show: exit %d", code)
	}
	var show struct {
		Run struct {
			Params struct {
				Cycles int `json:"cycles"`
				Repeat int `json:"repeat"`
			} `json:"params"`
		} `json:"run"`
		Steps []struct {
			Index int    `json:"index"`
			Name  string `json:"name"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &show); err != nil {
		t.Fatal(err)
	}
	if p := show.Run.Params; p.Cycles != 1 || p.Repeat != 2 {
		t.Errorf("stored params: cycles %d, repeat %d; want 1 and 2", p.Cycles, p.Repeat)
	}
	var names []string
	for i, st := range show.Steps {
		if st.Index != i {
			t.Errorf("step %d has index %d", i, st.Index)
		}
		names = append(names, st.Name)
	}
	if got := strings.Join(names, ", "); got != "backup 1, restore 1, backup 2, restore 2" {
		t.Errorf("stored steps: %s", got)
	}
}

// Bad input is refused before anything is written: exit 2, one line.
func TestBackupRunRefuses(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	base := pgtest.TempDir(t)
	foreign := filepath.Join(base, "foreign")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(base, "results")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no target", []string{"--dsn", dsn}, "--target"},
		{"foreign target", []string{"--dsn", dsn, "--target", foreign, "--logical", "--verify=false"}, "not empty"},
		{"no cycles", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--cycles", "0"}, "--cycles"},
		{"bad interval", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--interval", "soon"}, "--interval"},
		{"repeat 0", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--repeat", "0"}, "--repeat 0 is out of range"},
		{"repeat -1", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--repeat", "-1"}, "--repeat -1 is out of range"},
		{"back to back", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--repeat", "2", "--back-to-back"}, "a restore needs its backup first"},
		{"negative noisy limit", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--noisy-steal", "-5"}, "--noisy-steal -5 is not a percentage"},
		{"foreign datadir", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--datadir", foreign, "--verify=false"}, "not a tierbench-managed"},
		{"no schema", []string{"--dsn", dsn, "--target", filepath.Join(base, "t"), "--logical"}, "--verify=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"backup", "run", "--results", res}, tc.args...)
			code, out, errOut := runTierbench(t, args...)
			if code != 2 || !strings.HasPrefix(errOut, "tierbench: ") || strings.Count(errOut, "\n") != 1 ||
				!strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line about %s", code, out, errOut, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "notes.txt")); string(b) != "mine" {
		t.Error("the foreign target was touched")
	}
	if entries, _ := os.ReadDir(foreign); len(entries) != 1 {
		t.Errorf("the foreign target has %d entries; want its one file", len(entries))
	}
	for _, p := range []string{filepath.Join(base, "t"), res} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("a refused run made %s", p)
		}
	}
}
