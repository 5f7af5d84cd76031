package cli_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/cli"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// serverDoc is the JSON of `server start` and `server clone`.
type serverDoc struct {
	Engine         string   `json:"engine"`
	DSN            string   `json:"dsn"`
	DataDir        string   `json:"datadir"`
	Port           int      `json:"port"`
	PID            int      `json:"pid"`
	Version        string   `json:"version"`
	Listen         []string `json:"listen"`
	Network        string   `json:"network"`
	AlreadyRunning bool     `json:"already_running"`
	ClonedFrom     string   `json:"cloned_from"`
}

// `server clone` on the command line: its JSON (server start's, with
// cloned_from), its progress line, its text, and its refusals in one line
// with exit 2. What a clone is (the data, the port, the settings, Replace)
// is experiment.CloneServer's, tested beside it.
func TestServerClone(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	base := pgtest.TempDir(t)
	src, dst := filepath.Join(base, "src"), filepath.Join(base, "copies", "dst")
	for _, d := range []string{src, dst} {
		t.Cleanup(func() { server.Stop(context.Background(), d, "immediate") })
	}
	if code, _, errOut := runTierbench(t, "server", "start", "--datadir", src); code != 0 {
		t.Fatalf("server start: exit %d: %s", code, errOut)
	}
	one := func(what string, code int, out, errOut, want string) {
		t.Helper()
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != cli.ExitUsage || out != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "tierbench: ") || !strings.Contains(lines[0], want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line saying %q", what, code, out, errOut, want)
		}
	}
	code, out, errOut := runTierbench(t, "server", "clone", "--json", "--from", src, "--datadir", dst)
	one("a running source", code, out, errOut, "--from "+src+" has its PostgreSQL server running")
	code, out, errOut = runTierbench(t, "server", "clone", "--from", src, "--datadir", filepath.Join(src, "inside"))
	one("a copy inside the source", code, out, errOut, "--datadir "+filepath.Join(src, "inside")+" is inside the source "+src)

	if code, _, errOut := runTierbench(t, "server", "stop", "--datadir", src); code != 0 {
		t.Fatalf("server stop: exit %d: %s", code, errOut)
	}
	code, out, errOut = runTierbench(t, "server", "clone", "--json", "--from", src, "--datadir", dst, "--memory", "256MiB", "--no-cgroup",
		"--set", "work_mem=3MB")
	if code != 0 {
		t.Fatalf("server clone: exit %d: %s", code, errOut)
	}
	m, keys := jsonKeys(t, out)
	if want := []string{"cloned_from", "datadir", "dsn", "engine", "listen", "pid", "port", "version"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("clone --json keys %v; want %v", keys, want)
	}
	if m["cloned_from"] != src || m["datadir"] != dst || m["engine"] != "postgres" {
		t.Errorf("clone --json = %s; want the copy in %s, from %s", out, dst, src)
	}
	if !strings.Contains(errOut, "cloning "+src+" into "+dst+"\n") {
		t.Errorf("clone: stderr %q; want the progress line", errOut)
	}
	code, out, errOut = runTierbench(t, "server", "clone", "--from", src, "--datadir", dst)
	one("an existing copy", code, out, errOut, "add --replace to replace it")
	if code, _, errOut := runTierbench(t, "server", "stop", "--datadir", dst); code != 0 {
		t.Fatal(errOut)
	}
	// --replace, in text.
	code, out, errOut = runTierbench(t, "server", "clone", "--from", src, "--datadir", dst, "--replace")
	if code != 0 || !strings.HasPrefix(out, "cloned "+src+" into "+dst+"\n") || !strings.Contains(out, "\ndsn: postgres://") {
		t.Fatalf("clone --replace: exit %d\n%s%s", code, out, errOut)
	}
}

// pgQuery returns the one text value sql selects.
func pgQuery(ctx context.Context, t *testing.T, dsn, sql string) string {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}
