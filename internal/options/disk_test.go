package options

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
)

// diskRun parses args as `disk run`'s options on a target of its own.
func diskRun(t *testing.T, args ...string) (*experiment.DiskConfig, error) {
	t.Helper()
	var o DiskRun
	return o.Config(parseFlags(t, &o, append([]string{"--target", t.TempDir(), "--results", t.TempDir()}, args...)...))
}

// A disk run's bad input names its field; ad-hoc options beside --profile
// are refused naming both; ad-hoc options alone get the experiment layer's
// sweep defaults, which --duration and --size override.
func TestDiskRunConfig(t *testing.T) {
	for _, c := range []struct {
		args        []string
		field, want string
	}{
		{[]string{"--profile", "quick", "--bs", "4k", "--rwmix", "50"}, "profile", "--profile quick and --bs, --rwmix describe the points twice"},
		{[]string{"--profile", "fast"}, "profile", "--profile: "},
		{[]string{"--bs", "12XB"}, "bs", `--bs entry "12XB" is not a block size`},
		{[]string{"--size", "huge"}, "size", "--size: "},
		{[]string{"--steady-state", "bw:5%", "--steady-state-window", "x"}, "steady_state_window", "--steady-state-window: "},
		{[]string{"--fio-server", "a=b=c"}, "fio_server", `--fio-server "a=b=c"`},
		{[]string{"--engine", "carrier-pigeon"}, "engine", "--engine"},
		{[]string{"--threshold", "read.iops>=", "--threshold", "nonsense<1"}, "threshold", "--threshold: "},
	} {
		_, err := diskRun(t, c.args...)
		wantField(t, c.args, err, c.field, c.want)
	}
	cfg, err := diskRun(t, "--bs", "4k,64k", "--duration", "10s")
	sweep := experiment.SweepConfig(nil)
	if err != nil || cfg.Profile != "ad-hoc" || len(cfg.Points) != 2 || cfg.Settings.Duration.Seconds() != 10 ||
		cfg.Settings.Ramp != sweep.Settings.Ramp || cfg.TargetOptions.Size != sweep.TargetOptions.Size {
		t.Errorf("ad hoc: %+v, %v", cfg, err)
	}
	_, err = (&DiskRun{}).Config(pflag.NewFlagSet("x", pflag.ContinueOnError))
	wantField(t, "no target", err, "target", "no --target given")
}
