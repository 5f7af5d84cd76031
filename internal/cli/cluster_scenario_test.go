package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/clustertest"
	"github.com/tierbench/tierbench/internal/remote"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// A scenario whose host refuses the controller's key, or has no tierbench,
// fails at its first remote step with one error line and exit 1, leaving
// nothing on the host and no run behind in the store.
func TestClusterScenarioFailures(t *testing.T) {
	pgtest.RequireBinaries(t)
	c := clustertest.New(t, 1, clustertest.Options{SSH: true})
	tb := clustertest.Tierbench(t)
	const src = `name: cluster-fail
hosts:
  - {name: h1, ssh: "root@H1", tierbench: "TB"}
targets:
  - {name: data, path: "DATA"}
servers:
  - {name: db, engine: postgres, target: data, host: h1}
steps:
  - tpcc-build: {server: db, warehouses: 1}
`
	for _, tc := range []struct {
		name, sshCommand, tierbench, want string
	}{
		{"wrong key", c.WrongKeySSHCommand, tb, "ssh refused the key: root on " + c.Hosts[0].Addr + " accepted none of the controller's keys"},
		{"no tierbench there", c.SSHCommand, "/nonexistent/tierbench", "there is no tierbench at /nonexistent/tierbench"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(remote.EnvSSHCommand, tc.sshCommand)
			data := filepath.Join(pgtest.TempDir(t), "fail")
			res := t.TempDir()
			file := filepath.Join(t.TempDir(), "fail.yaml")
			body := strings.NewReplacer("H1", c.Hosts[0].Addr, "TB", tc.tierbench, "DATA", data).Replace(src)
			if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, errOut := runTierbench(t, "scenario", "run", file, "--results", res)
			var errLines []string
			for _, l := range strings.Split(errOut, "\n") {
				if strings.HasPrefix(l, "tierbench: ") {
					errLines = append(errLines, l)
				}
			}
			if code != 1 || len(errLines) != 1 || !strings.Contains(errLines[0], tc.want) {
				t.Fatalf("exit %d, error lines %q; want exit 1 and one line with %q\nstderr:\n%s", code, errLines, tc.want, errOut)
			}
			if _, err := os.Stat(filepath.Join(data, "db")); !os.IsNotExist(err) {
				t.Errorf("the server's data directory was left on the host: %v", err)
			}
			if store, err := results.OpenReadOnly(res); err == nil {
				runs, _ := store.Runs(context.Background())
				store.Close()
				for _, r := range runs {
					if r.Status == results.StatusRunning {
						t.Errorf("run %s left running", r.ID)
					}
				}
			}
		})
	}
}
