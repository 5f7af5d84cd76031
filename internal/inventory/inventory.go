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
	"github.com/tierbench/tierbench/internal/telemetry"
)

// Environment is what a run ran on. A fact that could not be found is left empty ("" / 0 / nil)
// and the report shows it as unknown: nothing is guessed.
type Environment struct {
	CapturedAt time.Time `json:"captured_at"`
	Host       Host      `json:"host"`
	Target     *Target   `json:"target,omitempty"`   // nil when the run had no local target path
	Database   *Database `json:"database,omitempty"` // nil when the run had no database
	Software   Software  `json:"software"`
}

// Host is the machine tierbench ran on.
type Host struct {
	Hostname       string `json:"hostname"`
	CPUModel       string `json:"cpu_model"`      // /proc/cpuinfo "model name" (or "Processor"/"cpu" on other arches)
	Cores          int    `json:"cores"`          // logical CPUs online
	Sockets        int    `json:"sockets"`        // distinct "physical id"s (0: unknown)
	MemoryBytes    int64  `json:"memory_bytes"`   // MemTotal
	OS             string `json:"os"`             // /etc/os-release PRETTY_NAME
	Kernel         string `json:"kernel"`         // uname -r (via /proc/sys/kernel/osrelease)
	Architecture   string `json:"architecture"`   // runtime.GOARCH or uname -m
	Virtualization string `json:"virtualization"` // "none" when bare metal is certain, e.g. "kvm", "vmware", "xen", "microsoft", "docker", "lxc"; "" unknown
}

// Target is the filesystem and the devices holding the target path.
type Target struct {
	Path         string   `json:"path"`
	MountPoint   string   `json:"mount_point"`
	Filesystem   string   `json:"filesystem"`    // ext4, xfs, tmpfs…
	MountSource  string   `json:"mount_source"`  // e.g. /dev/vda1
	MountOptions string   `json:"mount_options"` // the mount's and the superblock's options, as mountinfo lists them
	MemoryBacked bool     `json:"memory_backed"`
	Devices      []Device `json:"devices"` // the whole disks at the bottom of the chain (telemetry Resolution.Leaves), then the rest
	Note         string   `json:"note,omitempty"`
}

// Device is one block device of the target's chain, as sysfs describes it.
type Device struct {
	Name          string `json:"name"` // kernel name: vda, nvme0n1, dm-0, loop3
	Model         string `json:"model"`
	Vendor        string `json:"vendor"`
	Firmware      string `json:"firmware"`       // /sys/block/X/device/firmware_rev or rev
	Transport     string `json:"transport"`      // nvme, sata/scsi, virtio, loop, dm, md… as far as sysfs says
	CapacityBytes int64  `json:"capacity_bytes"` // /sys/block/X/size x 512
	Rotational    *bool  `json:"rotational,omitempty"`
	Scheduler     string `json:"scheduler"` // the [selected] one of queue/scheduler
	LogicalBlock  int    `json:"logical_block_bytes"`
	PhysicalBlock int    `json:"physical_block_bytes"`
	BackingFile   string `json:"backing_file,omitempty"` // loop devices
}

// Database is the database server the run used.
type Database struct {
	Engine   string           `json:"engine"` // "postgres"
	Version  string           `json:"version"`
	Settings []engine.Setting `json:"settings"`
}

// Software is what did the measuring.
type Software struct {
	Tierbench string `json:"tierbench"`
	Go        string `json:"go"` // runtime.Version()
	Fio       string `json:"fio,omitempty"`
}

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
func Collect(ctx context.Context, o Options) (Environment, []string) {
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
	env := Environment{
		CapturedAt: time.Now().UTC(),
		Host:       collectHost(ctx, o.ProcRoot, o.SysRoot, o.EtcRoot, live),
		Software: Software{
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

func collectDatabase(ctx context.Context, db engine.DB, engineName string) (*Database, error) {
	d := &Database{Engine: engineName}
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
