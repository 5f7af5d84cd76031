package clustertest

import (
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Procs walks this machine's processes (the controller's and, since
// network namespaces share the process table, every test host's) until
// stopped, every 5 ms, handing each pid to be read to its visitor: for
// the tests that a secret is on no command line or in no environment.
//
// A pass visits the processes that appeared in the last 100 ms, every
// tenth pass (50 ms) those that appeared in the last 2 s (a child runs its
// parent's command line until it execs), and every 500 ms everyone:
// reading every process's command line at every pass cost two thirds of a
// core beside 475 processes (20 µs each), most of them servers whose
// command lines never change. A process that execs something new after its
// first 2 s is visited within 500 ms.
//
// The new processes are found without listing /proc at every pass: the
// kernel hands out pids in order, and /proc/loadavg ends with the last one
// it gave, so a pass reads that and takes each pid after the previous
// pass's that is a process (not a thread, whose command line is its
// process's), until its visit finds it gone. The listing is for the sweep
// every 500 ms alone: listing /proc every 5 ms cost the cluster scenario's
// test 8 of its 12 CPU seconds.
type Procs struct {
	stop   chan struct{}
	wg     sync.WaitGroup
	passes atomic.Int64
}

// WatchProcs starts walking the processes; visit is called from one
// goroutine, and says whether the process is still there. The test's end
// stops it.
func WatchProcs(t testing.TB, visit func(pid string) bool) *Procs {
	w := &Procs{stop: make(chan struct{})}
	const newborn, young, every = 100 * time.Millisecond, 2 * time.Second, 500 * time.Millisecond
	pidMax := 1 << 22 // the kernel's ceiling, should pid_max not read
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pidMax = n
		}
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		type newPid struct {
			name  string
			first time.Time
		}
		var recent []newPid // processes started in the last 2 s, oldest first
		loadavg, err := os.Open("/proc/loadavg")
		if err == nil {
			defer loadavg.Close()
		}
		last := lastPid(loadavg)
		var sweep time.Time // the last pass that visited everyone
		for pass := 0; ; pass++ {
			now := time.Now()
			// The pids given out since the last pass; after a wrap at
			// pid_max, those from 300 on (the kernel's first reused pid).
			if cur := lastPid(loadavg); cur > 0 {
				for p := last + 1; last > 0 && p != cur+1; p++ {
					if p >= pidMax {
						p = 300
					}
					if name := strconv.Itoa(p); isProcess(name) {
						recent = append(recent, newPid{name, now})
					}
				}
				last = cur
			}
			i := 0
			for i < len(recent) && now.Sub(recent[i].first) >= young {
				i++
			}
			recent = recent[i:]
			if now.Sub(sweep) >= every {
				sweep = now
				// The names alone, unsorted: not filepath.Glob's stat of
				// every match, nor os.ReadDir's sort.
				var names []string
				if proc, err := os.Open("/proc"); err == nil {
					names, _ = proc.Readdirnames(-1)
					proc.Close()
				}
				for _, name := range names {
					if c := name[0]; c >= '0' && c <= '9' {
						visit(name)
					}
				}
			} else {
				kept := recent[:0] // those still there
				for _, p := range recent {
					if (pass%10 != 0 && now.Sub(p.first) >= newborn) || visit(p.name) {
						kept = append(kept, p)
					}
				}
				recent = kept
			}
			w.passes.Add(1)
			select {
			case <-w.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { w.Stop() })
	return w
}

// isProcess reports whether pid is a process (a thread group's leader),
// not another thread, and still there.
func isProcess(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), "\nTgid:")
	tgid, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSpace(tgid) == pid
}

// lastPid returns the pid the kernel gave out last, the last field of
// loadavg (/proc/loadavg, kept open: a read at offset 0 renews it, at a
// fifth of the cost of opening it again); 0 if it does not read.
func lastPid(loadavg *os.File) int {
	var b [128]byte
	n, _ := loadavg.ReadAt(b[:], 0)
	f := strings.Fields(string(b[:n]))
	if len(f) < 5 {
		return 0
	}
	last, _ := strconv.Atoi(f[4])
	return last
}

// Stop ends the walk, once its pass is over, and returns how many passes
// it made; calling it again does nothing more.
func (w *Procs) Stop() int64 {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.wg.Wait()
	return w.passes.Load()
}

// Cmdlines samples the command line of every process on this machine
// until stopped (WatchProcs).
type Cmdlines struct {
	procs *Procs
	mu    sync.Mutex
	seen  map[string]bool
}

// WatchCmdlines starts sampling; the test's end stops it.
func WatchCmdlines(t testing.TB) *Cmdlines {
	w := &Cmdlines{seen: map[string]bool{}}
	w.procs = WatchProcs(t, func(pid string) bool {
		b, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err != nil {
			return false
		}
		if len(b) > 0 {
			w.mu.Lock()
			w.seen[strings.ReplaceAll(string(b), "\x00", " ")] = true
			w.mu.Unlock()
		}
		return true
	})
	return w
}

// Stop ends the sampling; calling it again does nothing.
func (w *Cmdlines) Stop() { w.procs.Stop() }

// Lines stops the sampling and returns the command lines seen (arguments
// joined by spaces), sorted.
func (w *Cmdlines) Lines() []string {
	w.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.seen))
	for c := range w.seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Password is the password of a managed server's DSN, for looking for it
// where it must not be; the test fails when it is too short to look for.
func Password(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	if len(pw) < 16 {
		t.Fatalf("the DSN's password %q is short", pw)
	}
	return pw
}
