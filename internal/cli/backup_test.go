package cli_test

import (
	"context"
	"encoding/json"
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
