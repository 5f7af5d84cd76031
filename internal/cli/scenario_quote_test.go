package cli_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// scenario validate on a file that is not a scenario: one short line on
// stderr and a short message in the JSON, quoting the start of the file,
// not all of it.
func TestScenarioValidateNotAScenario(t *testing.T) {
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil || len(passwd) < 200 {
		t.Skipf("/etc/passwd: %d bytes, %v", len(passwd), err)
	}
	code, out, errOut := runTierbench(t, "scenario", "validate", "/etc/passwd", "--json")
	if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "tierbench: /etc/passwd:1:1: ") || len(errOut) > 300 {
		t.Fatalf("exit %d, want 2 and one short line; stderr (%d bytes):\n%s", code, len(errOut), errOut)
	}
	var doc struct {
		OK     bool `json:"ok"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.OK || len(doc.Errors) != 1 {
		t.Fatalf("document %s (%v), want one problem", out, err)
	}
	if m := doc.Errors[0].Message; len(m) > 250 || !strings.Contains(m, `"… (`) || !strings.Contains(errOut, m) {
		t.Errorf("message (%d bytes) %s, want the value cut short, as on stderr", len(m), m)
	}
}
