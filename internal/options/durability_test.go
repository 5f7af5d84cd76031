package options

import (
	"testing"
)

// A durability test's server is the front end's DSN or --managed, judged
// together by the config's rules; bad input names its option.
func TestDurabilityConfig(t *testing.T) {
	for _, c := range []struct {
		args        []string
		dsn         string
		field, want string
	}{
		{[]string{"--managed", "/tmp/data"}, "postgres://localhost/x", "managed", "--managed /tmp/data and --dsn both name the server to test"},
		{nil, "", "dsn", "--dsn is empty; give the server to test, or a --managed server's data directory"},
		{[]string{"--run-before-fault", "later"}, "postgres://localhost/x", "run_before_fault", "--run-before-fault: "},
		{[]string{"--fault", "command"}, "postgres://localhost/x", "fault_command", "--fault-command is empty"},
		{[]string{"--cold-cache"}, "postgres://localhost/x", "cold_cache", "--cold-cache needs a --managed server"},
		// One rate in transactions a minute: a fraction has no maximum to
		// be of, a list no steps, and 0 or less no load.
		{[]string{"--rate", "50%"}, "postgres://localhost/x", "rate", "--rate 50%: a durability test takes transactions a minute"},
		{[]string{"--rate", "1000,2000"}, "postgres://localhost/x", "rate", "--rate 1000,2000: a durability test takes one rate"},
		{[]string{"--rate", "-5"}, "postgres://localhost/x", "rate", "--rate"},
		{[]string{"--rate", "0"}, "postgres://localhost/x", "rate", "--rate 0 is out of range; give above 0 to 10,000,000 transactions a minute, or leave it out for a closed loop"},
		{[]string{"--rate", "20000000"}, "postgres://localhost/x", "rate", "--rate 20000000 is out of range; give above 0 to 10,000,000 transactions a minute, or leave it out for a closed loop"},
	} {
		var o Durability
		parseFlags(t, &o, append([]string{"--results", t.TempDir()}, c.args...)...)
		_, err := o.Config(c.dsn)
		wantField(t, c, err, c.field, c.want)
	}
}

// Every problem at once, each by its field: the options that do not parse,
// and the rules' findings in the others, none twice.
func TestDurabilityConfigAllAtOnce(t *testing.T) {
	var o Durability
	parseFlags(t, &o, "--results", t.TempDir(), "--cycles", "0", "--rate", "0", "--run-before-fault", "1 second", "--recover-timeout", "10ms")
	_, err := o.Config("postgres://localhost/x")
	got := map[string]int{}
	for _, e := range List(err) {
		got[e.Field]++
	}
	want := map[string]int{"cycles": 1, "rate": 1, "run_before_fault": 1, "recover_timeout": 1}
	if len(got) != len(want) || got["cycles"] != 1 || got["rate"] != 1 || got["run_before_fault"] != 1 || got["recover_timeout"] != 1 {
		t.Errorf("problems by field %v (%v); want one each of %v", got, err, want)
	}
}
