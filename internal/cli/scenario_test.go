package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestScenarioList(t *testing.T) {
	code, out, errOut := runTierbench(t, "scenario", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var doc struct {
		Scenarios []struct {
			Name  string `json:"name"`
			Title string `json:"title"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	var names []string
	for _, s := range doc.Scenarios {
		names = append(names, s.Name)
		if s.Title == "" {
			t.Errorf("%s has no title", s.Name)
		}
	}
	want := []string{"analytic-tiers", "cluster", "crash-tiers", "engines", "paper-1-memory", "paper-2-tiers", "paper-3-stress", "paper-4-backup", "paper-5-neighbours", "quick", "space-efficiency", "tiers-at-load"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}

	code, out, _ = runTierbench(t, "scenario", "list")
	if code != 0 || !strings.HasPrefix(out, "NAME") || !strings.Contains(out, "\nquick ") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

func TestScenarioValidateBundled(t *testing.T) {
	for _, args := range [][]string{
		{"quick"},
		{"paper-2-tiers", "--scale", "paper", "--set", "fast_path=/mnt/nvme", "--set", "vus=1,2,3"},
		{"paper-5-neighbours", "--scale", "laptop"},
	} {
		code, out, errOut := runTierbench(t, append([]string{"scenario", "validate"}, args...)...)
		if code != 0 || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
		if !strings.HasPrefix(out, "ok: ") || !strings.HasSuffix(out, " steps\n") {
			t.Errorf("%v: stdout %q", args, out)
		}
	}
	code, out, _ := runTierbench(t, "scenario", "validate", "paper-2-tiers", "--scale", "paper", "--set", "vus=1,2,3", "--json")
	var doc struct {
		OK    bool   `json:"ok"`
		Name  string `json:"name"`
		Steps int    `json:"steps"`
		Vars  []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"vars"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || !doc.OK || doc.Name != "paper-2-tiers" || doc.Steps != 13 {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	for _, v := range doc.Vars {
		if v.Name == "vus" && v.Value != "1,2,3" {
			t.Errorf("--set vus=1,2,3 gave %q (a --set value keeps its commas)", v.Value)
		}
	}
}

const brokenScenario = `name: broken
targets:
  - {name: nvme, path: /tmp/x}
servers:
  - {name: db, engine: postgres, target: sata}
steps:
  - tpc-run: {server: db}
  - tpcc-run: {server: db, vus: "1,2", rampup: 5s, duration: 20x, mode: fast}
  - backup: {server: db, cycles: ${cycles}}
`

func TestScenarioValidateBroken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(path, []byte(brokenScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{
		path + `:5:42: server db: target "sata" is not defined; defined targets: nvme`,
		path + `:7:5: unknown step kind "tpc-run" (did you mean tpcc-run?); known kinds: disk, tpcc-build, tpcc-run, tpch-build, tpch-run, backup, neighbours, check, durability, space, stop, report`,
		path + `:8:62: tpcc-run: duration: duration "20x" is not understood; give a duration such as 30s, 2m or 1h30m`,
		path + `:8:73: tpcc-run: mode "fast" is unknown; use routines or statements`,
		path + `:9:34: backup: cycles: ${cycles} is not defined; define it under scales or pass --set cycles=VALUE (variables: data)`,
	}

	code, out, errOut := runTierbench(t, "scenario", "validate", path)
	if code != 2 || out != "" {
		t.Errorf("exit %d (want 2), stdout %q", code, out)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(errOut, "\n"), "\n") {
		if !strings.HasPrefix(l, "tierbench: ") {
			t.Errorf("stderr line does not stand alone: %q", l)
		}
		lines = append(lines, strings.TrimPrefix(l, "tierbench: "))
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("stderr:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	code, out, _ = runTierbench(t, "scenario", "validate", path, "--json")
	var doc struct {
		OK     bool `json:"ok"`
		Errors []struct {
			File    string `json:"file"`
			Line    int    `json:"line"`
			Col     int    `json:"col"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 2 || doc.OK || len(doc.Errors) != len(want) {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	if e := doc.Errors[2]; e.File != path || e.Line != 8 || e.Col != 62 || !strings.HasPrefix(e.Message, "tpcc-run: duration:") {
		t.Errorf("--json error: %+v", e)
	}

	// --set fixes the variable; a --set the scenario does not know is an error.
	code, _, errOut = runTierbench(t, "scenario", "validate", path, "--set", "cycles=3", "--set", "cylces=3")
	if code != 2 || strings.Contains(errOut, "${cycles}") ||
		!strings.HasPrefix(errOut, "tierbench: "+path+": --set cylces: the scenario has no variable cylces (did you mean cycles?); its variables: cycles, data\n") {
		t.Errorf("--set: exit %d\n%s", code, errOut)
	}
}

func TestScenarioValidateUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"scenario", "validate"}, "tierbench: tierbench scenario validate takes one scenario"},
		{[]string{"scenario", "validate", "quick", "--set", "warehouses"}, `tierbench: --set "warehouses": write key=value`},
		{[]string{"scenario", "validate", "quick", "--scale", "huge"}, "tierbench: scenarios/quick.yaml: --scale huge: not defined in this file; its scales: default, laptop, paper\n"},
		{[]string{"scenario", "validate", "no-such"}, "tierbench: no-such: no such file, and no bundled scenario of that name; bundled scenarios: analytic-tiers, cluster, crash-tiers, engines, paper-1-memory"},
		{[]string{"scenario", "validate", "missing.yaml"}, "tierbench: missing.yaml: cannot read the scenario file: no such file or directory\n"},
		{[]string{"scenario", "run", "quick", "--data", "/d", "--set", "data=/e"}, "tierbench: --data and --set data=… both set the data directory; give one\n"},
	} {
		code, _, errOut := runTierbench(t, c.args...)
		if c.args[1] == "run" {
			// run belongs to its executor; only its flags are checked here.
			if code == 0 {
				t.Errorf("%v: exit 0", c.args)
			}
			continue
		}
		if code != 2 || !strings.HasPrefix(errOut, c.want) {
			t.Errorf("%v: exit %d\n%s\nwant prefix %q", c.args, code, errOut, c.want)
		}
	}
}
