package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/cli"
)

// Each rule of a managed server is written once (experiment.ServerConfig):
// `server start` and a scenario's server (at `scenario validate`) refuse the
// same value with the same words, the command line naming the flag, the
// scenario the key at its line and column.
func TestServerRulesOnce(t *testing.T) {
	dir := t.TempDir()
	newDir := filepath.Join(dir, "new")
	for _, tc := range []struct {
		name    string
		flags   []string // server start's
		server  string   // the scenario server's keys
		emulate string   // the scenario target's emulate block
		flag    string   // the command line's name of the field
		key     string   // the scenario's
		value   string   // as both messages quote it
		written string   // as the scenario file has it, where its error points
		msg     string   // what both say
	}{
		{name: "memory", flags: []string{"--memory", "100MiB"}, server: "memory: 100MiB",
			flag: "--memory", key: "memory", value: "100MiB", written: "100MiB",
			msg: "is too little for a managed server; give at least 128MiB"},
		{name: "memory in bytes", flags: []string{"--memory", "104857600"}, server: "memory: 104857600",
			flag: "--memory", key: "memory", value: "100MiB", written: "104857600",
			msg: "is too little for a managed server; give at least 128MiB"},
		{name: "setting with a space", flags: []string{"--engine", "postgres", "--set", "work mem=1MB"}, server: `settings: {"work mem": 1MB}`,
			flag: "--set", key: "settings", value: `"work mem"`, written: `"work mem"`,
			msg: "is not a PostgreSQL setting name; use letters, digits, _ and . (an extension's), starting with a letter or _"},
		{name: "PostgreSQL setting with -", flags: []string{"--engine", "postgres", "--set", "work-mem=1MB"}, server: "settings: {work-mem: 1MB}",
			flag: "--set", key: "settings", value: `"work-mem"`, written: "work-mem",
			msg: "is not a PostgreSQL setting name; use letters, digits, _ and . (an extension's), starting with a letter or _"},
		{name: "MariaDB option with .", flags: []string{"--engine", "mariadb", "--set", "a.b=1"}, server: "settings: {a.b: 1}",
			flag: "--set", key: "settings", value: `"a.b"`, written: "a.b",
			msg: "is not a MariaDB option name; use letters, digits, _ and -, starting with a letter or _"},
		{name: "engine", flags: []string{"--engine", "mysql"}, server: "",
			flag: "--engine", key: "engine", value: `"mysql"`, written: "mysql",
			msg: "has no managed server; use postgres or mariadb"},
		{name: "negative IOPS", flags: []string{"--read-iops", "-1"}, emulate: "read_iops: -1",
			flag: "--read-iops", key: "read_iops", value: "-1", written: "-1",
			msg: "is negative; give I/Os per second, or 0 for no limit"},
		{name: "bandwidth", flags: []string{"--write-mbps", "1e300"}, emulate: "write_mbps: 1e300",
			flag: "--write-mbps", key: "write_mbps", value: "1e+300", written: "1e300",
			msg: "is not a bandwidth; give MB/s (10^6 bytes) up to 1e9, e.g. 200, or 0 for no limit"},
		{name: "below a byte a second", flags: []string{"--read-mbps", "0.0000001"}, emulate: "read_mbps: 0.0000001",
			flag: "--read-mbps", key: "read_mbps", value: "1e-07", written: "0.0000001",
			msg: "is below one byte per second; give MB/s (10^6 bytes), e.g. 200, or 0 for no limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runTierbench(t, append([]string{"server", "start", "--datadir", newDir}, tc.flags...)...)
			if want := "tierbench: " + tc.flag + " " + tc.value + " " + tc.msg + "\n"; code != cli.ExitUsage || out != "" || errOut != want {
				t.Errorf("server start: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, want)
			}

			engine := "postgres"
			for i, f := range tc.flags {
				if f == "--engine" {
					engine = tc.flags[i+1]
				}
			}
			keys := "engine: " + engine
			if tc.server != "" {
				keys += ", " + tc.server
			}
			target := "{name: t, path: " + filepath.Join(dir, "data") + "}"
			if tc.emulate != "" {
				target = "{name: t, path: " + filepath.Join(dir, "data") + ", emulate: {" + tc.emulate + "}}"
			}
			src := "name: rules\ntargets:\n  - " + target + "\nservers:\n  - {name: db, target: t, " + keys + "}\nsteps: [report]\n"
			file := filepath.Join(dir, tc.key+".yaml")
			if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errOut = runTierbench(t, "scenario", "validate", file)
			what := "server db"
			if tc.emulate != "" {
				what = "target t: emulate"
			}
			m := regexp.MustCompile(`^tierbench: ` + regexp.QuoteMeta(file) + `:(\d+):(\d+): (.*)\n$`).FindStringSubmatch(errOut)
			if code != cli.ExitUsage || m == nil || m[3] != what+": "+tc.key+" "+tc.value+" "+tc.msg {
				t.Fatalf("scenario validate: exit %d, stderr %q; want exit 2 and %q at its line", code, errOut, what+": "+tc.key+" "+tc.value+" "+tc.msg)
			}
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			if lines := strings.Split(src, "\n"); line > len(lines) || col > len(lines[line-1]) || !strings.HasPrefix(lines[line-1][col-1:], tc.written) {
				t.Errorf("scenario validate points at %d:%d, not at %s in:\n%s", line, col, tc.written, src)
			}
		})
	}
	if _, err := os.Stat(newDir); !os.IsNotExist(err) {
		t.Errorf("bad input made the data directory: %v", err)
	}
}
