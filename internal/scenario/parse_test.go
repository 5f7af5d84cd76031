package scenario

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestBrokenFiles checks that every problem of a broken file is reported, at
// its line and column, and nothing else.
func TestBrokenFiles(t *testing.T) {
	for file, want := range map[string][]string{
		"unknown-step.yaml": {
			`7:5: unknown step kind "tpc-run" (did you mean tpcc-run?); known kinds: disk, tpcc-build, tpcc-run, tpch-build, tpch-run, backup, neighbours, check, durability, space, stop, report`,
			`9:5: unknown step kind "vacuum"; known kinds: disk, tpcc-build, tpcc-run, tpch-build, tpch-run, backup, neighbours, check, durability, space, stop, report`,
		},
		"space.yaml": {
			`4:58: target bad1: emulate: compression zstd with data checksums off is not possible: btrfs does not compress files without checksums (nodatasum), so nothing would be compressed; keep checksums on or use compression none`,
			`5:46: target bad2: emulate: fs, compress and checksum are the loop image's; give loop too (e.g. loop: 2GiB), or leave them out`,
			`6:58: target bad3: emulate: file system "xfs" is not one a tier can have: use "ext4" or "btrfs"`,
			`7:58: target bad4: emulate: compression "zstd" needs file system btrfs: ext4 does not compress`,
			`8:79: target bad5: emulate checksum: "maybe" is not true or false`,
			`15:25: space: give server or target, not both: a server's data directories, or a target's directory`,
			`16:5: space: missing server or target (what to scan: a server's data directories, or a target's directory)`,
			`17:21: space: server cloud is given by its dsn, so tierbench does not manage it, and this step reads its data directory; leave the step out, or give the server engine, target and host instead of dsn`,
			`18:32: space: block 3000 is not a power of two from 512 to 1m; give e.g. 4k, 8k or 64k`,
			`19:37: space: keep_below 1.5 is not above 0 and at most 1; give e.g. 0.5 (a block kept compressed at half its size or less)`,
			`20:21: space: target "nowhere" is not defined; defined targets: plain, bad1, bad2, bad3, bad4, bad5`,
			`21:38: space: zstd_sample 3 is not auto or a power of two; give auto, 1 (every block, exact) or e.g. 32`,
		},
		"tpch.yaml": {
			`9:24: tpch-run: server "pg" has no TPC-H tables yet; build them with a tpch-build step before this one`,
			`10:37: tpch-build: scale "0" is not above 0; give one such as 0.01, 1 or 10`,
			`11:37: tpch-build: scale: "abc" is not a number of 0 or more`,
			`12:37: tpch-build: scale "0.005" gives some parts the same supplier twice (dbgen's PARTSUPP at this small scale), which its primary key refuses; give 0.01, 0.1 or 1`,
			`13:5: tpch-build: missing scale (required: server, scale)`,
			`14:37: tpch-run: streams -1 is out of range; give 0 to 64 query streams (0: no throughput test)`,
			`14:50: tpch-run: timeout 1ms is too short; give 0 (none) or at least 10ms`,
			`15:50: tpch-run: seed 7 draws parameters, but validate uses the specification's own; give one or the other`,
			`16:41: tpch-run: threshold "q23.seconds<1s": "q23.seconds" is not a figure of a TPC-H test (e.g. geomean, seconds, power_at_size, throughput_seconds); see docs/thresholds.md`,
			`17:24: tpch-run: server "other" has no TPC-H tables yet; build them with a tpch-build step before this one`,
			`18:37: tpch-run: streams 0 runs no throughput test; give 1 to 64 query streams, or leave streams out to run the power test alone`,
		},
		"durability.yaml": {
			`7:38: durability: cycles 0 is out of range; give 1 to 10000 fault cycles`,
			`7:46: durability: vus 0 is out of range; give 1 to 10000 virtual users`,
			`7:67: durability: run_before_fault 0s is too short; give at least 1s, so that transactions are in flight at the fault`,
			`7:88: durability: recover_timeout 0s is too short; give at least 1s`,
			`8:36: durability: rate 0 is out of range; give above 0 to 10,000,000 transactions a minute, or leave it out for a closed loop`,
			`8:46: durability: fault command runs a command of yours, which a scenario does not; use one of kill, stop, restart (tierbench durability --fault-command runs one)`,
			`9:36: durability: rate -5 is out of range; give above 0 to 10,000,000 transactions a minute, or leave it out for a closed loop`,
			`9:47: durability: fault "unplug" is unknown; use one of kill, stop, restart`,
			`9:61: durability: mode "fast" is unknown; use routines or statements`,
			`10:26: durability: server cloud is given by its dsn, so tierbench does not manage it, and this step crashes and restarts it; leave the step out, or give the server engine, target and host instead of dsn`,
			`11:5: durability: missing server (required: server)`,
			// The CLI's rule for one rate (experiment.ParseDurabilityRate).
			`12:36: durability: rate 50%: a durability test takes transactions a minute, e.g. 20000; it measures no maximum for a fraction to be of`,
			`13:36: durability: rate 1000,2000: a durability test takes one rate, e.g. 20000; its cycles are not steps`,
		},
		"missing-target.yaml": {
			`5:42: server db: target "sata" is not defined; defined targets: nvme`,
			`7:20: disk: target "ssd" is not defined; defined targets: nvme`,
		},
		"bad-duration.yaml": {
			`10:15: tpcc-run: rampup: duration "5 seconds" is not understood; give a duration such as 30s, 2m or 1h30m`,
			`11:17: tpcc-run: duration: duration "20x" is not understood; give a duration such as 30s, 2m or 1h30m`,
		},
		"unknown-key.yaml": {
			`2:1: scenario: unknown key "colour"; known keys: name, title, description, repeat, scales, hosts, targets, servers, steps`,
			`6:5: target t: unknown key "emulated" (did you mean emulate?); known keys: name, path, emulate`,
			`8:45: server db: unknown key "memroy" (did you mean memory?); known keys: name, engine, target, host, hosts, dsn, count, memory, settings`,
			`10:62: tpcc-run: unknown key "duraton" (did you mean duration?); known keys: server, vus, rampup, duration, mode, thresholds, repeat, back_to_back, rate, arrival, late_after, probe, knee_p99, keying_thinking, think_time`,
		},
		"undefined-var.yaml": {
			`5:22: target t: path: ${base} is not defined; define it under scales or pass --set base=VALUE (variables: data, warehouses)`,
			`10:33: tpcc-run: vus: ${vus} is not defined; define it under scales or pass --set vus=VALUE (variables: data, warehouses)`,
			`10:63: tpcc-run: duration: ${duration} is not defined; define it under scales or pass --set duration=VALUE (variables: data, warehouses)`,
		},
		"several.yaml": {
			`1:7: name "several problems": use letters, digits, -, _ and ., starting with a letter or digit`,
			`9:12: target t is defined twice (first on line 8)`,
			`11:24: server db: engine "mysql" has no managed server; use postgres or mariadb`,
			`11:49: server db: count must be between 1 and 1000 (got 0)`,
			`16:13: server pool: memory: size "12 parsecs" is not understood; give a size such as 512MiB, 1GiB, 1G or 1024MB`,
			`18:5: tpcc-build: missing warehouses (required: server, warehouses)`,
			`19:33: tpcc-run: vus: list entry "x" is not a count; give counts such as 1,2,4 (from ${vus})`,
			`19:63: tpcc-run: duration 0s is too short; give at least 1s`,
			`20:22: backup: server "nowhere" is not defined; defined servers: db, pool`,
			`20:39: backup: cycles -1 is out of range; give 1 to 1000 cycles`,
			`21:33: neighbours: tpcc: instance pool-3 does not exist: server pool has 2 instances, pool-1 … pool-2`,
			`21:51: neighbours: backup: instance pool-1 is already listed (line 21); each instance runs one thing`,
			`21:90: neighbours: duration 10s is shorter than the backups need: 2 cycles every 20s = 40s; lengthen duration or shorten interval`,
			`22:32: disk: profile "fastest" is unknown; use one of paper, easy-run, quick (see tierbench disk profiles)`,
		},
		"neighbours.yaml": {
			`20:5: neighbours: missing cycles (how many backups each backup instance runs)`,
			`22:15: neighbours: backup: instance db-3 is already listed (line 21); each instance runs one thing`,
			`22:15: neighbours: backup: instance db-5 does not exist: server db has 4 instances, db-1 … db-4`,
			`22:15: neighbours: backup: db-9..12 names instances that do not exist: server db has 4 instances, db-1 … db-4`,
			`22:15: neighbours: backup: instance "web-1" does not exist; defined instances: db-1, db-2, db-3, db-4, solo`,
			`23:12: neighbours: vus (one count per TPC-C instance): "1,2" is not a whole number`,
		},
		"yaml-syntax.yaml": {
			`3: YAML syntax: did not find expected ',' or '}'`,
		},
	} {
		t.Run(file, func(t *testing.T) {
			path := "testdata/" + file
			sc, err := Load(path, "", nil)
			if sc != nil {
				t.Errorf("a broken file gave a scenario")
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error %v (%T) is not Errors", err, err)
			}
			var got []string
			for _, e := range errs {
				if e.File != path {
					t.Errorf("error names file %q, want %q", e.File, path)
				}
				got = append(got, strings.TrimPrefix(e.Error(), path+":"))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if err.Error() != strings.Join(prefixAll(path+":", want), "\n") {
				t.Errorf("Errors.Error() is not one FILE:LINE:COL line per problem:\n%s", err)
			}
		})
	}
}

func prefixAll(p string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = p + s
	}
	return out
}

const scaled = `
name: scaled
title: "Scaled ${warehouses}"
scales:
  default:
    warehouses: 2
    vus: "1,2"
    dir: ${data}/scaled
    duration: 10s
  paper:
    warehouses: 1200
    vus: "1,2,3,5,8"
    duration: 5m
targets:
  - {name: t, path: "${dir}/t", emulate: {loop: ${loop_size}}}
servers:
  - {name: db, engine: postgres, target: t, memory: 1GiB, settings: {wal_level: minimal, max_wal_size: "${walsize}"}}
steps:
  - tpcc-build: {server: db, warehouses: ${warehouses}, build_vus: 2}
  - tpcc-run: {server: db, vus: ${vus}, rampup: 0s, duration: ${duration}}
  - report
`

func TestScalesAndSets(t *testing.T) {
	base := map[string]string{"loop_size": "0", "walsize": "1GB"} // referred to, defined by no scale: --set supplies them
	parse := func(scale string, sets map[string]string) (*Scenario, error) {
		all := map[string]string{}
		for k, v := range base {
			all[k] = v
		}
		for k, v := range sets {
			all[k] = v
		}
		return Parse("scaled.yaml", []byte(scaled), scale, all)
	}

	sc, err := parse("", nil)
	if err != nil {
		t.Fatal(err)
	}
	run := sc.Steps[1].TPCCRun
	if sc.Title != "Scaled 2" || sc.Steps[0].TPCCBuild.Warehouses != 2 || !reflect.DeepEqual(run.VUs, []int{1, 2}) ||
		run.Duration != 10*time.Second || run.Mode != "routines" || sc.Targets[0].Path != "./tierbench-data/scaled/t" ||
		sc.Targets[0].Emulate != nil || sc.Servers[0].Settings["max_wal_size"] != "1GB" || sc.Steps[2].Report == nil {
		t.Errorf("defaults: %+v %+v %+v", sc, run, sc.Targets)
	}

	sc, err = parse("paper", map[string]string{"duration": "7m", "data": "/mnt/fast", "loop_size": "1GiB"})
	if err != nil {
		t.Fatal(err)
	}
	run = sc.Steps[1].TPCCRun
	if sc.Scale != "paper" || sc.Steps[0].TPCCBuild.Warehouses != 1200 || !reflect.DeepEqual(run.VUs, []int{1, 2, 3, 5, 8}) ||
		run.Duration != 7*time.Minute || sc.Targets[0].Path != "/mnt/fast/scaled/t" ||
		sc.Targets[0].Emulate == nil || sc.Targets[0].Emulate.Loop != 1<<30 || sc.Vars["dir"] != "/mnt/fast/scaled" {
		t.Errorf("paper with --set: %+v %+v %+v", sc, run, sc.Targets[0].Emulate)
	}

	_, err = parse("huge", map[string]string{"wharehouses": "3", "nothing": "1"})
	want := []string{
		`scaled.yaml: --scale huge: not defined in this file; its scales: default, paper`,
		`scaled.yaml: --set nothing: the scenario has no variable nothing; its variables: data, dir, duration, loop_size, vus, walsize, warehouses`,
		`scaled.yaml: --set wharehouses: the scenario has no variable wharehouses (did you mean warehouses?); its variables: data, dir, duration, loop_size, vus, walsize, warehouses`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("bad --scale and --set:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}

	// A bad value from --set is reported where it is used, naming the variable.
	_, err = parse("", map[string]string{"vus": "1,,2"})
	if err == nil || !strings.Contains(err.Error(), `scaled.yaml:20:33: tpcc-run: vus: list "1,,2" has an empty entry; give counts such as 1,2,4 (from ${vus}, given by --set vus)`) {
		t.Errorf("bad --set value: %v", err)
	}
}

func TestVariableReferences(t *testing.T) {
	src := `name: refs
scales:
  default: {a: "${b}/x", b: "${c}", c: "${a}", d: "${nope}", e: "${bad", f: 1}
steps:
  - report: {title: "${f}${f}", out: "${g} ${h}"}
`
	_, err := Parse("refs.yaml", []byte(src), "", nil)
	want := []string{
		`refs.yaml:3:40: variable c: variables refer to each other in a cycle: a -> b -> c -> a`,
		`refs.yaml:3:51: variable d: ${nope} is not defined`,
		`refs.yaml:3:65: variable e: malformed variable reference in "${bad"; write ${name} with a name of letters, digits and _`,
		`refs.yaml:5:39: report: out: ${g} is not defined; define it under scales or pass --set g=VALUE (variables: a, b, c, d, data, e, f)`,
		`refs.yaml:5:44: report: out: ${h} is not defined; define it under scales or pass --set h=VALUE (variables: a, b, c, d, data, e, f)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("got:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

func TestStepShapes(t *testing.T) {
	src := `name: shapes
targets:
  - name: fast
    path: /tmp/fast
    emulate: {loop: 1GiB, read_iops: 100, write_iops: 0, read_mbps: 1.5, write_mbps: 0}
  - {name: slow, path: /tmp/slow, emulate: {loop: 0, read_iops: 0}}
servers:
  - {name: db, engine: postgres, target: fast, count: 4}
  - {name: one, engine: postgres, target: slow}
steps:
  - disk: {target: slow, profile: paper, duration: 30s, size: 1GiB}
  - backup: {server: db, cycles: 2, interval: 1m, logical: yes}
  - backup: {server: one, target: fast}
  - neighbours: {tpcc: "db-1..db-2, one", backup: [db-3..4], vus: 3, rampup: 1s, duration: 2m, cycles: 2, interval: 1m, mode: statements,
      rate: 6000, arrival: constant, late_after: 2s}
  - check: {server: db, all: true}
  - durability: {server: one}
  - durability: {server: db, cycles: 2, vus: 3, rate: 1200, run_before_fault: 5s, fault: restart, recover_timeout: 2m, mode: statements, cold_cache: yes}
  - disk: {target: slow, ramp: 0s}
  - report:
`
	sc, err := Parse("shapes.yaml", []byte(src), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := sc.Targets[0].Emulate; e == nil || *e != (Emulate{Loop: 1 << 30, ReadIOPS: 100, ReadMBps: 1.5}) {
		t.Errorf("emulate: %+v", e)
	}
	if sc.Targets[1].Emulate != nil {
		t.Errorf("an all-zero emulate block should be nil: %+v", sc.Targets[1].Emulate)
	}
	if got := sc.Servers[0].Instances(); !reflect.DeepEqual(got, []string{"db-1", "db-2", "db-3", "db-4"}) {
		t.Errorf("instances: %v", got)
	}
	if d := sc.Steps[0].Disk; !reflect.DeepEqual(*d, DiskStep{Target: "slow", Profile: "paper", Duration: 30 * time.Second, Size: 1 << 30,
		Repetitions: Repetitions{Repeat: 1}}) {
		t.Errorf("disk: %+v", d)
	}
	// A ramp given is the points' ramp, 0s none; without one, the
	// profile's (paper's 10s).
	last := len(sc.Steps) - 2
	for k, want := range map[int]time.Duration{0: 10 * time.Second, last: 0} {
		if d := sc.Steps[k].Disk; k == last && (d == nil || d.Ramp == nil || *d.Ramp != 0) {
			t.Errorf("disk with ramp 0s: %+v", d)
		}
		if cfg, err := diskConfig(sc.Steps[k].Disk); err != nil || cfg.Settings.Ramp != want {
			t.Errorf("step %d: the points' ramp %v (%v); want %v", k, cfg.Settings.Ramp, err, want)
		}
	}
	if b := sc.Steps[1].Backup; b.Target != "fast" || b.Cycles != 2 || b.Interval != time.Minute || !b.Logical || len(b.Instances) != 4 {
		t.Errorf("backup: %+v", b)
	}
	if b := sc.Steps[2].Backup; b.Target != "fast" || b.Cycles != 1 || b.Logical || !reflect.DeepEqual(b.Instances, []string{"one"}) {
		t.Errorf("backup of one: %+v", b)
	}
	n := sc.Steps[3].Neighbours
	if !reflect.DeepEqual(n.TPCC, []string{"db-1", "db-2", "one"}) || !reflect.DeepEqual(n.Backup, []string{"db-3", "db-4"}) ||
		!reflect.DeepEqual(n.Servers, []string{"db", "one"}) || n.VUs != 3 || n.Mode != "statements" || n.Cycles != 2 ||
		!reflect.DeepEqual(n.Rates, []float64{6000}) || n.Arrival != "constant" || n.LateAfter == nil || *n.LateAfter != 2*time.Second {
		t.Errorf("neighbours: %+v", n)
	}
	if !reflect.DeepEqual(sc.Steps[3].Servers(), []string{"db", "one"}) || sc.Steps[0].Servers() != nil {
		t.Errorf("Servers(): %v %v", sc.Steps[3].Servers(), sc.Steps[0].Servers())
	}
	if c := sc.Steps[4].Check; !c.All || len(c.Instances) != 4 {
		t.Errorf("check: %+v", c)
	}
	if d := sc.Steps[5].Durability; !reflect.DeepEqual(*d, DurabilityStep{Server: "one", Instances: []string{"one"}, Cycles: 3, VUs: 4,
		RunBeforeFault: 20 * time.Second, Fault: "kill", RecoverTimeout: 10 * time.Minute, Mode: "routines"}) {
		t.Errorf("durability with the defaults: %+v", d)
	}
	if d := sc.Steps[6].Durability; !reflect.DeepEqual(*d, DurabilityStep{Server: "db", Instances: []string{"db-1", "db-2", "db-3", "db-4"}, Cycles: 2,
		VUs: 3, Rate: 1200, RunBeforeFault: 5 * time.Second, Fault: "restart", RecoverTimeout: 2 * time.Minute, Mode: "statements", ColdCache: true}) ||
		!reflect.DeepEqual(sc.Steps[6].Servers(), []string{"db"}) {
		t.Errorf("durability: %+v", d)
	}
	if sc.Steps[8].Report == nil || sc.Steps[8].Line != 20 {
		t.Errorf("report: %+v", sc.Steps[8])
	}
}

// An empty rate, what a scenario's variable left empty gives, is a
// closed loop.
func TestEmptyRateIsClosedLoop(t *testing.T) {
	for _, step := range []string{"neighbours: {tpcc: db, vus: 1, rampup: 1s, duration: 1m, rate: \"${rate}\"}",
		"tpcc-run: {server: db, vus: 1, rampup: 1s, duration: 1m, rate: \"${rate}\"}", "durability: {server: db, rate: \"${rate}\"}"} {
		src := "name: a\nscales: {default: {rate: \"\"}}\ntargets: [{name: t, path: /t}]\nservers: [{name: db, engine: postgres, target: t}]\nsteps:\n  - " + step + "\n"
		for rate, want := range map[string][]float64{"": nil, "600": {600}} {
			sc, err := Parse("x.yaml", []byte(src), "", map[string]string{"rate": rate})
			if err != nil {
				t.Fatalf("%s with rate %q: %v", step, rate, err)
			}
			var got []float64
			switch st := sc.Steps[0]; {
			case st.Neighbours != nil:
				got = st.Neighbours.Rates
			case st.Durability != nil && st.Durability.Rate > 0:
				got = []float64{st.Durability.Rate}
			case st.TPCCRun != nil:
				got = st.TPCCRun.Rates
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s with rate %q: rates %v; want %v", step, rate, got, want)
			}
		}
	}
}

func TestDocumentProblems(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"", "x.yaml: the file is empty; a scenario needs at least a name and steps"},
		{"# only a comment\n", "x.yaml: the file is empty; a scenario needs at least a name and steps"},
		{"- a\n- b\n", "x.yaml:1:1: a scenario is a mapping with the keys name, title, description, repeat, scales, hosts, targets, servers, steps; this is a list"},
		{"name: a\nsteps: [report]\n---\nname: b\n", "x.yaml:3: a scenario file holds one YAML document; remove this second one (and the --- before it)"},
		{"name: a\nname: b\nsteps: [report]\n", "x.yaml:2:1: scenario: name is given twice (first on line 1)"},
		{"title: t\n", "x.yaml:1:1: missing name: give the scenario a name (letters, digits, -, _ and .)\n" +
			"x.yaml:1:1: missing steps: a scenario needs a list of steps (disk, tpcc-build, tpcc-run, tpch-build, tpch-run, backup, neighbours, check, durability, space, stop, report)"},
		{"name: a\nsteps: []\n", "x.yaml:2:1: steps is empty; add at least one step (disk, tpcc-build, tpcc-run, tpch-build, tpch-run, backup, neighbours, check, durability, space, stop, report)"},
		{"name: a\nsteps:\n  - report: {}\n    check: {}\n", "x.yaml:3:5: a step has one key, its kind; this one has 2 (report, check): is a field indented too little?"},
		{"name: a\nsteps:\n  - report: [1]\n", "x.yaml:3:13: report: the fields must be a mapping such as {server: db}, not a list"},
		{"name: a\nsteps:\n  - check\n", "x.yaml:3:5: check: missing server (required: server)"},
		{"name: a\nsteps: [report]\nscales: {paper: {vus: [1, 2]}}\n", "x.yaml:3:23: scale paper: variable vus must be a single value, not a list (write a list of counts as \"1,2,4\")"},
		{"name: a\nsteps: [report]\nservers:\n  - {name: db, engine: postgres, target: t}\n",
			"x.yaml:4:42: server db: target \"t\" is not defined; no targets are defined"},
		{"name: a\ntargets: [{name: t, path: /t}]\nservers:\n  - {name: db, engine: postgres, target: t, count: 2}\n  - {name: db-2, engine: postgres, target: t}\nsteps: [report]\n",
			"x.yaml:5:12: server db-2: its instance db-2 has the name of an instance of server db; rename one of them"},
		{"name: a\ntargets: [{name: t, path: /t}]\nservers:\n  - {name: db, engine: postgres, target: t, memory: 1MiB}\nsteps: [report]\n",
			"x.yaml:4:53: server db: memory 1MiB is too little for a managed server; give at least 128MiB"},
		{"name: a\ntargets: [{name: t, path: /t}]\nservers: [{name: db, engine: postgres, target: t}]\nsteps:\n  - neighbours: {tpcc: db, backup: [], vus: 1, rampup: 1s, duration: 1m, cycles: 2}\n",
			"x.yaml:5:74: neighbours: cycles applies to backup instances, and backup names none"},
		{"name: a\ntargets: [{name: t, path: /t}]\nservers: [{name: db, engine: postgres, target: t}]\nsteps:\n  - neighbours: {tpcc: [], vus: 1, rampup: 1s, duration: 1m}\n",
			"x.yaml:5:24: neighbours: tpcc names no instance; name instances (db-1), servers (db) or ranges (db-1..4)"},
		// A neighbours step's rate: one, in TPM; a percentage needs a probe
		// it does not run.
		{"name: a\ntargets: [{name: t, path: /t}]\nservers: [{name: db, engine: postgres, target: t}]\nsteps:\n  - neighbours: {tpcc: db, vus: 1, rampup: 1s, duration: 1m, rate: 50%}\n",
			"x.yaml:5:68: neighbours: rate: give transactions a minute per TPC-C instance, e.g. 6000; a percentage of the most it serves needs " +
				"a closed-loop probe, which a neighbours step does not run (measure it with a tpcc-run step first)"},
		{"name: a\ntargets: [{name: t, path: /t}]\nservers: [{name: db, engine: postgres, target: t}]\nsteps:\n  - neighbours: {tpcc: db, vus: 1, rampup: 1s, duration: 1m, rate: \"600,1200\"}\n",
			"x.yaml:5:68: neighbours: rate: give one rate, in transactions a minute per TPC-C instance, not 2: a neighbours step has one measured interval"},
	} {
		_, err := Parse("x.yaml", []byte(c.src), "", nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.src, err, c.want)
		}
	}
}

func TestLoad(t *testing.T) {
	sc, err := Load("quick", "laptop", nil)
	if err != nil || sc.Name != "quick" || !sc.Bundled || sc.Source != "scenarios/quick.yaml" {
		t.Fatalf("Load(quick): %+v, %v", sc, err)
	}
	_, err = Load("no-such-scenario", "", nil)
	if err == nil || !strings.Contains(err.Error(), "no-such-scenario: no such file, and no bundled scenario of that name; bundled scenarios: analytic-tiers, cluster, crash-tiers, engines, paper-1-memory, paper-2-tiers") {
		t.Errorf("unknown name: %v", err)
	}
	_, err = Load("testdata/nothing-here.yml", "", nil)
	if err == nil || err.Error() != "testdata/nothing-here.yml: cannot read the scenario file: no such file or directory" {
		t.Errorf("missing file: %v", err)
	}
	// A file that exists is read as a file whatever its name.
	path := t.TempDir() + "/quick"
	if err := os.WriteFile(path, []byte("name: mine\nsteps: [report]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if sc, err := Load(path, "", nil); err != nil || sc.Name != "mine" || sc.Bundled {
		t.Errorf("a file named like a bundled scenario: %+v, %v", sc, err)
	}
}

// Thresholds on disk, tpcc-run and neighbours steps: kept as written, each
// bad one an error at its own line, of the step's kind of figures.
func TestStepThresholds(t *testing.T) {
	src := `name: gates
targets: [{name: t, path: /t}]
servers: [{name: db, engine: postgres, target: t}]
steps:
  - disk: {target: t, thresholds: [read.iops>=10k, "write.p99.9 <= 2ms"]}
  - tpcc-run: {server: db, vus: 1, rampup: 1s, duration: 1m, thresholds: nopm>=100}
  - neighbours: {tpcc: db, vus: 1, rampup: 1s, duration: 1m, thresholds: [new_order.p99<=10ms, errors==0]}
`
	sc, err := Parse("gates.yaml", []byte(src), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Steps[0].Disk.Thresholds; !reflect.DeepEqual(got, []string{"read.iops>=10k", "write.p99.9 <= 2ms"}) {
		t.Errorf("disk thresholds %q", got)
	}
	if got := sc.Steps[1].TPCCRun.Thresholds; !reflect.DeepEqual(got, []string{"nopm>=100"}) {
		t.Errorf("tpcc-run thresholds %q", got)
	}
	if got := sc.Steps[2].Neighbours.Thresholds; len(got) != 2 {
		t.Errorf("neighbours thresholds %q", got)
	}
	bad := `name: gates
targets: [{name: t, path: /t}]
servers: [{name: db, engine: postgres, target: t}]
steps:
  - disk: {target: t, thresholds: [nopm>=1]}
  - tpcc-run:
      server: db
      vus: 1
      rampup: 1s
      duration: 1m
      thresholds:
        - nopm>=10ms
        - new_order.p99<=10ms
        - nopm
`
	_, err = Parse("gates.yaml", []byte(bad), "", nil)
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{`gates.yaml:5:36: disk: threshold "nopm>=1": "nopm" is not a figure of a disk point`,
		`gates.yaml:12:11: tpcc-run: threshold "nopm>=10ms": nopm: unit "ms"`, `gates.yaml:14:11: tpcc-run: threshold "nopm": not NAME OP VALUE`}
	if len(lines) != len(want) {
		t.Fatalf("errors:\n%s", err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d:\n got %s\nwant %s…", i, lines[i], w)
		}
	}
}

// TestRepeat: a scenario's repeat applies to every measuring step that
// does not set its own; back_to_back is read where points can be ordered.
func TestRepeat(t *testing.T) {
	src := `name: reps
repeat: 3
targets: [{name: fast, path: /tmp/fast}]
servers: [{name: db, engine: postgres, target: fast, count: 2}]
steps:
  - disk: {target: fast}
  - disk: {target: fast, repeat: 5, back_to_back: true}
  - tpcc-run: {server: db, vus: "1,2", rampup: 1s, duration: 2s}
  - tpcc-run: {server: db, vus: "1,2", rampup: 1s, duration: 2s, repeat: 1}
  - backup: {server: db, cycles: 2}
  - neighbours: {tpcc: db-1, backup: db-2, vus: 1, rampup: 1s, duration: 2s, cycles: 1, interval: 1s, repeat: 2}
`
	sc, err := Parse("reps.yaml", []byte(src), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Repeat != 3 || sc.Steps[0].Disk.Repetitions != (Repetitions{Repeat: 3}) || sc.Steps[1].Disk.Repetitions != (Repetitions{5, true}) ||
		sc.Steps[2].TPCCRun.Repetitions != (Repetitions{Repeat: 3}) || sc.Steps[3].TPCCRun.Repeat != 1 ||
		sc.Steps[4].Backup.Repeat != 3 || sc.Steps[5].Neighbours.Repeat != 2 {
		t.Errorf("repetitions: scenario %d, steps %+v %+v %+v %+v %+v %+v", sc.Repeat, sc.Steps[0].Disk.Repetitions, sc.Steps[1].Disk.Repetitions,
			sc.Steps[2].TPCCRun.Repetitions, sc.Steps[3].TPCCRun.Repetitions, sc.Steps[4].Backup.Repeat, sc.Steps[5].Neighbours.Repeat)
	}
	bad := `name: reps
repeat: 0
targets: [{name: fast, path: /tmp/fast}]
servers: [{name: db, engine: postgres, target: fast}]
steps:
  - tpcc-run: {server: db, vus: "1", rampup: 1s, duration: 2s, repeat: many}
  - backup: {server: db, back_to_back: true}
`
	_, err = Parse("reps.yaml", []byte(bad), "", nil)
	for _, want := range []string{"2:9: repeat (the repetitions of every measuring step)", `6:72: tpcc-run: repeat: "many" is not a whole number`, `7:26: backup: unknown key "back_to_back"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad repeats: %v; want %q", err, want)
		}
	}
}

// A tpcc-build step's from names a server an earlier step built, on the
// controller and of the same engine; warehouses, when given, are the
// source's.
func TestBuildFromRules(t *testing.T) {
	head := "name: f\ntitle: copies\ntargets: [{name: a, path: /a}, {name: b, path: /b}]\nservers:\n" +
		"  - {name: x, engine: postgres, target: a}\n  - {name: y, engine: postgres, target: b}\n  - {name: m, engine: mariadb, target: b}\nsteps:\n"
	for _, c := range []struct{ steps, want string }{
		{"  - tpcc-build: {server: y, from: x}\n", `from "x" has no schema yet; build it with a tpcc-build step before this one`},
		{"  - tpcc-build: {server: x, warehouses: 2}\n  - tpcc-build: {server: x, from: x}\n", `from "x" is the server itself`},
		{"  - tpcc-build: {server: x, warehouses: 2}\n  - tpcc-build: {server: y, from: x, warehouses: 3}\n", `from "x" has 2 warehouses, not 3`},
		{"  - tpcc-build: {server: x, warehouses: 2}\n  - tpcc-build: {server: m, from: x}\n", `from "x" is a postgres server and m is mariadb`},
		{"  - tpcc-build: {server: x, warehouses: 2}\n  - tpcc-build: {server: y, from: x}\n", ""},
	} {
		sc, err := Parse("f.yaml", []byte(head+c.steps), "", nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.steps, err)
		case c.want == "" && sc.Steps[1].TPCCBuild.Warehouses != 2:
			t.Errorf("the copy's warehouses: %+v; want the source's 2", sc.Steps[1].TPCCBuild)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v; want %q", c.steps, err, c.want)
		}
	}
}

// A TPC-C step's closed loop is paced as tpcc run's: keying_thinking and
// think_time reach the run's config, and a think time beside a rate or the
// spec's keying and think times is refused at its line.
func TestTPCCPace(t *testing.T) {
	src := `name: pace
targets:
  - {name: fast, path: /tmp/fast}
servers:
  - {name: db, engine: postgres, target: fast}
steps:
  - tpcc-build: {server: db, warehouses: 1}
  - tpcc-run: {server: db, vus: "2,4", rampup: 1s, duration: 5s, think_time: 5ms}
  - tpcc-run: {server: db, vus: 10, rampup: 1s, duration: 5s, keying_thinking: yes}
  - neighbours: {tpcc: db, vus: 3, rampup: 1s, duration: 5s, think_time: 1.5ms}
`
	sc, err := Parse("pace.yaml", []byte(src), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, k, n := sc.Steps[1].TPCCRun, sc.Steps[2].TPCCRun, sc.Steps[3].Neighbours
	if r.Pace != (Pace{ThinkTime: 5 * time.Millisecond}) || k.Pace != (Pace{KeyingThinking: true}) || n.Pace != (Pace{ThinkTime: 1500 * time.Microsecond}) {
		t.Errorf("paces: %+v, %+v, %+v", r.Pace, k.Pace, n.Pace)
	}
	if c := tpccConfig(r.VUs, r.RampUp, r.Duration, r.Repetitions, r.Mode, r.Rate, r.Pace); c.ThinkTime != 5*time.Millisecond || c.KeyingThinking {
		t.Errorf("config: think time %s, keying and thinking %v", c.ThinkTime, c.KeyingThinking)
	}
	for _, c := range []struct{ step, want string }{
		{`tpcc-run: {server: db, vus: 1, rampup: 1s, duration: 5s, rate: 6000, think_time: 5ms}`,
			"pace.yaml:8:86: tpcc-run: think_time 5ms paces each VU of a closed loop and cannot be combined with rate"},
		{`neighbours: {tpcc: db, vus: 1, rampup: 1s, duration: 5s, keying_thinking: true, think_time: 5ms}`,
			"pace.yaml:8:97: neighbours: think_time 5ms cannot be combined with keying_thinking"},
		{`tpcc-run: {server: db, vus: 1, rampup: 1s, duration: 5s, think_time: -5ms}`,
			"tpcc-run: think_time: duration \"-5ms\" is negative"},
	} {
		bad := strings.Replace(src, `tpcc-run: {server: db, vus: "2,4", rampup: 1s, duration: 5s, think_time: 5ms}`, c.step, 1)
		if _, err := Parse("pace.yaml", []byte(bad), "", nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.step, err, c.want)
		}
	}
}
