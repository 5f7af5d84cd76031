package scenario

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stored"
)

// TPCHBuild builds the TPC-H tables on each of the server's instances, one
// after another on each host, the hosts at once (onEachHost), in the
// database of their own the build makes beside the TPC-C schema's; a
// build there from before is replaced, so that every run starts from the
// generator's rows.
func (e *executor) TPCHBuild(ctx context.Context, st *TPCHBuildStep) error {
	cfg := tpchBuildConfig(st)
	return e.onEachHost(ctx, st.Instances, func(ctx context.Context, names []string) error {
		for _, name := range names {
			in, err := e.instance(name)
			if err != nil {
				return err
			}
			dsn, err := experiment.TPCHDatabaseOf(ctx, in.dsn)
			if err != nil {
				return fmt.Errorf("server %s: %w", in.name, err)
			}
			if in.host != "" {
				err = e.tpchBuildRemote(ctx, in, dsn, cfg)
			} else {
				err = e.tpchBuildLocal(ctx, dsn, cfg)
			}
			if err != nil {
				return fmt.Errorf("server %s: %w", in.name, err)
			}
		}
		return nil
	})
}

func (e *executor) tpchBuildLocal(ctx context.Context, dsn string, cfg experiment.TPCHBuildConfig) error {
	db, err := experiment.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = experiment.BuildTPCH(ctx, db, cfg, e.obs)
	return err
}

// tpchBuildRemote builds the tables with the tierbench of the instance's
// host, next to the data: the rows do not cross the network. The DSN goes
// on its standard input, never on a command line.
func (e *executor) tpchBuildRemote(ctx context.Context, in *instance, dsn string, cfg experiment.TPCHBuildConfig) error {
	h := e.remoteHost(in)
	e.note("server %s: building TPC-H at scale factor %g on host %s", in.name, cfg.Scale, h.Name)
	args := []string{"tpch", "build", "--dsn", "-", "--drop", "--scale", strconv.FormatFloat(cfg.Scale, 'g', -1, 64),
		"--build-vus", strconv.Itoa(cfg.BuildVUs), "--json"}
	var out struct{}
	if err := h.JSON(ctx, strings.NewReader(dsn+"\n"), &out, args...); err != nil {
		return fmt.Errorf("on host %s: %w", h.Name, err)
	}
	return nil
}

// TPCHRun runs the TPC-H tests on every instance of the server at once,
// each a run of the scenario's group.
func (e *executor) TPCHRun(ctx context.Context, st *TPCHRunStep) error {
	ts, err := thresholds(stored.KindTPCH, st.Thresholds)
	if err != nil {
		return err
	}
	return e.forEach(ctx, st.Instances, func(ctx context.Context, obs experiment.Observer, in *instance) error {
		cfg := tpchRunConfig(st)
		cfg.Thresholds = ts
		cfg.Record = e.record(stored.Placement{Label: in.target.label(in.name), Instance: in.name, Target: in.target.Name,
			Tier: in.target.emulated(), Limits: in.limits, Memory: in.server.Memory, Host: in.host})
		// The database its tpch-build step made (validation requires one).
		dsn, err := engine.WithDatabase(in.dsn, experiment.TPCHDatabase)
		if err != nil {
			return fmt.Errorf("server %s: %w", in.name, err)
		}
		cfg.DSN = dsn
		out, err := experiment.RunTPCH(ctx, cfg, obs)
		if out != nil {
			e.setLastRun(in.name, out.RunID)
		}
		return e.gate(err)
	})
}
