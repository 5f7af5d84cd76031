package server

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestListenNetworkRules(t *testing.T) {
	have := []netip.Prefix{
		netip.MustParsePrefix("127.0.0.1/8"),
		netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("10.213.7.5/24"),
		netip.MustParsePrefix("192.168.1.9/32"),
		netip.MustParsePrefix("fd00::2/64"),
		netip.MustParsePrefix("fe80::fc:ff:fe00:1/64"),
	}
	for _, c := range []struct{ addr, ip, network string }{
		{"10.213.7.5", "10.213.7.5", "10.213.7.0/24"},
		{" 10.213.7.5 ", "10.213.7.5", "10.213.7.0/24"},
		{"::ffff:10.213.7.5", "10.213.7.5", "10.213.7.0/24"},
		{"192.168.1.9", "192.168.1.9", "192.168.1.9/32"},
		{"fd00::2", "fd00::2", "fd00::/64"},
		{"[fd00::2]", "fd00::2", "fd00::/64"},
		{"fd00:0:0:0:0:0:0:2", "fd00::2", "fd00::/64"},
	} {
		ip, network, err := listenNetwork(c.addr, have)
		if err != nil || ip.String() != c.ip || network.String() != c.network {
			t.Errorf("listenNetwork(%q) = %v, %v, %v; want %s, %s", c.addr, ip, network, err, c.ip, c.network)
		}
	}
	for _, c := range []struct{ addr, want string }{
		{"0.0.0.0", "would listen on every interface"},
		{"::", "would listen on every interface"},
		{"127.0.0.1", "is a loopback address"},
		{"127.0.0.2", "is a loopback address"},
		{"::1", "is a loopback address"},
		{"fe80::fc:ff:fe00:1", "link-local"},
		{"fe80::fc:ff:fe00:1%eth0", "has a zone"},
		{"10.213.7.6", "is not an address of this host"},
		{"192.0.2.1", "is not an address of this host"},
		{"db.example.com", "is not an IP address"},
		{"localhost", "is not an IP address"},
		{"10.213.7.5:5432", "is not an IP address (the port is --port's)"},
		{"10.213.7.0/24", "is not an IP address"},
		{"", "is not an IP address"},
	} {
		_, _, err := listenNetwork(c.addr, have)
		var le *ListenError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("listenNetwork(%q) = %v; want a ListenError saying %q", c.addr, err, c.want)
			continue
		}
		// Every refusal says what to give: this host's usable addresses.
		if list := err.Error()[strings.LastIndex(err.Error(), ": ")+2:]; list != "10.213.7.5, 192.168.1.9, fd00::2" {
			t.Errorf("listenNetwork(%q): %v; want the host's addresses listed, without loopback and link-local ones", c.addr, err)
		}
	}
	if _, _, err := listenNetwork("10.0.0.1", nil); err == nil || !strings.Contains(err.Error(), "has none but loopback") {
		t.Errorf("no addresses: %v", err)
	}
}

func TestCheckListenEngine(t *testing.T) {
	if err := checkListenEngine(EngineMariaDB, "fd00::2", netip.MustParseAddr("fd00::2")); err == nil || !strings.Contains(err.Error(), "IPv4") {
		t.Errorf("MariaDB on IPv6: %v; want refused", err)
	}
	for _, c := range []struct{ engine, addr string }{{EnginePostgres, "fd00::2"}, {EnginePostgres, "10.0.0.1"}, {EngineMariaDB, "10.0.0.1"}} {
		if err := checkListenEngine(c.engine, c.addr, netip.MustParseAddr(c.addr)); err != nil {
			t.Errorf("%s on %s: %v", c.engine, c.addr, err)
		}
	}
}

func TestHostPrefixesHasLoopback(t *testing.T) {
	have, err := hostPrefixes()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range have {
		if p.Addr() == netip.MustParseAddr("127.0.0.1") {
			if p.Bits() != 8 {
				t.Errorf("127.0.0.1 has prefix /%d; want /8", p.Bits())
			}
			return
		}
	}
	t.Errorf("this host's addresses %v lack 127.0.0.1", have)
}

func TestListenConfig(t *testing.T) {
	hba := hbaConf("10.213.7.0/24")
	for _, line := range []string{"local all all scram-sha-256", "host all all 127.0.0.1/32 scram-sha-256",
		"host all all 10.213.7.0/24 scram-sha-256", "local replication all scram-sha-256",
		"host replication all 127.0.0.1/32 scram-sha-256", "host replication all 10.213.7.0/24 scram-sha-256"} {
		if !strings.Contains(hba, "\n"+line+"\n") {
			t.Errorf("pg_hba.conf lacks %q:\n%s", line, hba)
		}
	}
	if plain := hbaConf(""); strings.Contains(plain, "10.") || strings.Count(plain, "\nhost ") != 2 || strings.Count(plain, "\nlocal ") != 2 {
		t.Errorf("pg_hba.conf without a network:\n%s", plain)
	}
	if v6 := hbaConf("fd00::/64"); !strings.Contains(v6, "\nhost all all fd00::/64 scram-sha-256\n") {
		t.Errorf("pg_hba.conf for an IPv6 network:\n%s", v6)
	}
	if conf := configFile(5433, "/data/pg", "10.213.7.5", 0, 15, nil); !strings.Contains(conf, "\nlisten_addresses = '127.0.0.1,10.213.7.5'\n") {
		t.Errorf("tierbench.conf with a listen address:\n%s", conf)
	}
	if conf := configFile(5433, "/data/pg", "fd00::2", 0, 15, nil); !strings.Contains(conf, "\nlisten_addresses = '127.0.0.1,fd00::2'\n") {
		t.Errorf("tierbench.conf with an IPv6 listen address:\n%s", conf)
	}

	st := state{Port: 3306, SocketDir: "/d", Listen: "10.213.7.5", Network: "10.213.7.0/24"}
	conf, err := mariaConfFile("/d", &st)
	if err != nil || !strings.Contains(conf, "\nbind_address = 127.0.0.1,10.213.7.5\n") {
		t.Errorf("tierbench.cnf with a listen address (%v):\n%s", err, conf)
	}
	st.Listen, st.Network = "", ""
	if conf, _ := mariaConfFile("/d", &st); !strings.Contains(conf, "\nbind_address = 127.0.0.1\n") {
		t.Errorf("tierbench.cnf without one:\n%s", conf)
	}

	for network, want := range map[string]string{"10.213.7.0/24": "10.213.7.0/255.255.255.0", "10.0.0.0/8": "10.0.0.0/255.0.0.0",
		"192.168.1.9/32": "192.168.1.9/255.255.255.255", "172.16.0.0/12": "172.16.0.0/255.240.0.0"} {
		if got, err := mariaHostPattern(network); err != nil || got != want {
			t.Errorf("mariaHostPattern(%s) = %q, %v; want %q", network, got, err, want)
		}
	}
	if _, err := mariaHostPattern("fd00::/64"); err == nil {
		t.Error("mariaHostPattern took an IPv6 network")
	}
	for v, want := range map[string]bool{"10.11.19": true, "10.11.0": true, "11.4.2": true, "10.6.18": false, "10.10.7": false, "x": false} {
		if mariaBindsMany(v) != want {
			t.Errorf("mariaBindsMany(%q) = %v", v, !want)
		}
	}

	for st, want := range map[*state][2]string{
		{}:                    {"127.0.0.1", "127.0.0.1"},
		{Listen: "10.0.0.5"}:  {"10.0.0.5 127.0.0.1", "10.0.0.5"},
		{Listen: "fd00::2"}:   {"fd00::2 127.0.0.1", "fd00::2"},
		{Listen: "192.0.2.9"}: {"192.0.2.9 127.0.0.1", "192.0.2.9"},
	} {
		if got := strings.Join(st.listenAddrs(), " "); got != want[0] || st.dsnHost() != want[1] {
			t.Errorf("state listening on %q: listenAddrs %q, dsnHost %q; want %q", st.Listen, got, st.dsnHost(), want)
		}
	}
	if got := pgDSN("pw", "fd00::2", 5432); got != "postgres://tierbench:pw@[fd00::2]:5432/postgres?sslmode=disable" {
		t.Errorf("pgDSN on IPv6: %s", got)
	}
	if got := mariaDSN("pw", "10.0.0.5", 3306); got != "mariadb://tierbench:pw@10.0.0.5:3306/tierbench" {
		t.Errorf("mariaDSN: %s", got)
	}
	if got := mariaQuote(`a'b\c`); got != `'a\'b\\c'` {
		t.Errorf("mariaQuote: %s", got)
	}
}
