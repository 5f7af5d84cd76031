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
			for _, p := range []bool{st.Disk != nil, st.TPCCBuild != nil, st.TPCCRun != nil, st.Backup != nil,
				st.Neighbours != nil, st.Check != nil, st.Report != nil} {
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
