package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/clustertest"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// leakRecorder keeps, besides what scenarioRecorder keeps, every note and
// every event's document as text: all a front end could print.
type leakRecorder struct {
	scenarioRecorder
	textMu sync.Mutex
	text   strings.Builder
}

func (r *leakRecorder) add(v any) {
	b, _ := json.Marshal(v)
	r.textMu.Lock()
	defer r.textMu.Unlock()
	r.text.Write(b)
	r.text.WriteByte('\n')
}
func (r *leakRecorder) Note(msg string)                { r.add(msg) }
func (r *leakRecorder) Started(s experiment.Started)   { r.add(s) }
func (r *leakRecorder) Progress(p experiment.Progress) { r.add(p) }
func (r *leakRecorder) Result(x experiment.Result)     { r.scenarioRecorder.Result(x); r.add(x) }
func (r *leakRecorder) told() string {
	r.textMu.Lock()
	defer r.textMu.Unlock()
	return r.text.String()
}

// clusterScenario is the bundled cluster scenario shortened: a storage
// profile on both hosts, managed PostgreSQL instances spread over them
// (started over SSH, listening on the hosts' addresses), built on their
// hosts, TPC-C from the controller beside a backup run on its host, the
// consistency checks, TPC-H built by each host's tierbench and run from the
// controller on every instance, and the report.
const clusterScenario = `name: cluster-test
hosts:
  - {name: h1, ssh: "root@H1", tierbench: "TB", node_exporter: "http://H1:9100/metrics", fio_server: "H1"}
  - {name: h2, ssh: "root@H2", tierbench: "TB", node_exporter: "http://H2:9100/metrics", fio_server: "H2"}
targets:
  - {name: data, path: "DATA"}
servers:
  - {name: db, engine: postgres, target: data, hosts: "h1,h2", count: 2, memory: 256MiB}
steps:
  - disk: {target: data, hosts: all, profile: quick, duration: 1s, ramp: 0s, size: 16MiB}
  - tpcc-build: {server: db, warehouses: 1}
  - neighbours: {tpcc: "db-1..3", backup: db-4, vus: 1, rate: 600, rampup: 7s, duration: 9s, cycles: 1}
  - check: {server: db}
  - tpch-build: {server: db, scale: 0.01}
  - tpch-run: {server: db, no_refresh: true}
  - durability: {server: db, cycles: 1, vus: 1, rate: 600, run_before_fault: 1s}
  - report: {}
`

// The shortened cluster scenario on two namespace hosts, end to end,
// through Execute; and no password on any command line of either host
// (they share this machine's process list), in what the executor told its
// observer (what a front end prints) or in the servers' logs. This was the
// CLI's TestClusterScenario.
func TestExecuteClusterScenario(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	c := clustertest.New(t, 2, clustertest.Options{SSH: true, Fio: true, NodeExporter: true})
	clustertest.ShareSSH(t, c)
	tb := clustertest.Tierbench(t)
	data := filepath.Join(pgtest.TempDir(t), "cluster")
	res := t.TempDir()
	src := strings.NewReplacer("H1", c.Hosts[0].Addr, "H2", c.Hosts[1].Addr, "TB", tb, "DATA", data).Replace(clusterScenario)
	sc, err := Parse("cluster.yaml", []byte(src), "", nil)
	if err == nil {
		err = CheckHosts(context.Background(), sc)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // whatever the scenario left running, should it fail
		for _, in := range []string{"db-1", "db-2", "db-3", "db-4"} {
			_ = exec.Command(tb, "server", "stop", "--datadir", filepath.Join(data, in)).Run()
		}
	})

	cmdlines := clustertest.WatchCmdlines(t) // every command line on the machine, as the scenario runs
	rec := &leakRecorder{scenarioRecorder: scenarioRecorder{checked: map[string]bool{}}}
	_, err = Execute(context.Background(), sc, res, rec, Options{})
	lines := cmdlines.Lines()
	told := rec.told()
	if err != nil {
		t.Fatalf("%v\nthe observer heard:\n%s", err, told)
	}

	// The two hosts built at once: each host's TPC-C build began before
	// either host's clone, which follows its build; each host's first
	// TPC-H build began before either host's second.
	var building, cloning, tpch []int
	notes := strings.Split(told, "\n")
	for k, line := range notes {
		switch {
		case strings.Contains(line, "building (or reusing)"):
			building = append(building, k)
		case strings.Contains(line, "cloning "):
			cloning = append(cloning, k)
		case strings.Contains(line, "building TPC-H"):
			tpch = append(tpch, k)
		}
	}
	if len(building) != 2 || len(cloning) != 2 || building[1] > cloning[0] {
		t.Errorf("the builds' and clones' notes at lines %v and %v; want both builds begun before the first clone", building, cloning)
	}
	if len(tpch) != 4 || strings.Contains(notes[tpch[0]], "host h1") == strings.Contains(notes[tpch[1]], "host h1") {
		t.Errorf("the TPC-H builds' notes at lines %v; want the first two on the two hosts", tpch)
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
	if kinds["disk"] != 1 || kinds["tpcc"] != 3 || kinds["backup"] != 1 || kinds["tpch"] != 4 || kinds["durability"] != 4 {
		t.Errorf("runs by kind: %v; want 1 disk, 3 tpcc, 1 backup, 4 tpch, 4 durability", kinds)
	}
	// Each instance's durability test ran on its host, crashing and
	// restarting the server there: back on the host's address, which the
	// test's recovery waits to answer, as the controller's steps need.
	for in, want := range map[string]string{"db-1/tpcc": "h1", "db-2/tpcc": "h1", "db-3/tpcc": "h2", "db-4/backup": "h2", "db-4/tpch": "h2",
		"db-1/durability": "h1", "db-4/durability": "h2"} {
		if hostOf[in] != want {
			t.Errorf("%s: scenario_host %q; want %s", in, hostOf[in], want)
		}
	}
	// Each TPC-C step has both hosts' telemetry. The three instances, on
	// two hosts, started their step within 500 ms of each other; the
	// backup on h2 started its first cycle when their ramp-up ended (its
	// times moved into the controller's clock), ssh and its set-up done
	// during the ramp-up: not before its end, and inside the measured
	// interval, which is what the backup's overlap is read from. How late
	// in it is logged, not asserted: a CI host running every package's
	// tests at once once started it 1.01 s late, a quiet one within 0.1 s.
	// The ramp-up is 7 s: a CI host running every package's tests at once
	// once took 6.3 s over ssh to set the backup run up, which a quiet one
	// does in a quarter of a second.
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
			NOPM     float64 `json:"nopm"`
			Unserved float64 `json:"unserved"`
			Held     float64 `json:"oldest_in_flight_ms"`
			Hosts    []struct {
				Host    string `json:"host"`
				Samples int    `json:"samples"`
			} `json:"hosts"`
		}
		if err := json.Unmarshal(steps[0].Metrics, &st); err != nil {
			t.Fatal(err)
		}
		// A loaded CI host once held one instance's only VU from its
		// ramp-up to the end (no transaction done, 167 arrivals unserved,
		// the disk 20% busy): the step must then show that a transaction
		// was held at its end, and the arrivals it could not serve. (The
		// backends of such runs were seen waiting seconds in the kernel
		// for data-file reads, with other packages' tests loading the
		// disk.)
		if (st.NOPM <= 0 && (st.Held < 1000 || st.Unserved < 1)) || len(st.Hosts) != 2 || st.Hosts[0].Samples == 0 || st.Hosts[1].Samples == 0 {
			t.Errorf("run %s: step %s", r.ID, steps[0].Metrics)
		}
	}
	spread := lastStart.Sub(firstStart)
	late := backupStart.Sub(firstStart.Add(7 * time.Second))
	t.Logf("TPC-C steps started within %v; the backup's first cycle %v after the ramp-up's end", spread, late)
	// Side by side means within a scheduling delay of each other, not
	// the seconds a lone instance's build or ramp-up would put between
	// them: a busy CI host once held one start back by 128 ms.
	if spread > 500*time.Millisecond {
		t.Errorf("the instances' steps started %v apart; want within 500 ms", spread)
	}
	if late < -500*time.Millisecond || late >= 9*time.Second {
		t.Errorf("the backup on h2 started %v from the ramp-up's end; want at its end, within the 9 s measured interval", late)
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
			var stderr []byte
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				stderr = ee.Stderr
			}
			t.Fatalf("server start %s: %v: %s", in, err, stderr)
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
		if strings.Contains(told, pw) {
			t.Error("what the scenario told its observer holds a server's password")
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
