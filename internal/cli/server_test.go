package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/cli"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/stored"
)

// runTierbench executes tierbench with args, an empty environment and an
// empty standard input, and returns the exit code, stdout and stderr.
func runTierbench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runTierbenchWith(t, nil, strings.NewReader(""), args...)
}

// runTierbenchWith executes tierbench with args, env as its whole
// environment and stdin as its standard input. Tests give tierbench no
// variable of the process's (a developer's $TIERBENCH_DSN never reaches
// it) and set none, so they can run in parallel.
func runTierbenchWith(t *testing.T, env map[string]string, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := cli.Execute(ctx, args, envOf(env), stdin, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// envOf is the getenv of an environment holding env only.
func envOf(env map[string]string) func(string) string {
	return func(key string) string { return env[key] }
}

func jsonKeys(t *testing.T, doc string) (map[string]any, []string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, doc)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return m, keys
}

func TestServerCommands(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	dataDir := filepath.Join(pgtest.TempDir(t), "data")
	t.Cleanup(func() { runTierbench(t, "server", "stop", "--datadir", dataDir, "--mode", "immediate") })

	code, out, errOut := runTierbench(t, "server", "start", "--json", "--engine", "postgres",
		"--datadir", dataDir, "--memory", "256MiB", "--set", "work_mem=8MB")
	if code != 0 {
		t.Fatalf("start: exit %d, stderr %q", code, errOut)
	}
	m, keys := jsonKeys(t, out)
	if want := []string{"datadir", "dsn", "engine", "limits", "listen", "pid", "port", "version"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("start --json keys = %v; want %v", keys, want)
	}
	dsn, _ := m["dsn"].(string)
	if m["engine"] != "postgres" || m["datadir"] != dataDir || !strings.HasPrefix(dsn, "postgres://tierbench:") ||
		!reflect.DeepEqual(m["listen"], []any{"127.0.0.1"}) {
		t.Errorf("start --json = %s", out)
	}

	code, out, errOut = runTierbench(t, "server", "start", "--json", "--datadir", dataDir)
	if code != 0 {
		t.Fatalf("second start: exit %d, stderr %q", code, errOut)
	}
	if m2, _ := jsonKeys(t, out); m2["already_running"] != true || m2["dsn"] != dsn {
		t.Errorf("second start --json = %s; want already_running and the same DSN", out)
	}

	code, out, errOut = runTierbench(t, "server", "status", "--json", "--datadir", dataDir)
	if code != 0 {
		t.Fatalf("status: exit %d, stderr %q", code, errOut)
	}
	if st, _ := jsonKeys(t, out); st["running"] != true || st["dsn"] != dsn || st["pid"] != m["pid"] ||
		!reflect.DeepEqual(st["listen"], []any{"127.0.0.1"}) || st["network"] != nil {
		t.Errorf("status --json = %s", out)
	}

	code, out, errOut = runTierbench(t, "server", "status", "--datadir", dataDir)
	if code != 0 || !strings.Contains(out, "running") || strings.Contains(out, dsn) {
		t.Errorf("status (text): exit %d, stdout %q, stderr %q; want running, without the password", code, out, errOut)
	}

	code, out, errOut = runTierbench(t, "server", "stop", "--json", "--datadir", dataDir)
	if code != 0 {
		t.Fatalf("stop: exit %d, stderr %q", code, errOut)
	}
	if st, _ := jsonKeys(t, out); st["was_running"] != true {
		t.Errorf("stop --json = %s", out)
	}
	code, out, _ = runTierbench(t, "server", "stop", "--datadir", dataDir)
	if code != 0 || !strings.Contains(out, "was not running") {
		t.Errorf("second stop: exit %d, stdout %q", code, out)
	}
	code, out, _ = runTierbench(t, "server", "status", "--json", "--datadir", dataDir)
	if st, keys := jsonKeys(t, out); code != 0 || st["running"] != false || contains(keys, "dsn") {
		t.Errorf("status after stop: exit %d, %s", code, out)
	}

	// Text start: the DSN line is the one place the password appears.
	code, out, errOut = runTierbench(t, "server", "start", "--datadir", dataDir)
	if code != 0 || !strings.Contains(out, "dsn: "+dsn+"\n") || errOut != "" {
		t.Errorf("start (text): exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// notHere is an IPv4 address this host does not have: 192.0.2.1
// (TEST-NET-1), or the next one when it does.
func notHere(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, cand := range []string{"192.0.2.1", "192.0.2.77", "198.51.100.1", "203.0.113.1"} {
		here := false
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.String() == cand {
				here = true
			}
		}
		if !here {
			return cand
		}
	}
	t.Fatal("this host has every test address")
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestServerBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "notes"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	newDir := filepath.Join(dir, "new")
	cases := map[string][]string{
		"engine mysql":    {"server", "start", "--engine", "mysql", "--datadir", newDir},
		"no datadir":      {"server", "start"},
		"port 0":          {"server", "start", "--datadir", newDir, "--port", "0"},
		"port 70000":      {"server", "start", "--datadir", newDir, "--port", "70000"},
		"port abc":        {"server", "start", "--datadir", newDir, "--port", "abc"},
		"memory abc":      {"server", "start", "--datadir", newDir, "--memory", "abc"},
		"memory 64MiB":    {"server", "start", "--datadir", newDir, "--memory", "64MiB"},
		"set foo":         {"server", "start", "--datadir", newDir, "--set", "foo"},
		"set =1":          {"server", "start", "--datadir", newDir, "--set", "=1"},
		"set bad name":    {"server", "start", "--datadir", newDir, "--set", "work mem=1MB"},
		"datadir file":    {"server", "start", "--datadir", file},
		"datadir foreign": {"server", "start", "--datadir", foreign},
		"stop mode":       {"server", "stop", "--datadir", newDir, "--mode", "slow"},
		"stop no datadir": {"server", "stop"},
		"stop unmanaged":  {"server", "stop", "--datadir", foreign},
		"status missing":  {"server", "status", "--datadir", newDir},
		"status file":     {"server", "status", "--datadir", file},
		"stray argument":  {"server", "start", "--datadir", newDir, "extra"},
		// --listen: an address of this host other hosts reach, nothing else.
		"listen 0.0.0.0":     {"server", "start", "--datadir", newDir, "--listen", "0.0.0.0"},
		"listen ::":          {"server", "start", "--datadir", newDir, "--listen", "::"},
		"listen not-an-ip":   {"server", "start", "--datadir", newDir, "--listen", "not-an-ip"},
		"listen a name":      {"server", "start", "--datadir", newDir, "--listen", "localhost"},
		"listen not here":    {"server", "start", "--datadir", newDir, "--listen", notHere(t)},
		"listen loopback":    {"server", "start", "--datadir", newDir, "--listen", "127.0.0.1"},
		"listen with a port": {"server", "start", "--datadir", newDir, "--listen", "10.0.0.1:5432"},
		"listen empty":       {"server", "start", "--datadir", newDir, "--listen", " "},
		"listen mariadb":     {"server", "start", "--engine", "mariadb", "--datadir", newDir, "--listen", "0.0.0.0"},
		// server clone
		"clone no from":      {"server", "clone", "--datadir", newDir},
		"clone no datadir":   {"server", "clone", "--from", foreign},
		"clone unmanaged":    {"server", "clone", "--from", foreign, "--datadir", newDir},
		"clone missing from": {"server", "clone", "--from", filepath.Join(dir, "nothing"), "--datadir", newDir},
		"clone engine":       {"server", "clone", "--from", foreign, "--datadir", newDir, "--engine", "postgres"},
	}
	for name, args := range cases {
		code, out, errOut := runTierbench(t, args...)
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != cli.ExitUsage || out != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "tierbench: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line \"tierbench: …\"", name, code, out, errOut)
		} else {
			t.Logf("%s: %s", name, lines[0])
		}
	}
	if _, err := os.Stat(newDir); !os.IsNotExist(err) {
		t.Errorf("bad input created the data directory: %v", err)
	}
}

// server start's limits on the command line: the JSON's limits, the text's
// line saying what applied, a second start saying they were not, and none
// with --no-cgroup. What applies where is experiment.StartServer's, tested
// beside it.
func TestServerStartLimits(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	dataDir := filepath.Join(pgtest.TempDir(t), "data")
	t.Cleanup(func() { runTierbench(t, "server", "stop", "--datadir", dataDir, "--mode", "immediate") })

	code, out, errOut := runTierbench(t, "server", "start", "--json", "--datadir", dataDir, "--memory", "256MiB", "--read-iops", "100")
	if code != 0 {
		t.Fatalf("start: exit %d, stderr %q", code, errOut)
	}
	var res struct {
		Limits *stored.Applied `json:"limits"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Limits == nil || res.Limits.MemoryMax == 0 && res.Limits.MemoryNote == "" {
		t.Fatalf("start --json has no limits, or neither a cap nor why not: %s", out)
	}

	// Text: one line says what applied.
	code, out, _ = runTierbench(t, "server", "start", "--datadir", dataDir, "--memory", "256MiB")
	if code != 0 || !strings.Contains(out, "limits not applied: the server was already running") {
		t.Errorf("second start: exit %d, stdout %q", code, out)
	}
	if code, _, errOut := runTierbench(t, "server", "stop", "--datadir", dataDir); code != 0 || errOut != "" {
		t.Fatalf("stop: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut = runTierbench(t, "server", "start", "--datadir", dataDir, "--memory", "256MiB", "--write-mbps", "50")
	if code != 0 {
		t.Fatalf("text start: exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], " started in ") || !strings.HasPrefix(lines[1], "memory ") || !strings.HasPrefix(lines[2], "dsn: ") {
		t.Fatalf("text start printed %q; want started, limits and dsn lines", out)
	}
	runTierbench(t, "server", "stop", "--datadir", dataDir)

	// --no-cgroup: no limits in the JSON.
	code, out, errOut = runTierbench(t, "server", "start", "--json", "--datadir", dataDir, "--memory", "256MiB", "--no-cgroup")
	if code != 0 {
		t.Fatalf("start --no-cgroup: exit %d, stderr %q", code, errOut)
	}
	if _, keys := jsonKeys(t, out); contains(keys, "limits") {
		t.Errorf("start --no-cgroup --json = %s; want no limits", out)
	}
}

func TestServerStartLimitsBadInput(t *testing.T) {
	newDir := filepath.Join(t.TempDir(), "new")
	for name, args := range map[string][]string{
		"negative iops":          {"--read-iops", "-1"},
		"negative write iops":    {"--write-iops", "-5"},
		"negative mbps":          {"--write-mbps", "-1"},
		"iops abc":               {"--read-iops", "abc"},
		"throttle and no-cgroup": {"--read-iops", "100", "--no-cgroup"},
	} {
		code, out, errOut := runTierbench(t, append([]string{"server", "start", "--datadir", newDir}, args...)...)
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != cli.ExitUsage || out != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "tierbench: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line", name, code, out, errOut)
		} else {
			t.Logf("%s: %s", name, lines[0])
		}
	}
	if _, err := os.Stat(newDir); !os.IsNotExist(err) {
		t.Errorf("bad input created the data directory: %v", err)
	}
}
