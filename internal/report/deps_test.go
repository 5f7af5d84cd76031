package report

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// The report reads the results store and nothing else: no database driver,
// no engine, managed server or cgroup, and no workload package. The stored
// documents it decodes live in internal/stored, a leaf. This runs `go list
// -deps` over the package, as a contributor would.
func TestReportDependencies(t *testing.T) {
	deps := goListDeps(t, "github.com/tierbench/tierbench/internal/report")
	forbidden := []string{
		"github.com/jackc/pgx", "github.com/go-sql-driver/mysql",
		"github.com/tierbench/tierbench/internal/server", "github.com/tierbench/tierbench/internal/engine",
		"github.com/tierbench/tierbench/internal/cgroup", "github.com/tierbench/tierbench/internal/driver",
		"github.com/tierbench/tierbench/internal/fio", "github.com/tierbench/tierbench/internal/backup",
		"github.com/tierbench/tierbench/internal/durability", "github.com/tierbench/tierbench/internal/telemetry",
		"github.com/tierbench/tierbench/internal/experiment", "github.com/tierbench/tierbench/internal/inventory",
		"github.com/tierbench/tierbench/internal/cli", "github.com/tierbench/tierbench/internal/scenario",
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("internal/report depends on %s", d)
			}
		}
	}
	if t.Failed() {
		t.Logf("go list -deps ./internal/report:\n%s", strings.Join(deps, "\n"))
	}
}

// goListDeps lists a package's dependencies with the go command. Without
// one it skips, except on CI (CI=true), where it fails.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		testenv.SkipOrFail(t, "no go command to list the dependencies with: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || deps[len(deps)-1] != pkg {
		t.Fatalf("go list -deps %s listed %q", pkg, deps)
	}
	return deps
}
