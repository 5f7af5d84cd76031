package scenario

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/clustertest"
	"github.com/tierbench/tierbench/internal/version"
)

func TestMain(m *testing.M) { clustertest.Main(m) }

// A scenario refuses, before anything runs, a host whose tierbench is not
// the controller's version, naming the host and both versions; the same
// host passes once the versions agree.
func TestCheckVersions(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t, 1, clustertest.Options{SSH: true})
	clustertest.ShareSSH(t, c)
	// A real tierbench of another version, for the host.
	const other = "v0.0.0-other"
	tb := filepath.Join(t.TempDir(), "tierbench")
	build := exec.Command("go", "build", "-o", tb, "-ldflags", "-X github.com/tierbench/tierbench/internal/version.Version="+other,
		"github.com/tierbench/tierbench/cmd/tierbench")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := t.TempDir()
	src := `name: versions
hosts:
  - {name: db1, ssh: "` + c.Hosts[0].SSH + `", tierbench: "` + tb + `"}
targets:
  - {name: data, path: "` + data + `"}
servers:
  - {name: db, engine: postgres, target: data, host: db1, memory: 128MiB}
steps:
  - tpcc-build: {server: db, warehouses: 1}
`
	sc, err := Parse("versions.yaml", []byte(src), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	want := "host db1 runs tierbench " + other + ", this controller " + version.Version + "; install the same version on every host"
	if err := CheckVersions(ctx, sc); err == nil || err.Error() != want {
		t.Errorf("CheckVersions: %v; want %q", err, want)
	}
	// Execute refuses it before any step: no server, no store.
	res := filepath.Join(t.TempDir(), "results")
	rec := &scenarioRecorder{checked: map[string]bool{}}
	if _, err := Execute(ctx, sc, res, rec, Options{}); err == nil || err.Error() != want {
		t.Errorf("Execute: %v; want %q", err, want)
	}
	if len(rec.steps) != 0 {
		t.Errorf("steps ran: %v", rec.steps)
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Errorf("the host's target holds %d entries; want none", len(entries))
	}
	if _, err := os.Stat(res); !os.IsNotExist(err) {
		t.Errorf("a results store was made: %v", err)
	}

	// The same host, once this controller is that version too. (Not by
	// setting version.Version: the cluster tests running beside this one
	// read it.)
	if err := checkVersions(ctx, sc, other); err != nil {
		t.Errorf("CheckVersions with the versions agreeing: %v", err)
	}
}
