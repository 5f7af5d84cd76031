package clustertest_test

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/clustertest"
)

// The watcher sees a process that was there before it started, one that
// lives 100 ms, and what a young process execs 100 ms later, though it
// reads the command lines of old processes only every 500 ms. A loaded host
// can hold the watcher off its core for longer than that (CI once missed a
// 50 ms process), so it is tried three times; one that reads new processes
// only at its 500 ms sweeps sees such a process one time in five.
func TestWatchCmdlines(t *testing.T) {
	t.Parallel()
	before := exec.Command("sh", "-c", "sleep 30; true", "tb-watch-before")
	if err := before.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { before.Process.Kill(); before.Wait() }()
	time.Sleep(100 * time.Millisecond)
	var missed []string
	for try := 1; try <= 3; try++ {
		short, exec1 := fmt.Sprintf("tb-watch-short-%d", try), fmt.Sprintf("tb-watch-exec-%d", try)
		w := clustertest.WatchCmdlines(t)
		for _, args := range [][]string{
			{"sh", "-c", "sleep 0.1; true", short},
			{"sh", "-c", "sleep 0.1; exec sh -c 'sleep 0.1; true' " + exec1, "tb-watch-parent"},
		} {
			if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%q: %v: %s", args, err, out)
			}
		}
		lines := w.Lines()
		missed = nil
		for _, want := range []string{"tb-watch-before", short, "tb-watch-parent", exec1} {
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, " "+want+" ") }) {
				missed = append(missed, want)
			}
		}
		if len(missed) == 0 {
			return
		}
		t.Logf("try %d: no command line shows %v among the %d seen", try, missed, len(lines))
	}
	t.Errorf("three tries missed %v", missed)
}
