package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type durabilityDoc struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Fault  string `json:"fault"`
	Cycles []struct {
		Cycle           int     `json:"cycle"`
		Committed       int64   `json:"committed"`
		Found           int64   `json:"found"`
		Lost            int64   `json:"lost"`
		Excess          int64   `json:"excess"`
		ExcessBound     int64   `json:"excess_bound"`
		RecoverySeconds float64 `json:"recovery_seconds"`
		Consistency     bool    `json:"consistency"`
		OK              bool    `json:"ok"`
		Log             string  `json:"log"`
	} `json:"cycles"`
	Total struct {
		Cycles int   `json:"cycles"`
		Lost   int64 `json:"lost"`
		OK     bool  `json:"ok"`
	} `json:"total"`
}

// Bad durability flags are refused before anything starts.
func TestDurabilityBadInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "never")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--managed", dir, "--dsn", "postgres://u@127.0.0.1:1/db"}, "not both"},
		{[]string{"--managed", dir, "--fault", "command"}, "--fault-command"},
		{[]string{"--managed", dir, "--fault", "reboot"}, "kill, stop, restart, command"},
		{[]string{"--managed", dir, "--fault-command", "true"}, "only used with --fault command"},
		{[]string{"--managed", dir, "--cycles", "0"}, "--cycles"},
		{[]string{"--managed", dir, "--vus", "-1"}, "--vus"},
		{[]string{"--managed", dir, "--run-before-fault", "10ms"}, "at least 1s"},
		{[]string{"--managed", dir, "--recover-timeout", "soon"}, "--recover-timeout"},
		{[]string{"--dsn", "postgres://u@127.0.0.1:1/db", "--warehouses", "3"}, "--managed"},
	} {
		args := append([]string{"durability", "--results", dir}, tc.args...)
		code, _, errOut := runTierbench(t, args...)
		if code != 2 || !strings.HasPrefix(errOut, "tierbench: ") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 ||
			!strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, one line with %q", tc.args, code, errOut, tc.want)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Fatalf("%v created %s", tc.args, dir)
		}
	}
}
