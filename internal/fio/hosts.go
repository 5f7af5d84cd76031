package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// A point can run on several hosts at once through fio's own client/server
// mode, as HCIBench runs its VMs: every host runs `fio --server`, and one
// fio client here sends each its own job file (same spec, its own test file
// and log prefix), starts them together and collects their json+ results
// and per-second logs. Nothing but fio runs on the hosts: no SSH.

// DefaultServerPort is the port `fio --server` listens on unless told otherwise.
const DefaultServerPort = 8765

// Server is one host running `fio --server`.
type Server struct {
	// Name is how results and messages call the host: the host as given,
	// with ":PORT" when the port is not 8765, unless the caller names it.
	// Each host's test file is named for it.
	Name string `json:"name"`
	Addr string `json:"addr"` // host name or IP address as fio's --client gets it (IPv6 without brackets)
	Port int    `json:"port"`
}

// HostPort is the server's address as HOST:PORT ([ADDR]:PORT for IPv6).
func (s Server) HostPort() string { return net.JoinHostPort(s.Addr, strconv.Itoa(s.Port)) }

// String names the server in messages: "h2 (10.0.0.2:8765)", or just
// "10.0.0.2:8765" when its name says no more than its address.
func (s Server) String() string {
	hp := s.HostPort()
	if s.Name == "" || s.Name == s.Addr || s.Name == hp {
		return hp
	}
	return s.Name + " (" + hp + ")"
}

// host is the server's name in the middle of a sentence ("install fio on h2").
func (s Server) host() string {
	if s.Name != "" {
		return s.Name
	}
	return s.HostPort()
}

// clientArg is the value of fio's --client for the server: "HOST,PORT", or
// "ip6:ADDR,PORT" for an IPv6 address.
func (s Server) clientArg() string {
	if strings.Contains(s.Addr, ":") {
		return "ip6:" + s.Addr + "," + strconv.Itoa(s.Port)
	}
	return s.Addr + "," + strconv.Itoa(s.Port)
}

// logSuffix is what fio's client appends to the names of the logs it
// receives from the server: "." and the address it was given.
func (s Server) logSuffix() string { return "." + s.Addr }

// startHint tells how to start the server where it should be.
func (s Server) startHint() string {
	if s.Port == DefaultServerPort {
		return "start `fio --server` there"
	}
	return fmt.Sprintf("start `fio --server=,%d` there", s.Port)
}

const serverSyntax = "give HOST or HOST:PORT, e.g. 10.0.0.2, 10.0.0.2:8765 or [fd00::2]:8765"

// ParseServer reads HOST[:PORT] (an IPv6 address in brackets: [::1]:8765);
// the port defaults to 8765.
func ParseServer(s string) (Server, error) {
	bad := func(format string, a ...any) (Server, error) {
		return Server{}, fmt.Errorf("fio server %q: %s; %s", s, fmt.Sprintf(format, a...), serverSyntax)
	}
	if s == "" {
		return bad("empty")
	}
	host, port := s, ""
	ipv6 := false
	if rest, ok := strings.CutPrefix(s, "["); ok {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return bad("no ']' closes the IPv6 address")
		}
		host, port, ipv6 = rest[:end], rest[end+1:], true
		if port != "" {
			var ok bool
			if port, ok = strings.CutPrefix(port, ":"); !ok {
				return bad("%q follows the IPv6 address where :PORT may", port)
			}
			if port == "" {
				return bad("no port after ':'")
			}
		}
	} else if i := strings.IndexByte(s, ':'); i >= 0 {
		if strings.Count(s, ":") > 1 {
			return bad("an IPv6 address needs brackets")
		}
		host, port = s[:i], s[i+1:]
		if port == "" {
			return bad("no port after ':'")
		}
	}
	if err := checkHost(host, ipv6); err != nil {
		return bad("%v", err)
	}
	srv := Server{Addr: host, Port: DefaultServerPort}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '+' || port[0] == '0' {
			return bad("port %q is not a number from 1 to 65535", port)
		}
		srv.Port = n
	}
	srv.Name = srv.Addr
	if srv.Port != DefaultServerPort {
		srv.Name = srv.HostPort()
	}
	return srv, nil
}

// hostLabel is one label of a host name as fio's client (getaddrinfo) takes it.
var hostLabel = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?$`)

// checkHost accepts an IPv6 address (ipv6: it was in brackets), an IPv4
// address or a host name.
func checkHost(host string, ipv6 bool) error {
	if host == "" {
		return errors.New("no host")
	}
	if ipv6 {
		if ip := net.ParseIP(host); ip == nil || ip.To4() != nil && !strings.Contains(host, ":") {
			return fmt.Errorf("%q is not an IPv6 address", host)
		}
		return nil
	}
	if net.ParseIP(host) != nil {
		return nil
	}
	if len(host) > 253 {
		return errors.New("the host name is longer than 253 characters")
	}
	for _, l := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		if len(l) > 63 || !hostLabel.MatchString(l) {
			return fmt.Errorf("%q is not a host name or IP address", host)
		}
	}
	return nil
}

// validate checks a server built by hand (ParseServer's are valid).
func (s Server) validate() error {
	if s.Name == "" {
		return fmt.Errorf("fio server %s has no name", s.HostPort())
	}
	if err := checkHost(s.Addr, strings.Contains(s.Addr, ":")); err != nil {
		return fmt.Errorf("fio server %s: %v; %s", s.Name, err, serverSyntax)
	}
	if s.Port < 1 || s.Port > 65535 {
		return fmt.Errorf("fio server %s: port %d is not from 1 to 65535; %s", s.Name, s.Port, serverSyntax)
	}
	return nil
}

// hostSlug is s's name as a file name part: letters, digits, '.', '_' and
// '-' are kept, anything else becomes '_'.
func hostSlug(s Server) string {
	b := []byte(s.Name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 100 {
		b = b[:100]
	}
	return string(b)
}

// checkServers refuses an empty list, an invalid server, and two servers
// with the same address and port or names that make the same file name.
func checkServers(servers []Server) error {
	if len(servers) == 0 {
		return errors.New("no fio server given: give at least one HOST[:PORT]")
	}
	byAddr := map[string]Server{}
	bySlug := map[string]Server{}
	for _, s := range servers {
		if err := s.validate(); err != nil {
			return err
		}
		if o, ok := byAddr[s.HostPort()]; ok {
			return fmt.Errorf("fio server %s is given twice (as %s and %s); give each host once", s.HostPort(), o.Name, s.Name)
		}
		byAddr[s.HostPort()] = s
		if o, ok := bySlug[hostSlug(s)]; ok {
			return fmt.Errorf("fio servers %s and %s would share the test file %s; give them distinct names",
				o, s, hostFileName(s))
		}
		bySlug[hostSlug(s)] = s
	}
	return nil
}

// hostFileName is the name of s's test file in a directory target.
func hostFileName(s Server) string { return "tierbench-fio-" + hostSlug(s) + ".dat" }

// isDevicePath reports whether a target on the hosts names a device: /dev/...
func isDevicePath(target string) bool {
	c := path.Clean(target)
	return c == "/dev" || strings.HasPrefix(c, "/dev/")
}

// HostFile is the file fio opens on server s for target: in a directory,
// the server's own test file DIR/tierbench-fio-NAME.dat, so that hosts
// sharing a filesystem (NFS) never touch each other's file; a block device
// is the device itself.
func HostFile(target string, s Server) string {
	if isDevicePath(target) {
		return path.Clean(target)
	}
	return path.Join(target, hostFileName(s))
}

// CheckRemoteTarget checks a target on the fio servers before anything
// runs: an absolute directory that exists on every host (fio creates each
// host's test file in it and lays it out), or, only when deviceChecked (the
// caller confirmed --destroy-data-on and checked the device on every host),
// a block device. tierbench cannot look at the hosts' filesystems: fio
// reports a missing directory or a full disk when it starts. Errors about
// the target wrap ErrRefused.
func CheckRemoteTarget(target string, servers []Server, deviceChecked bool) error {
	if err := checkServers(servers); err != nil {
		return err
	}
	if err := CheckPath(target); err != nil {
		return &refusal{"--target: " + err.Error()}
	}
	if !path.IsAbs(target) {
		return refusef("--target %s is relative: on the fio servers give an absolute directory, e.g. /mnt/data", target)
	}
	if c := path.Clean(target); c == "/dev" {
		return refusef("--target /dev is the hosts' device directory (in memory); give a directory on the storage to test")
	} else if isDevicePath(c) && !deviceChecked {
		return refusef("%s on the fio servers is a block device: fio would destroy its data on every host; "+
			"to allow it, add --destroy-data-on %s (checked on every host), or give a directory", c, c)
	}
	return nil
}

// ParseClientOutput parses the --output-format=json+ output of a fio client
// run on servers and merges its jobs: per host (in servers' order) exactly
// as ParseOutput merges one host's jobs, and all jobs of all hosts into the
// aggregate (IOPS and bandwidth summed, percentiles from the merged bins).
// fio's own "All clients" sum is skipped.
func ParseClientOutput(data []byte, servers []Server) (*Result, []*Result, error) {
	start := jsonStart(data)
	if start < 0 {
		return nil, nil, errors.New("fio output: no line starts with '{'")
	}
	if err := jobDied(data[:start]); err != nil {
		return nil, nil, err
	}
	var out fioOutput
	if err := json.NewDecoder(bytes.NewReader(data[start:])).Decode(&out); err != nil {
		return nil, nil, fmt.Errorf("fio output: %w", err)
	}
	if len(out.Clients) == 0 && len(out.Jobs) > 0 {
		return nil, nil, errors.New("fio output: jobs but no client_stats (not the output of fio --client)")
	}
	return mergeClients(out.Version, out.Clients, servers)
}

// mergeClients merges client_stats entries per server and all together.
// Each job's bins are read twice (for its host and for the aggregate):
// linear in the number of bins, as for one host.
func mergeClients(version string, clients []clientJob, servers []Server) (*Result, []*Result, error) {
	index := make(map[string]int, len(servers))
	for i, s := range servers {
		index[net.JoinHostPort(s.Addr, strconv.Itoa(s.Port))] = i
	}
	perHost := make([][]fioJob, len(servers))
	all := make([]fioJob, 0, len(clients))
	for n := range clients {
		e := &clients[n]
		if e.isClientSum() {
			continue
		}
		i, ok := index[net.JoinHostPort(e.Hostname, strconv.Itoa(e.Port))]
		if !ok {
			return nil, nil, fmt.Errorf("fio output: job %q ran on %s, which is not one of the fio servers", e.Name,
				net.JoinHostPort(e.Hostname, strconv.Itoa(e.Port)))
		}
		if e.Error != 0 {
			return nil, nil, fmt.Errorf("fio output: on %s, job %d (%q) failed with fio error %d", servers[i], len(perHost[i])+1, e.Name, e.Error)
		}
		perHost[i] = append(perHost[i], e.fioJob)
		all = append(all, e.fioJob)
	}
	hosts := make([]*Result, len(servers))
	for i, jobs := range perHost {
		if len(jobs) == 0 {
			// Its fio died or the connection broke before the jobs ended.
			return nil, nil, fmt.Errorf("fio output: %s reported no jobs: its fio stopped before the point ended", servers[i])
		}
		r, err := mergeJobs(version, jobs)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", servers[i], err)
		}
		hosts[i] = r
	}
	agg, err := mergeJobs(version, all)
	if err != nil {
		return nil, nil, err
	}
	return agg, hosts, nil
}
