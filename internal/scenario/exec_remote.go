package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/remote"
	"github.com/tierbench/tierbench/internal/results"
	"github.com/tierbench/tierbench/internal/server"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/units"
	"github.com/tierbench/tierbench/internal/version"
)

// A server on another host is managed by running tierbench's own CLI there
// over SSH (`tierbench server start … --json` and its siblings): no daemon,
// no protocol but the CLI's JSON. Its DSN, password included, comes back
// on ssh's standard output and goes out again only on standard input
// (`--dsn -`), never on a command line of either host.

// remoteHost is the instance's host as internal/remote reaches it.
func (e *executor) remoteHost(in *instance) remote.Host {
	h, _ := e.sc.Host(in.host)
	return h.Remote()
}

// startRemote starts an instance on its host, listening on the host's
// address so that the controller's TPC-C driver reaches it.
func (e *executor) startRemote(ctx context.Context, in *instance) error {
	cfg := e.remoteConfig(in)
	args := append([]string{"server", "start", "--datadir", cfg.DataDir, "--engine", cfg.Engine}, serverArgs(cfg)...)
	return e.remoteStarted(ctx, in, args)
}

// remoteConfig is how an instance runs on its host: its server's config
// (serverConfig), listening on the host's address. The host's tierbench
// validates it with the rules the scenario was validated with.
func (e *executor) remoteConfig(in *instance) experiment.ServerConfig {
	h, _ := e.sc.Host(in.host)
	return serverConfig(in.server, in.dataDir, h.Address, nil)
}

// serverArgs are the flags of how a server runs, which `server start` and
// `server clone` share: where it listens, its memory and settings.
func serverArgs(cfg experiment.ServerConfig) []string {
	var args []string
	if cfg.Listen != "" {
		args = append(args, "--listen", cfg.Listen)
	}
	if cfg.Memory > 0 {
		args = append(args, "--memory", sizeArg(cfg.Memory))
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Settings)) {
		args = append(args, "--set", k+"="+cfg.Settings[k])
	}
	return args
}

// sizeArg writes a size as the user would (256MiB) when that is exact,
// else in bytes: a message about it then quotes what the user wrote.
func sizeArg(n int64) string {
	s := units.FormatSize(n)
	if v, err := units.ParseSize(s); err == nil && v == n {
		return s
	}
	return strconv.FormatInt(n, 10)
}

// remoteStarted runs args (`server start` or `server clone`) on the
// instance's host and takes the started server's DSN from its JSON.
func (e *executor) remoteStarted(ctx context.Context, in *instance, args []string) error {
	h, _ := e.sc.Host(in.host)
	var out experiment.ServerStarted
	if err := h.Remote().JSON(ctx, nil, &out, append(args, "--json")...); err != nil {
		return fmt.Errorf("server %s on host %s: %w", in.name, h.Name, err)
	}
	in.dsn, in.started, in.limits = out.DSN, true, out.Limits
	e.note("server %s: %s %s on host %s, %s:%d, data in %s", in.name, out.Engine, out.Version, h.Name, h.Address, out.Port, out.DataDir)
	return nil
}

// remoteRunning says whether the instance's data directory on its host is
// a managed one (as `server status` finds it).
func (e *executor) remoteExists(ctx context.Context, in *instance) bool {
	var st server.StatusInfo
	return e.remoteHost(in).JSON(ctx, nil, &st, "server", "status", "--datadir", in.dataDir, "--json") == nil
}

// stopRemote stops an instance on its host.
func (e *executor) stopRemote(ctx context.Context, in *instance) error {
	var out json.RawMessage
	if err := e.remoteHost(in).JSON(ctx, nil, &out, "server", "stop", "--datadir", in.dataDir, "--mode", "fast", "--json"); err != nil {
		return fmt.Errorf("stopping %s on host %s: %w", in.name, in.host, err)
	}
	in.started = false
	return nil
}

// cloneRemote copies the stopped first instance's data directory into
// in's, on their host, replacing a stale copy made before, and starts the
// copy as its own start would have started it.
func (e *executor) cloneRemote(ctx context.Context, from, in *instance) error {
	e.note("cloning %s into %s on host %s", from.dataDir, in.dataDir, in.host)
	cfg := e.remoteConfig(in)
	return e.remoteStarted(ctx, in, append([]string{"server", "clone", "--from", from.dataDir, "--datadir", cfg.DataDir, "--replace"}, serverArgs(cfg)...))
}

// buildRemote builds (or reuses) the TPC-C schema of an instance with the
// tierbench of its host, next to the data: the load does not cross the
// network.
func (e *executor) buildRemote(ctx context.Context, in *instance, warehouses, vus int) (built bool, err error) {
	h := e.remoteHost(in)
	args := []string{"tpcc", "build", "--dsn", "-", "--reuse", "--drop", "--warehouses", strconv.Itoa(warehouses)}
	if vus > 0 {
		args = append(args, "--build-vus", strconv.Itoa(vus))
	}
	e.note("server %s: building (or reusing) %s on host %s", in.name, units.Plural(warehouses, "warehouse", "warehouses"), h.Name)
	var out struct {
		Reused bool `json:"reused"`
	}
	if err := h.JSON(ctx, strings.NewReader(in.dsn+"\n"), &out, append(args, "--json")...); err != nil {
		return false, fmt.Errorf("server %s on host %s: %w", in.name, h.Name, err)
	}
	return !out.Reused, nil
}

// backupRemote runs an instance's backup cycles on its host, into the
// target's directory there, and brings the run back into the controller's
// store (runRemote).
func (e *executor) backupRemote(ctx context.Context, obs experiment.Observer, in *instance, t *execTarget, cycles, repeat int,
	spacing time.Duration, startAt time.Time, logical bool, p stored.Placement) error {
	args := []string{"backup", "run", "--dsn", "-", "--datadir", in.dataDir, "--target", path.Join(t.path, "backups-"+in.name),
		"--cycles", strconv.Itoa(cycles), "--repeat", strconv.Itoa(max(repeat, 1)), "--interval", spacing.String()}
	if logical {
		args = append(args, "--logical")
	}
	if !startAt.IsZero() {
		// On the host's clock, so that its first cycle starts when the
		// controller means, whatever ssh and the run's set-up take.
		args = append(args, "--start-at", startAt.Add(e.clockOffset(in.host)).UTC().Format(time.RFC3339Nano))
	}
	obs.Note(fmt.Sprintf("server %s: %d backup cycles on host %s", in.name, cycles, in.host))
	var doc experiment.BackupResult
	imported, err := e.runRemote(ctx, in, args, &doc, func() string { return doc.RunID }, p)
	if imported {
		for _, c := range doc.Cycles {
			for _, ph := range []*stored.PhaseResult{c.Backup, c.Restore} {
				if ph != nil {
					obs.Result(experiment.Result{Phase: ph})
				}
			}
		}
	}
	return err
}

// durabilityRemote runs the durability test of an instance on its host,
// which crashes and restarts the server there, and brings the run back
// into the controller's store (runRemote). It reports whether the test
// passed.
func (e *executor) durabilityRemote(ctx context.Context, in *instance, st *DurabilityStep, p stored.Placement) (bool, error) {
	args := []string{"durability", "--managed", in.dataDir, "--cycles", strconv.Itoa(st.Cycles), "--vus", strconv.Itoa(st.VUs),
		"--run-before-fault", st.RunBeforeFault.String(), "--fault", st.Fault, "--recover-timeout", st.RecoverTimeout.String(), "--mode", st.Mode}
	if st.Rate > 0 {
		args = append(args, "--rate", strconv.FormatFloat(st.Rate, 'f', -1, 64))
	}
	if st.ColdCache {
		args = append(args, "--cold-cache")
	}
	e.note("server %s: %s of the durability test on host %s", in.name, units.Plural(st.Cycles, st.Fault+" cycle", st.Fault+" cycles"), in.host)
	var doc experiment.DurabilityResult
	imported, err := e.runRemote(ctx, in, args, &doc, func() string { return doc.RunID }, p)
	if imported {
		for _, c := range doc.Cycles {
			e.obs.Result(experiment.Result{Cycle: c})
		}
	}
	return doc.Total.OK, err
}

// runRemote runs `tierbench ARGS --results DIR --json` for an instance on
// its host, with the instance's DSN on its standard input, and decodes its
// document into doc; the remote tierbench records the run in a store of
// its own in a temporary directory DIR, which is read back over SSH and
// imported into the controller's store with its times moved by the host's
// clock offset (importRemote). runID reads the run's id from doc. It
// reports whether the run was brought back, which it is even when it
// failed partway; the error is the run's or the import's.
func (e *executor) runRemote(ctx context.Context, in *instance, args []string, doc any, runID func() string, p stored.Placement) (bool, error) {
	h := e.remoteHost(in)
	tmp, err := h.Shell(ctx, nil, "mktemp -d \"${TMPDIR:-/tmp}/tierbench-results-XXXXXX\"")
	if err != nil {
		return false, fmt.Errorf("server %s on host %s: %w", in.name, h.Name, err)
	}
	dir := strings.TrimSpace(string(tmp))
	defer func() {
		_, _ = h.Shell(context.WithoutCancel(ctx), nil, "rm -rf -- "+remote.Quote(dir))
	}()
	runErr := h.JSON(ctx, strings.NewReader(in.dsn+"\n"), doc, append(args, "--results", dir, "--json")...)
	id := runID()
	if id == "" {
		if runErr == nil {
			runErr = fmt.Errorf("its %s run printed no run id", args[0])
		}
		return false, fmt.Errorf("server %s on host %s: %w", in.name, h.Name, runErr)
	}
	if err := e.importRemote(ctx, h, dir, id, p); err != nil {
		return false, fmt.Errorf("server %s on host %s: bringing back %s run %s: %w", in.name, h.Name, args[0], id, err)
	}
	if runErr != nil {
		return true, fmt.Errorf("server %s on host %s: %w", in.name, h.Name, runErr)
	}
	return true, nil
}

// importRemote copies run runID from the store in dir on host h into the
// scenario's store, in its group, with the placement added to its
// parameters and its times on the controller's clock.
func (e *executor) importRemote(ctx context.Context, h remote.Host, dir, runID string, p stored.Placement) error {
	data, err := h.Shell(ctx, nil, "cat -- "+remote.Quote(path.Join(dir, results.FileName)))
	if err != nil {
		return err
	}
	local, err := os.MkdirTemp("", "tierbench-import-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(local)
	if err := os.WriteFile(local+"/"+results.FileName, data, 0o600); err != nil {
		return err
	}
	src, err := results.OpenReadOnly(local)
	if err != nil {
		return err
	}
	defer src.Close()
	run, err := src.Run(ctx, runID)
	if err != nil {
		return err
	}
	params, err := withPlacement(run.Params, p)
	if err != nil {
		return err
	}
	dst, err := results.Open(e.results)
	if err != nil {
		return err
	}
	defer dst.Close()
	return dst.Import(ctx, src, runID, results.ImportOptions{Group: e.group, Params: params, Host: h.Name,
		Shift: -e.clockOffset(h.Name)})
}

// withPlacement sets a run's placement keys in its stored parameters.
func withPlacement(params json.RawMessage, p stored.Placement) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &m); err != nil {
			return nil, err
		}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var pm map[string]json.RawMessage
	if err := json.Unmarshal(b, &pm); err != nil {
		return nil, err
	}
	for k, v := range pm {
		m[k] = v
	}
	return json.Marshal(m)
}

// clockOffset is host's clock minus the controller's, as last measured.
func (e *executor) clockOffset(host string) time.Duration {
	e.offsetMu.Lock()
	defer e.offsetMu.Unlock()
	return e.offsets[host]
}

// measureClocks measures each SSH host's clock offset over one ssh
// session (remote.Host.ClockOffset: the best of five round trips).
func (e *executor) measureClocks(ctx context.Context) {
	for _, h := range e.sc.Hosts {
		if h.SSH == "" {
			continue
		}
		off, bound, err := h.Remote().ClockOffset(ctx, 5)
		if err != nil {
			e.note("host %s: clock offset not measured: %v", h.Name, err)
			continue
		}
		e.offsetMu.Lock()
		e.offsets[h.Name] = off
		e.offsetMu.Unlock()
		e.note("host %s: clock offset %+.1f ms (±%.1f ms, over ssh)", h.Name, float64(off)/1e6, float64(bound)/1e6)
	}
}

// CheckVersions asks the tierbench of every host that runs one of the
// scenario's servers for its version (`tierbench version --json`) and
// refuses any that is not this controller's (version.Version): the
// scenario was validated with this version's rules, which a host applies
// again, and the hosts speak its JSON. One error names each host that
// differs and the version it runs.
func CheckVersions(ctx context.Context, sc *Scenario) error {
	return checkVersions(ctx, sc, version.Version)
}

// checkVersions compares each host's tierbench with the controller's
// version mine (a parameter, so that a test need not change the global
// other tests running beside it read).
func checkVersions(ctx context.Context, sc *Scenario, mine string) error {
	var hosts []Host
	for _, s := range sc.Servers {
		for _, name := range s.Hosts {
			if h, ok := sc.Host(name); ok && s.Managed() && !slices.ContainsFunc(hosts, func(x Host) bool { return x.Name == name }) {
				hosts = append(hosts, h)
			}
		}
	}
	got := make([]string, len(hosts))
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() {
			var v struct {
				Version string `json:"version"`
			}
			if err := h.Remote().JSON(ctx, nil, &v, "version", "--json"); err != nil {
				errs[i] = fmt.Errorf("host %s: asking its tierbench for its version: %w", h.Name, err)
				return
			}
			got[i] = v.Version
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var differ []string
	for i, h := range hosts {
		if got[i] != mine {
			differ = append(differ, fmt.Sprintf("host %s runs tierbench %s", h.Name, got[i]))
		}
	}
	if len(differ) == 0 {
		return nil
	}
	return fmt.Errorf("%s, this controller %s; install the same version on every host", strings.Join(differ, ", "), mine)
}
