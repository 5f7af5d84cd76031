package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: no input may crash the parser, every failure is a non-empty
// Errors naming the file, and every success has one step body per step.
// Run with: go test ./internal/scenario -run ^$ -fuzz FuzzParse -fuzztime 30s
// (-fuzzminimizetime 3s keeps the progress line moving: minimizing a large
// seed such as a bundled scenario otherwise shows as minutes of 0 execs/s).
func FuzzParse(f *testing.F) {
	for _, in := range Bundled() {
		data, _ := BundledSource(in.Name)
		f.Add(data, "paper")
	}
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(data, "")
	}
	f.Add([]byte(scaled), "paper")
	f.Add([]byte(runnerScenario), "")
	f.Add([]byte("a: &x [*x, *x]\nsteps: *x\nname: *x\n"), "")
	f.Add([]byte("name: a\nsteps:\n  - report: {title: \"${a}${b\"}\nscales: {default: {a: ${a}}}\n"), "default")
	f.Fuzz(func(t *testing.T, data []byte, scale string) {
		sc, err := Parse("f.yaml", data, scale, map[string]string{"data": "/d"})
		if (sc == nil) == (err == nil) {
			t.Fatalf("scenario %v with error %v", sc, err)
		}
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error %v (%T) is not a non-empty Errors", err, err)
			}
			for _, e := range errs {
				if e.File != "f.yaml" || e.Msg == "" || e.Line < 0 || e.Col < 0 {
					t.Fatalf("bad error %+v", e)
				}
				if !strings.Contains(string(data), markClose) && strings.Contains(e.Msg, markClose) {
					t.Fatalf("a message shows the internal marker: %q", e.Msg)
				}
			}
			return
		}
		for _, st := range sc.Steps {
			set := 0
			for _, p := range []bool{st.Disk != nil, st.TPCCBuild != nil, st.TPCCRun != nil, st.TPCHBuild != nil, st.TPCHRun != nil, st.Backup != nil,
				st.Neighbours != nil, st.Check != nil, st.Durability != nil, st.Space != nil, st.Stop != nil, st.Report != nil} {
				if p {
					set++
				}
			}
			if set != 1 {
				t.Fatalf("step %+v has %d bodies", st, set)
			}
		}
	})
}

// FuzzParseSets: `scenario run NAME --set key=value` with any key and value
// on any bundled scenario and scale: a scenario or a non-empty Errors, never
// both or a crash; an accepted scenario has the value set (when the key is
// a variable) and server settings that are one line each (tierbench.conf
// writes them as string literals, which end at a newline or NUL).
func FuzzParseSets(f *testing.F) {
	bundled := Bundled()
	for i := range bundled {
		for _, kv := range [][2]string{{"vus", "1,2,4"}, {"vus", "0"}, {"vus", "1,,2"}, {"warehouses", "-1"}, {"warehouses", "1e9"},
			{"duration", "5s"}, {"duration", "-1s"}, {"data", "/tmp/x y"}, {"memory", "12XB"}, {"memory", "1KiB"}, {"a b", "x"},
			{"", "x"}, {"vus", "${vus}"}, {"vus", "9223372036854775807"}, {"data", "a\nb"}, {"x", "\x00"}} {
			f.Add(uint8(i), "laptop", kv[0], kv[1])
		}
	}
	f.Add(uint8(0), "paper", "vus", "1-3")
	f.Add(uint8(0), "nope", "vus", "1")
	f.Fuzz(func(t *testing.T, which uint8, scale, key, value string) {
		if len(bundled) == 0 {
			t.Skip("no bundled scenarios")
		}
		name := bundled[int(which)%len(bundled)].Name
		data, _ := BundledSource(name)
		sc, err := Parse(name+".yaml", data, scale, map[string]string{key: value})
		if (sc == nil) == (err == nil) {
			t.Fatalf("scenario %v with error %v", sc, err)
		}
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error %v (%T) is not a non-empty Errors", err, err)
			}
			for _, e := range errs {
				if e.Msg == "" {
					t.Fatalf("empty message in %v", errs)
				}
			}
			return
		}
		if v, ok := sc.Vars[key]; ok && v != value {
			t.Fatalf("--set %s=%q, but the variable is %q", key, value, v)
		}
		for _, s := range sc.Servers {
			for k, v := range s.Settings {
				if strings.ContainsAny(k+v, "\x00") {
					t.Fatalf("server %s: setting %s=%q", s.Name, k, v)
				}
			}
		}
	})
}
