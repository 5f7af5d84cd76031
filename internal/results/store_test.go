package results

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "results")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func TestStoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, dir := openTemp(t)
	if want := filepath.Join(dir, FileName); s.Path() != want {
		t.Errorf("Path() = %s; want %s", s.Path(), want)
	}
	type params struct {
		VUs []int `json:"vus"`
	}
	r, err := s.CreateRun(ctx, "tpcc", "paper-1", params{VUs: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusRunning || r.PID != os.Getpid() || r.Kind != "tpcc" || r.Group != "paper-1" {
		t.Errorf("CreateRun = %+v", r)
	}
	if len(r.ID) != len("20261121-034512-3f9a") || r.ID[8] != '-' || r.ID[15] != '-' {
		t.Errorf("run id %q is not of the form 20261121-034512-3f9a", r.ID)
	}
	t0 := time.Date(2026, 11, 21, 3, 45, 12, 123456789, time.UTC)
	for i, vus := range []int{1, 2} {
		st := Step{
			RunID:        r.ID,
			Index:        i,
			Name:         fmt.Sprintf("vus=%d", vus),
			StartedAt:    t0.Add(time.Duration(i) * time.Minute),
			MeasureStart: t0.Add(time.Duration(i)*time.Minute + 10*time.Second),
			MeasureEnd:   t0.Add(time.Duration(i)*time.Minute + 40*time.Second),
			Metrics:      json.RawMessage(fmt.Sprintf(`{"vus":%d,"nopm":%d}`, vus, 100*vus)),
		}
		if err := s.AddStep(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddStep(ctx, Step{RunID: r.ID, Index: 0, Metrics: json.RawMessage(`{}`)}); err == nil {
		t.Error("AddStep of an existing index succeeded")
	}
	if err := s.AddStep(ctx, Step{RunID: r.ID, Index: 5, Metrics: json.RawMessage(`{`)}); err == nil {
		t.Error("AddStep with invalid JSON succeeded")
	}
	if err := s.AddStep(ctx, Step{RunID: "nope", Index: 0}); !errors.Is(err, ErrNotFound) {
		t.Errorf("AddStep of an unknown run: %v; want ErrNotFound", err)
	}
	var pts []Point
	for i := range 3000 {
		pts = append(pts, Point{Name: "tpm", Step: i % 2, T: t0.Add(time.Duration(i) * time.Second), Value: float64(i)})
	}
	pts = append(pts, Point{Name: "cpu_idle_pct", Step: NoStep, T: t0, Value: math.NaN()})
	if err := s.AddPoints(ctx, r.ID, pts); err != nil {
		t.Fatal(err)
	}
	if err := s.AddHistogram(ctx, r.ID, 1, "new_order", []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddHistogram(ctx, r.ID, 1, "new_order", []byte{4, 5}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, r.ID, StatusComplete, map[string]int{"best_nopm": 200}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, r.ID, "done", nil); err == nil {
		t.Error("FinishRun with status done succeeded")
	}
	if err := s.FinishRun(ctx, "nope", StatusComplete, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishRun of an unknown run: %v; want ErrNotFound", err)
	}

	got, err := s.Run(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusComplete || got.FinishedAt == nil || string(got.Summary) != `{"best_nopm":200}` ||
		string(got.Params) != `{"vus":[1,2]}` || !got.StartedAt.Equal(r.StartedAt) || got.Host != r.Host {
		t.Errorf("Run = %+v", got)
	}
	steps, err := s.Steps(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[1].Name != "vus=2" || string(steps[1].Metrics) != `{"vus":2,"nopm":200}` ||
		!steps[1].MeasureStart.Equal(t0.Add(70*time.Second).Truncate(time.Microsecond)) || steps[0].RunID != r.ID {
		t.Errorf("Steps = %+v", steps)
	}
	names, err := s.SeriesNames(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "cpu_idle_pct,tpm" {
		t.Errorf("SeriesNames = %v", names)
	}
	all, err := s.Points(ctx, r.ID, "tpm", AllSteps)
	if err != nil {
		t.Fatal(err)
	}
	one, err := s.Points(ctx, r.ID, "tpm", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3000 || len(one) != 1500 || one[0].Step != 1 || one[0].Value != 1 ||
		!one[0].T.Equal(t0.Add(time.Second).Truncate(time.Microsecond)) || one[0].Name != "tpm" {
		t.Errorf("Points: %d all, %d of step 1, first %+v", len(all), len(one), one[0])
	}
	cpu, err := s.Points(ctx, r.ID, "cpu_idle_pct", NoStep)
	if err != nil || len(cpu) != 1 || !math.IsNaN(cpu[0].Value) {
		t.Errorf("NaN point = %+v, %v", cpu, err)
	}
	h, err := s.Histogram(ctx, r.ID, 1, "new_order")
	if err != nil || string(h) != "\x04\x05" {
		t.Errorf("Histogram = %v, %v", h, err)
	}
	if _, err := s.Histogram(ctx, r.ID, 0, "new_order"); !errors.Is(err, ErrNotFound) {
		t.Errorf("absent Histogram: %v; want ErrNotFound", err)
	}
	if _, err := s.Steps(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Steps of an unknown run: %v; want ErrNotFound", err)
	}
}

// insertRun writes a run row directly, to control its id, time, host and PID.
func insertRun(t *testing.T, s *Store, id, status, host string, pid int, started time.Time) {
	t.Helper()
	_, err := s.db.Exec(`INSERT INTO runs (id, kind, status, started_us, grp, host, pid) VALUES (?, 'disk', ?, ?, '', ?, ?)`,
		id, status, started.UnixMicro(), host, pid)
	if err != nil {
		t.Fatal(err)
	}
}

func TestStoreRunsOrderAndLookup(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	if _, err := s.Run(ctx, "latest"); !errors.Is(err, ErrNotFound) {
		t.Errorf("latest of an empty store: %v; want ErrNotFound", err)
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	insertRun(t, s, "20260102-030405-aaaa", StatusComplete, s.host, 1, base)
	insertRun(t, s, "20260102-030505-bbbb", StatusComplete, s.host, 1, base.Add(time.Minute))
	insertRun(t, s, "20260102-030505-bbcc", StatusComplete, s.host, 1, base.Add(time.Minute+time.Millisecond))
	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, " ") != "20260102-030505-bbcc 20260102-030505-bbbb 20260102-030405-aaaa" {
		t.Errorf("Runs order = %v; want newest first", ids)
	}
	for _, tc := range []struct{ q, want string }{
		{"latest", "20260102-030505-bbcc"},
		{"20260102-0304", "20260102-030405-aaaa"},
		{"20260102-030505-bbb", "20260102-030505-bbbb"},
		{"20260102-030505-bbbb", "20260102-030505-bbbb"},
	} {
		r, err := s.Run(ctx, tc.q)
		if err != nil || r.ID != tc.want {
			t.Errorf("Run(%q) = %s, %v; want %s", tc.q, r.ID, err, tc.want)
		}
	}
	if _, err := s.Run(ctx, "20260102-0305"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("ambiguous prefix: %v; want ErrAmbiguous", err)
	}
	for _, q := range []string{"2027", "%", "_", ""} {
		if _, err := s.Run(ctx, q); !errors.Is(err, ErrNotFound) {
			t.Errorf("Run(%q): %v; want ErrNotFound", q, err)
		}
	}
}

func TestStoreDeadPIDReadsIncomplete(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no `true` to get a dead PID from: %v", err)
	}
	dead := cmd.ProcessState.Pid()
	now := time.Now()
	insertRun(t, s, "20260101-000000-0001", StatusRunning, s.host, dead, now)
	insertRun(t, s, "20260101-000000-0002", StatusRunning, s.host, os.Getpid(), now.Add(time.Second))
	insertRun(t, s, "20260101-000000-0003", StatusRunning, "elsewhere", dead, now.Add(2*time.Second))
	want := map[string]string{
		"20260101-000000-0001": StatusIncomplete,
		"20260101-000000-0002": StatusRunning,
		"20260101-000000-0003": StatusRunning, // another host's PID says nothing here
	}
	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Status != want[r.ID] {
			t.Errorf("run %s reads %s; want %s", r.ID, r.Status, want[r.ID])
		}
		one, err := s.Run(ctx, r.ID)
		if err != nil || one.Status != want[r.ID] {
			t.Errorf("Run(%s) reads %s, %v; want %s", r.ID, one.Status, err, want[r.ID])
		}
	}
	// Reading does not rewrite the row.
	var status string
	if err := s.db.QueryRow(`SELECT status FROM runs WHERE id = '20260101-000000-0001'`).Scan(&status); err != nil || status != StatusRunning {
		t.Errorf("stored status = %q, %v; want running", status, err)
	}
}

func TestStoreSeriesWriterConcurrent(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	r, err := s.CreateRun(ctx, "tpcc", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	w := s.NewSeriesWriter(r.ID, 5*time.Millisecond)
	const goroutines, each = 16, 500
	var wg sync.WaitGroup
	t0 := time.Now()
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				w.Add(Point{Name: fmt.Sprintf("s%d", g%4), Step: g % 3, T: t0.Add(time.Duration(i) * time.Millisecond), Value: float64(i)})
				if i%100 == 0 {
					time.Sleep(time.Millisecond) // let the ticker flush mid-stream
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
	total := 0
	names, err := s.SeriesNames(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		pts, err := s.Points(ctx, r.ID, n, AllSteps)
		if err != nil {
			t.Fatal(err)
		}
		total += len(pts)
	}
	if len(names) != 4 || total != goroutines*each {
		t.Errorf("stored %d points in series %v; want %d in 4", total, names, goroutines*each)
	}
}

func TestStoreSeriesWriterKeepsPointsOnFailure(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	w := s.NewSeriesWriter("no-such-run", time.Hour)
	w.Add(Point{Name: "x", Step: NoStep, T: time.Now(), Value: 1})
	if err := w.Close(ctx); !errors.Is(err, ErrNotFound) {
		t.Errorf("Close with an unknown run: %v; want ErrNotFound", err)
	}
	w.mu.Lock()
	n := len(w.buf)
	w.mu.Unlock()
	if n != 1 {
		t.Errorf("%d points buffered after a failed flush; want 1", n)
	}
}

// A second Store on the same file, with the first still open (as after a
// crash nobody closed), sees every committed write.
func TestStoreSecondOpenSeesCommitted(t *testing.T) {
	ctx := context.Background()
	s, dir := openTemp(t)
	r, err := s.CreateRun(ctx, "tpcc", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddStep(ctx, Step{RunID: r.ID, Index: 0, Name: "vus=1", Metrics: json.RawMessage(`{"nopm":7}`)}); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	steps, err := s2.Steps(ctx, r.ID)
	if err != nil || len(steps) != 1 || string(steps[0].Metrics) != `{"nopm":7}` {
		t.Errorf("second store reads %+v, %v", steps, err)
	}
	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	got, err := ro.Run(ctx, "latest")
	if err != nil || got.ID != r.ID || got.Status != StatusRunning {
		t.Errorf("read-only store reads %+v, %v", got, err)
	}
	if _, err := ro.CreateRun(ctx, "tpcc", "", nil); err == nil {
		t.Error("CreateRun on a read-only store succeeded")
	}
}

func TestStoreOpenReadOnlyCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	if _, err := OpenReadOnly(dir); !errors.Is(err, ErrNoStore) {
		t.Errorf("OpenReadOnly of a missing dir: %v; want ErrNoStore", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("OpenReadOnly created %s", dir)
	}
	empty := t.TempDir()
	if _, err := OpenReadOnly(empty); !errors.Is(err, ErrNoStore) {
		t.Errorf("OpenReadOnly of an empty dir: %v; want ErrNoStore", err)
	}
	if _, err := os.Stat(filepath.Join(empty, FileName)); !os.IsNotExist(err) {
		t.Errorf("OpenReadOnly created the store file")
	}
	// A store file another tierbench has created but not yet written: no
	// store yet, which a reader polling for one waits out.
	if err := os.WriteFile(filepath.Join(empty, FileName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenReadOnly(empty); !errors.Is(err, ErrNoStore) {
		t.Errorf("OpenReadOnly of an empty store file: %v; want ErrNoStore", err)
	}
}

func TestStoreRefusesNewerSchema(t *testing.T) {
	s, dir := openTemp(t)
	if _, err := s.db.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for name, open := range map[string]func(string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		_, err := open(dir)
		if err == nil || !strings.Contains(err.Error(), "newer") {
			t.Errorf("%s of a newer schema: %v; want a refusal", name, err)
		}
	}
}

func TestStorePragmas(t *testing.T) {
	s, _ := openTemp(t)
	var mode string
	var sync, busy int
	if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRow("PRAGMA busy_timeout").Scan(&busy); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" || sync != 2 || busy != 5000 {
		t.Errorf("journal_mode=%s synchronous=%d busy_timeout=%d; want wal, 2 (FULL), 5000", mode, sync, busy)
	}
}

const helperEnv = "TIERBENCH_RESULTS_HELPER_DIR"

// TestHelperProcess is not a test: TestStoreAfterSIGKILL runs the test
// binary again with only this function and helperEnv set, to get a writer
// it can kill.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		return
	}
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(3)
	}
	s, err := Open(dir)
	if err != nil {
		fail(err)
	}
	r, err := s.CreateRun(ctx, "tpcc", "", map[string]any{"vus": []int{1}})
	if err != nil {
		fail(err)
	}
	if os.Getenv(helperLoopEnv) != "" {
		fmt.Println(r.ID)
		writeStepsForever(ctx, s, r.ID, fail)
	}
	now := time.Now()
	if err := s.AddStep(ctx, Step{RunID: r.ID, Index: 0, Name: "vus=1", StartedAt: now, MeasureStart: now, MeasureEnd: now,
		Metrics: json.RawMessage(`{"vus":1,"nopm":42}`)}); err != nil {
		fail(err)
	}
	w := s.NewSeriesWriter(r.ID, time.Hour)
	for i := range 100 {
		w.Add(Point{Name: "tpm", Step: 0, T: now.Add(time.Duration(i) * time.Second), Value: float64(i)})
	}
	if err := w.Flush(ctx); err != nil {
		fail(err)
	}
	fmt.Println(r.ID)
	select {} // wait for SIGKILL, store open and mid-run
}

// startHelper starts TestHelperProcess with env added and returns it with
// the run id it reports on its first line.
func startHelper(t *testing.T, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		lines <- sc.Text()
	}()
	var runID string
	select {
	case runID = <-lines:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("helper did not report a run in a minute")
	}
	if runID == "" {
		killHelper(t, cmd)
		t.Fatal("helper exited without a run id")
	}
	return cmd, runID
}

// killHelper SIGKILLs the helper and reaps it: a zombie's PID still
// answers signal 0.
func killHelper(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

func TestStoreAfterSIGKILL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	cmd, runID := startHelper(t, helperEnv+"="+dir)
	killHelper(t, cmd)

	for name, open := range map[string]func(string) (*Store, error){"OpenReadOnly": OpenReadOnly, "Open": Open} {
		s, err := open(dir)
		if err != nil {
			t.Fatalf("%s after SIGKILL: %v", name, err)
		}
		ctx := context.Background()
		r, err := s.Run(ctx, "latest")
		if err != nil || r.ID != runID || r.Status != StatusIncomplete {
			t.Errorf("%s: run reads %+v, %v; want %s incomplete", name, r, err, runID)
		}
		steps, err := s.Steps(ctx, runID)
		if err != nil || len(steps) != 1 || string(steps[0].Metrics) != `{"vus":1,"nopm":42}` {
			t.Errorf("%s: steps %+v, %v", name, steps, err)
		}
		pts, err := s.Points(ctx, runID, "tpm", 0)
		if err != nil || len(pts) != 100 {
			t.Errorf("%s: %d points, %v; want 100", name, len(pts), err)
		}
		s.Close()
	}
}

// helperLoopEnv makes TestHelperProcess write steps without end, each
// with points and histograms, so the kill lands in the middle of a write.
const helperLoopEnv = "TIERBENCH_RESULTS_HELPER_LOOP"

func writeStepsForever(ctx context.Context, s *Store, runID string, fail func(error)) {
	for i := 0; ; i++ {
		now := time.Now()
		st := Step{RunID: runID, Index: i, Name: fmt.Sprintf("step %d", i), StartedAt: now, MeasureStart: now, MeasureEnd: now,
			Metrics:    json.RawMessage(fmt.Sprintf(`{"step":%d}`, i)),
			Histograms: map[string][]byte{"a": make([]byte, 4096), "b": {byte(i)}}}
		for k := range 200 {
			st.Points = append(st.Points, Point{Name: "tpm", Step: i, T: now.Add(time.Duration(k) * time.Millisecond), Value: float64(k)})
		}
		if err := s.AddStep(ctx, st); err != nil {
			fail(err)
		}
	}
}

// SIGKILL while steps are being written: the store opens and passes
// SQLite's integrity check, and every step there is whole — its histograms
// and points came in its transaction — and they run 0, 1, … without a gap.
func TestStoreKilledMidWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	cmd, runID := startHelper(t, helperEnv+"="+dir, helperLoopEnv+"=1")
	time.Sleep(700 * time.Millisecond) // some steps in, one under way
	killHelper(t, cmd)

	s, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatalf("OpenReadOnly after SIGKILL: %v", err)
	}
	defer s.Close()
	var check string
	if err := s.db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
	ctx := context.Background()
	if r, err := s.Run(ctx, runID); err != nil || r.Status != StatusIncomplete {
		t.Fatalf("run %+v, %v; want incomplete", r, err)
	}
	steps, err := s.Steps(ctx, runID)
	if err != nil || len(steps) == 0 {
		t.Fatalf("%d steps, %v; want some", len(steps), err)
	}
	for i, st := range steps {
		if st.Index != i {
			t.Fatalf("step %d has index %d: a gap", i, st.Index)
		}
		for _, h := range []string{"a", "b"} {
			if data, err := s.Histogram(ctx, runID, i, h); err != nil || len(data) == 0 {
				t.Errorf("step %d: histogram %s: %d bytes, %v", i, h, len(data), err)
			}
		}
		if pts, err := s.Points(ctx, runID, "tpm", i); err != nil || len(pts) != 200 {
			t.Errorf("step %d: %d points, %v; want 200", i, len(pts), err)
		}
	}
	// Nothing of a step that did not commit.
	if pts, err := s.Points(ctx, runID, "tpm", AllSteps); err != nil || len(pts) != 200*len(steps) {
		t.Errorf("%d points in all, %v; want %d", len(pts), err, 200*len(steps))
	}
	t.Logf("%d whole steps after the kill", len(steps))
}

// A step that cannot be stored whole is not stored at all.
func TestStoreAddStepAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	r, err := s.CreateRun(ctx, "disk", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	bad := Step{RunID: r.ID, Index: 0, Name: "p", StartedAt: now, MeasureStart: now, MeasureEnd: now,
		Points:     []Point{{Name: "read.iops", Step: 0, T: now, Value: 1}, {Name: "", Step: 0, T: now, Value: 2}},
		Histograms: map[string][]byte{"read.clat_ns": {1}}}
	if err := s.AddStep(ctx, bad); err == nil {
		t.Fatal("AddStep with a nameless point succeeded")
	}
	if steps, err := s.Steps(ctx, r.ID); err != nil || len(steps) != 0 {
		t.Errorf("steps after a failed AddStep: %v, %v", steps, err)
	}
	if names, err := s.SeriesNames(ctx, r.ID); err != nil || len(names) != 0 {
		t.Errorf("series after a failed AddStep: %v, %v", names, err)
	}
	if _, err := s.Histogram(ctx, r.ID, 0, "read.clat_ns"); !errors.Is(err, ErrNotFound) {
		t.Errorf("histogram after a failed AddStep: %v; want ErrNotFound", err)
	}
	good := bad
	good.Points = bad.Points[:1]
	if err := s.AddStep(ctx, good); err != nil {
		t.Fatal(err)
	}
	if h, err := s.Histogram(ctx, r.ID, 0, "read.clat_ns"); err != nil || len(h) != 1 {
		t.Errorf("histogram: %v, %v", h, err)
	}
	if pts, err := s.Points(ctx, r.ID, "read.iops", 0); err != nil || len(pts) != 1 {
		t.Errorf("points: %v, %v", pts, err)
	}
}

func TestStoreDocuments(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	r, err := s.CreateRun(ctx, "tpcc", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Document(ctx, r.ID, DocEnvironment); !errors.Is(err, ErrNotFound) {
		t.Errorf("Document before SetDocument: %v; want ErrNotFound", err)
	}
	if err := s.SetDocument(ctx, r.ID, DocEnvironment, map[string]int{"cores": 2}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetDocument(ctx, r.ID, DocEnvironment, map[string]int{"cores": 4}); err != nil {
		t.Fatal(err)
	}
	doc, err := s.Document(ctx, r.ID, DocEnvironment)
	if err != nil || string(doc) != `{"cores":4}` {
		t.Errorf("Document = %s, %v; want the replacing document", doc, err)
	}
	if err := s.SetDocument(ctx, "nope", DocCheck, 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetDocument of an unknown run: %v; want ErrNotFound", err)
	}
}

// A store written by a tierbench of schema version 1 is upgraded in place
// and keeps its runs.
func TestStoreUpgradesVersion1(t *testing.T) {
	ctx := context.Background()
	s, dir := openTemp(t)
	r, err := s.CreateRun(ctx, "disk", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TABLE documents", "PRAGMA user_version = 1"} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatalf("OpenReadOnly of a version-1 store: %v", err)
	}
	if _, err := ro.Document(ctx, r.ID, DocCheck); !errors.Is(err, ErrNotFound) {
		t.Errorf("Document of a version-1 store: %v; want ErrNotFound", err)
	}
	ro.Close()
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Run(ctx, r.ID); err != nil {
		t.Errorf("the upgraded store lost run %s: %v", r.ID, err)
	}
	if err := s2.SetDocument(ctx, r.ID, DocCheck, true); err != nil {
		t.Errorf("SetDocument on the upgraded store: %v", err)
	}
}

// A series created by a write that then failed is not remembered: its id
// was rolled back with it and may be given to another series.
func TestStoreKnownSeriesSurviveOnlyCommits(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	r, err := s.CreateRun(ctx, "tpcc", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	known := map[string]int64{}
	bad := []Point{{Name: "a", Step: NoStep, T: now, Value: 1}, {Name: "b", Step: NoStep - 1, T: now, Value: 2}}
	if err := s.addPointsKnown(ctx, r.ID, bad, known); err == nil {
		t.Fatal("a point with an invalid step was accepted")
	}
	if len(known) != 0 {
		t.Errorf("known after a failed write: %v", known)
	}
	for _, name := range []string{"c", "a", "a"} {
		if err := s.addPointsKnown(ctx, r.ID, []Point{{Name: name, Step: NoStep, T: now, Value: 3}}, known); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]int{"a": 2, "c": 1, "b": 0} {
		pts, err := s.Points(ctx, r.ID, name, AllSteps)
		if err != nil && want > 0 {
			t.Fatal(err)
		}
		if len(pts) != want {
			t.Errorf("series %s holds %d points, want %d", name, len(pts), want)
		}
	}
	if len(known) != 2 || known["a"] == known["c"] {
		t.Errorf("known = %v, want a and c with their own ids", known)
	}
}
