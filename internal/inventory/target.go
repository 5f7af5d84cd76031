package inventory

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
)

// collectTarget describes the mount and the devices holding path. A failed
// resolution still returns what it found, with the error.
func collectTarget(path, proc, sys string, resolve func(string) (telemetry.Resolution, error)) (*stored.Target, error) {
	res, err := resolve(path)
	t := &stored.Target{
		Path:         path,
		MountPoint:   res.Mount,
		Filesystem:   res.FSType,
		MountSource:  res.Source,
		MountOptions: res.Options,
		MemoryBacked: res.MemoryBacked,
		Devices:      []stored.Device{},
		Note:         res.Note,
	}
	if res.Path != "" {
		t.Path = res.Path
	}
	if err != nil && t.Note == "" {
		t.Note = err.Error()
	}
	for _, name := range leavesFirst(res.Leaves, res.Devices) {
		t.Devices = append(t.Devices, readDevice(sys, name))
	}
	return t, err
}

// leavesFirst lists the whole disks at the bottom, which carry the I/O the
// report is about, then the rest of the chain in its order, top first.
func leavesFirst(leaves, devices []string) []string {
	out := make([]string, 0, len(devices)+len(leaves))
	for _, d := range leaves {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	for _, d := range devices {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// readDevice reads a block device's facts from sysfs. A partition has only
// its own size and number there; the rest comes from its disk, which is its
// parent directory.
func readDevice(sys, name string) stored.Device {
	d := stored.Device{Name: name}
	dir, err := filepath.EvalSymlinks(filepath.Join(sys, "class", "block", name))
	if err != nil {
		if dir, err = filepath.EvalSymlinks(filepath.Join(sys, "block", name)); err != nil {
			return d
		}
	}
	disk := dir
	if exists(filepath.Join(dir, "partition")) {
		disk = filepath.Dir(dir)
	}
	d.CapacityBytes = readInt64(filepath.Join(dir, "size")) * 512 // always 512-byte sectors, whatever the block size

	dev := filepath.Join(disk, "device")
	d.Model = readTrim(filepath.Join(dev, "model"))
	d.Vendor = readTrim(filepath.Join(dev, "vendor"))
	d.Firmware = readTrim(filepath.Join(dev, "firmware_rev")) // nvme
	if d.Firmware == "" {
		d.Firmware = readTrim(filepath.Join(dev, "rev")) // scsi, sata
	}

	queue := filepath.Join(dir, "queue")
	if !exists(queue) {
		queue = filepath.Join(disk, "queue")
	}
	switch readTrim(filepath.Join(queue, "rotational")) {
	case "0":
		d.Rotational = new(false)
	case "1":
		d.Rotational = new(true)
	}
	d.Scheduler = selected(readTrim(filepath.Join(queue, "scheduler")))
	d.LogicalBlock = int(readInt64(filepath.Join(queue, "logical_block_size")))
	d.PhysicalBlock = int(readInt64(filepath.Join(queue, "physical_block_size")))

	d.Transport = transport(filepath.Base(disk), disk)
	d.BackingFile = readTrim(filepath.Join(dir, "loop", "backing_file"))
	return d
}

// selected picks the bracketed entry of a sysfs choice list such as
// "[mq-deadline] kyber bfq none"; a list of one is that one.
func selected(list string) string {
	if i := strings.IndexByte(list, '['); i >= 0 {
		if j := strings.IndexByte(list[i:], ']'); j > 0 {
			return list[i+1 : i+j]
		}
	}
	if f := strings.Fields(list); len(f) == 1 {
		return f[0]
	}
	return ""
}

// namePrefixes are the transports a kernel name settles.
var namePrefixes = []struct{ prefix, transport string }{
	{"nvme", "nvme"},
	{"loop", "loop"},
	{"dm-", "dm"},
	{"md", "md"},
	{"zram", "zram"},
	{"ram", "ram"},
	{"mmcblk", "mmc"},
	{"xvd", "xen"},
	{"nbd", "nbd"},
	{"rbd", "rbd"},
}

// transport says how a whole disk is attached, as far as sysfs shows: by
// its name, by its driver or its place in the device tree. "" when unsure.
func transport(name, disk string) string {
	for _, p := range namePrefixes {
		if strings.HasPrefix(name, p.prefix) {
			return p.transport
		}
	}
	driver, _ := os.Readlink(filepath.Join(disk, "device", "driver"))
	if filepath.Base(driver) == "virtio_blk" || strings.Contains(disk, "/virtio") {
		return "virtio"
	}
	if exists(filepath.Join(disk, "device", "vendor")) {
		switch {
		case strings.Contains(disk, "/ata"):
			return "sata"
		case strings.Contains(disk, "/usb"):
			return "usb"
		}
		return "scsi"
	}
	return ""
}
