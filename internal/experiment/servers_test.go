package experiment_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// Every rule of a managed server's config is a Problem of its field, all
// of them at once, with the value as a user writes it.
func TestServerConfigValidate(t *testing.T) {
	ok := experiment.ServerConfig{Engine: "postgres", DataDir: "/d", Memory: 128 << 20,
		Settings: map[string]string{"work_mem": "4MB", "pg_stat_statements.max": "100"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a good config: %v", err)
	}
	maria := experiment.ServerConfig{Engine: "mariadb", DataDir: "/d", Settings: map[string]string{"innodb-io-capacity": "200", "max_connections": "50"}}
	if err := maria.Validate(); err != nil {
		t.Fatalf("MariaDB's option names: %v", err)
	}
	for _, tc := range []struct {
		name string
		cfg  experiment.ServerConfig
		want []string // each problem's Error(), in order
	}{
		{"memory", experiment.ServerConfig{DataDir: "/d", Memory: 100 << 20},
			[]string{"memory 100MiB is too little for a managed server; give at least 128MiB"}},
		{"engine and datadir", experiment.ServerConfig{Engine: "mysql"},
			[]string{`engine "mysql" has no managed server; use postgres or mariadb`, "datadir is missing; give the server's data directory"}},
		{"port", experiment.ServerConfig{DataDir: "/d", Port: 70000}, []string{"port 70000 is not a TCP port; give one in 1..65535"}},
		{"listen blank", experiment.ServerConfig{DataDir: "/d", Listen: " "},
			[]string{"listen is empty; give an address of this host, or none to listen on 127.0.0.1 only"}},
		{"a PostgreSQL name with -", experiment.ServerConfig{Engine: "postgres", DataDir: "/d", Settings: map[string]string{"work-mem": "1"}},
			[]string{`settings "work-mem" is not a PostgreSQL setting name; use letters, digits, _ and . (an extension's), starting with a letter or _`}},
		{"a MariaDB name with .", experiment.ServerConfig{Engine: "mariadb", DataDir: "/d", Settings: map[string]string{"a.b": "1"}},
			[]string{`settings "a.b" is not a MariaDB option name; use letters, digits, _ and -, starting with a letter or _`}},
		{"a name no engine takes", experiment.ServerConfig{DataDir: "/d", Settings: map[string]string{"work mem": "1", "": "2"}},
			[]string{`settings "" is an empty setting name; write name=value, e.g. work_mem=64MB`,
				`settings "work mem" is not a setting name; use letters, digits, _, . (PostgreSQL) or - (MariaDB), starting with a letter or _`}},
		{"throttles", experiment.ServerConfig{DataDir: "/d", Throttle: experiment.Throttle{ReadIOPS: -1, WriteMBps: math.Inf(1), ReadMBps: 1e-7}},
			[]string{"read_iops -1 is negative; give I/Os per second, or 0 for no limit",
				"read_mbps 1e-07 is below one byte per second; give MB/s (10^6 bytes), e.g. 200, or 0 for no limit",
				"write_mbps +Inf is not a bandwidth; give MB/s (10^6 bytes) up to 1e9, e.g. 200, or 0 for no limit"}},
		{"throttle without cgroups", experiment.ServerConfig{DataDir: "/d", NoCgroup: true, Throttle: experiment.Throttle{WriteIOPS: 5}},
			[]string{"no_cgroup leaves nothing to throttle through; drop it, or the I/O throttles (they act through cgroups)"}},
	} {
		err := tc.cfg.Validate()
		var got []string
		for _, p := range experiment.Problems(err) {
			got = append(got, p.Error())
		}
		if !slices.Equal(got, tc.want) || !errors.Is(err, experiment.ErrInvalid) || experiment.OutcomeOf(err) != experiment.BadInput {
			t.Errorf("%s: %v\nwant %q, bad input", tc.name, err, tc.want)
		}
	}
}

// cgroupsUsable: root on a machine with a memory controller, where a
// server's memory is capped; elsewhere the limits say why not.
func cgroupsUsable(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	hs, err := cgroup.NewHost("/").Hierarchies()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if slices.Contains(h.Controllers, "memory") {
			return true
		}
	}
	return false
}

// StartServer caps and throttles the server it starts, in a cgroup of its
// own; a server already running is left as it runs; StopServer stops it
// and removes the group; NoCgroup only sizes the buffers.
func TestStartStopServerLimits(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dataDir := filepath.Join(pgtest.TempDir(t), "data")
	t.Cleanup(func() { server.Stop(context.Background(), dataDir, "immediate") })
	usable := cgroupsUsable(t)
	rec := &recorder{}

	cfg := experiment.ServerConfig{DataDir: dataDir, Memory: 256 << 20, Throttle: experiment.Throttle{ReadIOPS: 100},
		Settings: map[string]string{"work_mem": "8MB"}}
	res, err := experiment.StartServer(ctx, cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Engine != "postgres" || res.PID == 0 || res.AlreadyRunning || res.Limits == nil {
		t.Fatalf("started %+v; want a new PostgreSQL server with its limits", res)
	}
	if got := pgQuery(ctx, t, res.DSN, "SELECT current_setting('work_mem')"); got != "8MB" {
		t.Errorf("work_mem %q; want the setting given, 8MB", got)
	}
	name, err := server.GroupName(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if usable {
		if res.Limits.MemoryMax != 256<<20 || res.Limits.Version == 0 || len(res.Limits.IO) != 1 || res.Limits.IO[0].ReadIOPS != 100 {
			t.Errorf("limits %+v; want 256MiB and 100 read IOPS on the data directory's device", *res.Limits)
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", res.PID))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "/tierbench/"+name+"\n") {
			t.Errorf("the server (pid %d) is not in cgroup %s:\n%s", res.PID, name, b)
		}
		if !strings.HasPrefix(res.LimitsText, "memory capped at 256MiB through cgroup v") || !strings.Contains(res.LimitsText, "read IOPS limited to 100 on ") {
			t.Errorf("limits text %q", res.LimitsText)
		}
	} else if res.Limits.MemoryMax != 0 || res.Limits.MemoryNote == "" || !strings.HasPrefix(res.LimitsText, "memory not capped: ") {
		t.Errorf("limits %+v, %q; want a memory note on a machine without usable cgroups", *res.Limits, res.LimitsText)
	}

	again, err := experiment.StartServer(ctx, cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	if !again.AlreadyRunning || again.DSN != res.DSN || again.Limits != nil ||
		again.LimitsText != "limits not applied: the server was already running (stop it, then start it with them)" {
		t.Errorf("second start %+v; want the running server, its limits untouched and said so", again)
	}

	st, err := experiment.StopServer(ctx, dataDir, "", rec)
	if err != nil {
		t.Fatal(err)
	}
	if !st.WasRunning || st.Mode != experiment.StopFast || st.Engine != "postgres" || st.DataDir != dataDir {
		t.Errorf("stopped %+v; want a fast shutdown of the PostgreSQL server in %s", st, dataDir)
	}
	if _, err := cgroup.Open(name); !errors.Is(err, cgroup.ErrNotFound) {
		t.Errorf("the cgroup survived StopServer: %v", err)
	}
	if st, err := experiment.StopServer(ctx, dataDir, experiment.StopImmediate, rec); err != nil || st.WasRunning || st.Mode != "" {
		t.Errorf("stopping a stopped server: %+v, %v; want not running, no error", st, err)
	}

	cfg.Throttle, cfg.NoCgroup = experiment.Throttle{}, true
	res, err = experiment.StartServer(ctx, cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Limits != nil || res.LimitsText != "" {
		t.Errorf("NoCgroup: limits %+v, %q; want none", res.Limits, res.LimitsText)
	}
	if _, err := cgroup.Open(name); !errors.Is(err, cgroup.ErrNotFound) {
		t.Errorf("NoCgroup made a cgroup: %v", err)
	}
	if got := pgQuery(ctx, t, res.DSN, "SELECT current_setting('shared_buffers')"); got != "64MB" {
		t.Errorf("NoCgroup: shared_buffers %q; want a quarter of the memory, 64MB", got)
	}

	// A server with limits that crashed leaves its group; a start without
	// limits removes it, so that a restart after a fault (server.Restart)
	// does not put the server back under limits it no longer has.
	if usable {
		if _, err := experiment.StopServer(ctx, dataDir, "", rec); err != nil {
			t.Fatal(err)
		}
		cfg.NoCgroup = false
		if _, err := experiment.StartServer(ctx, cfg, rec); err != nil {
			t.Fatal(err)
		}
		if _, err := server.Signal(ctx, dataDir, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if _, err := cgroup.Open(name); err != nil {
			t.Fatalf("the crashed server's cgroup: %v; want it left", err)
		}
		if _, err := experiment.StartServer(ctx, experiment.ServerConfig{DataDir: dataDir}, rec); err != nil {
			t.Fatal(err)
		}
		if _, err := cgroup.Open(name); !errors.Is(err, cgroup.ErrNotFound) {
			t.Errorf("a start without limits left the cgroup of an earlier start with them: %v", err)
		}
	}

	// Bad input starts nothing and makes no directory.
	bad := filepath.Join(t.TempDir(), "new")
	for field, c := range map[string]experiment.ServerConfig{
		"memory":   {DataDir: bad, Memory: 64 << 20},
		"listen":   {DataDir: bad, Listen: "0.0.0.0"},                            // this host's to say, at the start
		"settings": {DataDir: bad, Settings: map[string]string{"work-mem": "1"}}, // a new directory is PostgreSQL's
	} {
		res, err := experiment.StartServer(ctx, c, rec)
		p := experiment.Problems(err)
		if res != nil || experiment.OutcomeOf(err) != experiment.BadInput || len(p) != 1 || p[0].Field != field {
			t.Errorf("%+v: %+v, %v; want one problem of %s, bad input", c, res, err, field)
		}
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("bad input made the data directory: %v", err)
	}
}

// CloneServer copies a stopped managed server and starts the copy on a
// port of its own, with its source's data, password and engine and the
// copy's own settings; it refuses a running source, a copy inside or
// around its source, and an existing copy unless Replace (and the copy is
// stopped).
func TestCloneServer(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := pgtest.TempDir(t)
	src, dst := filepath.Join(base, "src"), filepath.Join(base, "copies", "dst")
	for _, d := range []string{src, dst} {
		t.Cleanup(func() { server.Stop(context.Background(), d, "immediate") })
	}
	rec := &recorder{}
	started, err := experiment.StartServer(ctx, experiment.ServerConfig{DataDir: src}, rec)
	if err != nil {
		t.Fatal(err)
	}
	admin(ctx, t, started.DSN, "CREATE TABLE cloned (v text)", "INSERT INTO cloned VALUES ('from the source')")

	refused := func(what string, cfg experiment.CloneConfig, field, want string) {
		t.Helper()
		res, err := experiment.CloneServer(ctx, cfg, rec)
		p := experiment.Problems(err)
		if res != nil || len(p) != 1 || p[0].Field != field || !strings.Contains(p[0].Msg, want) {
			t.Errorf("%s: %+v, %v; want a problem of %s saying %q", what, res, err, field, want)
		}
	}
	clone := func(dir string) experiment.CloneConfig {
		return experiment.CloneConfig{From: src, ServerConfig: experiment.ServerConfig{DataDir: dir}}
	}
	refused("a running source", clone(dst), "from", "stop it before cloning (tierbench server stop --datadir "+src+")")
	refused("a copy inside the source", clone(filepath.Join(src, "inside")), "datadir", "is inside the source "+src)
	refused("a copy holding the source", clone(base), "datadir", "holds the source "+src)
	refused("no source", experiment.CloneConfig{ServerConfig: experiment.ServerConfig{DataDir: dst}}, "from", "is missing")

	if _, err := experiment.StopServer(ctx, src, "", rec); err != nil {
		t.Fatal(err)
	}
	cfg := clone(dst)
	cfg.Memory, cfg.NoCgroup, cfg.Settings = 256<<20, true, map[string]string{"work_mem": "3MB"}
	cfg.Engine = "mariadb"
	refused("another engine than the source's", cfg, "engine", "a copy has its source's engine")
	cfg.Engine = ""
	cloned, err := experiment.CloneServer(ctx, cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	if cloned.Engine != "postgres" || cloned.DataDir != dst || cloned.ClonedFrom != src || cloned.Port == started.Port || cloned.PID == 0 ||
		!strings.Contains(cloned.DSN, "@127.0.0.1:") || cloned.AlreadyRunning {
		t.Errorf("cloned %+v; want the copy in %s, from %s, on a port other than %d", cloned, dst, src, started.Port)
	}
	if !slices.Contains(rec.notes, "cloning "+src+" into "+dst) {
		t.Errorf("notes %q; want the clone said", rec.notes)
	}
	if got := pgQuery(ctx, t, cloned.DSN, "SELECT string_agg(v, ',') || ' ' || current_setting('work_mem') FROM cloned"); got != "from the source 3MB" {
		t.Errorf("the copy: %q; want the source's row and work_mem=3MB", got)
	}
	admin(ctx, t, cloned.DSN, "INSERT INTO cloned VALUES ('only in the copy')")
	// The source starts again beside its copy, on its own port.
	again, err := experiment.StartServer(ctx, experiment.ServerConfig{DataDir: src}, rec)
	if err != nil || again.Port != started.Port {
		t.Errorf("the source again: %+v, %v; want port %d", again, err, started.Port)
	}
	if _, err := experiment.StopServer(ctx, src, "", rec); err != nil {
		t.Fatal(err)
	}

	refused("an existing copy", clone(dst), "datadir", "add {replace} to replace it")
	replace := clone(dst)
	replace.Replace = true
	refused("a running copy", replace, "datadir", "stop it first")
	if _, err := experiment.StopServer(ctx, dst, "", rec); err != nil {
		t.Fatal(err)
	}
	fresh, err := experiment.CloneServer(ctx, replace, rec)
	if err != nil {
		t.Fatal(err)
	}
	if got := pgQuery(ctx, t, fresh.DSN, "SELECT string_agg(v, ',') FROM cloned"); got != "from the source" {
		t.Errorf("the replaced copy holds %q; want the source's row alone", got)
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

// admin runs statements on dsn.
func admin(ctx context.Context, t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
