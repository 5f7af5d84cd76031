package options

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/driver"
	"github.com/tierbench/tierbench/internal/experiment"
)

// The open loop's options: a rate list, its arrivals and lateness bound,
// and their defaults; a front end that does not register them (the main
// job builds its TPCCRun from its own flags) gets a closed loop with the
// same defaults, not an empty duration refused.
func TestTPCCRunRate(t *testing.T) {
	var o TPCCRun
	parseFlags(t, &o, "--rate", "6000,12_000", "--vus", "8", "--arrival", "constant", "--late-after", "250ms", "--results", t.TempDir())
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Rates) != 2 || cfg.Rates[0] != 6000 || cfg.Rates[1] != 12000 || cfg.Arrival != driver.ArrivalConstant || cfg.LateAfter != 250*time.Millisecond {
		t.Errorf("rates %v, arrival %q, late after %s", cfg.Rates, cfg.Arrival, cfg.LateAfter)
	}
	var d TPCCRun
	parseFlags(t, &d, "--results", t.TempDir())
	if cfg, err := d.Config(); err != nil || len(cfg.Rates) != 0 || cfg.Arrival != driver.ArrivalPoisson || cfg.LateAfter != time.Second {
		t.Errorf("defaults: rates %v, arrival %q, late after %s, %v", cfg.Rates, cfg.Arrival, cfg.LateAfter, err)
	}
	unregistered := d
	unregistered.Rate, unregistered.Arrival, unregistered.LateAfter = "", "", ""
	if cfg, err := unregistered.Config(); err != nil || len(cfg.Rates) != 0 || cfg.LateAfter != time.Second {
		t.Errorf("without the open loop's flags: rates %v, late after %s, %v", cfg.Rates, cfg.LateAfter, err)
	}
}

// Options that do not parse are refused together, each by its field, as
// the console shows each next to its input.
func TestTPCCRunEveryProblemAtOnce(t *testing.T) {
	var o TPCCRun
	parseFlags(t, &o, "--vus", "1,,2", "--rate", "fast", "--duration", "soon", "--mix", "no=200", "--results", t.TempDir())
	_, err := o.Config()
	var fields []string
	for _, e := range List(err) {
		fields = append(fields, e.Field)
	}
	if !errors.Is(err, experiment.ErrInvalid) || strings.Join(fields, ",") != "vus,rate,duration,mix" {
		t.Errorf("%v: fields %v; want vus, rate, duration and mix, each bad input", err, fields)
	}
}
