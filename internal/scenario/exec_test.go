package scenario

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tierbench/tierbench/internal/cgroup"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/report"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/internal/tier"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// The backups of an instance on a throttled emulated tier get a group of
// their own that draws from the tier's I/O budget (v1: the processes join
// the tier's blkio group; v2: the group is a child of the tier's) and has
// the instance's memory cap; on an unthrottled target, a group with the
// memory cap alone, and none for an instance without one.
func TestBackupGroupWithinTheTiersBudget(t *testing.T) {
	testenv.NeedRoot(t, "an emulated tier and its cgroups")
	ctx := context.Background()
	dir := t.TempDir()
	im, err := tier.Create(ctx, dir, "sata", tier.MinSize)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { im.Remove(context.Background()) })
	sata := &execTarget{Target: Target{Name: "sata", Emulate: &Emulate{ReadIOPS: 3000, WriteMBps: 200}}, path: im.MountPoint}
	const memory = 96 << 20
	in := &instance{name: "db-sata", target: sata, dataDir: filepath.Join(im.MountPoint, "db-sata"),
		server: Server{Memory: memory}}

	grp, note, ap, err := backupGroup(in, sata)
	if err != nil {
		t.Fatal(err)
	}
	if grp == nil {
		testenv.SkipOrFail(t, "the backups could not be throttled: %s", note)
	}
	t.Cleanup(func() {
		if err := grp.Remove(); err != nil {
			t.Errorf("removing the backup group: %v", err)
		}
		if tg, err := cgroup.Open(sata.groupName()); err == nil {
			tg.Remove()
		}
	})
	procs := grp.ProcsFiles()
	inTier := false
	for _, p := range procs {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
		inTier = inTier || strings.Contains(p, "/tierbench/"+sata.groupName()+"/")
	}
	t.Logf("group %s, note %q, cgroup.procs %v", grp.Name(), note, procs)
	if !strings.HasPrefix(grp.Name(), "backup-db-sata-") || !inTier {
		t.Errorf("group %s with cgroup.procs %v; want backup-db-sata-HASH, drawing from %s", grp.Name(), procs, sata.groupName())
	}
	if grp.Version() == 1 && note != cgroup.V1WritebackNote {
		t.Errorf("note %q; want v1's writeback caveat", note)
	}
	if len(ap.IO) != 1 {
		t.Errorf("applied I/O limits %+v; want the tier's one", ap.IO)
	}
	checkMemoryMax(t, ap, memory)

	fast := &execTarget{Target: Target{Name: "fast", Emulate: &Emulate{}}, path: dir}
	g, note, ap, err := backupGroup(in, fast)
	if err != nil || g == nil {
		t.Fatalf("an unthrottled target, an instance with a memory cap: group %v, note %q, err %v; want a group", g, note, err)
	}
	t.Cleanup(func() { g.Remove() })
	for _, p := range g.ProcsFiles() {
		if strings.Contains(p, "/tierbench/tier-") {
			t.Errorf("cgroup.procs %s: an unthrottled target's backups joined a tier's budget", p)
		}
	}
	if len(ap.IO) != 0 || note != "" {
		t.Errorf("an unthrottled target: I/O limits %+v, note %q; want none", ap.IO, note)
	}
	checkMemoryMax(t, ap, memory)

	in.server.Memory = 0
	if g, note, _, err := backupGroup(in, fast); g != nil || note != "" || err != nil {
		t.Errorf("an unthrottled target, no memory cap: group %v, note %q, err %v; want none", g, note, err)
	}
}

// checkMemoryMax checks that the group ap describes is capped at want
// bytes, in the kernel's own file.
func checkMemoryMax(t *testing.T, ap stored.Applied, want int64) {
	t.Helper()
	if ap.MemoryMax != want {
		t.Errorf("applied memory cap %d; want %d", ap.MemoryMax, want)
	}
	file := "memory.max"
	if ap.Version == 1 {
		file = "memory.limit_in_bytes"
	}
	b, err := os.ReadFile(filepath.Join(ap.Path, file))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != strconv.FormatInt(want, 10) {
		t.Errorf("%s/%s = %s; want %d", ap.Path, file, got, want)
	}
}

// scenarioRecorder is a front end of its own for Execute.
type scenarioRecorder struct {
	experiment.Nop
	mu       sync.Mutex
	steps    []string
	notes    []string
	checked  map[string]bool
	tpcc     int
	reported report.Written
}

func (r *scenarioRecorder) Step(i, n int, st Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, fmt.Sprintf("%d/%d %s", i, n, st.Kind))
}
func (r *scenarioRecorder) Note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, s)
}
func (r *scenarioRecorder) Checked(in string, c *tpcc.CheckResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checked[in] = c.OK
}
func (r *scenarioRecorder) Neighbour(string, *stored.TPCCStep) {}
func (r *scenarioRecorder) Reported(w report.Written)          { r.reported = w }
func (r *scenarioRecorder) Result(x experiment.Result) {
	if x.TPCC != nil {
		r.mu.Lock()
		r.tpcc++
		r.mu.Unlock()
	}
}

// A scenario run through Execute, with no cobra: a managed server of two
// instances (the second a clone of the first, built once), a 1-warehouse
// build, a TPC-C step on both, their checks and the report, every step told
// to the observer and every run in the scenario's group.
func TestExecute(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	dir := pgtest.TempDir(t)
	src := []byte(`name: tiny
title: one server, one step
targets:
  - {name: local, path: ` + filepath.Join(dir, "data") + `}
  - {name: other, path: ` + filepath.Join(dir, "other") + `}
servers:
  - {name: db, engine: postgres, target: local, count: 2, memory: 128MiB}
  - {name: copy, engine: postgres, target: other, memory: 128MiB}
steps:
  - tpcc-build: {server: db, warehouses: 1}
  - tpcc-run: {server: db, vus: "1", rate: 1200, arrival: constant, late_after: 1s, rampup: 1s, duration: 2s}
  - check: {server: db}
  - tpcc-build: {server: copy, from: db}
  - check: {server: copy}
  - tpcc-run: {server: copy, vus: "1", rate: 600, arrival: constant, rampup: 0s, duration: 1s}
  - durability: {server: copy, cycles: 1, vus: 1, rate: 1200, run_before_fault: 1s}
  - report: {}
`)
	// The run is open loop at 1,200 transactions a minute: what is checked
	// (the steps, the runs stored and checked, the servers) needs no
	// saturation, and a closed loop would take a core per VU.
	sc, err := Parse("tiny.yaml", src, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "results")
	rec := &scenarioRecorder{checked: map[string]bool{}}
	group, err := Execute(context.Background(), sc, res, rec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1/8 tpcc-build", "2/8 tpcc-run", "3/8 check", "4/8 tpcc-build", "5/8 check", "6/8 tpcc-run", "7/8 durability", "8/8 report"}; strings.Join(rec.steps, ",") != strings.Join(want, ",") {
		t.Errorf("steps %v; want %v", rec.steps, want)
	}
	// The other target's server got db-1's schema as a cold copy of its
	// data directory, taken after db-1's run: it checks as db-1 does.
	if !rec.checked["db-1"] || !rec.checked["db-2"] || !rec.checked["copy"] || rec.reported.HTML != filepath.Join(res, "report.html") {
		t.Errorf("checks %v, report %q; want db-1, db-2 and copy ok, RESULTS/report.html", rec.checked, rec.reported.HTML)
	}
	if !slices.ContainsFunc(rec.notes, func(n string) bool {
		return strings.Contains(n, "server copy: the 1-warehouse schema built on db-1 copied cold into "+filepath.Join(dir, "other", "copy"))
	}) {
		t.Errorf("no note says how copy got its schema: %q", rec.notes)
	}
	md, err := os.ReadFile(rec.reported.Markdown)
	if err != nil || !strings.Contains(string(md), "schema=copied cold from db-1 (local), not loaded through this tier") {
		t.Errorf("the report does not say how copy's run got its schema (%v)", err)
	}
	if !strings.Contains(string(md), "The one cycle passed") || !strings.Contains(string(md), "| copy | kill | 1,200 TPM offered to 1 VU | 1 |") {
		t.Errorf("the report has no passed durability cycle of copy:\n%s", md)
	}
	store, err := results.OpenReadOnly(res)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runs, err := store.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 {
		t.Fatalf("runs %+v; want a tpcc run per instance of db, and copy's tpcc and durability runs", runs)
	}
	checked := 0
	for _, r := range runs {
		if r.Kind == stored.KindDurability {
			// The crash and recovery of copy, which has a memory cap (its
			// restart is back in its cgroup: internal/server's tests).
			p, err := stored.DecodeParams(r.Kind, r.Params)
			if r.Group != group || r.Status != results.StatusComplete || err != nil || p.Placement.Label != "copy" || p.Durability.Rate != 1200 ||
				p.Durability.Cycles != 1 || p.Durability.Fault != "kill" {
				t.Errorf("durability run %+v (%+v, %v); want a complete run of copy in group %s, 1 kill cycle at 1,200 TPM", r, p, err, group)
			}
			continue
		}
		if r.Group != group || r.Kind != "tpcc" || r.Status != results.StatusComplete {
			t.Errorf("run %+v; want a complete tpcc run in group %s", r, group)
		}
		if _, err := store.Document(context.Background(), r.ID, results.DocCheck); err == nil {
			checked++
		}
	}
	if checked != 2 { // db's runs, each checked after it; copy was checked before its run
		t.Errorf("%d runs have their check stored with them; want db-1's and db-2's", checked)
	}
	var ports []int
	for _, in := range []string{"db-1", "db-2"} {
		st, err := server.Status(context.Background(), filepath.Join(dir, "data", in))
		if err != nil || st.Running {
			t.Errorf("the scenario's server %s after the run: %+v, %v; want stopped", in, st, err)
		}
		ports = append(ports, st.Port)
	}
	if ports[0] == ports[1] {
		t.Errorf("the copy db-2 has its source's port %d; want one of its own", ports[0])
	}
}
