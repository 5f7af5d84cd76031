package clustertest_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/clustertest"
)

// The watcher sees a process that was there before it started, one that
// lives 50 ms, and what a young process execs 100 ms later, though it
// reads the command lines of old processes only every 500 ms.
func TestWatchCmdlines(t *testing.T) {
	t.Parallel()
	before := exec.Command("sh", "-c", "sleep 3; true", "tb-watch-before")
	if err := before.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { before.Process.Kill(); before.Wait() }()
	time.Sleep(100 * time.Millisecond)
	w := clustertest.WatchCmdlines(t)
	for _, args := range [][]string{
		{"sh", "-c", "sleep 0.05; true", "tb-watch-short"},
		{"sh", "-c", "sleep 0.1; exec sh -c 'sleep 0.1; true' tb-watch-exec", "tb-watch-parent"},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%q: %v: %s", args, err, out)
		}
	}
	lines := w.Lines()
	for _, want := range []string{"tb-watch-before", "tb-watch-short", "tb-watch-parent", "tb-watch-exec"} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, " "+want) }) {
			t.Errorf("no command line shows %s among the %d seen", want, len(lines))
		}
	}
}
