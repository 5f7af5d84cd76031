package scenario

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/internal/engine/all"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/remote"
)

var hostKeys = []string{"name", "enabled", "ssh", "tierbench", "node_exporter", "fio_server", "address"}

// Host is a machine of the cluster other than the controller (the machine
// tierbench runs on). tierbench reaches it only through what its users
// already run there: OpenSSH (to run tierbench's own CLI), Prometheus
// node_exporter (its telemetry) and fio's server mode (storage profiles).
type Host struct {
	Name         string `json:"name"`
	SSH          string `json:"ssh,omitempty"`           // user@addr[:port]: servers on the host are managed over it
	Tierbench    string `json:"tierbench,omitempty"`     // tierbench's path there; "": on its PATH
	NodeExporter string `json:"node_exporter,omitempty"` // http://addr:9100/metrics
	FioServer    string `json:"fio_server,omitempty"`    // addr[:8765], a running `fio --server`
	// Address is where its servers listen for the controller: the
	// address given, else the ssh destination's when that is an IP.
	Address string `json:"address,omitempty"`
	Line    int    `json:"line"`
	// pos is where each field's value is, so that a host that cannot be
	// reached is reported at the field that names it.
	pos map[string][2]int
}

// Remote is the host as internal/remote runs commands on it.
func (h Host) Remote() remote.Host {
	return remote.Host{Name: h.Name, SSH: h.SSH, Tierbench: h.Tierbench}
}

// Fio is the host's fio server.
func (h Host) Fio() fio.Server {
	s, _ := fio.ParseServer(h.FioServer) // checked by validation
	s.Name = h.Name
	return s
}

func (p *parser) parseHosts(f field) {
	if f.val == nil {
		return
	}
	items, ok := p.list(f.val, "hosts")
	if !ok {
		return
	}
	for _, it := range items {
		if it.Kind != yaml.MappingNode {
			p.at(it, "a host is a mapping with a name and any of ssh, node_exporter, fio_server, not %s", kindName(it))
			continue
		}
		what := "host " + peekName(it)
		fs := p.fields(it, what, hostKeys)
		p.required(it, fs, what, "name")
		if f, ok := fs["enabled"]; ok {
			// A scale leaves a host out, e.g. the paper's hosts 3 and 4 at
			// laptop scale: a host that is not enabled is not there at all.
			if on, ok := p.boolean(f.val, what+": enabled"); ok && !on {
				continue
			}
		}
		h := Host{Line: it.Line, pos: map[string][2]int{}}
		var nameNode *yaml.Node
		if f, ok := fs["name"]; ok {
			nameNode = f.val
			h.Name, _ = p.name(f.val, "host name")
		}
		str := func(key string) (string, *yaml.Node) {
			f, ok := fs[key]
			if !ok {
				return "", nil
			}
			s, ok := p.text(f.val, what+": "+key)
			if !ok {
				return "", nil
			}
			s = strings.TrimSpace(s)
			if s == "" { // as if absent: how a scale leaves a service out
				return "", nil
			}
			h.pos[key] = [2]int{f.val.Line, f.val.Column}
			return s, f.val
		}
		if s, n := str("ssh"); n != nil {
			if d, err := remote.ParseSSH(s); err != nil {
				p.bad(n, "%s: %v", what, err)
			} else {
				h.SSH = s
				if net.ParseIP(d.Addr) != nil {
					h.Address = d.Addr
				}
			}
		}
		if s, n := str("tierbench"); n != nil {
			if !strings.HasPrefix(s, "/") {
				p.bad(n, "%s: tierbench %q is not an absolute path; give where tierbench is on the host, e.g. /usr/local/bin/tierbench", what, s)
			} else if h.SSH == "" {
				p.bad(n, "%s: tierbench is run over ssh, and the host has no ssh; add ssh: user@addr", what)
			}
			h.Tierbench = s
		}
		if s, n := str("node_exporter"); n != nil {
			if err := checkExporterURL(s); err != nil {
				p.bad(n, "%s: node_exporter %v", what, err)
			}
			h.NodeExporter = s
		}
		if s, n := str("fio_server"); n != nil {
			if _, err := fio.ParseServer(s); err != nil {
				p.bad(n, "%s: fio_server: %v", what, err)
			}
			h.FioServer = s
		}
		if s, n := str("address"); n != nil {
			if net.ParseIP(s) == nil {
				p.bad(n, "%s: address %q is not an IP address; give the address the host's servers listen on, e.g. 10.0.0.5", what, s)
			}
			h.Address = s
		}
		if h.Name == "" {
			continue
		}
		if i, dup := p.hosts[h.Name]; dup {
			p.at(nameNode, "host %s is defined twice (first on line %d)", h.Name, p.sc.Hosts[i].Line)
			continue
		}
		p.hosts[h.Name] = len(p.sc.Hosts)
		p.sc.Hosts = append(p.sc.Hosts, h)
	}
}

// checkExporterURL checks a node_exporter address: an http(s) URL with a host.
func checkExporterURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL; give the exporter's metrics page, e.g. http://10.0.0.5:9100/metrics", s)
	}
	return nil
}

// hostRef reads a reference to a host.
func (p *parser) hostRef(n *yaml.Node, what string) (Host, bool) {
	s, ok := p.text(n, what)
	if !ok {
		return Host{}, false
	}
	return p.hostByName(n, s, what)
}

func (p *parser) hostByName(n *yaml.Node, s, what string) (Host, bool) {
	i, ok := p.hosts[s]
	if !ok {
		p.bad(n, "%s %q is not defined; %s", what, s, defined("hosts", p.hostNames()))
		return Host{}, false
	}
	return p.sc.Hosts[i], true
}

func (p *parser) hostNames() []string {
	var out []string
	for _, h := range p.sc.Hosts {
		out = append(out, h.Name)
	}
	return out
}

// Host finds a host by name.
func (sc *Scenario) Host(name string) (Host, bool) {
	for _, h := range sc.Hosts {
		if h.Name == name {
			return h, true
		}
	}
	return Host{}, false
}

// dialTimeout bounds each reachability probe of CheckHosts.
const dialTimeout = 3 * time.Second

// CheckHosts connects to every address the scenario's hosts name (ssh,
// node_exporter, fio_server) and reports each that does not answer as an
// Error at its line and column, all at once; nil when all answer. It opens
// TCP connections only: ssh's own checks (keys, host keys) come when the
// first command runs.
func CheckHosts(ctx context.Context, sc *Scenario) error {
	type probe struct {
		host, key, addr string
		pos             [2]int
	}
	var probes []probe
	for _, h := range sc.Hosts {
		if h.SSH != "" {
			if d, err := remote.ParseSSH(h.SSH); err == nil {
				if addr, ok := d.Endpoint(ctx); ok {
					probes = append(probes, probe{h.Name, "ssh", addr, h.pos["ssh"]})
				}
			}
		}
		if h.NodeExporter != "" {
			if u, err := url.Parse(h.NodeExporter); err == nil {
				addr := u.Host
				if u.Port() == "" {
					addr = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
				}
				probes = append(probes, probe{h.Name, "node_exporter", addr, h.pos["node_exporter"]})
			}
		}
		if h.FioServer != "" {
			s := h.Fio()
			probes = append(probes, probe{h.Name, "fio_server", net.JoinHostPort(s.Addr, strconv.Itoa(s.Port)), h.pos["fio_server"]})
		}
	}
	errs := make([]*Error, len(probes))
	var wg sync.WaitGroup
	for i, pr := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{Timeout: dialTimeout}
			c, err := d.DialContext(ctx, "tcp", pr.addr)
			if err == nil {
				c.Close()
				return
			}
			errs[i] = &Error{File: sc.Source, Line: pr.pos[0], Col: pr.pos[1],
				Msg: fmt.Sprintf("host %s: %s %s is unreachable (%s); check the address and that the service runs there",
					pr.host, pr.key, pr.addr, dialReason(err))}
		}()
	}
	wg.Wait()
	var out Errors
	for _, e := range errs {
		if e != nil {
			out = append(out, *e)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out.sorted()
}

// dialReason is the last part of a dial error: "connection refused", "i/o timeout".
func dialReason(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// unmanagedKeys are what only a server tierbench manages can have.
var unmanagedKeys = []string{"target", "count", "memory", "settings"}

// unmanaged reads the dsn of a server tierbench does not manage, and
// refuses what only a managed server can have. Its engine is the DSN's.
func (p *parser) unmanaged(f field, fs map[string]field, what string) (dsn, eng string) {
	dsn, ok := p.text(f.val, what+": dsn")
	if !ok {
		return "", ""
	}
	eng, err := all.NameOf(dsn)
	if err != nil {
		p.bad(f.val, "%s: dsn: %v", what, err)
		return "", ""
	}
	if e, ok := fs["engine"]; ok {
		if name, _ := p.text(e.val, what+": engine"); name != "" && name != eng {
			p.bad(e.val, "%s: engine %s does not match the dsn's (%s); leave engine out", what, name, eng)
		}
	}
	for _, k := range unmanagedKeys {
		if g, ok := fs[k]; ok {
			p.at(g.key, "%s: %s needs a server tierbench manages, and this one is given by its dsn; "+
				"leave %s out, or give engine, target and host instead of dsn", what, k, k)
		}
	}
	return dsn, eng
}

// placeTargets records where each target is used (Target.Hosts) and
// refuses an emulated tier anywhere but on the controller.
func (p *parser) placeTargets() {
	uses := map[string]map[string]string{} // target -> host -> what uses it there
	use := func(target, host, by string) {
		if target == "" {
			return
		}
		if uses[target] == nil {
			uses[target] = map[string]string{}
		}
		if _, ok := uses[target][host]; !ok {
			uses[target][host] = by
		}
	}
	for _, s := range p.sc.Servers {
		if len(s.Hosts) == 0 {
			use(s.Target, "", "server "+s.Name)
		}
		for _, h := range s.Hosts {
			use(s.Target, h, "server "+s.Name)
		}
	}
	hostOf := func(instance string) string {
		if s, ok := p.sc.Server(p.instanceOf[instance]); ok {
			return s.HostOf(slices.Index(s.Instances(), instance))
		}
		return ""
	}
	for _, st := range p.sc.Steps {
		switch {
		case st.Disk != nil && len(st.Disk.Hosts) == 0:
			use(st.Disk.Target, "", fmt.Sprintf("the disk step on line %d", st.Line))
		case st.Disk != nil:
			for _, h := range st.Disk.Hosts {
				use(st.Disk.Target, h, fmt.Sprintf("the disk step on line %d", st.Line))
			}
		case st.Backup != nil:
			for _, in := range st.Backup.Instances {
				use(st.Backup.Target, hostOf(in), fmt.Sprintf("the backup step on line %d", st.Line))
			}
		case st.Neighbours != nil:
			for _, in := range st.Neighbours.Backup {
				use(st.Neighbours.Target, hostOf(in), fmt.Sprintf("the neighbours step on line %d", st.Line))
			}
		}
	}
	for i := range p.sc.Targets {
		t := &p.sc.Targets[i]
		for h := range uses[t.Name] {
			t.Hosts = append(t.Hosts, h)
		}
		slices.Sort(t.Hosts)
		if len(t.Hosts) > 0 && t.Hosts[len(t.Hosts)-1] != "" && !path.IsAbs(t.Path) {
			p.add(t.Line, 0, "target %s: path %q is relative, and the target is used on host %s; "+
				"give an absolute path, which means the same on every host", t.Name, t.Path, t.Hosts[len(t.Hosts)-1])
		}
		if t.Emulate == nil {
			continue
		}
		for _, h := range t.Hosts {
			if h != "" {
				p.add(t.Line, 0, "target %s: emulate makes a tier on the machine tierbench runs on, but %s uses it on host %s; "+
					"leave emulate out of targets used on other hosts", t.Name, uses[t.Name][h], h)
				break
			}
		}
	}
}

// fioHosts reads a disk step's hosts: a list of host names, or "all" (every
// host with a fio_server). Each must run a fio server.
func (p *parser) fioHosts(n *yaml.Node, what string) []string {
	if n.Kind == yaml.ScalarNode && unmark(n.Value) == "all" {
		var out []string
		for _, h := range p.sc.Hosts {
			if h.FioServer != "" {
				out = append(out, h.Name)
			}
		}
		if len(out) == 0 {
			p.bad(n, "%s: hosts: all, but no host has a fio_server; give hosts a fio_server: addr[:8765]", what)
		}
		return out
	}
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		var ok bool
		if items, ok = p.list(n, what+": hosts"); !ok {
			return nil
		}
	}
	var out []string
	for _, it := range items {
		h, ok := p.hostRef(it, what+": host")
		if !ok {
			continue
		}
		switch {
		case slices.Contains(out, h.Name):
			p.bad(it, "%s: host %s is listed twice", what, h.Name)
		case h.FioServer == "":
			p.bad(it, "%s: host %s has no fio_server; give it fio_server: addr[:8765] (a running `fio --server`)", what, h.Name)
		default:
			out = append(out, h.Name)
		}
	}
	return out
}

// needsManaged refuses a step that manages server s when tierbench does not
// manage it (s has a dsn); does says what the step does to it.
func (p *parser) needsManaged(n *yaml.Node, what string, s Server, does string) bool {
	if s.Managed() {
		return true
	}
	p.bad(n, "%s: server %s is given by its dsn, so tierbench does not manage it, and this step %s; "+
		"leave the step out, or give the server engine, target and host instead of dsn", what, s.Name, does)
	return false
}

// serverHosts reads a server's host (one name) or hosts (a list, or one
// comma-separated text such as a variable's "h1,h2"). A server tierbench
// manages needs ssh and an address on each.
func (p *parser) serverHosts(n *yaml.Node, what string, s Server, list bool) []string {
	var es []entry
	if list {
		es, _ = p.entries(n, what+": hosts")
	} else if name, ok := p.text(n, what+": host"); ok {
		es = []entry{{strings.TrimSpace(name), n}}
	}
	var out []string
	for _, e := range es {
		it, name := e.node, e.text
		h, ok := p.hostByName(it, name, what+": host")
		if !ok {
			continue
		}
		switch {
		case slices.Contains(out, h.Name):
			p.bad(it, "%s: host %s is listed twice", what, h.Name)
			continue
		case !s.Managed():
		case h.SSH == "":
			p.bad(it, "%s: host %s has no ssh, and tierbench manages a server on another host over ssh; give the host ssh: user@addr, or give the server a dsn", what, h.Name)
		case h.Address == "":
			p.bad(it, "%s: host %s has no address for its servers to listen on; give the host address: (an IP address of it)", what, h.Name)
		}
		out = append(out, h.Name)
	}
	if !s.Managed() && len(out) > 1 {
		p.bad(n, "%s: a server given by its dsn is on one host; give host: NAME", what)
	}
	return out
}
