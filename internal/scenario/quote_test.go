package scenario

import (
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// A problem quotes at most maxQuoted characters of a bad value, then "…"
// and the value's length: a file that is not a scenario is not printed
// whole inside its one-line error.
func TestLongValuesQuotedShort(t *testing.T) {
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Skip(err)
	}
	if utf8.RuneCount(passwd) <= 2*maxQuoted {
		t.Skipf("/etc/passwd has only %d characters", utf8.RuneCount(passwd))
	}
	_, err = Parse("/etc/passwd", passwd, "", nil)
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 {
		t.Fatalf("/etc/passwd parsed as a scenario: %v", err)
	}
	msg := errs[0].Msg
	first := strings.SplitN(string(passwd), "\n", 2)[0]
	if len(msg) > 250 || !strings.Contains(msg, `this is the value "`+first[:min(len(first), 20)]) || !strings.Contains(msg, `"… (`) {
		t.Errorf("the problem with /etc/passwd (%d bytes): %s", len(msg), msg)
	}

	long := strings.Repeat("é", 50) + strings.Repeat("x", 150) // 200 characters, multibyte ones first
	src := "name: long\ntargets:\n  - {name: t, path: /tmp/x}\nservers:\n  - {name: db, engine: postgres, target: t}\n" +
		"steps:\n  - " + long + ": {}\n  - tpc-run: {server: db}\n  - check: {server: \"" + long + "\"}\n"
	_, err = Parse("long.yaml", []byte(src), "", nil)
	if !errors.As(err, &errs) {
		t.Fatalf("the scenario with long values: %v", err)
	}
	want := `"` + strings.Repeat("é", 50) + strings.Repeat("x", 10) + `"… (200 characters)`
	var kind, server, short bool
	for _, e := range errs {
		if strings.Contains(e.Msg, strings.Repeat("x", 11)) {
			t.Errorf("quoted whole: %s", e)
		}
		kind = kind || strings.HasPrefix(e.Msg, "unknown step kind "+want+"; known kinds: ")
		server = server || strings.HasPrefix(e.Msg, "check: server "+want+" is not defined")
		short = short || strings.HasPrefix(e.Msg, `unknown step kind "tpc-run" (did you mean tpcc-run?)`)
	}
	if !kind || !server || !short {
		t.Errorf("problems %v\nwant the long step kind and server quoted as %s, and the short kind whole", errs, want)
	}
}
