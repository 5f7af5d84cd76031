package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// fakeProc writes a process into a fixture /proc tree: its cmdline, a stat
// line with every field procfs reads (state, parent, start time; the rest
// 0) and, when cwd is given, its cwd link.
func fakeProc(t *testing.T, root string, pid, ppid int, state string, ticks uint64, cwd string, args ...string) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fields := make([]string, 50) // fields 3..52 of stat
	for i := range fields {
		fields[i] = "0"
	}
	fields[0], fields[1], fields[19] = state, fmt.Sprint(ppid), fmt.Sprint(ticks)
	stat := fmt.Sprintf("%d (%s) %s\n", pid, filepath.Base(args[0]), strings.Join(fields, " "))
	write(t, filepath.Join(dir, "stat"), stat)
	write(t, filepath.Join(dir, "cmdline"), strings.Join(args, "\x00")+"\x00")
	if cwd != "" {
		if err := os.Symlink(cwd, filepath.Join(dir, "cwd")); err != nil {
			t.Fatal(err)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// fakeDataDir writes a data directory: PG_VERSION, a postmaster.pid naming
// pid and port (pid 0: none), and, when st is not nil, tierbench's state file.
func fakeDataDir(t *testing.T, dir string, pid, port int, st *state) {
	t.Helper()
	write(t, filepath.Join(dir, "PG_VERSION"), "15\n")
	if pid > 0 {
		write(t, filepath.Join(dir, "postmaster.pid"),
			fmt.Sprintf("%d\n%s\n1700000000\n%d\n%s\n127.0.0.1\n  1234     5678\nready   \n", pid, dir, port, dir))
	}
	if st != nil {
		if err := writeState(dir, *st, currentAccount()); err != nil {
			t.Fatal(err)
		}
	}
}

const pgBin = "/usr/lib/postgresql/15/bin/postgres"

func TestFindRunning(t *testing.T) {
	root := t.TempDir()
	proc, data := filepath.Join(root, "proc"), filepath.Join(root, "data")
	managedState := func(by *starter) *state {
		return &state{Engine: EnginePostgres, Port: 1, User: DBUser, Password: "pw", Version: "15.14", StartedBy: by}
	}
	fakeProc(t, proc, 1, 0, "S", 1, "", "/sbin/init")
	fakeProc(t, proc, 300, 1, "S", 777, "", "/usr/bin/tierbench", "scenario", "run", "quick")

	// a: its scenario was killed (pid 200 is gone): orphaned.
	fakeProc(t, proc, 100, 1, "S", 5000, "", pgBin, "-D", filepath.Join(data, "a"))
	fakeDataDir(t, filepath.Join(data, "a"), 100, 5433, managedState(&starter{PID: 200, StartTicks: 4000, Command: "tierbench scenario run x.yaml"}))
	// Its children: renamed, or not, they have a postgres parent.
	fakeProc(t, proc, 101, 100, "S", 5001, "", "postgres: checkpointer ")
	fakeProc(t, proc, 102, 100, "S", 5002, "", pgBin, "-D", filepath.Join(data, "a"))

	// b: started with a relative -D, found through its working directory;
	// its scenario (300) still runs.
	fakeProc(t, proc, 110, 1, "S", 5100, filepath.Join(data, "b"), "postgres", "-D", "b")
	fakeDataDir(t, filepath.Join(data, "b"), 110, 5434, managedState(&starter{PID: 300, StartTicks: 777, Command: "tierbench scenario run quick"}))

	// c: started by `server start`, which has exited, as it does.
	fakeProc(t, proc, 120, 1, "S", 5200, "", pgBin, "-D"+filepath.Join(data, "c"))
	fakeDataDir(t, filepath.Join(data, "c"), 120, 5435, managedState(&starter{PID: 201, Command: "tierbench server start", KeepRunning: true}))

	// f: its starter's PID now belongs to init: a reused PID, so gone.
	fakeProc(t, proc, 130, 1, "S", 5300, "", pgBin, "-D", filepath.Join(data, "f"))
	fakeDataDir(t, filepath.Join(data, "f"), 130, 5436, managedState(&starter{PID: 1, StartTicks: 999, Command: "tierbench scenario run y"}))

	// g: started by a tierbench that recorded no starter.
	fakeProc(t, proc, 140, 1, "S", 5400, "", pgBin, "-D", filepath.Join(data, "g"))
	fakeDataDir(t, filepath.Join(data, "g"), 140, 5437, managedState(nil))

	// Not listed: a cluster tierbench did not create, a stale
	// postmaster.pid naming another process, a zombie postmaster, a
	// postmaster whose directory is gone.
	fakeProc(t, proc, 150, 1, "S", 5500, "", pgBin, "-D", filepath.Join(data, "foreign"))
	fakeDataDir(t, filepath.Join(data, "foreign"), 150, 5438, nil)
	fakeProc(t, proc, 160, 1, "S", 5600, "", pgBin, "-D", filepath.Join(data, "stale"))
	fakeDataDir(t, filepath.Join(data, "stale"), 99, 5439, managedState(nil))
	fakeProc(t, proc, 170, 1, "Z", 5700, "", pgBin, "-D", filepath.Join(data, "zombie"))
	fakeDataDir(t, filepath.Join(data, "zombie"), 170, 5440, managedState(nil))
	fakeProc(t, proc, 180, 1, "S", 5800, "", pgBin, "-D", filepath.Join(data, "gone"))

	got, err := findRunning(context.Background(), proc)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		dir           string
		pid, port     int
		starter       int
		alive, orphan bool
	}
	want := []row{
		{"a", 100, 5433, 200, false, true},
		{"b", 110, 5434, 300, true, false},
		{"c", 120, 5435, 201, false, false},
		{"f", 130, 5436, 1, false, true},
		{"g", 140, 5437, 0, false, false},
	}
	if len(got) != len(want) {
		t.Fatalf("found %d servers, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		r := row{dir: filepath.Base(g.DataDir), pid: g.PID, port: g.Port, orphan: g.Orphaned}
		if g.StartedBy != nil {
			r.starter, r.alive = g.StartedBy.PID, g.StartedBy.Alive
		}
		if r != w {
			t.Errorf("server %d = %+v; want %+v", i, r, w)
		}
		if g.DataDir != filepath.Join(data, w.dir) || g.Version != "15.14" || !g.Since.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("server %s: datadir %s, version %q, since %v", w.dir, g.DataDir, g.Version, g.Since)
		}
	}
	if c := got[0].StartedBy.Command; c != "tierbench scenario run x.yaml" {
		t.Errorf("starter command %q", c)
	}

	// Nothing running reads as an empty list, not an error.
	empty := filepath.Join(root, "empty")
	fakeProc(t, empty, 1, 0, "S", 1, "", "/sbin/init")
	if got, err := findRunning(context.Background(), empty); err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty /proc: %v, %v; want an empty list", got, err)
	}
}

// The starter recorded for this process reads as alive in the real /proc.
func TestThisProcessAlive(t *testing.T) {
	s := thisProcess(false)
	if s.PID != os.Getpid() || s.StartTicks == 0 {
		t.Fatalf("thisProcess = %+v", s)
	}
	pfs, err := procfs.NewFS(procfs.DefaultMountPoint)
	if err != nil {
		t.Fatal(err)
	}
	if !processRuns(pfs, s.PID, s.StartTicks) {
		t.Error("this process reads as gone")
	}
	if processRuns(pfs, s.PID, s.StartTicks+1) {
		t.Error("another start time reads as the same process")
	}
}

func TestCommandName(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"/usr/local/bin/tierbench", "scenario", "run", "quick", "--scale", "paper"}, "tierbench scenario run quick"},
		{[]string{"tierbench", "server", "start", "--datadir", "/x"}, "tierbench server start"},
		{[]string{"tierbench", "--json", "run"}, "tierbench"},
		{[]string{"tierbench", "durability", "postgres://u:secret@h/db"}, "tierbench durability"},
		{[]string{"./tierbench", "a", "b", "c", "d", "e"}, "tierbench a b c"},
	}
	for _, c := range cases {
		if got := commandName(c.args); got != c.want {
			t.Errorf("commandName(%q) = %q; want %q", c.args, got, c.want)
		}
	}
}
