package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/clustertest"
	"github.com/tierbench/tierbench/internal/remote"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// clusterScenario is the bundled cluster scenario shortened: a storage
// profile on both hosts, managed PostgreSQL instances spread over them
// (started over SSH, listening on the hosts' addresses), built on their
// hosts, TPC-C from the controller beside a backup run on its host, the
// consistency checks and the report.
const clusterScenario = `name: cluster-test
hosts:
  - {name: h1, ssh: "root@H1", tierbench: "TB", node_exporter: "http://H1:9100/metrics", fio_server: "H1"}
  - {name: h2, ssh: "root@H2", tierbench: "TB", node_exporter: "http://H2:9100/metrics", fio_server: "H2"}
targets:
  - {name: data, path: "DATA"}
servers:
  - {name: db, engine: postgres, target: data, hosts: "h1,h2", count: 2, memory: 256MiB}
steps:
  - disk: {target: data, hosts: all, profile: quick, duration: 1s, size: 16MiB}
  - tpcc-build: {server: db, warehouses: 1}
  - neighbours: {tpcc: "db-1..3", backup: db-4, vus: 1, rampup: 4s, duration: 12s, cycles: 1}
  - check: {server: db}
  - report: {}
`

// The shortened cluster scenario on two namespace hosts, end to end; and no
// password on any command line of either host (they share this machine's
// process list) or in the servers' logs.
func TestClusterScenario(t *testing.T) {
	pgtest.RequireBinaries(t)
	c := clustertest.New(t, 2, clustertest.Options{SSH: true, Fio: true, NodeExporter: true})
	t.Setenv(remote.EnvSSHCommand, c.SSHCommand)
	tb := clustertest.Tierbench(t)
	data := filepath.Join(pgtest.TempDir(t), "cluster")
	res := t.TempDir()
	file := filepath.Join(t.TempDir(), "cluster.yaml")
	src := strings.NewReplacer("H1", c.Hosts[0].Addr, "H2", c.Hosts[1].Addr, "TB", tb, "DATA", data).Replace(clusterScenario)
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // whatever the scenario left running, should it fail
		for _, in := range []string{"db-1", "db-2", "db-3", "db-4"} {
			_ = exec.Command(tb, "server", "stop", "--datadir", filepath.Join(data, in)).Run()
		}
	})

	cmdlines := clustertest.WatchCmdlines(t) // every command line on the machine, as the scenario runs
	code, out, errOut := runTierbench(t, "scenario", "run", file, "--results", res, "--json")
	lines := cmdlines.Lines()
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	store, err := results.OpenReadOnly(res)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	runs, err := store.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	hostOf := map[string]string{}
	for _, r := range runs {
		kinds[r.Kind]++
		var p struct {
			Instance string `json:"instance"`
			Host     string `json:"scenario_host"`
		}
		_ = json.Unmarshal(r.Params, &p)
		if p.Instance != "" {
			hostOf[p.Instance+"/"+r.Kind] = p.Host
		}
		if r.Status != results.StatusComplete {
			t.Errorf("run %s (%s): %s", r.ID, r.Kind, r.Status)
		}
		if r.Kind == "backup" && r.Host != "h2" {
			t.Errorf("backup run %s: host %q; want h2, where it ran", r.ID, r.Host)
		}
	}
	if kinds["disk"] != 1 || kinds["tpcc"] != 3 || kinds["backup"] != 1 {
		t.Errorf("runs by kind: %v; want 1 disk, 3 tpcc, 1 backup", kinds)
	}
	for in, want := range map[string]string{"db-1/tpcc": "h1", "db-2/tpcc": "h1", "db-3/tpcc": "h2", "db-4/backup": "h2"} {
		if hostOf[in] != want {
			t.Errorf("%s: scenario_host %q; want %s", in, hostOf[in], want)
		}
	}
	// Each TPC-C step has both hosts' telemetry. The three instances, on
	// two hosts, started their step within 100 ms of each other; the
	// backup on h2 started its first cycle when their ramp-up ended (its
	// times moved into the controller's clock), ssh and its set-up done
	// during the ramp-up.
	var firstStart, lastStart, backupStart time.Time
	for _, r := range runs {
		if r.Kind == "backup" {
			steps, err := store.Steps(ctx, r.ID)
			if err != nil || len(steps) == 0 {
				t.Fatalf("backup run %s: %d steps (%v)", r.ID, len(steps), err)
			}
			var ph struct {
				DropCacheMs float64 `json:"drop_cache_ms"`
			}
			if err := json.Unmarshal(steps[0].Metrics, &ph); err != nil {
				t.Fatal(err)
			}
			// The cycle starts with dropping the page cache, untimed; the
			// phase's timing starts after it.
			backupStart = steps[0].StartedAt.Add(-time.Duration(ph.DropCacheMs * float64(time.Millisecond)))
		}
		if r.Kind != "tpcc" {
			continue
		}
		steps, err := store.Steps(ctx, r.ID)
		if err != nil || len(steps) == 0 {
			t.Fatalf("run %s: %d steps (%v)", r.ID, len(steps), err)
		}
		if st := steps[0].StartedAt; firstStart.IsZero() || st.Before(firstStart) {
			firstStart = st
		}
		if st := steps[0].StartedAt; st.After(lastStart) {
			lastStart = st
		}
		var st struct {
			NOPM  float64 `json:"nopm"`
			Hosts []struct {
				Host    string `json:"host"`
				Samples int    `json:"samples"`
			} `json:"hosts"`
		}
		if err := json.Unmarshal(steps[0].Metrics, &st); err != nil {
			t.Fatal(err)
		}
		if st.NOPM <= 0 || len(st.Hosts) != 2 || st.Hosts[0].Samples == 0 || st.Hosts[1].Samples == 0 {
			t.Errorf("run %s: step %s", r.ID, steps[0].Metrics)
		}
	}
	spread := lastStart.Sub(firstStart)
	late := backupStart.Sub(firstStart.Add(4 * time.Second))
	t.Logf("TPC-C steps started within %v; the backup's first cycle %v after the ramp-up's end", spread, late)
	if spread > 100*time.Millisecond {
		t.Errorf("the instances' steps started %v apart; want within 100 ms", spread)
	}
	if late < -100*time.Millisecond || late > 100*time.Millisecond {
		t.Errorf("the backup on h2 started %v from the ramp-up's end; want within 100 ms", late)
	}

	// The report shows the cluster: its IOPS over all hosts, each host's
	// table row, the instances per host, and the disk points per host.
	html, err := os.ReadFile(filepath.Join(res, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<section id="cluster">`, `id="cluster-iops"`, `id="cluster-hosts"`, "<td>h1</td>", "<td>h2</td>",
		"<td>db-3</td>", `id="cluster-storage-`, "<td>all hosts</td>"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %s", want)
		}
	}
	if !strings.Contains(string(html), "steps in phase beside backups started within") {
		t.Error("the report does not say how far apart the instances' steps started")
	}

	// The passwords, as the hosts' own tierbench tells them: the scenario
	// stopped its servers, and a DSN is shown for a running one only.
	var passwords []string
	for _, in := range []string{"db-1", "db-3"} {
		dir := filepath.Join(data, in)
		st, err := exec.Command(tb, "server", "start", "--datadir", dir, "--json").Output()
		if err != nil {
			t.Fatalf("server start %s: %v", in, err)
		}
		if err := exec.Command(tb, "server", "stop", "--datadir", dir).Run(); err != nil {
			t.Fatalf("server stop %s: %v", in, err)
		}
		var s struct {
			DSN string `json:"dsn"`
		}
		if json.Unmarshal(st, &s) != nil || !strings.Contains(s.DSN, "@") {
			t.Fatalf("server start %s: %s", in, st)
		}
		passwords = append(passwords, strings.SplitN(strings.SplitN(s.DSN, "://", 2)[1], "@", 2)[0])
	}
	for _, pw := range passwords {
		pw = pw[strings.IndexByte(pw, ':')+1:]
		if len(pw) < 8 {
			t.Fatalf("password %q is too short to look for", pw)
		}
		for _, cl := range lines {
			if strings.Contains(cl, pw) {
				t.Errorf("a command line holds a server's password: %q", cl)
			}
		}
		if strings.Contains(out, pw) || strings.Contains(errOut, pw) {
			t.Error("the scenario's output holds a server's password")
		}
		_ = filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() || !strings.HasSuffix(p, ".log") {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), pw) {
				t.Errorf("log %s holds a server's password", p)
			}
			return nil
		})
	}
	if len(lines) < 10 {
		t.Errorf("only %d command lines seen: the process list was not read", len(lines))
	}
}

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
