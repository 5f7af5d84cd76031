package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The command line and a scenario step refuse the same value with the same
// meaning, since both call the experiment's Validate: for each rule, the
// flag's one-line error and the scenario's problem at the key's line end
// in the same words after the name each front end gives the field. Nothing
// connects (the DSN's port is closed) and nothing is recorded.
func TestRulesAgreeAcrossFrontEnds(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	target := filepath.Join(dir, "target")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	const closed = "postgres://u:hunter22@127.0.0.1:1/db"
	tpccRun := []string{"tpcc", "run", "--dsn", closed, "--results", res, "--rampup", "0s", "--duration", "1s"}
	backup := []string{"backup", "run", "--dsn", closed, "--target", filepath.Join(dir, "backups"), "--results", res}
	disk := []string{"disk", "run", "--target", target, "--results", res}
	build := []string{"tpcc", "build", "--dsn", closed}
	for _, c := range []struct {
		name string
		args []string // the command line, refused
		flag string   // how it names the field
		step string   // a scenario step giving the same value
		key  string   // how the scenario names the field
		same string   // what both say after the name
	}{
		{"vus per step", append(tpccRun, "--vus", "1,20000"), "--vus", `tpcc-run: {server: db, vus: "1,20000", rampup: 0s, duration: 1s}`,
			"tpcc-run: vus", "20000 is out of range; give 1 to 10000 virtual users per step"},
		{"neighbours vus", append(tpccRun, "--vus", "20000"), "--vus", `neighbours: {tpcc: db, vus: 20000, rampup: 0s, duration: 1s}`,
			"neighbours: vus", "20000 is out of range; give 1 to 10000 virtual users per step"},
		{"tpcc duration", append(tpccRun, "--duration", "500ms"), "--duration", `tpcc-run: {server: db, vus: 1, rampup: 0s, duration: 500ms}`,
			"tpcc-run: duration", "500ms is too short; give at least 1s"},
		{"tpcc mode", append(tpccRun, "--mode", "fast"), "--mode", `tpcc-run: {server: db, vus: 1, rampup: 0s, duration: 1s, mode: fast}`,
			"tpcc-run: mode", `"fast" is unknown; use routines or statements`},
		{"repetitions", append(tpccRun, "--repeat", "1001"), "--repeat", `tpcc-run: {server: db, vus: 1, rampup: 0s, duration: 1s, repeat: 1001}`,
			"tpcc-run: repeat", "1001 is out of range; give a count of repetitions from 1 to 1000, e.g. 3"},
		{"rate zero", append(tpccRun, "--rate", "0"), "--rate", `tpcc-run: {server: db, vus: 1, rampup: 0s, duration: 1s, rate: 0}`,
			"tpcc-run: rate", "0 is out of range; give above 0 to 10,000,000 transactions a minute"},
		{"rate negative", append(tpccRun, "--rate", "6000,-5"), "--rate", `tpcc-run: {server: db, vus: 1, rampup: 0s, duration: 1s, rate: "6000,-5"}`,
			"tpcc-run: rate", "-5 is out of range; give above 0 to 10,000,000 transactions a minute"},
		{"rate fraction", append(tpccRun, "--rate", "50%,0%"), "--rate", `tpcc-run: {server: db, vus: 1, rampup: 0s, duration: 1s, rate: [50%, 0%]}`,
			"tpcc-run: rate", `"0%" is out of range; give fractions above 0% and up to 1000% of the maximum`},
		{"rate pool", append(tpccRun, "--rate", "6000", "--vus", "1,2"), "--vus", `tpcc-run: {server: db, vus: "1,2", rampup: 0s, duration: 1s, rate: 6000}`,
			"tpcc-run: vus", `"1,2" is a list; with a rate the VUs are one pool that serves the arrivals, so give one count, e.g. 8`},
		{"arrival", append(tpccRun, "--rate", "6000", "--arrival", "uniform"), "--arrival",
			`tpcc-run: {server: db, vus: 1, rampup: 0s, duration: 1s, rate: 6000, arrival: uniform}`,
			"tpcc-run: arrival", `"uniform" is unknown; use poisson or constant`},
		{"late after", append(tpccRun, "--rate", "6000", "--late-after", "0s"), "--late-after",
			`tpcc-run: {server: db, vus: 1, rampup: 0s, duration: 1s, rate: 6000, late_after: 0s}`,
			"tpcc-run: late_after", "0s is not above 0; give how long an arrival may wait for a VU, e.g. 1s"},
		{"think time", append(tpccRun, "--think-time", "11m"), "--think-time", `tpcc-run: {server: db, vus: 1, rampup: 0s, duration: 1s, think_time: 11m}`,
			"tpcc-run: think_time", "11m0s is out of range; give a mean think time from 0s (none) to 10m, e.g. 2ms"},
		{"neighbours think time", append(tpccRun, "--think-time", "11m"), "--think-time", `neighbours: {tpcc: db, vus: 1, rampup: 0s, duration: 1s, think_time: 11m}`,
			"neighbours: think_time", "11m0s is out of range; give a mean think time from 0s (none) to 10m, e.g. 2ms"},
		{"neighbours rate", append(tpccRun, "--rate", "0"), "--rate", `neighbours: {tpcc: db, vus: 1, rampup: 0s, duration: 1s, rate: 0}`,
			"neighbours: rate", "0 is out of range; give above 0 to 10,000,000 transactions a minute"},
		{"neighbours arrival", append(tpccRun, "--rate", "6000", "--arrival", "uniform"), "--arrival",
			`neighbours: {tpcc: db, vus: 1, rampup: 0s, duration: 1s, rate: 6000, arrival: uniform}`,
			"neighbours: arrival", `"uniform" is unknown; use poisson or constant`},
		{"disk size", append(disk, "--size", "100KiB"), "--size", `disk: {target: t, size: 100KiB}`,
			"disk: size", "100KiB is too small; give at least 1MiB"},
		{"disk rate", append(disk, "--rate-iops", "500,10.5"), "--rate-iops", `disk: {target: t, rate: "500,10.5"}`,
			"disk: rate", "10.5 is not a rate; give whole I/Os a second per job, 1 to 10,000,000"},
		{"disk rate fraction", append(disk, "--rate-iops", "1200%"), "--rate-iops", `disk: {target: t, rate: [1200%]}`,
			"disk: rate", `"1200%" is out of range; give fractions above 0% and up to 1000% of the maximum`},
		{"disk repetitions", append(disk, "--repeat", "0"), "--repeat", `disk: {target: t, repeat: 0}`,
			"disk: repeat", "0 is out of range; give a count of repetitions from 1 to 1000, e.g. 3"},
		{"backup cycles", append(backup, "--cycles", "5000"), "--cycles", `backup: {server: db, cycles: 5000}`,
			"backup: cycles", "5000 is out of range; give 1 to 1000 cycles"},
		{"neighbours backup cycles", append(backup, "--cycles", "5000"), "--cycles",
			`neighbours: {tpcc: db, backup: db2, vus: 1, rampup: 0s, duration: 1h, cycles: 5000, interval: 1s}`,
			"neighbours: cycles", "5000 is out of range; give 1 to 1000 cycles"},
		{"warehouses", append(build, "--warehouses", "0"), "--warehouses", `tpcc-build: {server: db, warehouses: 0}`,
			"tpcc-build: warehouses", "0 is out of range; give 1 to 1000000 warehouses"},
		{"loader connections", append(build, "--warehouses", "1", "--build-vus", "2000"), "--build-vus", `tpcc-build: {server: db, warehouses: 1, build_vus: 2000}`,
			"tpcc-build: build_vus", "2000 is out of range; give 1 to 1024 loader connections"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runTierbench(t, c.args...)
			badInputLine(t, c.args, code, stdout, stderr, 2, "tierbench: "+c.flag+" "+c.same)

			file := filepath.Join(t.TempDir(), "rule.yaml")
			src := "name: rule\ntargets: [{name: t, path: " + target + "}]\nservers:\n  - {name: db, engine: postgres, target: t}\n" +
				"  - {name: db2, engine: postgres, target: t}\nsteps:\n  - " + c.step + "\n"
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr = runTierbench(t, "scenario", "validate", file)
			want := "tierbench: " + file + ":7:"
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], want) || !strings.HasSuffix(lines[0], c.key+" "+c.same) {
				t.Errorf("scenario validate: exit %d, stderr %q; want exit 2 and one problem at line 7 ending %q", code, stderr, c.key+" "+c.same)
			}
		})
	}
	if _, err := os.Stat(res); err == nil {
		t.Error("a refused run made its results directory")
	}
}
