package telemetry

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/freeport"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/testenv"
)

// nodeExporterBin is the Debian package's node_exporter.
const nodeExporterBin = "prometheus-node-exporter"

// needNodeExporter returns the exporter's path: a test without it fails
// under CI=true and is skipped elsewhere.
func needNodeExporter(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath(nodeExporterBin)
	if err != nil {
		path, err = exec.LookPath("node_exporter")
	}
	if err != nil {
		testenv.SkipOrFail(t, "node_exporter is not installed: %v", err)
	}
	return path
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := freeport.Pick(0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// exporter is a real node_exporter on 127.0.0.1.
type exporter struct {
	cmd  *exec.Cmd
	log  *bytes.Buffer
	node Node
	once sync.Once
}

// startExporter starts node_exporter on port and waits until it answers;
// it is killed at the test's end if not before.
func startExporter(t *testing.T, bin, name string, port int, args ...string) *exporter {
	t.Helper()
	e := &exporter{log: &bytes.Buffer{}, node: Node{Name: name, URL: fmt.Sprintf("http://127.0.0.1:%d/metrics", port)}}
	e.cmd = exec.Command(bin, append([]string{fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port)}, args...)...)
	e.cmd.Stdout, e.cmd.Stderr = e.log, e.log
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.kill)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(e.node.URL)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return e
			}
		}
		if time.Now().After(deadline) {
			e.kill()
			t.Fatalf("node_exporter %s does not answer at %s: %v\n%s", name, e.node.URL, err, e.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *exporter) kill() {
	e.once.Do(func() {
		_ = e.cmd.Process.Kill()
		_ = e.cmd.Wait()
	})
}

// warnings collects a session's warnings.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(m string) { w.mu.Lock(); w.msgs = append(w.msgs, m); w.mu.Unlock() }

func (w *warnings) matching(re string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, m := range w.msgs {
		if regexp.MustCompile(re).MatchString(m) {
			out = append(out, m)
		}
	}
	return out
}

// writeFor writes and fsyncs a file in dir for d.
func writeFor(t *testing.T, dir string, d time.Duration) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "io"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := bytes.Repeat([]byte{0x5a}, 256<<10)
	for end := time.Now().Add(d); time.Now().Before(end); {
		if _, err := f.Write(buf); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hostStats(a stored.Aggregate, name string) stored.HostStats {
	for _, h := range a.Hosts {
		if h.Host == name {
			return h
		}
	}
	return stored.HostStats{Host: name}
}

// A session scrapes two real exporters, a and b, beside one that never
// listens (c) and one that never answers (d): CPU shares, device writes
// and a small clock offset for a and b; b killed mid-session is a gap with
// a warning that has the time, and again a warning when it is back; the
// session goes on throughout at its own pace.
func TestSessionNodeExporters(t *testing.T) {
	bin := needNodeExporter(t)
	a := startExporter(t, bin, "a", freePort(t))
	bPort := freePort(t)
	b := startExporter(t, bin, "b", bPort)
	c := Node{Name: "c", URL: fmt.Sprintf("http://127.0.0.1:%d/metrics", freePort(t))}
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts connections, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	d := Node{Name: "d", URL: "http://" + silent.Addr().String() + "/metrics"}

	const every = 250 * time.Millisecond
	var w warnings
	s, err := Start(context.Background(), Config{Interval: every, Nodes: []Node{a.node, b.node, c, d}, Warn: w.add})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	dir := t.TempDir()
	t0 := time.Now()
	writeFor(t, dir, 2*time.Second)
	t1 := time.Now()
	before := s.Samples(t0, t1)
	if len(before) < 5 {
		t.Fatalf("%d samples in %v at %v", len(before), t1.Sub(t0), every)
	}
	// The device under the temporary directory, if it resolves to one.
	leaves := map[string]bool{}
	if res, err := ResolvePath(dir); err == nil {
		for _, l := range res.Leaves {
			leaves[l] = true
		}
	}
	for _, n := range []string{"a", "b"} {
		var writes, leafWrites float64
		for _, x := range before {
			for _, h := range x.Hosts {
				if h.Host != n || !h.Up {
					continue
				}
				sum := h.CPU.IdlePct + h.CPU.IOWaitPct + h.CPU.UserPct + h.CPU.SystemPct + h.CPU.StealPct
				if math.Abs(sum-100) > 0.01 {
					t.Errorf("%s: CPU shares sum to %.3f%%: %+v", n, sum, h.CPU)
				}
				if !h.Clocked || h.ClockOffset.Abs() >= time.Second {
					t.Errorf("%s: clock offset %v (known %v), same host", n, h.ClockOffset, h.Clocked)
				}
				for _, dv := range h.Devices {
					writes += dv.WIOPS
					if leaves[dv.Name] {
						leafWrites += dv.WIOPS
					}
				}
			}
		}
		st := hostStats(Summarize(before), n)
		if st.Samples < len(before)-1 || math.Abs(st.ClockOffsetMs) >= 1000 || len(st.Devices) == 0 {
			t.Errorf("%s before the kill: %+v over %d samples", n, st, len(before))
		}
		if writes <= 0 {
			t.Errorf("%s: no device wrote while a file was written and fsynced", n)
		}
		if len(leaves) > 0 && leafWrites <= 0 {
			t.Errorf("%s: %v (under %s) did not write", n, leaves, dir)
		}
		t.Logf("%s: %d samples, CPU idle %.0f%%, devices %+v, clock offset %.3f ms", n, st.Samples, st.CPUIdlePct, st.Devices, st.ClockOffsetMs)
	}
	// c never answered and d is silent: each said once, with the time.
	for _, n := range []Node{c, d} {
		re := fmt.Sprintf(`^node_exporter %s \(%s\) does not answer at \d\d:\d\d:\d\d: .+; its telemetry is missing until it does$`,
			n.Name, regexp.QuoteMeta(n.URL))
		if got := w.matching(re); len(got) != 1 {
			t.Errorf("warnings about %s: %q in %q", n.Name, got, w.msgs)
		}
		if st := hostStats(Summarize(before), n.Name); st.Samples != 0 || st.Missing != len(before) {
			t.Errorf("%s: %+v over %d samples", n.Name, st, len(before))
		}
	}
	if got := w.matching(`^node_exporter d .*: no answer within 225ms;`); len(got) != 1 {
		t.Errorf("the silent exporter: %q", w.msgs)
	}

	// b goes away; the session and a go on.
	b.kill()
	t2 := time.Now()
	writeFor(t, dir, 1500*time.Millisecond)
	t3 := time.Now()
	during := s.Samples(t2, t3)
	if len(during) < 3 {
		t.Fatalf("%d samples after b was killed", len(during))
	}
	agg := Summarize(during)
	if st := hostStats(agg, "a"); st.Samples < len(during)-1 {
		t.Errorf("a after b went away: %+v over %d samples", st, len(during))
	}
	if st := hostStats(agg, "b"); st.Missing < len(during)-1 {
		t.Errorf("b after it was killed: %+v over %d samples", st, len(during))
	}
	// Killed between scrapes its port refuses; killed during one, the
	// answer is cut short.
	stopped := fmt.Sprintf(`^node_exporter b \(%s\) stopped answering at (\d\d:\d\d:\d\d): (?:connection refused|unexpected EOF|connection reset by peer); its telemetry has a gap$`,
		regexp.QuoteMeta(b.node.URL))
	got := w.matching(stopped)
	if len(got) != 1 {
		t.Fatalf("warnings: %q", w.msgs)
	}
	at := regexp.MustCompile(stopped).FindStringSubmatch(got[0])[1]
	if k := t2.Local().Format("15:04:05"); at != k && at != t2.Add(time.Second).Local().Format("15:04:05") {
		t.Errorf("b stopped at %s, killed at %s", at, k)
	}

	// b comes back on its port.
	b = startExporter(t, bin, "b", bPort)
	t4 := time.Now()
	time.Sleep(1500 * time.Millisecond)
	after := s.Samples(t4, time.Now())
	if st := hostStats(Summarize(after), "b"); st.Samples < 2 {
		t.Errorf("b back: %+v over %d samples", st, len(after))
	}
	if got := w.matching(`^node_exporter b \(.*\) answers again at \d\d:\d\d:\d\d$`); len(got) != 1 {
		t.Errorf("warnings: %q", w.msgs)
	}
	// The silent exporter, each sample waiting for it, did not slow the
	// session: its samples stay an interval apart.
	all := s.Samples(t0, time.Now())
	for i := 1; i < len(all); i++ {
		if gap := all[i].T.Sub(all[i-1].T); gap > every*17/10 {
			t.Errorf("samples %d and %d are %v apart at %v", i-1, i, gap, every)
		}
	}
	for _, m := range w.msgs {
		t.Log("warning: " + m)
	}
}

// An exporter with one of the collectors a scrape asks for turned off
// refuses collect[] (HTTP 400): the reader says so once and reads the
// whole page from then on; without the time collector, its rates go by
// the controller's clock.
func TestNodeReaderWholePage(t *testing.T) {
	bin := needNodeExporter(t)
	e := startExporter(t, bin, "notime", freePort(t), "--no-collector.time")
	var w warnings
	r := NewNodeReader(e.node, time.Second)
	r.Warn = w.add
	defer r.Close()
	p, err := r.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	c, err := r.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := w.matching(`^node_exporter notime \(.*\) refuses collect\[\]=cpu,diskstats,time \(HTTP 400 Bad Request: .*collector.*time\); reading its whole page$`); len(got) != 1 {
		t.Errorf("warnings %q", w.msgs)
	}
	if r.filtered || strings.Contains(r.url, "collect") {
		t.Errorf("still asking for %s", r.url)
	}
	if !c.Time.IsZero() || !c.HasCPU || !c.HasDisks || !c.Disks.At.After(p.Disks.At) {
		t.Errorf("page: time %v cpu %v disks %v at %v", c.Time, c.HasCPU, c.HasDisks, c.Disks.At)
	}
	h := NodeRates(p, c)
	if sum := h.CPU.IdlePct + h.CPU.IOWaitPct + h.CPU.UserPct + h.CPU.SystemPct + h.CPU.StealPct; !h.Up || h.Clocked || math.Abs(sum-100) > 0.01 {
		t.Errorf("rates %+v", h)
	}
}
