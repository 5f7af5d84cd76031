package server

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// loopback is where every managed server listens, with or without
// Options.Listen.
const loopback = "127.0.0.1"

// ListenError says an address cannot be a managed server's listen address
// (Options.Listen). It is bad input: Addr as given, then the problem and
// what to give instead.
type ListenError struct {
	Addr    string
	Problem string
}

func (e *ListenError) Error() string { return e.Addr + " " + e.Problem }

// ListenNetwork checks addr as Options.Listen: an IPv4 or IPv6 address
// that one of this host's interfaces has (net.Interfaces), neither a
// wildcard (0.0.0.0, ::), a loopback address (the server listens on
// 127.0.0.1 anyway) nor an IPv6 link-local one (a DSN would need its zone).
// Host names are refused, not resolved. It returns the address, normalised
// (an IPv4-mapped IPv6 address is IPv4), and the network of the interface
// address it is (its prefix, e.g. 10.0.0.0/24): the hosts the server then
// accepts logins from. Errors are *ListenError.
func ListenNetwork(addr string) (netip.Addr, netip.Prefix, error) {
	have, err := hostPrefixes()
	if err != nil {
		return netip.Addr{}, netip.Prefix{}, fmt.Errorf("listing this host's addresses: %w", err)
	}
	return listenNetwork(addr, have)
}

// listenNetwork is ListenNetwork against the host addresses have.
func listenNetwork(addr string, have []netip.Prefix) (netip.Addr, netip.Prefix, error) {
	fail := func(format string, args ...any) (netip.Addr, netip.Prefix, error) {
		return netip.Addr{}, netip.Prefix{}, &ListenError{Addr: addr, Problem: fmt.Sprintf(format, args...)}
	}
	s := strings.TrimSpace(addr)
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		hint := ""
		if _, _, err := net.SplitHostPort(s); err == nil {
			hint = " (the port is --port's)"
		}
		return fail("is not an IP address%s; give one of this host's addresses (names are not resolved): %s", hint, listAddrs(have))
	}
	if ip.Zone() != "" {
		return fail("has a zone; give a global or unique-local address of this host, without one: %s", listAddrs(have))
	}
	ip = ip.Unmap()
	switch {
	case ip.IsUnspecified():
		return fail("would listen on every interface; give this host's address on the network the other hosts use: %s", listAddrs(have))
	case ip.IsLoopback():
		return fail("is a loopback address, and the server always listens on %s; give an address other hosts reach: %s", loopback, listAddrs(have))
	case ip.Is6() && (ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast()):
		return fail("is a link-local IPv6 address, which a DSN can only use with a zone; give a global or unique-local address: %s", listAddrs(have))
	}
	for _, p := range have {
		if p.Addr() == ip {
			return ip, p.Masked(), nil
		}
	}
	return fail("is not an address of this host; give one of its addresses: %s", listAddrs(have))
}

// hostPrefixes are the addresses of this host's interfaces, each with its
// prefix length.
func hostPrefixes() ([]netip.Prefix, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var out []netip.Prefix
	for _, iface := range ifaces {
		addrs, err := iface.Addrs()
		if err != nil {
			continue // an interface gone meanwhile
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if !ok {
				continue
			}
			ip = ip.Unmap()
			ones, _ := ipn.Mask.Size()
			if ip.Is4() && ones > 32 {
				ones -= 96
			}
			if p := netip.PrefixFrom(ip, ones); p.IsValid() {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// listAddrs names the addresses a user may give: not loopback, not IPv6
// link-local.
func listAddrs(have []netip.Prefix) string {
	var names []string
	for _, p := range have {
		ip := p.Addr()
		if ip.IsLoopback() || (ip.Is6() && ip.IsLinkLocalUnicast()) {
			continue
		}
		names = append(names, ip.String())
	}
	if len(names) == 0 {
		return "(this host has none but loopback)"
	}
	if len(names) > 8 {
		names = append(names[:8], "…")
	}
	return strings.Join(names, ", ")
}

// CheckListen checks addr as the Options.Listen of a server of engine
// (EnginePostgres or EngineMariaDB): ListenNetwork, and for MariaDB an IPv4
// address, since its account host patterns take IPv4 netmasks only.
// Errors are *ListenError.
func CheckListen(engine, addr string) error {
	ip, _, err := ListenNetwork(addr)
	if err != nil {
		return err
	}
	return checkListenEngine(engine, addr, ip)
}

func checkListenEngine(engine, addr string, ip netip.Addr) error {
	if engine == EngineMariaDB && !ip.Is4() {
		return &ListenError{Addr: addr, Problem: "is an IPv6 address; a managed MariaDB server allows logins from an IPv4 network only (its account host patterns take IPv4 netmasks): give an IPv4 address of this host"}
	}
	return nil
}

// resolveListen checks opts.Listen for a server of engine and sets the
// state's Listen and Network for this start: empty for a start on
// 127.0.0.1 only.
func resolveListen(engine, addr string, st *state) error {
	st.Listen, st.Network = "", ""
	if addr == "" {
		return nil
	}
	ip, network, err := ListenNetwork(addr)
	if err != nil {
		return err
	}
	if err := checkListenEngine(engine, addr, ip); err != nil {
		return err
	}
	st.Listen, st.Network = ip.String(), network.String()
	return nil
}

// sameListen reports whether a running server whose state is st listens
// where addr (an Options.Listen, "" for loopback only) asks; a running
// server is not moved, so a start that asks for another address must stop
// it first.
func sameListen(dir string, st state, addr string) error {
	if addr == "" {
		return nil // not asked: the server is reported as it runs
	}
	ip, _, err := ListenNetwork(addr)
	if err != nil {
		return err
	}
	if st.Listen == ip.String() {
		return nil
	}
	where := loopback + " only"
	if st.Listen != "" {
		where = st.Listen + " and " + loopback
	}
	return &DataDirError{Dir: dir, Problem: fmt.Sprintf("belongs to a server that is running, listening on %s; stop it (tierbench server stop --datadir %s), then start it again to listen on %s",
		where, dir, ip)}
}

// listenAddrs are the addresses a server with state st listens on: its
// Listen address first, then 127.0.0.1.
func (st state) listenAddrs() []string {
	if st.Listen == "" {
		return []string{loopback}
	}
	return []string{st.Listen, loopback}
}

// dsnHost is the host of a managed server's DSN: its Listen address, which
// this host and the other hosts of its network reach, else 127.0.0.1.
func (st state) dsnHost() string {
	if st.Listen == "" {
		return loopback
	}
	return st.Listen
}

// checkListening makes sure a server that was asked to listen on st.Listen
// accepts connections there: PostgreSQL starts with a warning only when one
// of its listen_addresses cannot be bound.
func checkListening(ctx context.Context, st state, port int) error {
	if st.Listen == "" {
		return nil
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(st.Listen, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("the server started but does not accept connections at %s: %w", net.JoinHostPort(st.Listen, strconv.Itoa(port)), err)
	}
	return c.Close()
}

// mariaHostPattern is the MariaDB account host of an IPv4 network:
// "10.0.0.0/255.255.255.0".
func mariaHostPattern(network string) (string, error) {
	p, err := netip.ParsePrefix(network)
	if err != nil || !p.Addr().Is4() {
		return "", fmt.Errorf("network %q is not an IPv4 network", network)
	}
	mask := net.CIDRMask(p.Bits(), 32)
	return p.Masked().Addr().String() + "/" + net.IP(mask).String(), nil
}
