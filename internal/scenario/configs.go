package scenario

import (
	"runtime"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
)

// The experiment configs a step's runs are made of, built in one place for
// the executor, which adds what only a run knows (its instance's DSN, the
// results directory, the placement), and for the parser, which checks them
// with the configs' own Validate: a step that validates runs.

// tpccConfig is a TPC-C run of a tpcc-run or neighbours step on one
// instance.
func tpccConfig(vus []int, rampup, duration time.Duration, rep Repetitions, mode string, rate Rate, pace Pace) experiment.TPCCConfig {
	c := experiment.NewTPCCConfig()
	c.VUs, c.RampUp, c.Duration, c.Repeat, c.BackToBack, c.Mode = vus, rampup, duration, rep.Repeat, rep.BackToBack, mode
	c.KeyingThinking, c.ThinkTime = pace.KeyingThinking, pace.ThinkTime
	c.Rates, c.RateFractions = rate.Rates, rate.Fractions
	if rate.Arrival != "" {
		c.Arrival = rate.Arrival
	}
	for _, d := range []struct{ from, to *time.Duration }{{rate.LateAfter, &c.LateAfter}, {rate.Probe, &c.Probe}, {rate.KneeP99, &c.KneeP99}} {
		if d.from != nil {
			*d.to = *d.from
		}
	}
	return c
}

// tpchBuildConfig is a tpch-build step's build on one instance: with
// build_vus 0, one loader connection per core.
func tpchBuildConfig(st *TPCHBuildStep) experiment.TPCHBuildConfig {
	c := experiment.TPCHBuildConfig{Scale: st.Scale, BuildVUs: st.BuildVUs, Drop: true}
	if c.BuildVUs == 0 {
		c.BuildVUs = runtime.NumCPU()
	}
	return c
}

// tpchRunConfig is a tpch-run step's run on one instance.
func tpchRunConfig(st *TPCHRunStep) experiment.TPCHRunConfig {
	c := experiment.NewTPCHRunConfig()
	c.Seed, c.Validation, c.NoRefresh, c.Streams, c.Repeat, c.Timeout = st.Seed, st.Validate, st.NoRefresh, st.Streams, st.Repeat, st.Timeout
	return c
}

// backupConfig is the backup cycles of a backup or neighbours step on one
// instance.
func backupConfig(cycles, repeat int, spacing time.Duration, startAt time.Time, logical bool) experiment.BackupConfig {
	c := experiment.NewBackupConfig()
	c.Cycles, c.Repeat, c.Spacing, c.StartAt, c.Logical = cycles, repeat, spacing, startAt, logical
	return c
}

// durabilityConfig is a durability step's test of the managed server in
// dataDir: its schema is the one a tpcc-build step gave it.
func durabilityConfig(st *DurabilityStep, dataDir string) experiment.DurabilityConfig {
	c := experiment.NewDurabilityConfig()
	c.Managed, c.Cycles, c.VUs, c.Rate, c.RunBeforeFault, c.Fault, c.RecoverTimeout, c.Mode, c.ColdCache =
		dataDir, st.Cycles, st.VUs, st.Rate, st.RunBeforeFault, st.Fault, st.RecoverTimeout, st.Mode, st.ColdCache
	return c
}

// diskConfig is a disk step's run of its profile.
func diskConfig(st *DiskStep) (experiment.DiskConfig, error) {
	cfg, err := experiment.ProfileConfig(st.Profile, st.Duration, 0, st.Size)
	if st.Ramp != nil {
		cfg.Settings.Ramp = *st.Ramp
	}
	cfg.Repeat, cfg.BackToBack = st.Repeat, st.BackToBack
	cfg.RatesIOPS, cfg.RateFractions, cfg.KneeP99 = st.Rates, st.Fractions, st.KneeP99
	return cfg, err
}

// serverConfig is how an instance of s runs in dataDir: the config its
// start is validated and started with, on the controller
// (experiment.StartServer) or on its host, whose tierbench gets the same
// values as flags (serverArgs) and validates them with the same rules.
// listen is the host's address ("" on the controller); em is the target's
// emulated tier, whose throttles a server on the controller draws from.
func serverConfig(s Server, dataDir, listen string, em *Emulate) experiment.ServerConfig {
	cfg := experiment.ServerConfig{Engine: s.Engine, DataDir: dataDir, Listen: listen, Memory: s.Memory, Settings: s.Settings}
	if em != nil && listen == "" {
		cfg.Throttle = em.Throttle()
	}
	return cfg
}

// supplied are the fields a scenario's runs get only when they start: the
// server instance's DSN and the results directory (a backup's directory
// under its target too, which the backup steps leave out beside these).
var supplied = []string{"dsn", "results"}

// refuse reports the problems a config's Validate found, each at the node
// of its field's key in the step (fs), named as the key. keys names a
// field by its key where they differ. A problem with a value already
// reported bad, or with a key the step lacks (a required one is reported
// missing; an optional one is the config's default), adds nothing: the
// config holds a zero there, not what the user wrote. what is the step's
// kind.
func (p *parser) refuse(err error, fs map[string]field, what string, keys map[string]string) {
	name := func(field string) string {
		if k, ok := keys[field]; ok {
			return k
		}
		return field
	}
	for _, pr := range experiment.Problems(err) {
		f, ok := fs[name(pr.Field)]
		if !ok || p.blamed[f.val] {
			continue
		}
		p.bad(f.val, "%s: %s", what, pr.Render(name))
	}
}
