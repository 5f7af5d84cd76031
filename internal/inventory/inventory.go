// Package inventory records what a run ran on: the host (CPU, memory, OS,
// kernel, virtualization), the devices and filesystem under the target path,
// the database's version and settings, and the software versions. It reads
// /proc, /sys and /etc under roots that tests point at fixture trees.
package inventory

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// Options says what to describe besides the host.
type Options struct {
	Target           string    // path whose devices and filesystem to describe ("": none)
	DB               engine.DB // may be nil; used when it implements engine.SettingsReader
	Engine           string    // the DB's engine name, e.g. "postgres"
	TierbenchVersion string
	FioVersion       string
	// Roots for tests (default "/proc", "/sys", "/etc"), and the path resolver (default telemetry.ResolvePath).
	ProcRoot, SysRoot, EtcRoot string
	Resolve                    func(path string) (telemetry.Resolution, error)
}

// Default roots. Only when Collect reads these (not a fixture tree) does it
// also ask the live system: systemd-detect-virt, uname, /.dockerenv.
const (
	defaultProc = "/proc"
	defaultSys  = "/sys"
	defaultEtc  = "/etc"
)

// settingsTimeout bounds the database's part, so that a server that
// accepts connections but does not answer cannot hold up a run's start.
const settingsTimeout = 15 * time.Second

// Collect gathers the environment. It never fails as a whole: what it cannot read stays unknown,
// and problems worth saying (the database refused, the path did not resolve) are returned as notes.
func Collect(ctx context.Context, o Options) (stored.Environment, []string) {
	if o.ProcRoot == "" {
		o.ProcRoot = defaultProc
	}
	if o.SysRoot == "" {
		o.SysRoot = defaultSys
	}
	if o.EtcRoot == "" {
		o.EtcRoot = defaultEtc
	}
	if o.Resolve == nil {
		o.Resolve = telemetry.ResolvePath
	}
	live := o.ProcRoot == defaultProc && o.SysRoot == defaultSys

	var notes []string
	env := stored.Environment{
		CapturedAt: time.Now().UTC(),
		Host:       collectHost(ctx, o.ProcRoot, o.SysRoot, o.EtcRoot, live),
		Software: stored.Software{
			Tierbench: o.TierbenchVersion,
			Go:        runtime.Version(),
			Fio:       o.FioVersion,
		},
	}
	if o.Target != "" {
		t, err := collectTarget(o.Target, o.ProcRoot, o.SysRoot, o.Resolve)
		if err != nil {
			notes = append(notes, fmt.Sprintf("inventory: cannot describe the devices under %s: %v", o.Target, err))
		}
		env.Target = t
	}
	if o.DB != nil {
		d, err := collectDatabase(ctx, o.DB, o.Engine)
		if err != nil {
			notes = append(notes, "inventory: "+err.Error())
		}
		env.Database = d
	}
	return env, notes
}

func collectDatabase(ctx context.Context, db engine.DB, engineName string) (*stored.Database, error) {
	d := &stored.Database{Engine: engineName}
	sr, ok := db.(engine.SettingsReader)
	if !ok {
		return d, fmt.Errorf("the %s engine does not report its version and settings", engineName)
	}
	ctx, cancel := context.WithTimeout(ctx, settingsTimeout)
	defer cancel()
	version, settings, err := sr.Settings(ctx)
	d.Version, d.Settings = version, settings
	if err != nil {
		return d, fmt.Errorf("database version and settings unknown: %w", err)
	}
	return d, nil
}
