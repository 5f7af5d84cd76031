package fio

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/stored"
)

func TestParseServer(t *testing.T) {
	good := []struct {
		in   string
		want Server
		arg  string // fio's --client value
	}{
		{"10.0.0.2", Server{"10.0.0.2", "10.0.0.2", 8765}, "10.0.0.2,8765"},
		{"10.0.0.2:8765", Server{"10.0.0.2", "10.0.0.2", 8765}, "10.0.0.2,8765"},
		{"h2:9000", Server{"h2:9000", "h2", 9000}, "h2,9000"},
		{"db-1.example.com", Server{"db-1.example.com", "db-1.example.com", 8765}, "db-1.example.com,8765"},
		{"node_7.", Server{"node_7.", "node_7.", 8765}, "node_7.,8765"},
		{"[::1]:8765", Server{"::1", "::1", 8765}, "ip6:::1,8765"},
		{"[::1]", Server{"::1", "::1", 8765}, "ip6:::1,8765"},
		{"[fd00::2]:9000", Server{"[fd00::2]:9000", "fd00::2", 9000}, "ip6:fd00::2,9000"},
		{"127.0.0.1:65535", Server{"127.0.0.1:65535", "127.0.0.1", 65535}, "127.0.0.1,65535"},
	}
	for _, tt := range good {
		got, err := ParseServer(tt.in)
		if err != nil || got != tt.want || got.clientArg() != tt.arg {
			t.Errorf("ParseServer(%q) = %+v (--client=%s), %v; want %+v (--client=%s)", tt.in, got, got.clientArg(), err, tt.want, tt.arg)
		}
	}
	bad := []struct{ in, want string }{
		{"", "empty"},
		{":8765", "no host"},
		{"h2:", "no port"},
		{"h2:0", "port \"0\""},
		{"h2:65536", "port \"65536\""},
		{"h2:http", "port \"http\""},
		{"h2:+80", "port \"+80\""},
		{"h2:080", "port \"080\""},
		{"h2:-1", "port \"-1\""},
		{"::1", "brackets"},
		{"fe80::1:8765", "brackets"},
		{"[::1", "no ']'"},
		{"[::1]8765", "follows the IPv6 address"},
		{"[::1]:", "no port"},
		{"[1.2.3.4]:8765", "not an IPv6 address"},
		{"[fe80::1%eth0]", "not an IPv6 address"},
		{"[h2]", "not an IPv6 address"},
		{"a b", "not a host name"},
		{"a,b", "not a host name"},
		{"-x", "not a host name"},
		{"x-", "not a host name"},
		{"a..b", "not a host name"},
		{"sock:/tmp/s", "port \"/tmp/s\""},
		{strings.Repeat("a", 64) + ".com", "not a host name"},
		{strings.Repeat("a.", 127) + "ab", "longer than 253"},
	}
	for _, tt := range bad {
		_, err := ParseServer(tt.in)
		if err == nil {
			t.Errorf("ParseServer(%q) accepted", tt.in)
			continue
		}
		oneLine(t, err)
		if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "give HOST or HOST:PORT") {
			t.Errorf("ParseServer(%q): %v; want it to say %q and what is right", tt.in, err, tt.want)
		}
	}
}

// FuzzParseServer: an address is refused in one line that says what is
// right, or read as a valid server whose address reads back the same, that
// fio's --client takes as one value, and whose test file name is safe.
func FuzzParseServer(f *testing.F) {
	for _, s := range []string{"10.0.0.2", "h2:9000", "[::1]:8765", "[::1]", "::1", "[::ffff:1.2.3.4]:1", "a b:1",
		"h:0", "h:65536", "h:08", "[x]", "x.", "..", "[::1]]:1", "h\n:1", "é.com", "[fe80::1%25eth0]:8765"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseServer(in)
		if err != nil {
			oneLine(t, err)
			if !strings.Contains(err.Error(), serverSyntax) {
				t.Fatalf("ParseServer(%q): %v does not say what is right", in, err)
			}
			return
		}
		if err := s.validate(); err != nil {
			t.Fatalf("ParseServer(%q) = %+v, which is invalid: %v", in, s, err)
		}
		again, err := ParseServer(s.HostPort())
		if err != nil || again.Addr != s.Addr || again.Port != s.Port {
			t.Fatalf("ParseServer(%q) = %+v; its HostPort %q reads back as %+v, %v", in, s, s.HostPort(), again, err)
		}
		if s.Port < 1 || s.Port > 65535 || strings.ContainsAny(s.clientArg(), " \t\n\r;#") || strings.Count(s.clientArg(), ",") != 1 {
			t.Fatalf("ParseServer(%q) = %+v: --client=%q", in, s, s.clientArg())
		}
		name := hostFileName(s)
		if strings.ContainsAny(name, "/:\\ ") || CheckPath("/d/"+name) != nil || HostFile("/d", s) != "/d/"+name {
			t.Fatalf("ParseServer(%q) = %+v: test file %q", in, s, HostFile("/d", s))
		}
	})
}

func TestServerString(t *testing.T) {
	for _, tt := range []struct {
		s    Server
		want string
	}{
		{Server{"h2", "10.0.0.2", 8765}, "h2 (10.0.0.2:8765)"},
		{Server{"10.0.0.2", "10.0.0.2", 8765}, "10.0.0.2:8765"},
		{Server{"[fd00::2]:9000", "fd00::2", 9000}, "[fd00::2]:9000"},
	} {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestCheckRemoteTarget(t *testing.T) {
	h1, h2 := Server{"h1", "10.0.0.1", 8765}, Server{"h2", "10.0.0.2", 8765}
	two := []Server{h1, h2}
	if err := CheckRemoteTarget("/mnt/data", two, false); err != nil {
		t.Errorf("a directory: %v", err)
	}
	if err := CheckRemoteTarget("/dev/sdb", two, true); err != nil {
		t.Errorf("a device checked on the hosts: %v", err)
	}
	for _, tt := range []struct {
		target  string
		servers []Server
		refused bool
		want    string
	}{
		{"/dev/sdb", two, true, "--destroy-data-on /dev/sdb"},
		{"/dev/../dev/nvme0n1", two, true, "--destroy-data-on /dev/nvme0n1"},
		{"/dev", two, true, "in memory"},
		{"data", two, true, "absolute"},
		{"/mnt/a;b", two, true, "';'"},
		{"/mnt/data", nil, false, "no fio server"},
		{"/mnt/data", []Server{h1, {"h1b", "10.0.0.1", 8765}}, false, "given twice"},
		{"/mnt/data", []Server{{"a/b", "10.0.0.1", 8765}, {"a:b", "10.0.0.2", 8765}}, false, "tierbench-fio-a_b.dat"},
		{"/mnt/data", []Server{{"", "10.0.0.1", 8765}}, false, "no name"},
		{"/mnt/data", []Server{{"x", "a b", 8765}}, false, "not a host name"},
		{"/mnt/data", []Server{{"x", "10.0.0.1", 0}}, false, "port 0"},
	} {
		err := CheckRemoteTarget(tt.target, tt.servers, false)
		if err == nil {
			t.Errorf("CheckRemoteTarget(%q, %v) accepted", tt.target, tt.servers)
			continue
		}
		oneLine(t, err)
		if errors.Is(err, ErrRefused) != tt.refused || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckRemoteTarget(%q, %v): %v (refused %v); want %q, refused %v", tt.target, tt.servers, err,
				errors.Is(err, ErrRefused), tt.want, tt.refused)
		}
	}
	for _, tt := range []struct {
		target string
		s      Server
		want   string
	}{
		{"/mnt/data", h2, "/mnt/data/tierbench-fio-h2.dat"},
		{"/mnt/data/", Server{"[fd00::2]:9000", "fd00::2", 9000}, "/mnt/data/tierbench-fio-_fd00__2__9000.dat"},
		{"/nfs", Server{"vm 1/ü", "10.0.0.1", 8765}, "/nfs/tierbench-fio-vm_1___.dat"},
		{"/dev/sdb", h2, "/dev/sdb"},
	} {
		if got := HostFile(tt.target, tt.s); got != tt.want {
			t.Errorf("HostFile(%q, %v) = %q, want %q", tt.target, tt.s, got, tt.want)
		}
	}
}

// The messages CheckServers gives for what real fio clients printed
// (testdata/client-*.txt, fio 3.33 against servers of 3.33 and 3.28, a
// closed port and a name that does not resolve).
func TestCheckProbe(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	h2 := Server{"h2", "10.0.0.2", 8765}
	exitErr := errors.New("exit status 1")
	if err := checkProbe(h2, "fio-3.33", read("client-probe.txt"), nil); err != nil {
		t.Errorf("same version: %v", err)
	}
	older := []byte(strings.Replace(string(read("client-probe.txt")), "fio=fio-3.33", "fio=fio-3.28", 1))
	for _, tt := range []struct {
		name       string
		s          Server
		controller string
		out        []byte
		runErr     error
		want       string
	}{
		{"older server", h2, "fio-3.33", older, nil,
			"fio on host h2 (10.0.0.2:8765) is fio-3.28 but the controller's is fio-3.33: fio's client/server mode needs the same fio version on both ends; " +
				"install fio 3.33 on h2, or give --fio with a matching fio"},
		{"newer controller, same protocol", h2, "fio-3.32", read("client-probe.txt"), nil,
			"fio on host h2 (10.0.0.2:8765) is fio-3.33 but the controller's is fio-3.32: fio's client/server mode needs the same fio version on both ends; " +
				"install fio 3.32 on h2, or give --fio with a matching fio"},
		{"protocol mismatch", h2, "fio-3.33", read("client-mismatch-3.28.txt"), exitErr,
			"fio on host h2 (10.0.0.2:8765) is fio-3.28 (client/server protocol 94, not 97) but the controller's is fio-3.33: " +
				"fio's client/server mode needs the same fio version on both ends; install fio 3.33 on h2, or give --fio with a matching fio"},
		{"unknown protocol", h2, "fio-3.33", []byte("fio: bad server cmd version 999\nfio: client/server version mismatch (999 != 97)\n"), exitErr,
			"is a fio of another version (client/server protocol 999, not 97) but the controller's is fio-3.33"},
		{"refused", Server{"10.0.0.2", "10.0.0.2", 8765}, "fio-3.33", read("client-refused.txt"), exitErr,
			"fio server 10.0.0.2:8765 does not answer (connect: Connection refused): start `fio --server` there, or give the port it listens on as HOST:PORT"},
		{"refused, other port", Server{"h2:9000", "h2", 9000}, "fio-3.33", read("client-refused.txt"), exitErr,
			"fio server h2:9000 does not answer (connect: Connection refused): start `fio --server=,9000` there"},
		{"unresolvable", h2, "fio-3.33", read("client-unresolvable.txt"), exitErr,
			"fio server h2 (10.0.0.2:8765) does not answer (failed to resolve <no-such-host.invalid> (Name or service not known)): start `fio --server` there"},
		{"no answer", h2, "fio-3.33", []byte("client: host=10.0.0.2 disconnected\n"), context.DeadlineExceeded,
			"does not answer (client: host=10.0.0.2 disconnected): start `fio --server` there"},
		{"silent", h2, "fio-3.33", nil, context.DeadlineExceeded,
			"fio server h2 (10.0.0.2:8765) does not answer within 30s: start `fio --server` there, and let port 8765 through its firewall"},
		{"something else", h2, "fio-3.33", []byte("SSH-2.0-OpenSSH_9.2\n"), exitErr,
			"fio server h2 (10.0.0.2:8765) did not say which fio it runs (SSH-2.0-OpenSSH_9.2)"},
	} {
		err := checkProbe(tt.s, tt.controller, tt.out, tt.runErr)
		if err == nil {
			t.Errorf("%s: accepted", tt.name)
			continue
		}
		oneLine(t, err)
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant %s", tt.name, err, tt.want)
		}
	}
}

// fixtureServers are the two servers of testdata/client-2hosts.json, a real
// fio 3.33 client's json+ output of a 2-second 4k randrw point, two jobs on
// each of two local servers (logs in testdata/client-2hosts/).
var fixtureServers = []Server{{"h1", "127.0.0.1", 18765}, {"h2", "127.0.0.1", 18766}}

func readFixture(t testing.TB) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "client-2hosts.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// unionPercentile is the p-th percentile of the union of hists' bins by
// fio's rule, computed apart from Hist's merging: a plain map and a walk.
func unionPercentile(p float64, hists ...*stored.Hist) int64 {
	union := map[int64]uint64{}
	var total uint64
	for _, h := range hists {
		b, err := json.Marshal(h) // {"bins":[[ns,count],...]}: the bins without Hist's own walk
		if err != nil {
			panic(err)
		}
		var bins struct{ Bins [][2]uint64 }
		if err := json.Unmarshal(b, &bins); err != nil {
			panic(err)
		}
		for _, bc := range bins.Bins {
			union[int64(bc[0])] += bc[1]
			total += bc[1]
		}
	}
	// fio's limit, p * (total * 0.01L) in 64-bit precision, as stored.Hist
	// computes it.
	hundredth := new(big.Float).SetPrec(64).Quo(big.NewFloat(1), big.NewFloat(100))
	limit := new(big.Float).SetPrec(64).SetUint64(total)
	limit.Mul(limit, hundredth)
	limit.Mul(limit, big.NewFloat(p))
	var sum uint64
	for _, ns := range slices.Sorted(maps.Keys(union)) {
		sum += union[ns]
		if limit.Cmp(new(big.Float).SetUint64(sum)) <= 0 {
			return ns
		}
	}
	return 0
}

func TestParseClientOutputFixture(t *testing.T) {
	agg, hosts, err := ParseClientOutput(readFixture(t), fixtureServers)
	if err != nil {
		t.Fatal(err)
	}
	// fio's "All clients" entry (8000 ms: the jobs' runtimes summed) is skipped.
	if agg.Jobs != 4 || !near(agg.RuntimeS, 2) || agg.FioVersion != "fio-3.33" {
		t.Errorf("aggregate: %d jobs, %v s, %s; want 4 jobs, 2 s, fio-3.33", agg.Jobs, agg.RuntimeS, agg.FioVersion)
	}
	if len(hosts) != 2 {
		t.Fatalf("%d hosts", len(hosts))
	}
	// The job figures fio printed, host by host (client_stats entries).
	wantIOs := [2][2]uint64{{16650 + 16618, 0}, {16692 + 16677, 0}}
	for i, h := range hosts {
		if h.Jobs != 2 || h.Read == nil || h.Write == nil || h.Read.IOs != wantIOs[i][0] {
			t.Fatalf("host %d: %d jobs, read %+v; want 2 jobs, %d reads", i, h.Jobs, h.Read, wantIOs[i][0])
		}
		if h.Read.Hist.Count() != h.Read.IOs {
			t.Errorf("host %d: %d reads binned, %d done", i, h.Read.Hist.Count(), h.Read.IOs)
		}
	}
	for _, d := range []struct {
		name      string
		a, h1, h2 *stored.DirStats
	}{{"read", agg.Read, hosts[0].Read, hosts[1].Read}, {"write", agg.Write, hosts[0].Write, hosts[1].Write}} {
		if !near(d.a.IOPS, d.h1.IOPS+d.h2.IOPS) || !near(d.a.MBps, d.h1.MBps+d.h2.MBps) || d.a.IOs != d.h1.IOs+d.h2.IOs {
			t.Errorf("%s: aggregate %+v is not the hosts' sum (%+v, %+v)", d.name, *d.a, *d.h1, *d.h2)
		}
		if d.a.MaxMs != max(d.h1.MaxMs, d.h2.MaxMs) {
			t.Errorf("%s: max %v, hosts' %v and %v", d.name, d.a.MaxMs, d.h1.MaxMs, d.h2.MaxMs)
		}
		for _, p := range []struct {
			pct float64
			got float64
		}{{50, d.a.P50Ms}, {95, d.a.P95Ms}, {99, d.a.P99Ms}, {99.9, d.a.P999Ms}} {
			if want := float64(unionPercentile(p.pct, d.h1.Hist, d.h2.Hist)) / 1e6; p.got != want {
				t.Errorf("%s p%v = %v ms, the union of the hosts' bins says %v", d.name, p.pct, p.got, want)
			}
		}
	}
	// The sum fio printed for all clients agrees on IOPS.
	if !near(agg.Read.IOPS, 33301.849075) || !near(agg.Write.IOPS, 14256.371814) {
		t.Errorf("aggregate IOPS %v/%v, fio's All clients 33301.849075/14256.371814", agg.Read.IOPS, agg.Write.IOPS)
	}
}

func TestParseClientOutputErrors(t *testing.T) {
	fixture := readFixture(t)
	for _, tt := range []struct {
		name    string
		data    []byte
		servers []Server
		want    string
	}{
		{"a host missing from the list", fixture, fixtureServers[:1], "127.0.0.1:18766, which is not one of the fio servers"},
		{"a server that reported nothing", fixture, append(slices.Clone(fixtureServers), Server{"h3", "127.0.0.1", 18767}),
			"h3 (127.0.0.1:18767) reported no jobs: its fio stopped before the point ended"},
		{"no server reported", []byte(`{"fio version": "fio-3.33", "client_stats": []}`), fixtureServers[:1],
			"h1 (127.0.0.1:18765) reported no jobs"},
		{"not client output", []byte(docJSON(jobA)), fixtureServers, "jobs but no client_stats (not the output of fio --client)"},
		{"no JSON", []byte("fio: connect: Connection refused\n"), fixtureServers, "no line starts with '{'"},
		{"a failed job", []byte(strings.Replace(string(fixture), `"error" : 0`, `"error" : 5`, 1)), fixtureServers,
			"failed with fio error 5"},
	} {
		_, _, err := ParseClientOutput(tt.data, tt.servers)
		if err == nil {
			t.Errorf("%s: accepted", tt.name)
			continue
		}
		oneLine(t, err)
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want %q", tt.name, err, tt.want)
		}
	}
}

// The logs a fio client received from two servers (testdata/client-2hosts):
// each host's own series, and their sum.
func TestHostLogsFixture(t *testing.T) {
	dir := filepath.Join("testdata", "client-2hosts")
	var all []jobLogs
	var per [][]Second
	for _, s := range fixtureServers {
		logs, err := readJobLogs(filepath.Join(dir, "point-01-"+hostSlug(s)), s.logSuffix())
		if err != nil {
			t.Fatal(err)
		}
		if len(logs) != 2 {
			t.Fatalf("%s: logs of %d jobs, want 2", s, len(logs))
		}
		per = append(per, mergeSeconds(logs))
		all = append(all, logs...)
	}
	agg := mergeSeconds(all)
	if len(per[0]) != 2 || len(per[1]) != 2 || len(agg) != 2 {
		t.Fatalf("seconds: h1 %d, h2 %d, aggregate %d; want 2 each", len(per[0]), len(per[1]), len(agg))
	}
	// Second 1 reads: IOPS 8615+8587 (h1) and 8671+8631 (h2).
	if r := per[0][0].Read; !near(r.IOPS, 8615+8587) {
		t.Errorf("h1 second 1 reads %v IOPS, want %v", r.IOPS, 8615+8587)
	}
	for _, dir := range []func(Second) *DirSecond{func(s Second) *DirSecond { return s.Read }, func(s Second) *DirSecond { return s.Write }} {
		a, x, y := dir(agg[0]), dir(per[0][0]), dir(per[1][0])
		if !near(a.IOPS, x.IOPS+y.IOPS) || !near(a.MBps, x.MBps+y.MBps) {
			t.Errorf("second 1: aggregate %+v is not the sum of %+v and %+v", *a, *x, *y)
		}
		// IOPS-weighted: the hosts' means weighted by their IOPS.
		if want := (x.ClatMs*x.IOPS + y.ClatMs*y.IOPS) / (x.IOPS + y.IOPS); !near(a.ClatMs, want) {
			t.Errorf("second 1: aggregate latency %v ms, want %v", a.ClatMs, want)
		}
	}
	// Without the host suffix these are not a local run's logs.
	if _, err := ReadLogs(filepath.Join(dir, "point-01-h1")); err == nil {
		t.Error("ReadLogs took a client's logs for a local run's")
	}
}

// A point with hosts: the hosts' figures are in the document, a host
// without telemetry writes none of its fields, and the document decodes
// back to the same figures.
func TestHostPointJSON(t *testing.T) {
	agg, hosts, err := ParseClientOutput(readFixture(t), fixtureServers)
	if err != nil {
		t.Fatal(err)
	}
	p := &Point{Spec: Spec{Name: "4k-randrw70-qd1x2", BS: 4096, RW: RandRW, RWMixRead: 70, IODepth: 1, Jobs: 2}, Result: agg,
		Hosts: []HostRun{{Server: fixtureServers[0], Result: hosts[0]}, {Server: fixtureServers[1], Result: hosts[1]}}}
	po := NewPointResult(p)
	if len(po.Hosts) != 2 || po.Hosts[0].Host != "h1" || po.Hosts[1].Read != hosts[1].Read || po.Hosts[0].NodeStats != nil {
		t.Fatalf("hosts %+v", po.Hosts)
	}
	if po.Hosts[0].Read.Hist == nil || po.Hosts[0].Read.Hist.Count() != hosts[0].Read.IOs {
		t.Error("a host's merged read histogram is not on its figures")
	}
	po.Hosts[1].NodeStats = &stored.NodeStats{CPUIdlePct: 80, CPUIowaitPct: 5, Samples: 3,
		Devices: []stored.DeviceRates{{Name: "sda", RIOPS: 100}}}
	doc, err := json.Marshal(stored.PointStep{Point: po, JobFile: "[x]\n"})
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Hosts []map[string]json.RawMessage `json:"hosts"`
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw.Hosts) != 2 {
		t.Fatalf("document %s: %d hosts", doc, len(raw.Hosts))
	}
	keys := func(m map[string]json.RawMessage) []string { return slices.Sorted(maps.Keys(m)) }
	if got := keys(raw.Hosts[0]); !slices.Equal(got, []string{"host", "read", "write"}) {
		t.Errorf("a host without telemetry has keys %v", got)
	}
	for _, k := range []string{"host", "read", "write", "cpu_idle_pct", "cpu_iowait_pct", "samples", "devices", "clock_offset_ms"} {
		if _, ok := raw.Hosts[1][k]; !ok {
			t.Errorf("a host with telemetry lacks %q: %v", k, keys(raw.Hosts[1]))
		}
	}
	var back stored.PointStep
	if err := json.Unmarshal(doc, &back); err != nil {
		t.Fatal(err)
	}
	if back.Hosts[0].NodeStats != nil || back.Hosts[1].NodeStats == nil ||
		!reflect.DeepEqual(*back.Hosts[1].NodeStats, *po.Hosts[1].NodeStats) {
		t.Errorf("telemetry decoded as %+v and %+v", back.Hosts[0].NodeStats, back.Hosts[1].NodeStats)
	}
	for i := range back.Hosts {
		for _, d := range [][2]*stored.DirStats{{back.Hosts[i].Read, po.Hosts[i].Read}, {back.Hosts[i].Write, po.Hosts[i].Write}} {
			want := *d[1]
			want.Hist = nil // histograms are stored apart
			if d[0] == nil || !reflect.DeepEqual(*d[0], want) {
				t.Errorf("host %d decoded as %+v, want %+v", i, d[0], want)
			}
		}
	}
	if back.Hosts[0].Host != "h1" || back.Hosts[1].Host != "h2" || back.Read.IOs != agg.Read.IOs {
		t.Errorf("decoded %+v", back.Point)
	}
	// A one-host point has no hosts key at all.
	one, _ := json.Marshal(NewPointResult(&Point{Spec: p.Spec, Result: agg}))
	if strings.Contains(string(one), `"hosts"`) {
		t.Errorf("a one-host point writes hosts: %s", one)
	}
}
