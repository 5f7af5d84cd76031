package clustertest_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/clustertest"
)

// sshCmd runs `ssh -F … dest command` as the controller, with sshCommand's
// settings.
func sshCmd(sshCommand, dest string, command ...string) *exec.Cmd {
	f := strings.Fields(sshCommand)
	user, addr, _ := strings.Cut(dest, "@")
	addr = strings.TrimSuffix(addr, ":22")
	args := append(f[1:], "-l", user, addr)
	return exec.Command(f[0], append(args, command...)...)
}

// TestCluster starts two hosts with every service, checks each works as a
// client would use it, then that Close leaves nothing behind.
func TestCluster(t *testing.T) {
	c := clustertest.New(t, 2, clustertest.Options{SSH: true, Fio: true, NodeExporter: true})
	if len(c.Hosts) != 2 {
		t.Fatalf("%d hosts, want 2", len(c.Hosts))
	}
	if c.Subnet.Bits() != 24 || !c.Subnet.Addr().IsPrivate() {
		t.Fatalf("subnet %s is not a private /24", c.Subnet)
	}
	for i, h := range c.Hosts {
		if want := "h" + strconv.Itoa(i+1); h.Name != want {
			t.Errorf("host %d is named %q, want %q", i, h.Name, want)
		}
		if h.SSH != "root@"+h.Addr+":22" || h.FioServer != h.Addr+",8765" || h.NodeExporter != "http://"+h.Addr+":9100/metrics" {
			t.Errorf("host %s: SSH %q, FioServer %q, NodeExporter %q", h.Name, h.SSH, h.FioServer, h.NodeExporter)
		}
	}
	h1, h2 := c.Hosts[0], c.Hosts[1]

	t.Run("ssh from the controller lands in the host's namespace", func(t *testing.T) {
		for _, h := range c.Hosts {
			out, err := sshCmd(c.SSHCommand, h.SSH, "ip -4 -o addr show dev eth0").CombinedOutput()
			if err != nil || !strings.Contains(string(out), " "+h.Addr+"/24 ") {
				t.Fatalf("ssh %s: %v: %s", h.SSH, err, out)
			}
		}
	})

	t.Run("a host reaches another", func(t *testing.T) {
		// ssh from inside h1 to h2, with the controller's settings (the
		// namespaces share the file system).
		f := strings.Fields(c.SSHCommand)
		out, err := c.Exec(t, 0, f[0], f[1], f[2], "-l", "root", h2.Addr, "ip -4 -o addr show dev eth0").CombinedOutput()
		if err != nil || !strings.Contains(string(out), " "+h2.Addr+"/24 ") {
			t.Fatalf("ssh from h1 to h2: %v: %s", err, out)
		}
	})

	t.Run("the other keys are refused", func(t *testing.T) {
		out, err := sshCmd(c.WrongKeySSHCommand, h1.SSH, "true").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Permission denied (publickey)") {
			t.Errorf("wrong key: %v: %s", err, out)
		}
		out, err = sshCmd(c.UnknownHostKeySSHCommand, h1.SSH, "true").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Host key verification failed") {
			t.Errorf("unknown host key: %v: %s", err, out)
		}
		if b, _ := os.ReadFile(c.UnknownKnownHosts); len(b) != 0 {
			t.Errorf("ssh wrote the empty known_hosts: %q", b)
		}
	})

	t.Run("fio server runs a job", func(t *testing.T) {
		job := filepath.Join(t.TempDir(), "null.fio")
		if err := os.WriteFile(job, []byte("[null]\nioengine=null\nsize=4m\nrw=randread\nbs=4k\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("fio", "--client="+h2.FioServer, "--output-format=json", job).Output()
		if err != nil {
			t.Fatalf("fio --client=%s: %v: %s", h2.FioServer, err, out)
		}
		var doc struct {
			ClientStats []struct {
				Jobname  string `json:"jobname"`
				Error    int    `json:"error"`
				Hostname string `json:"hostname"`
				Read     struct {
					IOBytes int64 `json:"io_bytes"`
				} `json:"read"`
			} `json:"client_stats"`
		}
		if err := json.Unmarshal(out[strings.IndexByte(string(out), '{'):], &doc); err != nil {
			t.Fatalf("fio's JSON: %v: %s", err, out)
		}
		if len(doc.ClientStats) == 0 || doc.ClientStats[0].Error != 0 || doc.ClientStats[0].Read.IOBytes != 4<<20 {
			t.Fatalf("fio ran no 4 MiB null job on %s: %+v", h2.Name, doc.ClientStats)
		}
	})

	t.Run("node_exporter serves metrics, is killed and started again", func(t *testing.T) {
		for _, h := range c.Hosts {
			body := get(t, h.NodeExporter)
			for _, m := range []string{"node_cpu_seconds_total", "node_time_seconds", "node_disk_", "node_memory_MemTotal_bytes", "node_load1"} {
				if !strings.Contains(body, m) {
					t.Errorf("%s has no %s", h.NodeExporter, m)
				}
			}
		}
		c.KillNodeExporter(t, 0)
		if resp, err := noProxy.Get(h1.NodeExporter); err == nil {
			resp.Body.Close()
			t.Fatalf("node_exporter on h1 still answers after KillNodeExporter")
		}
		get(t, h2.NodeExporter) // the other host's is untouched
		c.StartNodeExporter(t, 0)
		get(t, h1.NodeExporter)
	})

	// A process that a session left: Close must kill it too.
	stray := sshCmd(c.SSHCommand, h1.SSH, "sleep 300 </dev/null >/dev/null 2>&1 &")
	if out, err := stray.CombinedOutput(); err != nil {
		t.Fatalf("starting a stray sleep on h1: %v: %s", err, out)
	}
	var pids []string
	for _, h := range c.Hosts {
		out, err := exec.Command("ip", "netns", "pids", h.NS).Output()
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, strings.Fields(string(out))...)
	}
	if len(pids) < 7 { // 2 × (sshd, fio, node_exporter) + the stray sleep
		t.Fatalf("the namespaces hold %d processes, want at least 7: %v", len(pids), pids)
	}

	c.Close()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range c.Hosts {
		for _, ns := range strings.Fields(string(out)) {
			if ns == h.NS {
				t.Errorf("namespace %s is left after Close", h.NS)
			}
		}
	}
	if out, err := exec.Command("ip", "link", "show", c.Bridge).CombinedOutput(); err == nil {
		t.Errorf("bridge %s is left after Close: %s", c.Bridge, out)
	}
	links, _ := exec.Command("ip", "-o", "link", "show").Output()
	if prefix := strings.TrimSuffix(c.Bridge, "b"); strings.Contains(string(links), " "+prefix) {
		t.Errorf("links named %s… are left after Close:\n%s", prefix, links)
	}
	for _, pid := range pids {
		if st, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
			t.Errorf("process %s is left after Close: %s", pid, st)
		}
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("the cluster's directory %s is left after Close: %v", c.Dir, err)
	}
	if _, err := os.Stat("/run/tierbench-clustertest/" + c.Subnet.Addr().String() + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the subnet's lock file is left after Close: %v", err)
	}
}

// TestClustersApart: two clusters of one process get their own names and
// subnets, and one's hosts do not see the other's.
func TestClustersApart(t *testing.T) {
	a := clustertest.New(t, 1, clustertest.Options{})
	b := clustertest.New(t, 1, clustertest.Options{})
	if a.Subnet == b.Subnet || a.Bridge == b.Bridge || a.Hosts[0].NS == b.Hosts[0].NS {
		t.Fatalf("two clusters share a subnet, bridge or namespace: %s %s %s, %s %s %s",
			a.Subnet, a.Bridge, a.Hosts[0].NS, b.Subnet, b.Bridge, b.Hosts[0].NS)
	}
	// a's host reaches its controller's address, and not b's host.
	ln, err := net.Listen("tcp", net.JoinHostPort(a.Controller, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	dial := func(c *clustertest.Cluster, addr string) ([]byte, error) {
		return c.Exec(t, 0, "bash", "-c", "exec 3<>/dev/tcp/"+strings.ReplaceAll(addr, ":", "/")).CombinedOutput()
	}
	if out, err := dial(a, ln.Addr().String()); err != nil {
		t.Fatalf("h1 of a cannot connect to its controller at %s: %v: %s", ln.Addr(), err, out)
	}
	if out, err := dial(a, b.Hosts[0].Addr+":22"); err == nil || !strings.Contains(string(out), "unreachable") {
		t.Fatalf("h1 of a reaches (or does not fail to reach) h1 of b: %v: %s", err, out)
	}
}

var noProxy = &http.Client{Transport: &http.Transport{Proxy: nil}}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := noProxy.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return string(b)
}

// TestShareSSH: two clusters shared in one $TIERBENCH_SSH_COMMAND are each
// reached through it, with their own keys; a cluster whose test ended is no
// longer in it, and the other still is.
func TestShareSSH(t *testing.T) {
	a := clustertest.New(t, 1, clustertest.Options{SSH: true})
	clustertest.ShareSSH(t, a)
	var b *clustertest.Cluster
	t.Run("second", func(t *testing.T) {
		b = clustertest.New(t, 1, clustertest.Options{SSH: true})
		clustertest.ShareSSH(t, b)
		for _, h := range []*clustertest.Host{a.Hosts[0], b.Hosts[0]} {
			out, err := sshCmd(os.Getenv("TIERBENCH_SSH_COMMAND"), h.SSH, "ip -4 -o addr show dev eth0").CombinedOutput()
			if err != nil || !strings.Contains(string(out), " "+h.Addr+"/24 ") {
				t.Fatalf("ssh %s through the shared config: %v: %s", h.SSH, err, out)
			}
		}
	})
	config := strings.Fields(os.Getenv("TIERBENCH_SSH_COMMAND"))[2]
	text, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	pattern := func(c *clustertest.Cluster) string {
		return "Host " + strings.TrimSuffix(c.Subnet.Addr().String(), "0") + "*\n"
	}
	if !strings.Contains(string(text), pattern(a)) || strings.Contains(string(text), pattern(b)) {
		t.Errorf("the shared config after the second cluster's test: want %q and not %q:\n%s", pattern(a), pattern(b), text)
	}
	out, err := sshCmd(os.Getenv("TIERBENCH_SSH_COMMAND"), a.Hosts[0].SSH, "true").CombinedOutput()
	if err != nil {
		t.Errorf("ssh %s after the other cluster's test ended: %v: %s", a.Hosts[0].SSH, err, out)
	}
}
