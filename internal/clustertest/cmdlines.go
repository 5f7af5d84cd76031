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
func WatchCmdlines(t testing.TB) *Cmdlines {
	w := &Cmdlines{stop: make(chan struct{}), seen: map[string]bool{}}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			// os.ReadDir, not filepath.Glob("/proc/[0-9]*/cmdline"): the
			// glob's stat of every match made a pass ten times as costly,
			// a core's worth of CPU at this rate.
			procs, _ := os.ReadDir("/proc")
			for _, p := range procs {
				if c := p.Name()[0]; c < '0' || c > '9' {
					continue
				}
				if b, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline")); err == nil && len(b) > 0 {
					w.mu.Lock()
					w.seen[strings.ReplaceAll(string(b), "\x00", " ")] = true
					w.mu.Unlock()
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
