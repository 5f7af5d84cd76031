package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/live"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/stored"
)

// kindScenario is a queue entry that runs a scenario.
const kindScenario = "scenario"

// A job is a validated experiment, ready to run under the id it was given.
type job struct {
	run func(ctx context.Context, obs experiment.Observer) (any, error)
}

// kind builds one kind of experiment from its options, filled from a
// request's keys: the config with the record's fields set by serve (the
// run's id, the results directory, the latency buckets /metrics needs).
type kind struct {
	// destructive are the options that write to a block device or a file
	// tierbench did not create, or name a program to run: refused unless
	// serve was started with --allow-destructive.
	destructive []string
	build       func(fs *pflag.FlagSet, req request, rec experiment.Record) (*job, error)
}

// kinds are the experiments POST /api/v1/runs starts.
var kinds = map[string]kind{
	stored.KindTPCC:       {build: buildTPCC},
	stored.KindTPCH:       {build: buildTPCH},
	stored.KindDisk:       {build: buildDisk, destructive: []string{"overwrite_file", "destroy_data_on", "even_if_formatted", "fio"}},
	stored.KindBackup:     {build: buildBackup, destructive: []string{"pg_bin"}},
	stored.KindSpace:      {build: buildSpace},
	stored.KindMonitor:    {build: buildMonitor},
	stored.KindDurability: {build: buildDurability, destructive: []string{"fault_command", "recover_command"}},
}

// kindNames lists the kinds for messages.
func kindNames() string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// request is a posted JSON object, by key.
type request map[string]json.RawMessage

// str reads a string key ("" when absent); a value of another type is bad
// input.
func (r request) str(key string) (string, error) {
	raw, ok := r[key]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", options.Badf(key, "--%s: give a string", key)
	}
	return s, nil
}

// dsn is the request's dsn, or the DSN of the managed server on this host
// whose data directory server names: the console starts a run on one by
// name, and no password travels.
func (r request) dsn() (string, error) {
	dsn, err := r.str("dsn")
	if err != nil {
		return "", err
	}
	dir, err := r.str("server")
	if err != nil || dir == "" {
		return dsn, err
	}
	if dsn != "" {
		return "", options.Badf("server", "dsn and server both name the database; give one")
	}
	st, err := server.Status(context.Background(), dir)
	switch {
	case err != nil:
		return "", options.Badf("server", "server %s: %v", experiment.Quote(dir), err)
	case !st.Running || st.DSN == "":
		return "", options.Badf("server", "server %s is not running; start it with: tierbench server start --datadir %s", experiment.Quote(dir), dir)
	}
	return st.DSN, nil
}

// keys that serve sets itself, not the request.
var serveKeys = map[string]string{
	"results": "serve stores every run in its own results directory (serve --results); leave results out",
}

// buildJob turns a posted run into a job, or bad input naming the key.
func (s *Server) buildJob(id string, req request) (*job, error) {
	k, err := req.str("kind")
	if err != nil {
		return nil, err
	}
	def, ok := kinds[k]
	if !ok {
		if k == "" {
			return nil, options.Badf("kind", "no kind given; give kind, one of: %s", kindNames())
		}
		return nil, options.Badf("kind", "kind %q is not an experiment serve runs; give one of: %s", experiment.Quote(k), kindNames())
	}
	for _, key := range def.destructive {
		if _, given := req[key]; given && !s.opts.AllowDestructive {
			return nil, &refusal{apiError{Field: key, Error: key + " writes to a block device or a file tierbench did not create, " +
				"or runs a program the request names; this serve refuses it unless started with --allow-destructive"}}
		}
	}
	fs := pflag.NewFlagSet(k, pflag.ContinueOnError)
	rec := experiment.Record{RunID: id, Results: s.opts.Results, LatencyBuckets: live.LatencyBuckets}
	return def.build(fs, req, rec)
}

// fill sets fs's flags from the request's keys (a key is a flag's name
// with _ for -), but the keys the kind reads itself. A string is given as
// it is; a number or a boolean as JSON writes it; a list is joined with
// commas, or, for a repeatable option (--threshold), given once per
// element. A key that names no option is bad input that lists them.
func fill(fs *pflag.FlagSet, req request, own ...string) error {
	own = append(own, "kind")
	var errs options.Errors
	keys := make([]string, 0, len(req))
	for k := range req {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if slices.Contains(own, key) {
			continue
		}
		if why, ok := serveKeys[key]; ok {
			errs = append(errs, &options.Error{Field: key, Msg: key + ": " + why})
			continue
		}
		name := strings.ReplaceAll(key, "_", "-")
		f := fs.Lookup(name)
		if f == nil || strings.Contains(key, "-") {
			errs = append(errs, &options.Error{Field: key, Msg: fmt.Sprintf("%q is not an option here; give one of: %s", experiment.Quote(key), optionKeys(fs, own))})
			continue
		}
		values, err := flagValues(req[key], f.Value.Type() == "stringArray")
		if err == nil {
			for _, v := range values {
				if err = fs.Set(name, v); err != nil {
					break
				}
			}
		}
		if err != nil {
			errs = append(errs, &options.Error{Field: key, Msg: fmt.Sprintf("--%s: %v", name, err)})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// optionKeys lists the keys a kind takes.
func optionKeys(fs *pflag.FlagSet, own []string) string {
	var keys []string
	fs.VisitAll(func(f *pflag.Flag) { keys = append(keys, strings.ReplaceAll(f.Name, "-", "_")) })
	for _, k := range own {
		if k != "kind" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// flagValues is a JSON value as flag values.
func flagValues(raw json.RawMessage, repeatable bool) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
		var out []string
		for _, item := range list {
			v, err := scalar(item)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if repeatable {
			return out, nil
		}
		return []string{strings.Join(out, ",")}, nil
	}
	v, err := scalar(raw)
	return []string{v}, err
}

// scalar is a JSON string, number or boolean as a flag value.
func scalar(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&n) == nil {
		return n.String(), nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return fmt.Sprint(b), nil
	}
	return "", fmt.Errorf("give a string, a number, a boolean or a list of them, not %s", experiment.Quote(string(raw)))
}

// flagRE finds a flag's name in a message of the command line's.
var flagRE = regexp.MustCompile(`(^|[\s(,"'])--([a-z][a-z0-9-]*)`)

// apiWords are a message of the command line's as the API says it: each
// --flag named by its key ("--all-warehouses" is "all_warehouses").
func apiWords(msg string) string {
	return flagRE.ReplaceAllStringFunc(msg, func(m string) string {
		i := strings.Index(m, "--")
		return m[:i] + strings.ReplaceAll(m[i+2:], "-", "_")
	})
}

// record gives a run's record what serve sets: its id, the results
// directory, the latency buckets of /metrics.
func record(dst *experiment.Record, rec experiment.Record) {
	dst.RunID, dst.Results, dst.LatencyBuckets = rec.RunID, rec.Results, rec.LatencyBuckets
}

// runs wraps an experiment's Run as a job's.
func runs[C, R any](cfg C, run func(context.Context, C, experiment.Observer) (R, error)) *job {
	return &job{run: func(ctx context.Context, obs experiment.Observer) (any, error) { return run(ctx, cfg, obs) }}
}

// kindOptions are what every kind's options are: flags, and a config from them.
type kindOptions[C any] interface {
	AddFlags(fs *pflag.FlagSet)
	Config() (C, error)
}

// configure registers o's flags, fills them from the request (but the
// keys own, which the kind reads itself) and builds o's config.
func configure[C any](o kindOptions[C], fs *pflag.FlagSet, req request, own ...string) (C, error) {
	o.AddFlags(fs)
	if err := fill(fs, req, own...); err != nil {
		var zero C
		return zero, err
	}
	return o.Config()
}

// buildTPCC is `tpcc run`'s options and the request's dsn, or the managed
// server whose data directory its server names.
func buildTPCC(fs *pflag.FlagSet, req request, rec experiment.Record) (*job, error) {
	cfg, err := configure[experiment.TPCCConfig](&options.TPCCRun{}, fs, req, "dsn", "server")
	if err != nil {
		return nil, err
	}
	if cfg.DSN, err = req.dsn(); err != nil {
		return nil, err
	}
	record(&cfg.Record, rec)
	if err := options.Flagged(cfg.Validate(), options.TelemetryFlags); err != nil {
		return nil, err
	}
	return runs(cfg, experiment.RunTPCC), nil
}

// buildTPCH is `tpch run`'s options and the request's dsn, or the managed
// server whose data directory its server names: there, the database of
// its own that TPC-H is built in (experiment.TPCHDatabase), as a
// scenario's tpch-build builds it.
func buildTPCH(fs *pflag.FlagSet, req request, rec experiment.Record) (*job, error) {
	cfg, err := configure[experiment.TPCHRunConfig](&options.TPCHRun{}, fs, req, "dsn", "server")
	if err != nil {
		return nil, err
	}
	if cfg.DSN, err = req.dsn(); err != nil {
		return nil, err
	}
	if dir, _ := req.str("server"); dir != "" {
		if cfg.DSN, err = engine.WithDatabase(cfg.DSN, experiment.TPCHDatabase); err != nil {
			return nil, err
		}
	}
	record(&cfg.Record, rec)
	if err := options.Flagged(cfg.Validate(), options.TelemetryFlags); err != nil {
		return nil, err
	}
	return runs(cfg, experiment.RunTPCH), nil
}

// buildDisk is `disk run`'s options.
func buildDisk(fs *pflag.FlagSet, req request, rec experiment.Record) (*job, error) {
	var o options.DiskRun
	o.AddFlags(fs)
	if err := fill(fs, req); err != nil {
		return nil, err
	}
	cfg, err := o.Config(fs)
	if err != nil {
		return nil, err
	}
	record(&cfg.Record, rec)
	return runs(*cfg, experiment.RunDisk), nil
}

// buildBackup is `backup run`'s options and the request's dsn.
func buildBackup(fs *pflag.FlagSet, req request, rec experiment.Record) (*job, error) {
	cfg, err := configure[experiment.BackupConfig](&options.BackupRun{}, fs, req, "dsn")
	if err != nil {
		return nil, err
	}
	if cfg.DSN, err = req.str("dsn"); err != nil {
		return nil, err
	}
	record(&cfg.Record, rec)
	if err := options.ValidateBackup(cfg); err != nil {
		return nil, err
	}
	return runs(cfg, experiment.RunBackup), nil
}

// buildSpace is `space`'s options.
func buildSpace(fs *pflag.FlagSet, req request, rec experiment.Record) (*job, error) {
	cfg, err := configure[experiment.SpaceConfig](&options.Space{}, fs, req)
	if err != nil {
		return nil, err
	}
	record(&cfg.Record, rec)
	return runs(cfg, experiment.RunSpace), nil
}

// buildMonitor is `monitor`'s options, its dsn among them; a monitor
// without a duration samples until it is cancelled.
func buildMonitor(fs *pflag.FlagSet, req request, rec experiment.Record) (*job, error) {
	cfg, err := configure[experiment.MonitorConfig](&options.Monitor{}, fs, req)
	if err != nil {
		return nil, err
	}
	cfg.RunID, cfg.Results = rec.RunID, rec.Results
	return runs(cfg, experiment.RunMonitor), nil
}

// buildDurability is `durability`'s options and the request's dsn (or its
// managed server).
func buildDurability(fs *pflag.FlagSet, req request, rec experiment.Record) (*job, error) {
	var o options.Durability
	o.AddFlags(fs)
	if err := fill(fs, req, "dsn"); err != nil {
		return nil, err
	}
	dsn, err := req.str("dsn")
	if err != nil {
		return nil, err
	}
	o.WarehousesSet = fs.Changed("warehouses")
	cfg, err := o.Config(dsn)
	if err != nil {
		return nil, err
	}
	cfg.RunID, cfg.Results, cfg.CommandOutput = rec.RunID, rec.Results, io.Discard
	return runs(cfg, experiment.RunDurability), nil
}
