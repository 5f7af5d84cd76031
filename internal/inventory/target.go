package inventory

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/telemetry"
)

// collectTarget describes the mount and the devices holding path. A failed
// resolution still returns what it found, with the error.
func collectTarget(path, proc, sys string, resolve func(string) (telemetry.Resolution, error)) (*Target, error) {
	res, err := resolve(path)
	t := &Target{
		Path:         path,
		MountPoint:   res.Mount,
		Filesystem:   res.FSType,
		MountSource:  res.Source,
		MemoryBacked: res.MemoryBacked,
		Devices:      []Device{},
		Note:         res.Note,
	}
	if res.Path != "" {
		t.Path = res.Path
	}
	if err != nil && t.Note == "" {
		t.Note = err.Error()
	}
	if t.MountPoint != "" {
		t.MountOptions = mountOptions(filepath.Join(proc, "self", "mountinfo"), t.MountPoint)
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
func readDevice(sys, name string) Device {
	d := Device{Name: name}
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

// mountOptions returns the options of the mount at point: the per-mount
// ones, then the superblock's not already said ("rw,relatime,errors=remount-ro").
// The last line for the point wins, being mounted on top.
func mountOptions(mountinfo, point string) string {
	f, err := os.Open(mountinfo)
	if err != nil {
		return ""
	}
	defer f.Close()
	var found string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if p, opts, ok := parseMountinfoOptions(sc.Text()); ok && p == point {
			found = opts
		}
	}
	return found
}

// parseMountinfoOptions reads a proc(5) mountinfo line's mount point (5),
// mount options (6) and super options (11):
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
func parseMountinfoOptions(line string) (point, options string, ok bool) {
	fields := strings.Fields(line)
	if len(fields) < 7 {
		return "", "", false
	}
	sep := slices.Index(fields[6:], "-")
	if sep < 0 {
		return "", "", false
	}
	sep += 6
	var opts []string
	add := func(list string) {
		for _, o := range strings.Split(list, ",") {
			if o != "" && !slices.Contains(opts, o) {
				opts = append(opts, o)
			}
		}
	}
	add(fields[5])
	if sep+3 < len(fields) {
		add(fields[sep+3])
	}
	return unescapeOctal(fields[4]), strings.Join(opts, ","), true
}

// unescapeOctal undoes the kernel's \ooo escaping of space, tab, newline and
// backslash in mountinfo paths.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
