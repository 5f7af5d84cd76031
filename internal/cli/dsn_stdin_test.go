package cli_test

import (
	"encoding/json"
	"io"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/cli"
	"github.com/tierbench/tierbench/internal/server/pgtest"
)

// runTierbenchStdin is runTierbenchWith with stdin as tierbench's standard
// input (a pipe): written, then closed.
func runTierbenchStdin(t *testing.T, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return runTierbenchPipe(t, env, stdin, true, args...)
}

// runTierbenchPipe runs tierbench with env as its environment and a pipe as
// standard input, stdin written into it; with closeIt false the pipe stays
// open until tierbench has returned, as an ssh session's may.
func runTierbenchPipe(t *testing.T, env map[string]string, stdin string, closeIt bool, args ...string) (int, string, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		io.WriteString(w, stdin)
		if closeIt {
			w.Close()
		}
	}()
	defer w.Close()
	return runTierbenchWith(t, env, r, args...)
}

// --dsn - reads the DSN from the first line of standard input, for a
// caller that must keep it off every command line (a controller running
// tierbench on another host over ssh): tpcc build, check and run take it
// so; an empty input, or an empty first line, is bad input, and the DSN
// is redacted in what is printed.
func TestDsnStdin(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	env := map[string]string{"TIERBENCH_DSN": "postgres://nobody:never@127.0.0.1:1/none"} // --dsn - wins over it
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()

	start := time.Now()
	code, out, errOut := runTierbenchStdin(t, env, dsn+"\n", "tpcc", "build", "--dsn", "-", "--warehouses", "1", "--build-vus", "2", "--json")
	if code != 0 {
		t.Fatalf("tpcc build --dsn -: exit %d: %s", code, errOut)
	}
	var built struct {
		Warehouses int `json:"warehouses"`
	}
	if err := json.Unmarshal([]byte(out), &built); err != nil || built.Warehouses != 1 {
		t.Fatalf("tpcc build --dsn - --json: %v\n%s", err, out)
	}
	t.Logf("tpcc build --dsn - in %v", time.Since(start).Round(time.Millisecond))

	// The pipe stays open after the line: the command reads the line only.
	code, out, errOut = runTierbenchPipe(t, env, dsn+"\r\nmore that is never read", false, "tpcc", "check", "--dsn", "-", "--json")
	if code != 0 || !strings.Contains(out, `"ok": true`) {
		t.Errorf("tpcc check --dsn - (stdin left open): exit %d\n%s%s", code, out, errOut)
	}
	// No line end: the end of input ends the line.
	code, _, errOut = runTierbenchStdin(t, env, "  "+dsn, "tpcc", "run", "--dsn", "-", "--vus", "1", "--rampup", "0s", "--duration", "1s",
		"--results", t.TempDir())
	if code != 0 {
		t.Errorf("tpcc run --dsn -: exit %d: %s", code, errOut)
	}

	wrong := strings.Replace(dsn, ":"+pw+"@", ":Wr0ngPassw0rdXYZ@", 1)
	badScheme := "mysqlx://u:S3cretXYZ@127.0.0.1/db"
	for _, c := range []struct {
		name, stdin string
		args        []string
		code        int
		want        string
	}{
		{"empty stdin", "", []string{"tpcc", "check", "--dsn", "-"}, cli.ExitUsage, "--dsn - reads the DSN from standard input, which is empty"},
		{"empty first line", "\n" + dsn + "\n", []string{"tpcc", "check", "--dsn", "-"}, cli.ExitUsage, "the first line of standard input is empty"},
		{"blank first line", " \t\n", []string{"tpcc", "build", "--dsn", "-", "--warehouses", "1"}, cli.ExitUsage, "the first line of standard input is empty"},
		{"a long line", strings.Repeat("x", 70<<10), []string{"tpcc", "check", "--dsn", "-"}, cli.ExitUsage, "longer than 64 KiB"},
		{"an unknown scheme", badScheme + "\n", []string{"tpcc", "check", "--dsn", "-"}, cli.ExitUsage,
			`--dsn - (standard input): DSN scheme "mysqlx" is unknown`},
		{"no scheme", "host=x password=S3cretXYZ\n", []string{"tpcc", "run", "--dsn", "-", "--duration", "1s"}, cli.ExitUsage, "has no scheme"},
		{"a wrong password", wrong + "\n", []string{"tpcc", "check", "--dsn", "-"}, cli.ExitFailure, "password authentication failed"},
		{"backup run", "\n", []string{"backup", "run", "--dsn", "-", "--target", t.TempDir()}, cli.ExitUsage, "the first line of standard input is empty"},
	} {
		code, out, errOut := runTierbenchStdin(t, env, c.stdin, c.args...)
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != c.code || out != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "tierbench: ") || !strings.Contains(lines[0], c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and one line saying %q", c.name, code, out, errOut, c.code, c.want)
		} else {
			t.Logf("%s: %s", c.name, lines[0])
		}
		for _, secret := range []string{"S3cretXYZ", "Wr0ngPassw0rdXYZ", pw} {
			if strings.Contains(out+errOut, secret) {
				t.Errorf("%s: a password from stdin is printed: %s%s", c.name, out, errOut)
			}
		}
	}
}
