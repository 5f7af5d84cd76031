package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// As root in a clone under root's own 0700 home directory, `tierbench run`
// (make run) cannot put the server's data in ./tierbench-data, which the
// unprivileged server user cannot reach: it says so in one line, uses a
// directory under /var/lib/tierbench named after the clone's path instead,
// finds the same one on the next run, and keeps the results where they
// were asked for. The runs are open-loop (--rate), as the main job may be:
// its summary has the offered rate's column.
func TestRunDefaultDataDirUnderPrivateHome(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root runs the server as another user") // an ordinary user's server reads its own home
	}
	pgtest.RequireBinaries(t)
	home := filepath.Join(t.TempDir(), "root-home")
	clone := filepath.Join(home, "tierbench")
	if err := os.MkdirAll(clone, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(clone)
	args := []string{"run", "--warehouses", "1", "--build-vus", "2", "--vus", "1", "--rampup", "0s", "--duration", "2s", "--rate", "1200"}
	var used string
	for i := range 2 {
		code, out, errOut := runTierbench(t, args...)
		var line string
		for _, l := range strings.Split(errOut, "\n") {
			if strings.Contains(l, "is not reachable by user") {
				line = l
			}
		}
		_, dir, ok := strings.Cut(line, "; using ")
		dir, _, _ = strings.Cut(dir, " instead")
		if !ok || !strings.HasPrefix(dir, "/var/lib/tierbench/") || !strings.HasSuffix(dir, "/tierbench-data") {
			t.Fatalf("run %d: exit %d, no line naming the data directory used instead:\n%s", i+1, code, errOut)
		}
		if i == 0 {
			used = dir
			t.Cleanup(func() {
				server.Stop(context.Background(), used, "immediate")
				os.RemoveAll(filepath.Dir(used))
			})
		} else if dir != used {
			t.Errorf("the second run used %s, the first %s", dir, used)
		}
		if code != 0 {
			t.Fatalf("run %d: exit %d\n%s%s", i+1, code, out, errOut)
		}
		if !strings.Contains(out, "offered TPM") {
			t.Errorf("run %d with --rate: no offered rate in its summary:\n%s", i+1, out)
		}
	}
	if st, err := server.Status(context.Background(), used); err != nil || !st.Running {
		t.Errorf("no server running in %s: %+v, %v", used, st, err)
	}
	if _, err := os.Stat(filepath.Join(clone, "tierbench-results", "report.html")); err != nil {
		t.Errorf("the results did not stay in the clone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(clone, "tierbench-data")); !os.IsNotExist(err) {
		t.Errorf("./tierbench-data was made anyway: %v", err)
	}
	// --datadir is the override: an unreachable one given on purpose is refused, not moved.
	code, _, errOut := runTierbench(t, "run", "--datadir", filepath.Join(clone, "mine"), "--warehouses", "1")
	if code != 2 || !strings.Contains(errOut, "is not reachable by user") {
		t.Errorf("run --datadir under the private home: exit %d, %s", code, errOut)
	}
}
