// Package freeport picks a TCP port for a server that tierbench or a test
// starts: free on 127.0.0.1 when picked, and drawn where a client's
// connection will not take it before the server binds it.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Min is the lowest port Pick draws: above the registered ports of common
// services.
const Min = 10000

// Pick is a port free on 127.0.0.1 now, other than avoid. It is drawn
// below the system's range of ephemeral ports, which outgoing connections
// take: a port from that range may be taken by any connection on the host
// between the check and the server's bind, and on a busy host that
// happens. When the range leaves no room below it, the system picks one.
// A port is still free only when checked: a caller that can, retries when
// its server finds it taken.
func Pick(avoid int) (int, error) {
	lo := EphemeralLow()
	for range 100 {
		addr := net.JoinHostPort(loopback, "0")
		if lo > Min+1000 {
			addr = net.JoinHostPort(loopback, strconv.Itoa(Min+rand.IntN(lo-Min)))
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port != avoid {
			return port, nil
		}
	}
	return 0, fmt.Errorf("finding a free port on %s: none of 100 tried was free", loopback)
}

const loopback = "127.0.0.1"

// EphemeralLow is the first port of the system's ephemeral range
// (net.ipv4.ip_local_port_range), 0 when it cannot be read.
func EphemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	lo, _ := strconv.Atoi(f[0])
	return lo
}
