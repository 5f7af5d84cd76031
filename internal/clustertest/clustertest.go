// Package clustertest gives tests a small cluster of "hosts" on this
// machine: each host is a Linux network namespace with an address of its
// own on a private /24, joined to the test (the "controller", in the root
// namespace) by a bridge, and runs, when asked, a real sshd, a real
// `fio --server` and a real Prometheus node_exporter bound to that address.
// The controller reaches each host, and the hosts reach each other, only
// over that bridge; no traffic leaves the machine.
//
//	c := clustertest.New(t, 2, clustertest.Options{SSH: true, NodeExporter: true})
//	t.Setenv("TIERBENCH_SSH_COMMAND", c.SSHCommand)
//	h := remote.Host{Name: c.Hosts[0].Name, SSH: c.Hosts[0].SSH}
//
// Namespaces share the machine's file system, users and processes: a host
// sees the same binaries and files as the test (a tierbench built by
// Tierbench runs on every host), and its sshd logs the test's user (root) in.
// Only the network is its own.
//
// It needs root, ip (iproute2), and for the services asked for sshd and
// ssh-keygen (openssh-server), fio, prometheus-node-exporter; without one
// the test skips, except when CI=true, where it fails: CI must never pass by
// skipping (scripts/setup.sh --test installs them).
//
// Everything is removed when the test ends (t.Cleanup, or Close): the
// services and every process left in the namespaces are killed, the
// namespaces, links, bridge and temporary files removed. The services die
// with the test binary (Pdeathsig); namespaces and links of a binary killed
// before its cleanup (a -timeout panic) are removed by the next New of any
// test binary, as their names carry the dead binary's pid.
package clustertest

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// Ports the services listen on, at each host's address.
const (
	SSHPort          = 22
	FioPort          = 8765
	NodeExporterPort = 9100
)

// Options chooses the services each host runs.
type Options struct {
	SSH          bool // sshd, with keys and an ssh_config for the controller
	Fio          bool // fio --server
	NodeExporter bool // prometheus-node-exporter
}

// Host is one namespace of the cluster.
type Host struct {
	Name         string // "h1", "h2", …
	Addr         string // its address, e.g. 10.213.7.2
	NS           string // the network namespace's name (ip netns exec NS …)
	SSH          string // "root@ADDR:22": the test's user at the host's sshd ("" without Options.SSH)
	FioServer    string // "ADDR,8765", fio's --client syntax ("" without Options.Fio)
	NodeExporter string // "http://ADDR:9100/metrics" ("" without Options.NodeExporter)

	dir      string // its files: keys, configs, logs
	sshd     *proc
	fio      *proc
	exporter *proc
	mu       sync.Mutex // guards exporter (KillNodeExporter, StartNodeExporter)
}

// Cluster is the hosts of one test and what the controller needs to reach
// them.
type Cluster struct {
	Hosts []*Host
	// SSHCommand is the value for $TIERBENCH_SSH_COMMAND: "ssh -F FILE",
	// an ssh_config with the client key, known_hosts pinning every host's
	// key, strict host-key checking and batch mode.
	SSHCommand string
	// WrongKeySSHCommand offers a key no host authorizes (known_hosts as
	// SSHCommand's).
	WrongKeySSHCommand string
	// UnknownHostKeySSHCommand has the right key but an empty known_hosts
	// (UnknownKnownHosts), so every host's key is unknown.
	UnknownHostKeySSHCommand string
	KnownHosts               string // SSHCommand's known_hosts file
	UnknownKnownHosts        string // UnknownHostKeySSHCommand's (empty) known_hosts file
	ClientKey                string // the authorized private key (its .pub beside it)

	Dir        string       // the cluster's temporary files, removed at cleanup
	Subnet     netip.Prefix // the hosts' /24
	Controller string       // the bridge's address, the controller's on the subnet (.1)
	Bridge     string       // the bridge's name

	t       testing.TB
	opts    Options
	base    string // the prefix of every name: "tbc<pid36>-<n36>"
	tools   tools
	lock    *os.File // holds the subnet (see pickSubnet)
	links   []string // links to delete at cleanup
	nss     []string // namespaces to delete at cleanup
	closing sync.Once
}

// tools are the binaries the cluster runs.
type tools struct {
	ip, sshd, ssh, keygen, fio, exporter string
}

var clusters atomic.Int64 // numbers the clusters of this process

// New starts n hosts with the services opts asks for and returns when every
// service answers. Everything is removed when the test ends. It skips the
// test (fails it when CI=true) when this machine cannot run them.
func New(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	if n < 1 || n > 200 {
		t.Fatalf("clustertest.New: %d hosts; give 1 to 200", n)
	}
	tl := requireTools(t, opts)
	sweepOnce.Do(func() { sweepStale(tl.ip) })

	c := &Cluster{t: t, opts: opts, tools: tl,
		base: fmt.Sprintf("tbc%s-%s", strconv.FormatInt(int64(os.Getpid()), 36), strconv.FormatInt(clusters.Add(1), 36))}
	dir, err := os.MkdirTemp("", tempPrefix()+c.base[3:]+"-")
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	c.Dir = dir
	t.Cleanup(c.Close)
	if strings.ContainsAny(dir, " \t\n") {
		t.Fatalf("clustertest: the temporary directory %q has a space, which TIERBENCH_SSH_COMMAND cannot carry; set TMPDIR", dir)
	}

	if err := c.pickSubnet(); err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	c.Bridge = c.base + "b"
	c.Controller = c.Subnet.Addr().Next().String()
	c.mustIP("link", "add", c.Bridge, "type", "bridge")
	c.links = append(c.links, c.Bridge)
	c.mustIP("addr", "add", c.Controller+"/24", "dev", c.Bridge)
	c.mustIP("link", "set", c.Bridge, "up")

	addr := c.Subnet.Addr().Next()
	for i := 1; i <= n; i++ {
		addr = addr.Next()
		h := &Host{Name: "h" + strconv.Itoa(i), Addr: addr.String(), NS: c.base + "h" + strconv.Itoa(i),
			dir: filepath.Join(dir, "h"+strconv.Itoa(i))}
		if err := os.Mkdir(h.dir, 0o700); err != nil {
			t.Fatalf("clustertest: %v", err)
		}
		c.Hosts = append(c.Hosts, h)
		if out, err := c.ip("netns", "add", h.NS); err != nil {
			if i == 1 {
				missing(t, fmt.Sprintf("cannot create a network namespace (it needs CAP_SYS_ADMIN and CAP_NET_ADMIN): %s", out))
			}
			t.Fatalf("clustertest: ip netns add %s: %s", h.NS, out)
		}
		c.nss = append(c.nss, h.NS)
		veth, peer := c.base+"v"+strconv.Itoa(i), c.base+"p"+strconv.Itoa(i)
		c.mustIP("link", "add", veth, "type", "veth", "peer", "name", peer)
		c.links = append(c.links, veth)
		c.mustIP("link", "set", peer, "netns", h.NS)
		c.mustIP("-n", h.NS, "link", "set", peer, "name", "eth0")
		c.mustIP("-n", h.NS, "addr", "add", h.Addr+"/24", "dev", "eth0")
		c.mustIP("-n", h.NS, "link", "set", "eth0", "up")
		c.mustIP("-n", h.NS, "link", "set", "lo", "up")
		c.mustIP("link", "set", veth, "master", c.Bridge)
		c.mustIP("link", "set", veth, "up")
	}

	if opts.SSH {
		c.setUpSSH()
	}
	for _, h := range c.Hosts {
		if opts.SSH {
			c.startSSHD(h)
		}
		if opts.Fio {
			c.startFio(h)
		}
		if opts.NodeExporter {
			c.startNodeExporter(h)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, h := range c.Hosts {
		if opts.SSH {
			c.waitSSHD(h, deadline)
		}
		if opts.Fio {
			c.waitTCP(h.fio, h.Addr, FioPort, deadline)
		}
		if opts.NodeExporter {
			c.waitNodeExporter(h, deadline)
		}
	}
	return c
}

// UnusedAddr is an address on the cluster's subnet that no host has: a
// destination that does not answer (ARP fails: "no route to host").
func (c *Cluster) UnusedAddr() string {
	a := c.Subnet.Addr().As4()
	a[3] = 254
	return netip.AddrFrom4(a).String()
}

// Exec is a command that runs name args… inside host i's namespace
// (Hosts[i], from 0). It dies with the test binary; whatever of it is left
// when the test ends is killed.
func (c *Cluster) Exec(t testing.TB, i int, name string, args ...string) *exec.Cmd {
	t.Helper()
	h := c.host(t, i)
	cmd := exec.Command(c.tools.ip, append([]string{"netns", "exec", h.NS, name}, args...)...)
	dieWithParent(cmd, false)
	return cmd
}

// KillNodeExporter kills host i's node_exporter (SIGKILL) and waits until
// it is gone: for tests of an exporter lost mid-run.
func (c *Cluster) KillNodeExporter(t testing.TB, i int) {
	t.Helper()
	h := c.host(t, i)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.exporter == nil {
		t.Fatalf("clustertest: %s runs no node_exporter", h.Name)
	}
	h.exporter.kill()
	h.exporter = nil
}

// StartNodeExporter starts host i's node_exporter again after
// KillNodeExporter, and waits until it answers.
func (c *Cluster) StartNodeExporter(t testing.TB, i int) {
	t.Helper()
	h := c.host(t, i)
	h.mu.Lock()
	running := h.exporter != nil
	h.mu.Unlock()
	if running {
		return
	}
	c.startNodeExporter(h)
	c.waitNodeExporter(h, time.Now().Add(20*time.Second))
}

func (c *Cluster) host(t testing.TB, i int) *Host {
	t.Helper()
	if i < 0 || i >= len(c.Hosts) {
		t.Fatalf("clustertest: no host %d; the cluster has Hosts[0] to Hosts[%d]", i, len(c.Hosts)-1)
	}
	return c.Hosts[i]
}

// Close removes the cluster: services and every process in its namespaces
// killed, namespaces, links and bridge deleted, files removed. The test's
// cleanup calls it; calling it before (to check that nothing is left) is
// fine. Failures to remove something fail the test.
func (c *Cluster) Close() {
	c.closing.Do(c.close)
}

func (c *Cluster) close() {
	var errs []error
	for _, h := range c.Hosts {
		h.mu.Lock()
		for _, p := range []*proc{h.sshd, h.fio, h.exporter} {
			if p != nil {
				p.kill()
			}
		}
		h.mu.Unlock()
	}
	for _, ns := range c.nss {
		if err := killNamespace(c.tools.ip, ns); err != nil {
			errs = append(errs, err)
		}
		if out, err := c.ip("netns", "del", ns); err != nil {
			errs = append(errs, fmt.Errorf("ip netns del %s: %s", ns, out))
		}
	}
	for i := len(c.links) - 1; i >= 0; i-- {
		// A veth goes with its namespace, which the kernel may finish
		// removing only now: either message says the link is gone. The
		// bridge is deleted here.
		if out, err := c.ip("link", "del", c.links[i]); err != nil && !linkGone(out) {
			errs = append(errs, fmt.Errorf("ip link del %s: %s", c.links[i], out))
		}
	}
	c.unlockSubnet()
	if err := os.RemoveAll(c.Dir); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		c.t.Errorf("clustertest: cleanup left something behind: %v", err)
	}
}

// linkGone reports whether ip's output says the link does not exist.
func linkGone(out string) bool {
	return strings.Contains(out, "Cannot find device") || strings.Contains(out, "No such device")
}

// ip runs ip with args and returns its output, trimmed.
func (c *Cluster) ip(args ...string) (string, error) {
	out, err := exec.Command(c.tools.ip, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (c *Cluster) mustIP(args ...string) {
	c.t.Helper()
	if out, err := c.ip(args...); err != nil {
		c.t.Fatalf("clustertest: ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// missing skips the test with reason, or fails it when CI=true.
func missing(t testing.TB, reason string) {
	t.Helper()
	testenv.SkipOrFail(t, "clustertest: %s", reason)
}

// requireTools finds the binaries opts needs, skipping (failing when
// CI=true) without root or one of them.
func requireTools(t testing.TB, opts Options) tools {
	t.Helper()
	if os.Geteuid() != 0 {
		missing(t, "network namespaces need root: run the tests as root")
	}
	var tl tools
	var lacking []string
	find := func(dst *string, pkg string, names ...string) {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				*dst = p
				return
			}
		}
		lacking = append(lacking, fmt.Sprintf("%s (%s)", names[0], pkg))
	}
	find(&tl.ip, "iproute2", "ip", "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip")
	if opts.SSH {
		find(&tl.sshd, "openssh-server", "/usr/sbin/sshd", "sshd")
		find(&tl.ssh, "openssh-client", "ssh")
		find(&tl.keygen, "openssh-client", "ssh-keygen")
	}
	if opts.Fio {
		find(&tl.fio, "fio", "fio")
	}
	if opts.NodeExporter {
		find(&tl.exporter, "prometheus-node-exporter", "prometheus-node-exporter", "/usr/bin/prometheus-node-exporter", "node_exporter")
	}
	if len(lacking) > 0 {
		missing(t, "not installed: "+strings.Join(lacking, ", ")+" (scripts/setup.sh --test installs them)")
	}
	return tl
}

// testUser is the user the test runs as, who logs in on the hosts.
func testUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "root"
}
