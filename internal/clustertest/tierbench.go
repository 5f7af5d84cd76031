package clustertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tierbench/tierbench/internal/server/servertest"
)

var built struct {
	once sync.Once
	path string
	err  string
}

// Tierbench builds this repository's tierbench (./cmd/tierbench) once per
// test binary and returns its path, for the hosts (they share the file
// system) as Host.Tierbench. The build goes to a directory named after the
// test binary's pid, which Main removes, or else the next test binary's New
// once this one has exited.
func Tierbench(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", tempPrefix()+"bin-")
		if err != nil {
			built.err = err.Error()
			return
		}
		path := filepath.Join(dir, "tierbench")
		// go test puts its own Go first on the test's PATH.
		cmd := exec.Command("go", "build", "-o", path, "github.com/tierbench/tierbench/cmd/tierbench")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = "go build ./cmd/tierbench: " + err.Error() + ": " + strings.TrimSpace(string(out))
			return
		}
		built.path = path
	})
	if built.err != "" {
		t.Fatalf("clustertest: %s", built.err)
	}
	return built.path
}

// Main runs the tests (with servertest.DefaultParallel) and then removes
// Tierbench's build:
//
//	func TestMain(m *testing.M) { clustertest.Main(m) }
func Main(m *testing.M) {
	servertest.DefaultParallel(2)
	code := m.Run()
	if built.path != "" {
		os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}
