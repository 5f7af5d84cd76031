package clustertest

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is a service running in a host's namespace, in a process group of
// its own.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string        // its stdout and stderr
	done chan struct{} // closed when it has exited
}

// start runs name args… in h's namespace, its output in h.dir/LOG.log.
func (c *Cluster) start(h *Host, log string, name string, args ...string) *proc {
	c.t.Helper()
	p := &proc{name: filepath.Base(name), log: filepath.Join(h.dir, log+".log"), done: make(chan struct{})}
	f, err := os.OpenFile(p.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		c.t.Fatalf("clustertest: %v", err)
	}
	defer f.Close()
	p.cmd = exec.Command(c.tools.ip, append([]string{"netns", "exec", h.NS, name}, args...)...)
	p.cmd.Dir = h.dir
	p.cmd.Stdout, p.cmd.Stderr = f, f
	dieWithParent(p.cmd, true)
	if err := p.cmd.Start(); err != nil {
		c.t.Fatalf("clustertest: %s on %s: %v", p.name, h.Name, err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	return p
}

// kill kills p's process group and waits until p has exited.
func (p *proc) kill() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// tail is the end of p's log, for failure messages.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	if s == "" {
		return "(it printed nothing)"
	}
	return s
}

// fail fails the test because p did not come up, with its log.
func (c *Cluster) fail(h *Host, p *proc, why string) {
	c.t.Helper()
	state := "still running"
	if p.exited() {
		state = "exited: " + p.cmd.ProcessState.String()
	}
	c.t.Fatalf("clustertest: %s on %s (%s) %s (%s); its log:\n%s", p.name, h.Name, h.Addr, why, state, p.tail())
}

// setUpSSH makes the controller's side: the client keys, the known_hosts
// files and the three ssh_config files.
func (c *Cluster) setUpSSH() {
	c.t.Helper()
	cdir := filepath.Join(c.Dir, "client")
	if err := os.Mkdir(cdir, 0o700); err != nil {
		c.t.Fatalf("clustertest: %v", err)
	}
	c.ClientKey = filepath.Join(cdir, "id_ed25519")
	wrongKey := filepath.Join(cdir, "wrong_ed25519")
	c.keygen(c.ClientKey, "tierbench-clustertest-client")
	c.keygen(wrongKey, "tierbench-clustertest-wrong")
	c.KnownHosts = filepath.Join(cdir, "known_hosts")
	c.UnknownKnownHosts = filepath.Join(cdir, "known_hosts_empty")
	var kh strings.Builder
	for _, h := range c.Hosts {
		key := filepath.Join(h.dir, "ssh_host_ed25519_key")
		c.keygen(key, "tierbench-clustertest-"+h.Name)
		pub, err := os.ReadFile(key + ".pub")
		if err != nil {
			c.t.Fatalf("clustertest: %v", err)
		}
		f := strings.Fields(string(pub)) // type, key, comment
		fmt.Fprintf(&kh, "%s %s %s\n", h.Addr, f[0], f[1])
		h.SSH = testUser() + "@" + net.JoinHostPort(h.Addr, strconv.Itoa(SSHPort))
	}
	c.writeFile(c.KnownHosts, kh.String())
	c.writeFile(c.UnknownKnownHosts, "")
	config := func(name, key, knownHosts string) string {
		path := filepath.Join(cdir, name)
		c.writeFile(path, fmt.Sprintf(`# tierbench clustertest: the controller's ssh settings for this cluster
Host *
	IdentityFile %s
	IdentitiesOnly yes
	IdentityAgent none
	UserKnownHostsFile %s
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	UpdateHostKeys no
	CheckHostIP no
	BatchMode yes
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	ControlMaster no
	ControlPath none
`, key, knownHosts))
		return c.tools.ssh + " -F " + path
	}
	c.SSHCommand = config("ssh_config", c.ClientKey, c.KnownHosts)
	c.WrongKeySSHCommand = config("ssh_config_wrong_key", wrongKey, c.KnownHosts)
	c.UnknownHostKeySSHCommand = config("ssh_config_unknown_host_key", c.ClientKey, c.UnknownKnownHosts)
}

func (c *Cluster) keygen(path, comment string) {
	c.t.Helper()
	out, err := exec.Command(c.tools.keygen, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path).CombinedOutput()
	if err != nil {
		c.t.Fatalf("clustertest: ssh-keygen: %v: %s", err, out)
	}
}

func (c *Cluster) writeFile(path, content string) {
	c.t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		c.t.Fatalf("clustertest: %v", err)
	}
}

// startSSHD starts h's sshd: key authentication only, the cluster's client
// key authorized for every user, its own host key, config and pid file.
func (c *Cluster) startSSHD(h *Host) {
	c.t.Helper()
	// The privilege separation directory: shared by every namespace (they
	// share the file system), and the system's own sshd's; left in place.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		c.t.Fatalf("clustertest: %v", err)
	}
	config := filepath.Join(h.dir, "sshd_config")
	c.writeFile(config, fmt.Sprintf(`# tierbench clustertest: host %s
ListenAddress %s
HostKey %s
PidFile %s
AuthorizedKeysFile %s
AuthenticationMethods publickey
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
AllowAgentForwarding no
AllowTcpForwarding no
PermitTunnel no
MaxStartups 100
MaxSessions 100
`, h.Name, net.JoinHostPort(h.Addr, strconv.Itoa(SSHPort)), filepath.Join(h.dir, "ssh_host_ed25519_key"),
		filepath.Join(h.dir, "sshd.pid"), c.ClientKey+".pub"))
	// -D: stay in the foreground; -e: log to stderr (the log file).
	h.sshd = c.start(h, "sshd", c.tools.sshd, "-D", "-e", "-f", config)
}

// waitSSHD waits until h's sshd sends its banner.
func (c *Cluster) waitSSHD(h *Host, deadline time.Time) {
	c.t.Helper()
	addr := net.JoinHostPort(h.Addr, strconv.Itoa(SSHPort))
	for {
		if h.sshd.exited() {
			c.fail(h, h.sshd, "did not start")
		}
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.SetDeadline(time.Now().Add(2 * time.Second))
			line, _ := bufio.NewReader(conn).ReadString('\n')
			conn.Close()
			if strings.HasPrefix(line, "SSH-") {
				return
			}
		}
		if time.Now().After(deadline) {
			c.fail(h, h.sshd, "did not answer on "+addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startFio starts h's fio --server, which runs the jobs in h's directory.
func (c *Cluster) startFio(h *Host) {
	c.t.Helper()
	h.FioServer = h.Addr + "," + strconv.Itoa(FioPort)
	h.fio = c.start(h, "fio", c.tools.fio, "--server="+h.FioServer)
}

// waitTCP waits until p accepts connections on addr:port.
func (c *Cluster) waitTCP(p *proc, addr string, port int, deadline time.Time) {
	c.t.Helper()
	hp := net.JoinHostPort(addr, strconv.Itoa(port))
	for {
		if p.exited() {
			c.fail(c.hostOf(addr), p, "did not start")
		}
		if conn, err := net.DialTimeout("tcp", hp, time.Second); err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			c.fail(c.hostOf(addr), p, "did not answer on "+hp)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *Cluster) hostOf(addr string) *Host {
	for _, h := range c.Hosts {
		if h.Addr == addr {
			return h
		}
	}
	return &Host{Name: "?", Addr: addr}
}

// exporterCollectors are the node_exporter collectors the hosts run:
// tierbench's telemetry reads CPU, disks, memory, load and the clock; the
// others are slow or noisy in a namespace (netdev, filesystem, systemd…).
var exporterCollectors = []string{"cpu", "diskstats", "meminfo", "time", "loadavg"}

// startNodeExporter starts h's node_exporter.
func (c *Cluster) startNodeExporter(h *Host) {
	c.t.Helper()
	hp := net.JoinHostPort(h.Addr, strconv.Itoa(NodeExporterPort))
	h.NodeExporter = "http://" + hp + "/metrics"
	args := []string{"--web.listen-address=" + hp, "--collector.disable-defaults"}
	for _, col := range exporterCollectors {
		args = append(args, "--collector."+col)
	}
	p := c.start(h, "node_exporter", c.tools.exporter, args...)
	h.mu.Lock()
	h.exporter = p
	h.mu.Unlock()
}

// httpClient reaches the hosts directly, whatever HTTP_PROXY says.
var httpClient = &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}

// waitNodeExporter waits until h's /metrics answers 200.
func (c *Cluster) waitNodeExporter(h *Host, deadline time.Time) {
	c.t.Helper()
	h.mu.Lock()
	p := h.exporter
	h.mu.Unlock()
	for {
		if p.exited() {
			c.fail(h, p, "did not start")
		}
		if resp, err := httpClient.Get(h.NodeExporter); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			c.fail(h, p, "did not answer "+h.NodeExporter)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
