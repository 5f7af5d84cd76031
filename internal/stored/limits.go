package stored

import "fmt"

// IOLimit throttles one block device (cgroup's I/O limits, and what a
// server's or tier's group applied, as its run's parameters keep it). It must
// be a whole disk, a dm or a loop device: the kernel refuses throttles on
// partitions.
type IOLimit struct {
	Major     uint32 `json:"major"`
	Minor     uint32 `json:"minor"`
	ReadIOPS  int64  `json:"read_iops,omitempty"`  // 0: unlimited
	WriteIOPS int64  `json:"write_iops,omitempty"` // 0: unlimited
	ReadBPS   int64  `json:"read_bps,omitempty"`   // bytes per second; 0: unlimited
	WriteBPS  int64  `json:"write_bps,omitempty"`  // bytes per second; 0: unlimited
}

// Device is MAJ:MIN, as the cgroup files write it.
func (l IOLimit) Device() string { return fmt.Sprintf("%d:%d", l.Major, l.Minor) }

// Applied is what a cgroup's limits really took effect as, read back from
// the cgroup files after writing them: a managed server's memory cap and
// throttles, which its runs' Placement keeps.
type Applied struct {
	Version   int       `json:"cgroup_version"` // 1, 2, or 0 when none was usable
	Path      string    `json:"path,omitempty"` // the group's directory (v1: the memory hierarchy's, else the blkio one's)
	MemoryMax int64     `json:"memory_max_bytes,omitempty"`
	IO        []IOLimit `json:"io,omitempty"`
	// IOPath is the directory whose files hold IO, when it is not Path (v1's
	// blkio group; a shared I/O group).
	IOPath string `json:"io_path,omitempty"`
	// IOShared says IO is a budget shared with every group of the same
	// I/O group (cgroup's Limits.IOGroup), not this group's alone.
	IOShared   bool   `json:"io_shared,omitempty"`
	MemoryNote string `json:"memory_note,omitempty"` // why a memory cap was not applied ("" when applied or not asked)
	IONote     string `json:"io_note,omitempty"`     // why an I/O limit was not applied, and v1's caveat
}
