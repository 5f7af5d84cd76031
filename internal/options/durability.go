package options

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/units"
)

// Durability are the options of a durability test (`durability`), but its
// DSN: each front end says where the DSN comes from, and passes it to
// Config.
type Durability struct {
	Managed        string
	Engine         string // with --managed: the engine of a new data directory
	Cycles         int
	VUs            int
	Rate           string
	RunBeforeFault string
	Fault          string
	FaultCommand   string
	RecoverCommand string
	RecoverTimeout string
	Warehouses     int
	// WarehousesSet says --warehouses was given: a managed server whose
	// schema has another size is then rebuilt.
	WarehousesSet bool
	Mode          string
	Results       string
	Seed          uint64
	ColdCache     bool
}

// AddFlags registers the options.
func (o *Durability) AddFlags(fs *pflag.FlagSet) {
	d := experiment.NewDurabilityConfig()
	fs.StringVar(&o.Managed, "managed", "", "data directory of a managed server to test instead of --dsn (started, and built with --warehouses, when needed)")
	fs.StringVar(&o.Engine, "engine", "", "with --managed: the engine of a new data directory ("+strings.Join(all.Names(true), ", ")+"; default postgres; an existing one keeps its own)")
	fs.IntVar(&o.Cycles, "cycles", d.Cycles, "fault cycles to run")
	fs.IntVar(&o.VUs, "vus", d.VUs, "virtual users running TPC-C when the fault hits")
	fs.StringVar(&o.Rate, "rate", "", "offer TPC-C at this many transactions a minute (Poisson arrivals) to the --vus as one pool, so that the fault hits your load rather than saturation (default: a closed loop)")
	fs.StringVar(&o.RunBeforeFault, "run-before-fault", units.FormatDuration(d.RunBeforeFault), "TPC-C time before each fault (the audited test of clause 3.5 runs at least 5m)")
	fs.StringVar(&o.Fault, "fault", d.Fault, "the failure: kill (SIGKILL of the server's main process), stop (immediate shutdown; MariaDB: a kill), restart (clean shutdown and start), command (--fault-command)")
	fs.StringVar(&o.FaultCommand, "fault-command", "", "shell command that causes the failure, with --fault command (e.g. a remote power cut)")
	fs.StringVar(&o.RecoverCommand, "recover-command", "", "shell command that brings the server back after the fault (then tierbench waits for it to answer)")
	fs.StringVar(&o.RecoverTimeout, "recover-timeout", units.FormatDuration(d.RecoverTimeout), "how long to wait for the database to answer after recovery")
	fs.IntVar(&o.Warehouses, "warehouses", d.Warehouses, "with --managed: warehouses to build when there is no schema (or a different size is asked)")
	fs.StringVar(&o.Mode, "mode", d.Mode, "routines or statements")
	fs.StringVar(&o.Results, "results", d.Results, "results store directory")
	fs.Uint64Var(&o.Seed, "seed", 0, "random seed (0: a new one each run)")
	fs.BoolVar(&o.ColdCache, "cold-cache", false, "with --managed: after each fault, drop the data directory's pages from the page cache before recovery, so that the restarted server reads its WAL and data from the storage, as after a crash of the whole host")
}

// Config turns the options and the DSN the front end read ("": none) into
// a test's config; its rules, the DSN's beside --managed too, are its
// Validate's. Every problem is reported at once: the options that do not
// parse, and what Validate finds in the others.
func (o *Durability) Config(dsn string) (experiment.DurabilityConfig, error) {
	c := experiment.DurabilityConfig{Results: o.Results, DSN: dsn, Managed: o.Managed, Engine: o.Engine, Cycles: o.Cycles, VUs: o.VUs, Fault: o.Fault,
		FaultCommand: o.FaultCommand, RecoverCommand: o.RecoverCommand, Warehouses: o.Warehouses, Rebuild: o.WarehousesSet,
		Mode: o.Mode, Seed: o.Seed, ColdCache: o.ColdCache}
	var bad Errors
	var err error
	if c.Rate, err = experiment.ParseDurabilityRate("--rate", o.Rate); err != nil {
		bad = append(bad, List(Badf("rate", "%v", err))...)
	}
	for _, d := range []struct {
		field, flag, val string
		to               *time.Duration
	}{{"run_before_fault", "--run-before-fault", o.RunBeforeFault, &c.RunBeforeFault}, {"recover_timeout", "--recover-timeout", o.RecoverTimeout, &c.RecoverTimeout}} {
		if *d.to, err = units.ParseDuration(d.val); err != nil {
			bad = append(bad, List(Badf(d.field, "%s: %v", d.flag, err))...)
		}
	}
	unparsed := make([]string, len(bad))
	for i, e := range bad {
		unparsed[i] = e.Field
	}
	verr := Flagged(experiment.Except(c.Validate(), unparsed...), nil)
	if verr != nil && len(List(verr)) == 0 {
		return c, verr
	}
	if bad = append(bad, List(verr)...); len(bad) > 0 {
		return c, bad
	}
	return c, nil
}
