package clustertest

import (
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Cmdlines samples the command line of every process on this machine (the
// controller's and, since network namespaces share the process table, every
// test host's) until stopped: for the tests that a secret is on none.
type Cmdlines struct {
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	seen map[string]bool
}

// WatchCmdlines starts sampling every 5 ms; the test's end stops it.
//
// Each pass lists the processes. It reads the command lines of those that
// appeared in the last 2 s (a child runs its parent's until it execs), and
// every 500 ms everyone's: reading every process's at every pass cost two
// thirds of a core beside 475 processes (20 µs each), most of them servers
// whose command lines never change. A process that execs something new
// after its first 2 s is seen within 500 ms.
func WatchCmdlines(t testing.TB) *Cmdlines {
	w := &Cmdlines{stop: make(chan struct{}), seen: map[string]bool{}}
	const young, every = 2 * time.Second, 500 * time.Millisecond
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		type pid struct {
			first time.Time // the pass that first saw it, zero for those there at the start
			pass  int       // the last pass that saw it
		}
		pids := map[string]*pid{}
		var sweep time.Time // the last pass that read every process's
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
				if !all && now.Sub(seen.first) >= young {
					continue
				}
				if b, err := os.ReadFile(filepath.Join("/proc", name, "cmdline")); err == nil && len(b) > 0 {
					w.mu.Lock()
					w.seen[strings.ReplaceAll(string(b), "\x00", " ")] = true
					w.mu.Unlock()
				}
			}
			for name, seen := range pids { // gone: its pid may come back as another process
				if seen.pass != pass {
					delete(pids, name)
				}
			}
			select {
			case <-w.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(w.Stop)
	return w
}

// Stop ends the sampling; calling it again does nothing.
func (w *Cmdlines) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.wg.Wait()
}

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
