package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/cli"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/serve"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// TestMain runs the tests, or, as a helper process of one of them, the
// command line (TIERBENCH_SERVE_HELPER=1: its arguments after "--"), which
// a test can kill as it would kill tierbench.
func TestMain(m *testing.M) {
	if os.Getenv("TIERBENCH_SERVE_HELPER") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		args := os.Args[slices.Index(os.Args, "--")+1:]
		code := cli.Execute(ctx, args, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	pgtest.Main(m)
}

// tpccDSN is the DSN of a 1-warehouse TPC-C database of the test's own
// (a copy of a template built once).
func tpccDSN(t *testing.T) string { t.Helper(); return tpcctest.Database(t, 1) }

// tpchDSN is a database of its own with an SF 0.01 TPC-H build.
func tpchDSN(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	db, err := experiment.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = experiment.BuildTPCH(ctx, db, experiment.TPCHBuildConfig{Scale: 0.01, BuildVUs: 2}, experiment.Nop{})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// testServer is a serve running in this process on a free port.
type testServer struct {
	url, results, token string
	stop                func() error
}

func startServe(t *testing.T, o serve.Options) *testServer {
	t.Helper()
	if o.Results == "" {
		o.Results = t.TempDir()
	}
	o.Listen = "127.0.0.1:0"
	srv, err := serve.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return &testServer{url: "http://" + ln.Addr().String(), results: o.Results, token: o.Token, stop: stop}
}

// do sends a request with the server's token (if any) and decodes a JSON
// answer into out (nil: not decoded); it returns the status and the body.
func (s *testServer) do(t *testing.T, method, path string, body any, out any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	resp := s.send(t, context.Background(), method, path, rd, nil)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, b)
		}
	}
	return resp.StatusCode, string(b)
}

// postTPCC posts a TPC-C run without ramp-up and returns its id.
func (s *testServer) postTPCC(t *testing.T, dsn string, vus []int, duration string) string {
	t.Helper()
	var p struct{ ID string }
	if code, body := s.do(t, "POST", "/api/v1/runs", map[string]any{"kind": "tpcc", "dsn": dsn, "vus": vus, "rampup": "0s",
		"duration": duration}, &p); code != 202 {
		t.Fatalf("POST: %d %s", code, body)
	}
	return p.ID
}

// postTPCCAt posts an open-loop TPC-C run without ramp-up, one step per
// rate (transactions a minute, constant arrivals) served by one VU, and
// returns its id: a run that exercises the server at a few % of a core.
func (s *testServer) postTPCCAt(t *testing.T, dsn string, rates []float64, duration string) string {
	t.Helper()
	var p struct{ ID string }
	if code, body := s.do(t, "POST", "/api/v1/runs", map[string]any{"kind": "tpcc", "dsn": dsn, "vus": []int{1}, "rate": rates,
		"arrival": "constant", "late_after": "1s", "rampup": "0s", "duration": duration}, &p); code != 202 {
		t.Fatalf("POST: %d %s", code, body)
	}
	return p.ID
}

// send sends a request with the server's token (if any) and the header's
// name/value pairs.
func (s *testServer) send(t *testing.T, ctx context.Context, method, path string, body io.Reader, header []string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, s.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// sseEvent is one event of a stream.
type sseEvent struct {
	ID   string
	Name string
	Data string
}

// follow reads a run's event stream from after lastID until its done event
// (or until stop says so), and returns the events.
func (s *testServer) follow(t *testing.T, id, lastID string, stop func(sseEvent) bool) []sseEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var header []string
	if lastID != "" {
		header = []string{"Last-Event-ID", lastID}
	}
	resp := s.send(t, ctx, http.MethodGet, "/api/v1/runs/"+id+"/events", nil, header)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("events of %s: %d %s", id, resp.StatusCode, ct)
	}
	var evs []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name == "" {
				continue
			}
			evs = append(evs, cur)
			if cur.Name == "done" || stop != nil && stop(cur) {
				return evs
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.Name = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.Data = line[6:]
		}
	}
	t.Fatalf("the event stream of %s ended without done after %d events: %v", id, len(evs), sc.Err())
	return nil
}

// done decodes a done event.
func doneOf(t *testing.T, evs []sseEvent) map[string]any {
	t.Helper()
	last := evs[len(evs)-1]
	var d map[string]any
	if last.Name != "done" || json.Unmarshal([]byte(last.Data), &d) != nil {
		t.Fatalf("the last event is %s %s", last.Name, last.Data)
	}
	return d
}
