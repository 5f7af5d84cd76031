package stored

import "time"

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
	Devices      []Device `json:"devices"` // the whole disks at the bottom of the chain (the telemetry's Resolution.Leaves), then the rest
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
	Engine   string    `json:"engine"` // "postgres"
	Version  string    `json:"version"`
	Settings []Setting `json:"settings"`
}

// Software is what did the measuring.
type Software struct {
	Tierbench string `json:"tierbench"`
	Go        string `json:"go"` // runtime.Version()
	Fio       string `json:"fio,omitempty"`
}

// Setting is one server setting that matters to a benchmark's outcome, as the server shows it.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"` // as the server prints it, unit included, e.g. "128MB", "on", "5min"
}
