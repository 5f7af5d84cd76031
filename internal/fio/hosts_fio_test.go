package fio

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/freeport"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/testenv"
)

// needFio returns a Runner for the fio in PATH; without one it skips,
// except under CI.
func needFio(t *testing.T) *Runner {
	t.Helper()
	r, err := Find(context.Background(), "")
	if err != nil {
		testenv.SkipOrFail(t, "no usable fio: %v", err)
	}
	return r
}

// freePort returns a TCP port on 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := freeport.Pick(0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startServer starts `BIN --server=127.0.0.1,PORT` on a free port and
// returns it as a Server once it accepts connections. The server and the
// processes it forks (one per client connection) are in their own process
// group, which is killed when the test ends; the kernel kills the server
// if the test binary dies.
func startServer(t *testing.T, bin, name string) Server {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(bin, "--server=127.0.0.1,"+strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	s := Server{Name: name, Addr: "127.0.0.1", Port: port}
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", s.HostPort(), time.Second)
		if err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("fio --server on port %d does not accept connections: %v\n%s", port, err, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// twoServers starts two fio servers on free ports, named as ParseServer
// names them ("127.0.0.1:PORT"), so their test files differ by port.
func twoServers(t *testing.T, r *Runner) []Server {
	t.Helper()
	var out []Server
	for range 2 {
		s := startServer(t, r.Path, "")
		s.Name = s.HostPort()
		out = append(out, s)
	}
	return out
}

// hostSettings are a short buffered point on dir on every host.
func hostSettings(dir string, d time.Duration) Settings {
	return Settings{IOEngine: "psync", Direct: false, Duration: d, File: dir, Size: 8 << 20}
}

func TestCheckServersRealFio(t *testing.T) {
	r := needFio(t)
	servers := twoServers(t, r)
	start := time.Now()
	if err := r.CheckServers(context.Background(), servers); err != nil {
		t.Fatalf("matching servers: %v", err)
	}
	t.Logf("checked 2 servers in %v", time.Since(start).Round(time.Millisecond))

	// A port nobody listens on, next to a server that answers.
	down := Server{Name: "h2", Addr: "127.0.0.1", Port: freePort(t)}
	err := r.CheckServers(context.Background(), []Server{servers[0], down})
	if err == nil {
		t.Fatal("an unreachable server passed")
	}
	oneLine(t, err)
	want := "fio server h2 (" + down.HostPort() + ") does not answer (connect: Connection refused): start `fio --server=," +
		strconv.Itoa(down.Port) + "` there"
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "more") {
		t.Errorf("error %q; want %q about that server only", err, want)
	}

	// A controller of another version (as far as the servers can tell).
	other := *r
	other.Version = "fio-3.99"
	err = other.CheckServers(context.Background(), servers)
	if err == nil || !strings.Contains(err.Error(), "is "+r.Version+" but the controller's is fio-3.99") ||
		!strings.Contains(err.Error(), "(and 1 more: "+servers[1].Name+")") {
		t.Errorf("version mismatch: %v", err)
	}
}

// The whole client/server path on two real fio servers: a point on both,
// its aggregate from both hosts' jobs, each host's own figures, test files
// and logs, and the files gone afterwards.
func TestRunHostsRealFio(t *testing.T) {
	r := needFio(t)
	servers := twoServers(t, r)
	if err := r.CheckServers(context.Background(), servers); err != nil {
		t.Fatal(err)
	}
	dir := realTempDir(t) // the "remote" directory both hosts share, as over NFS
	files := []string{filepath.Join(dir, hostFileName(servers[0])), filepath.Join(dir, hostFileName(servers[1]))}
	if files[0] == files[1] {
		t.Fatalf("both hosts got test file %s", files[0])
	}
	// Watch for both files while the point runs.
	var seen atomic.Bool
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if exists(files[0]) && exists(files[1]) {
				seen.Store(true)
				return
			}
		}
	}()
	spec := Spec{Name: "4k-randrw70-qd1x2", BS: 4096, RW: RandRW, RWMixRead: 70, IODepth: 1, Jobs: 2}
	work := t.TempDir()
	start := time.Now()
	p, err := r.RunHosts(context.Background(), 0, spec, hostSettings(dir, 3*time.Second), work, servers)
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("point on 2 hosts in %v", time.Since(start).Round(time.Millisecond))
	if !seen.Load() {
		t.Errorf("the hosts' test files %v did not both exist during the run", files)
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.Size() != 8<<20 {
			t.Errorf("test file %s after the point: %v (%v)", f, fi, err)
		}
	}
	if len(p.Hosts) != 2 || p.Interrupted || p.Result.Jobs != 4 {
		t.Fatalf("point: %d hosts, interrupted %v, %d jobs", len(p.Hosts), p.Interrupted, p.Result.Jobs)
	}
	for i, h := range p.Hosts {
		if h.Server != servers[i] || h.File != files[i] || !strings.Contains(h.JobFile, "filename="+files[i]+"\n") {
			t.Errorf("host %d: %+v", i, h)
		}
		if h.Result == nil || h.Result.Jobs != 2 || h.Result.Read == nil || h.Result.Write == nil {
			t.Fatalf("host %d result %+v", i, h.Result)
		}
		if len(h.Seconds) < 2 {
			t.Errorf("host %d has %d seconds of logs", i, len(h.Seconds))
		}
		if !strings.Contains(p.JobFile, h.JobFile) {
			t.Errorf("the point's job file lacks host %d's", i)
		}
	}
	h1, h2 := p.Hosts[0].Result, p.Hosts[1].Result
	for _, d := range []struct {
		name    string
		a, x, y *stored.DirStats
	}{{"read", p.Result.Read, h1.Read, h2.Read}, {"write", p.Result.Write, h1.Write, h2.Write}} {
		if sum := d.x.IOPS + d.y.IOPS; d.a.IOPS <= 0 || abs(d.a.IOPS-sum) > 0.01*sum {
			t.Errorf("%s: aggregate %v IOPS, the hosts' sum %v", d.name, d.a.IOPS, sum)
		}
		if d.a.IOs != d.x.IOs+d.y.IOs || d.a.Hist.Count() != d.x.Hist.Count()+d.y.Hist.Count() {
			t.Errorf("%s: aggregate %d IOs, hosts %d + %d", d.name, d.a.IOs, d.x.IOs, d.y.IOs)
		}
		want := float64(unionPercentile(99, d.x.Hist, d.y.Hist)) / 1e6
		if d.a.P99Ms != want || want == 0 {
			t.Errorf("%s: aggregate p99 %v ms, the union of the hosts' bins %v ms (hosts' own %v and %v)", d.name, d.a.P99Ms, want, d.x.P99Ms, d.y.P99Ms)
		}
	}
	// The aggregate series sums the hosts' second by second.
	if len(p.Seconds) < 2 {
		t.Fatalf("%d aggregate seconds", len(p.Seconds))
	}
	byT := func(ss []Second, t int) *DirSecond {
		for _, s := range ss {
			if s.T == t && s.Read != nil {
				return s.Read
			}
		}
		return &DirSecond{}
	}
	for _, s := range p.Seconds {
		if s.Read == nil {
			continue
		}
		x, y := byT(p.Hosts[0].Seconds, s.T), byT(p.Hosts[1].Seconds, s.T)
		if !near(s.Read.IOPS, x.IOPS+y.IOPS) || !near(s.Read.MBps, x.MBps+y.MBps) {
			t.Errorf("second %d: aggregate %+v, hosts %+v and %+v", s.T, *s.Read, *x, *y)
		}
	}
	// Each host's logs came back under its own prefix and address.
	for _, s := range servers {
		if m, _ := filepath.Glob(filepath.Join(work, "point-01-"+hostSlug(s)+"_iops.*.log."+s.Addr)); len(m) != 2 {
			t.Errorf("%s: iops logs %v, want 2", s, m)
		}
	}
	po := NewPointResult(p)
	if len(po.Hosts) != 2 || po.Hosts[0].Host != servers[0].Name || po.Hosts[1].Read.Hist == nil {
		t.Errorf("point result hosts %+v", po.Hosts)
	}

	start = time.Now()
	if err := r.RemoveHostFiles(context.Background(), dir, servers); err != nil {
		t.Fatal(err)
	}
	t.Logf("removed the test files in %v", time.Since(start).Round(time.Millisecond))
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left on the hosts: %v", left)
	}
	// Again, with nothing left to remove: fio creates and removes 4 KiB.
	if err := r.RemoveHostFiles(context.Background(), dir, servers); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left on the hosts: %v", left)
	}
}

// Cancelling a point on two hosts stops it like Run: the client is told to
// stop, the hosts send what they measured, and the files can still be
// removed with the cancelled context.
func TestRunHostsInterrupted(t *testing.T) {
	r := needFio(t)
	servers := twoServers(t, r)
	dir := realTempDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(2500*time.Millisecond, cancel)
	start := time.Now()
	spec := Spec{Name: "4k-randread-qd1x1", BS: 4096, RW: RandRead, IODepth: 1, Jobs: 1}
	p, err := r.RunHosts(ctx, 2, spec, hostSettings(dir, time.Minute), t.TempDir(), servers)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("interrupted point returned after %v", elapsed.Round(time.Millisecond))
	if !p.Interrupted || elapsed > 20*time.Second {
		t.Errorf("interrupted %v after %v", p.Interrupted, elapsed)
	}
	if p.Result == nil || p.Result.Read == nil || p.Result.Read.IOs == 0 || len(p.Hosts) != 2 ||
		p.Hosts[0].Result == nil || p.Hosts[1].Result == nil {
		t.Fatalf("interrupted point kept %+v", p)
	}
	if !exists(filepath.Join(dir, hostFileName(servers[0]))) || !exists(filepath.Join(dir, hostFileName(servers[1]))) {
		t.Error("the test files are not there after the interrupted point")
	}
	if err := r.RemoveHostFiles(ctx, dir, servers); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left on the hosts: %v", left)
	}
}

// What RunHosts refuses before starting fio, and a failure fio reports.
func TestRunHostsRefusals(t *testing.T) {
	r := needFio(t)
	s := Server{Name: "h1", Addr: "127.0.0.1", Port: freePort(t)}
	spec := Spec{Name: "x", BS: 4096, RW: RandRead, IODepth: 1, Jobs: 1}
	_, err := r.RunHosts(context.Background(), 0, spec, hostSettings("/dev/sdb", time.Second), t.TempDir(), []Server{s})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "--destroy-data-on /dev/sdb") {
		t.Errorf("a device on the hosts: %v", err)
	}
	_, err = r.RunHosts(context.Background(), 0, spec, hostSettings("rel/dir", time.Second), t.TempDir(), []Server{s})
	if !errors.Is(err, ErrRefused) {
		t.Errorf("a relative directory: %v", err)
	}
	// A server that is not there: fio's client says so.
	_, err = r.RunHosts(context.Background(), 0, spec, hostSettings(t.TempDir(), time.Second), t.TempDir(), []Server{s})
	if err == nil || !strings.Contains(err.Error(), "connect") {
		t.Errorf("an absent server: %v", err)
	} else {
		oneLine(t, err)
		t.Log(err)
	}
}

// CheckHostTarget: the servers' version and the target directory on every
// host, in one round trip; a missing directory is refused and not created.
func TestCheckHostTargetRealFio(t *testing.T) {
	r := needFio(t)
	servers := twoServers(t, r)
	dir := realTempDir(t)
	start := time.Now()
	if err := r.CheckHostTarget(context.Background(), dir, servers, false); err != nil {
		t.Fatal(err)
	}
	t.Logf("checked the target on 2 servers in %v", time.Since(start).Round(time.Millisecond))
	missing := filepath.Join(dir, "not", "there")
	err := r.CheckHostTarget(context.Background(), missing, servers, false)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "--target "+missing+" does not exist on host "+servers[0].String()) ||
		!strings.Contains(err.Error(), "(and 1 more: "+servers[1].Name+")") {
		t.Errorf("a missing directory: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("checking created %v", left)
	}
	other := *r
	other.Version = "fio-3.99"
	if err := other.CheckHostTarget(context.Background(), dir, servers, false); err == nil || !strings.Contains(err.Error(), "but the controller's is fio-3.99") {
		t.Errorf("version mismatch: %v", err)
	}
	if err := r.CheckHostTarget(context.Background(), "/dev/sdb", servers, false); !errors.Is(err, ErrRefused) {
		t.Errorf("an unchecked device: %v", err)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// jobProcess is the job process a fio server forked for a point, or 0
// until it is there: the server forks a process per connection, that one a
// backend, and the backend the job, three levels down, all with the
// server's command line.
func jobProcess(t *testing.T, s Server) int { return serverProcess(t, s, 4) }

// serverProcess returns the PID of a process of fio server s that is depth
// steps below the server's parent (1 the server, 2 a connection's handler,
// 3 the backend that runs its jobs, 4 a job), or 0.
func serverProcess(t *testing.T, s Server, depth int) int {
	t.Helper()
	arg := "--server=127.0.0.1," + strconv.Itoa(s.Port)
	parent := parents(t, func(cmd []string) bool { return slices.Contains(cmd, arg) })
	for pid := range parent {
		d := 0
		for p := pid; ; d++ {
			pp, ok := parent[p]
			if !ok {
				break
			}
			p = pp
		}
		if d == depth {
			return pid
		}
	}
	return 0
}

// A server whose fio is killed as the point starts (the OOM killer) sends
// nothing: the client ends with no jobs, and the error names the server,
// and says it went away when the client saw the connection break.
func TestRunHostsServerKilled(t *testing.T) {
	r := needFio(t)
	for _, tt := range []struct {
		what  string
		depth int
		want  string
	}{
		{"connection's handler", 2, "fio failed on point 4k-randread-qd1x1: client: host=127.0.0.1 disconnected"},
		{"backend", 3, "point 4k-randread-qd1x1: fio output: h1 (127.0.0.1:PORT) reported no jobs: its fio stopped before the point ended"},
	} {
		s := startServer(t, r.Path, "h1")
		dir, work := realTempDir(t), t.TempDir()
		done := make(chan error, 1)
		go func() {
			spec := Spec{Name: "4k-randread-qd1x1", BS: 4096, RW: RandRead, IODepth: 1, Jobs: 1}
			_, err := r.RunHosts(context.Background(), 0, spec, hostSettings(dir, 3*time.Second), work, []Server{s})
			done <- err
		}()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
			// Kill it once the backend is there, before the job starts.
			if pid := serverProcess(t, s, tt.depth); pid > 0 && serverProcess(t, s, 3) > 0 {
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no fio backend under the server after 20 s")
			}
		}
		start := time.Now()
		err := <-done
		t.Logf("%s killed: the point ended %v later", tt.what, time.Since(start).Round(time.Millisecond))
		if want := strings.Replace(tt.want, "PORT", strconv.Itoa(s.Port), 1); err == nil || err.Error() != want {
			t.Errorf("a point whose server's %s was killed: %v; want %q", tt.what, err, want)
		}
	}
}

// A job on a host that dies mid-point (fio 3.33's assertion in rate_ddir,
// or the OOM killer) leaves 0 IOPS in the client's output, with a line
// before it that says so: the point fails, naming it, rather than record
// the zeros.
func TestRunHostsJobKilled(t *testing.T) {
	r := needFio(t)
	s := startServer(t, r.Path, "h1")
	dir, work := realTempDir(t), t.TempDir()
	file := filepath.Join(dir, hostFileName(s))
	done := make(chan error, 1)
	go func() {
		spec := Spec{Name: "4k-randread-qd1x1", BS: 4096, RW: RandRead, IODepth: 1, Jobs: 1}
		_, err := r.RunHosts(context.Background(), 0, spec, hostSettings(dir, 30*time.Second), work, []Server{s})
		done <- err
	}()
	// Mid-point: the job has laid out its file and is reading it.
	var since time.Time
	for deadline := time.Now().Add(20 * time.Second); ; {
		if fi, err := os.Stat(file); err == nil && fi.Size() == 8<<20 && since.IsZero() {
			since = time.Now()
		}
		if pid := jobProcess(t, s); pid > 0 && !since.IsZero() && time.Since(since) > time.Second {
			if err := syscall.Kill(pid, syscall.SIGABRT); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no fio job process under the server after 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "got signal=6); its figures are not a measurement") {
		t.Errorf("a point whose job was killed: %v; want an error naming the signal", err)
	}
}
