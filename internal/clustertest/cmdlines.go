package clustertest

import (
	"net/url"
	"os"
	"path/filepath"
	"sort"
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
// A pass lists the processes and visits those that appeared in the last
// 2 s (a child runs its parent's command line until it execs), and every
// 500 ms everyone: reading every process's command line at every pass cost
// two thirds of a core beside 475 processes (20 µs each), most of them
// servers whose command lines never change. A process that execs
// something new after its first 2 s is visited within 500 ms.
type Procs struct {
	stop   chan struct{}
	wg     sync.WaitGroup
	passes atomic.Int64
}

// WatchProcs starts walking the processes; visit is called from one
// goroutine. The test's end stops it.
func WatchProcs(t testing.TB, visit func(pid string)) *Procs {
	w := &Procs{stop: make(chan struct{})}
	const young, every = 2 * time.Second, 500 * time.Millisecond
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		type pid struct {
			first time.Time // the pass that first saw it, zero for those there at the start
			pass  int       // the last pass that saw it
		}
		pids := map[string]*pid{}
		var sweep time.Time // the last pass that visited everyone
		for pass := 0; ; pass++ {
			now := time.Now()
			all := now.Sub(sweep) >= every
			if all {
				sweep = now
			}
			// The names alone, unsorted: not filepath.Glob's stat of every
			// match, which made a pass ten times as costly, nor
			// os.ReadDir's sort.
			var names []string
			if proc, err := os.Open("/proc"); err == nil {
				names, _ = proc.Readdirnames(-1)
				proc.Close()
			}
			for _, name := range names {
				if c := name[0]; c < '0' || c > '9' {
					continue
				}
				seen := pids[name]
				if seen == nil {
					seen = &pid{}
					if pass > 0 {
						seen.first = now
					}
					pids[name] = seen
				}
				seen.pass = pass
				if all || now.Sub(seen.first) < young {
					visit(name)
				}
			}
			for name, seen := range pids { // gone: its pid may come back as another process
				if seen.pass != pass {
					delete(pids, name)
				}
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
	w.procs = WatchProcs(t, func(pid string) {
		if b, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline")); err == nil && len(b) > 0 {
			w.mu.Lock()
			w.seen[strings.ReplaceAll(string(b), "\x00", " ")] = true
			w.mu.Unlock()
		}
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
