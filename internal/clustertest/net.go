package clustertest

import (
	"bufio"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// lockDir holds one lock file per subnet in use by a cluster; flock on it
// is held for the cluster's life and dropped by the kernel if the test
// binary dies, so parallel test binaries never pick the same subnet.
const lockDir = "/run/tierbench-clustertest"

// pickSubnet chooses a /24 that no address or route of this machine
// overlaps and no other cluster holds: first from 10.100.0.0–10.249.255.0,
// then from 172.16.0.0–172.31.255.0, starting at a place derived from the
// pid and the cluster's number.
func (c *Cluster) pickSubnet() error {
	used, err := usedPrefixes(c.tools.ip)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(lockDir, 0o755); err != nil {
		return err
	}
	seed := os.Getpid()*131 + int(clusters.Load())*7919
	pools := []struct {
		first, count int // second octets
		a            byte
	}{{100, 150, 10}, {16, 16, 172}}
	for _, pool := range pools {
		size := pool.count * 256
		for try := 0; try < 300 && try < size; try++ {
			n := (seed + try*1031) % size // 1031 is prime to both sizes
			p := netip.PrefixFrom(netip.AddrFrom4([4]byte{pool.a, byte(pool.first + n/256), byte(n % 256), 0}), 24)
			if overlapsAny(p, used) {
				continue
			}
			if f := lockSubnet(p); f != nil {
				c.Subnet, c.lock = p, f
				return nil
			}
		}
	}
	return errors.New("found no free private /24 for the cluster in 10.100-249.x or 172.16-31.x")
}

// lockSubnet takes p's lock file, or returns nil when another cluster holds
// it. The file is unlinked by its holder at cleanup, so the lock counts only
// if the file locked is still the one at the path.
func lockSubnet(p netip.Prefix) *os.File {
	path := filepath.Join(lockDir, p.Addr().String()+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil
	}
	fi, err1 := f.Stat()
	pi, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || !os.SameFile(fi, pi) {
		f.Close()
		return nil
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return f
}

func (c *Cluster) unlockSubnet() {
	if c.lock == nil {
		return
	}
	os.Remove(c.lock.Name()) // while still holding it (see lockSubnet)
	c.lock.Close()
	c.lock = nil
}

// usedPrefixes is every IPv4 prefix of this machine's addresses and routes
// (all tables), but the default route.
func usedPrefixes(ip string) ([]netip.Prefix, error) {
	var used []netip.Prefix
	out, err := exec.Command(ip, "-4", "-o", "addr", "show").Output()
	if err != nil {
		return nil, fmt.Errorf("ip -4 addr: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "inet" {
				if p, err := netip.ParsePrefix(f[i+1]); err == nil {
					used = append(used, p.Masked())
				}
			}
		}
	}
	out, err = exec.Command(ip, "-4", "route", "show", "table", "all").Output()
	if err != nil {
		return nil, fmt.Errorf("ip -4 route: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		dst := f[0]
		switch dst {
		case "local", "broadcast", "unreachable", "blackhole", "prohibit", "throw", "multicast", "unicast", "anycast", "nat":
			if len(f) < 2 {
				continue
			}
			dst = f[1]
		}
		if dst == "default" {
			continue
		}
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		if p, err := netip.ParsePrefix(dst); err == nil && p.Bits() > 0 {
			used = append(used, p.Masked())
		}
	}
	return used, nil
}

func overlapsAny(p netip.Prefix, used []netip.Prefix) bool {
	for _, u := range used {
		if p.Overlaps(u) {
			return true
		}
	}
	return false
}

// killNamespace kills every process in namespace ns (sshd's sessions and
// what they started, which left the services' process groups) and waits
// until they are gone.
func killNamespace(ip, ns string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := exec.Command(ip, "netns", "pids", ns).Output()
		if err != nil {
			return nil // the namespace is already gone
		}
		pids := strings.Fields(string(out))
		if len(pids) == 0 {
			return nil
		}
		for _, s := range pids {
			if pid, err := strconv.Atoi(s); err == nil && pid != os.Getpid() {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s: processes %s survive SIGKILL", ns, strings.Join(pids, " "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tempPrefix starts the names of the temporary directories of this
// process: "tierbench-clustertest-PID-".
func tempPrefix() string { return fmt.Sprintf("tierbench-clustertest-%d-", os.Getpid()) }

var (
	sweepOnce sync.Once
	// staleName matches the namespaces and links of New: "tbc" + the
	// binary's pid in base 36 + "-" + the cluster's number + what it is.
	staleName = regexp.MustCompile(`^tbc([0-9a-z]{1,7})-[0-9a-z]{1,4}(h|b|v|p)[0-9]*$`)
	staleTemp = regexp.MustCompile(`^tierbench-clustertest-([0-9]+)-`)
)

// sweepStale removes what test binaries that died before their cleanup
// left: namespaces (and the processes in them), links and temporary
// directories whose name carries a pid that no longer runs, and subnet
// lock files that no one holds.
func sweepStale(ip string) {
	dead := func(pid string, base int) bool {
		n, err := strconv.ParseInt(pid, base, 64)
		if err != nil || n <= 0 {
			return false
		}
		_, err = os.Stat("/proc/" + strconv.FormatInt(n, 10))
		return errors.Is(err, os.ErrNotExist)
	}
	if out, err := exec.Command(ip, "netns", "list").Output(); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 0 {
				continue
			}
			if m := staleName.FindStringSubmatch(f[0]); m != nil && dead(m[1], 36) {
				killNamespace(ip, f[0])
				exec.Command(ip, "netns", "del", f[0]).Run()
			}
		}
	}
	if out, err := exec.Command(ip, "-o", "link", "show").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			// "12: tbc1a2b-1b: <BROADCAST,…" or "13: tbc1a2b-1v1@if12: …"
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			name := strings.TrimSuffix(f[1], ":")
			if i := strings.IndexByte(name, '@'); i >= 0 {
				name = name[:i]
			}
			if m := staleName.FindStringSubmatch(name); m != nil && dead(m[1], 36) {
				exec.Command(ip, "link", "del", name).Run()
			}
		}
	}
	// Lock files of dead binaries: nobody holds them.
	if ents, err := os.ReadDir(lockDir); err == nil {
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".lock") {
				continue
			}
			if p, err := netip.ParseAddr(strings.TrimSuffix(e.Name(), ".lock")); err == nil {
				if f := lockSubnet(netip.PrefixFrom(p, 24)); f != nil {
					os.Remove(f.Name())
					f.Close()
				}
			}
		}
	}
	if ents, err := os.ReadDir(os.TempDir()); err == nil {
		for _, e := range ents {
			if m := staleTemp.FindStringSubmatch(e.Name()); m != nil && e.IsDir() && dead(m[1], 10) {
				os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
			}
		}
	}
}
