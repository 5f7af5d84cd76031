package inventory

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/stored"
	"golang.org/x/sys/unix"
)

func collectHost(ctx context.Context, proc, sys, etc string, live bool) stored.Host {
	cpu := readCPUInfo(filepath.Join(proc, "cpuinfo"))
	h := stored.Host{
		Hostname:     readTrim(filepath.Join(proc, "sys", "kernel", "hostname")),
		CPUModel:     cpu.model,
		Cores:        onlineCPUs(filepath.Join(sys, "devices", "system", "cpu", "online")),
		Sockets:      len(cpu.physicalIDs),
		MemoryBytes:  memTotal(filepath.Join(proc, "meminfo")),
		OS:           osName(etc, live),
		Kernel:       readTrim(filepath.Join(proc, "sys", "kernel", "osrelease")),
		Architecture: architecture(proc, live),
	}
	if h.Hostname == "" && live {
		h.Hostname, _ = os.Hostname()
	}
	if h.Cores == 0 {
		h.Cores = cpu.processors
	}
	h.Virtualization = virtualization(ctx, proc, sys, cpu, live)
	return h
}

type cpuInfo struct {
	model          string
	processors     int
	physicalIDs    map[string]bool
	hasFlags       bool // an x86 "flags" line was there, so hypervisor's absence means something
	hypervisorFlag bool
}

// readCPUInfo reads the facts of /proc/cpuinfo's "key : value" lines. The
// model's key differs by architecture: "model name" (x86), "Processor"
// (older ARM kernels), "cpu" (POWER); the first found in that order wins.
func readCPUInfo(path string) cpuInfo {
	b, _ := os.ReadFile(path) // unreadable: nothing known
	return parseCPUInfo(b)
}

func parseCPUInfo(b []byte) cpuInfo {
	c := cpuInfo{physicalIDs: map[string]bool{}}
	models := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch key {
		case "processor":
			c.processors++
		case "physical id":
			c.physicalIDs[value] = true
		case "flags":
			c.hasFlags = true
			if !c.hypervisorFlag {
				c.hypervisorFlag = hasWord(value, "hypervisor")
			}
		case "model name", "Processor", "cpu":
			if _, seen := models[key]; !seen && value != "" {
				models[key] = value
			}
		}
	}
	for _, key := range []string{"model name", "Processor", "cpu"} {
		if m := models[key]; m != "" {
			c.model = m
			break
		}
	}
	return c
}

func hasWord(s, word string) bool {
	for _, f := range strings.Fields(s) {
		if f == word {
			return true
		}
	}
	return false
}

// onlineCPUs counts the CPUs of a cpu list such as "0-3,6,8-9"; 0 when the
// list cannot be read or parsed.
func onlineCPUs(path string) int { return countCPUs(readTrim(path)) }

// countCPUs counts the CPUs of a cpu list; 0 when it cannot be parsed.
func countCPUs(list string) int {
	if list == "" {
		return 0
	}
	n := 0
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		// No kernel has more than maxCPUs: a larger count (or an
		// overflowing sum) is not a cpu list.
		if b-a >= maxCPUs || n+b-a >= maxCPUs {
			return 0
		}
		n += b - a + 1
	}
	return n
}

// maxCPUs bounds onlineCPUs: Linux's NR_CPUS is at most 8192 today.
const maxCPUs = 1 << 20

// memTotal reads MemTotal ("MemTotal:  16384000 kB") in bytes.
func memTotal(path string) int64 {
	b, _ := os.ReadFile(path) // unreadable: unknown
	return parseMemTotal(b)
}

func parseMemTotal(b []byte) int64 {
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			return 0
		}
		if len(f) > 1 && strings.EqualFold(f[1], "kB") {
			if n > math.MaxInt64/1024 {
				return 0
			}
			n *= 1024
		}
		return n
	}
	return 0
}

// osName is os-release's PRETTY_NAME, else NAME and VERSION_ID. os-release(5)
// puts the file in /etc, or in /usr/lib when /etc has none.
func osName(etc string, live bool) string {
	vars := readOSRelease(filepath.Join(etc, "os-release"))
	if vars == nil && live {
		vars = readOSRelease("/usr/lib/os-release")
	}
	if p := vars["PRETTY_NAME"]; p != "" {
		return p
	}
	return strings.TrimSpace(vars["NAME"] + " " + vars["VERSION_ID"])
}

func readOSRelease(path string) map[string]string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return parseOSRelease(b)
}

func parseOSRelease(b []byte) map[string]string {
	vars := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" {
			continue
		}
		vars[k] = unquoteOSRelease(v)
	}
	return vars
}

// unquoteOSRelease reads a value as os-release(5) quotes it, like a shell:
// '…' as it is, "…" with the escapes \" \\ \$ and \` (Go's own, such as
// \x0A, are not os-release's and would let a value span lines).
func unquoteOSRelease(v string) string {
	if len(v) < 2 || v[0] != v[len(v)-1] || (v[0] != '"' && v[0] != '\'') {
		return strings.Trim(v, `"'`)
	}
	inner := v[1 : len(v)-1]
	if v[0] == '\'' {
		return inner
	}
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		if inner[i] == '\\' && i+1 < len(inner) && strings.IndexByte("\"\\$`", inner[i+1]) >= 0 {
			i++
		}
		b.WriteByte(inner[i])
	}
	return b.String()
}

// architecture is the machine as uname -m says it (x86_64, aarch64):
// /proc/sys/kernel/arch on kernels that have it, uname on the live system,
// else what this binary was built for.
func architecture(proc string, live bool) string {
	if a := readTrim(filepath.Join(proc, "sys", "kernel", "arch")); a != "" {
		return a
	}
	if live {
		var u unix.Utsname
		if err := unix.Uname(&u); err == nil {
			if m := unix.ByteSliceToString(u.Machine[:]); m != "" {
				return m
			}
		}
	}
	return runtime.GOARCH
}

// virtualization names the hypervisor or container, in systemd-detect-virt's
// vocabulary. On the live system systemd-detect-virt itself answers when
// installed; otherwise the signs in proc and sys decide, containers first as
// systemd-detect-virt does.
func virtualization(ctx context.Context, proc, sys string, cpu cpuInfo, live bool) string {
	if live {
		if v, ok := detectVirt(ctx); ok {
			return v
		}
	}
	if v := container(proc, live); v != "" {
		return v
	}
	kvmClock := hasWord(readTrim(filepath.Join(sys, "devices", "system", "clocksource", "clocksource0", "available_clocksource")), "kvm-clock")
	dmi := filepath.Join(sys, "class", "dmi", "id")
	vendor, product := readTrim(filepath.Join(dmi, "sys_vendor")), readTrim(filepath.Join(dmi, "product_name"))
	v := dmiVirtualization(vendor, product)
	if v == "qemu" && kvmClock {
		// QEMU's machine with KVM's acceleration: systemd-detect-virt says kvm.
		v = "kvm"
	}
	if v != "" {
		return v
	}
	xen := readTrim(filepath.Join(sys, "hypervisor", "type")) == "xen"
	switch {
	case cpu.hypervisorFlag && kvmClock:
		return "kvm"
	case xen:
		return "xen"
	case cpu.hypervisorFlag:
		return "unknown hypervisor"
	case cpu.hasFlags && (vendor != "" || product != ""):
		// x86 with DMI readable, naming no hypervisor, and no hypervisor flag.
		return "none"
	}
	return ""
}

// detectVirt runs systemd-detect-virt: it prints the technology, or "none"
// with a non-zero exit status.
func detectVirt(ctx context.Context) (string, bool) {
	path, err := exec.LookPath("systemd-detect-virt")
	if err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path).Output()
	return parseDetectVirt(string(out), err)
}

func parseDetectVirt(out string, err error) (string, bool) {
	out = strings.TrimSpace(out)
	if len(strings.Fields(out)) != 1 { // one word, or it is not the answer
		return "", false
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out, true
	case out == "none" && errors.As(err, &exit):
		return "none", true
	}
	return "", false
}

// container looks for the signs container runtimes leave: the marker files
// docker and podman put in the root (live system only), systemd's
// container= in PID 1's environment, and PID 1's cgroup path.
func container(proc string, live bool) string {
	if live {
		if exists("/.dockerenv") {
			return "docker"
		}
		if exists("/run/.containerenv") {
			return "podman"
		}
	}
	if b, err := os.ReadFile(filepath.Join(proc, "1", "environ")); err == nil {
		for _, kv := range strings.Split(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, "container="); ok && v != "" {
				return v
			}
		}
	}
	cg := readTrim(filepath.Join(proc, "1", "cgroup"))
	switch {
	case strings.Contains(cg, "/docker/"), strings.Contains(cg, "/docker-"):
		return "docker"
	case strings.Contains(cg, "/libpod-"):
		return "podman"
	case strings.Contains(cg, "/lxc/"), strings.Contains(cg, "/lxc.payload"):
		return "lxc"
	}
	return ""
}

// dmiVirtualization maps the DMI system vendor and product name that
// hypervisors present to systemd-detect-virt's names.
func dmiVirtualization(vendor, product string) string {
	has := func(s string) bool { return strings.Contains(vendor, s) || strings.Contains(product, s) }
	switch {
	case has("KVM"):
		return "kvm"
	case has("QEMU"):
		return "qemu"
	case has("VMware"), has("VMW"):
		return "vmware"
	case has("innotek GmbH"), has("VirtualBox"):
		return "oracle"
	case has("Xen"):
		return "xen"
	case strings.Contains(vendor, "Microsoft Corporation") && strings.Contains(product, "Virtual Machine"):
		return "microsoft"
	case has("Amazon EC2"):
		return "amazon"
	case strings.HasPrefix(vendor, "Google"):
		return "google"
	case has("Parallels"):
		return "parallels"
	case has("Bochs"):
		return "bochs"
	case has("BHYVE"):
		return "bhyve"
	}
	return ""
}
