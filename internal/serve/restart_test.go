package serve_test

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/results"
)

// process is serve run as its own process (this test binary as a helper,
// running the command line), on a fixed address and results directory.
type process struct {
	cmd *exec.Cmd
	out *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startProcess(t *testing.T, addr, dir string) *process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "serve", "--listen", addr, "--results", dir)
	cmd.Env = append(os.Environ(), "TIERBENCH_SERVE_HELPER=1")
	p := &process{cmd: cmd, out: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/api/v1/version")
		if err == nil {
			resp.Body.Close()
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not answer on %s: %v\n%s", addr, err, p.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Killed with SIGKILL while one run goes and another waits, serve comes
// back with the first interrupted (its finished step kept) and runs the
// second. SIGTERM then interrupts the running one, which keeps what it
// measured, and serve exits 0.
func TestServeKilledAndRestarted(t *testing.T) {
	t.Parallel()
	dsn := tpccDSN(t)
	addr, dir := freeAddr(t), t.TempDir()
	p := startProcess(t, addr, dir)
	s := &testServer{url: "http://" + addr, results: dir}
	first := s.postTPCC(t, dsn, []int{1, 1}, "2s")
	second := s.postTPCC(t, dsn, []int{1}, "1s")
	s.follow(t, first, "", func(e sseEvent) bool { return e.Name == "result" }) // its first step is stored
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()

	startProcess(t, addr, dir)
	if d := doneOf(t, s.follow(t, first, "", nil)); d["status"] != results.StatusInterrupted {
		t.Errorf("the killed run after a restart: %v", d)
	}
	if d := doneOf(t, s.follow(t, second, "", nil)); d["status"] != results.StatusComplete {
		t.Errorf("the queued run after a restart: %v", d)
	}
	var a results.Shown
	if s.do(t, "GET", "/api/v1/runs/"+first, nil, &a); a.Run.Status != results.StatusInterrupted || len(a.Steps) != 1 {
		t.Errorf("the killed run is %s with %d steps; want interrupted with 1", a.Run.Status, len(a.Steps))
	}
	info, err := os.Stat(dir + "/serve-queue.json")
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the queue file: %v %v; want mode 0600", info, err)
	}
}

// SIGTERM interrupts the running run, which keeps its finished steps and
// the one it cut short, and serve exits 0, leaving the queued run queued
// for the next serve.
func TestServeTerminated(t *testing.T) {
	t.Parallel()
	dsn := tpccDSN(t)
	addr, dir := freeAddr(t), t.TempDir()
	p := startProcess(t, addr, dir)
	s := &testServer{url: "http://" + addr, results: dir}
	r, q := s.postTPCC(t, dsn, []int{1, 1}, "3s"), s.postTPCC(t, dsn, []int{1}, "1s")
	// The first step's result, then a measured second of the next.
	finished := false
	s.follow(t, r, "", func(e sseEvent) bool {
		finished = finished || e.Name == "result"
		return finished && e.Name == "tick" && strings.Contains(e.Data, `"phase":"measure"`)
	})
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, p.out)
	}
	store, err := results.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	run, err := store.Show(t.Context(), r)
	if err != nil || run.Run.Status != results.StatusInterrupted || len(run.Steps) != 2 ||
		bytes.Contains(run.Steps[0].Metrics, []byte(`"interrupted"`)) || !bytes.Contains(run.Steps[1].Metrics, []byte(`"interrupted":true`)) {
		t.Errorf("the run SIGTERM stopped: %+v with %d steps (%v); want interrupted with the finished step and the one cut short, marked", run.Run, len(run.Steps), err)
	}
	data, _ := os.ReadFile(dir + "/serve-queue.json")
	if !strings.Contains(string(data), q) || strings.Contains(string(data), r) {
		t.Errorf("the queue file after SIGTERM:\n%s\nwant %s queued and %s gone", data, q, r)
	}
}
