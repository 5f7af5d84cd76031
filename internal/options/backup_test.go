package options

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/experiment"
)

// A backup run's bad input names its option, --sample-interval for the
// sampling interval (--interval is the cycles' spacing), before and after
// the DSN is known.
func TestBackupRunConfig(t *testing.T) {
	for _, c := range []struct {
		args        []string
		field, want string
	}{
		{[]string{"--back-to-back"}, "back_to_back", "--back-to-back does not apply to backup run"},
		{[]string{"--interval", "soon"}, "interval", "--interval: "},
		{[]string{"--start-at", "noon"}, "start_at", `--start-at "noon" is not an RFC 3339 time`},
		{[]string{"--sample-interval", "0", "--node-exporter", "db1=http://h"}, "sample_interval", "--sample-interval 0s samples nothing"},
		{[]string{"--cycles", "0"}, "cycles", "--cycles 0"},
	} {
		var o BackupRun
		parseFlags(t, &o, append([]string{"--target", t.TempDir(), "--results", t.TempDir()}, c.args...)...)
		_, err := o.Config()
		wantField(t, c.args, err, c.field, c.want)
	}
	// Once the DSN is filled in, it is judged too.
	cfg := experiment.NewBackupConfig()
	cfg.Target, cfg.Results, cfg.Telemetry.Interval = t.TempDir(), t.TempDir(), -1
	es := List(ValidateBackup(cfg))
	if len(es) != 2 || es[0].Field != "dsn" || es[1].Field != "sample_interval" || !strings.HasPrefix(es[1].Msg, "--sample-interval ") {
		t.Errorf("no DSN, a negative sampling interval: %+v", es)
	}
}
