package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/tierbench/tierbench/internal/stored"
)

// Node is a host whose Prometheus node_exporter a Session scrapes at each
// sample: its CPU shares and its block devices' iostat -x figures, on its
// own clock.
type Node struct {
	Name string `json:"name"` // names the host in documents and series (node.NAME.*)
	URL  string `json:"url"`  // the exporter's metrics page, e.g. http://10.0.0.5:9100/metrics
}

// nodeExample is the form of a --node-exporter value, for error messages.
const nodeExample = "db1=http://10.0.0.5:9100/metrics"

// nodeName is what a host's name may be: it goes into series names
// (node.NAME.dev.DEV.r_iops), whose parts are separated by dots.
var nodeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// CheckHostName checks a host's name as --node-exporter and --fio-server
// take it: it names series (node.NAME.*, fio.NAME.*) and files.
func CheckHostName(name string) error {
	if !nodeName.MatchString(name) {
		return fmt.Errorf("the name %q may hold only letters, digits, - and _ (at most 64; it names series node.NAME.*)", name)
	}
	return nil
}

// ParseNode reads NAME=URL. The URL must be http or https with a host; a
// URL without a path gets /metrics. The error says what is wrong, without
// the value itself (the caller names it).
func ParseNode(spec string) (Node, error) {
	name, raw, ok := strings.Cut(spec, "=")
	name, raw = strings.TrimSpace(name), strings.TrimSpace(raw)
	if !ok || name == "" || raw == "" {
		return Node{}, fmt.Errorf("give NAME=URL, e.g. %s", nodeExample)
	}
	if err := CheckHostName(name); err != nil {
		return Node{}, fmt.Errorf("%v, e.g. %s", err, nodeExample)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return Node{}, fmt.Errorf("give an http:// or https:// URL after NAME=, e.g. %s", nodeExample)
	}
	if u.Hostname() == "" {
		return Node{}, fmt.Errorf("the URL has no host; give NAME=URL, e.g. %s", nodeExample)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	u.Fragment, u.RawFragment = "", ""
	return Node{Name: name, URL: u.String()}, nil
}

// CheckNodes checks nodes as ParseNode would and that no name is given
// twice.
func CheckNodes(nodes []Node) error {
	seen := map[string]bool{}
	for _, n := range nodes {
		p, err := ParseNode(n.Name + "=" + n.URL)
		if err != nil {
			return fmt.Errorf("node_exporter %q: %v", RedactNodeSpec(n.Name+"="+n.URL), err)
		}
		if p.URL != n.URL {
			return fmt.Errorf("node_exporter %s: give its URL as %s", n.Name, p.Redacted())
		}
		if seen[n.Name] {
			return fmt.Errorf("node_exporter name %s is given twice; name each host once", n.Name)
		}
		seen[n.Name] = true
	}
	return nil
}

// RedactNodeSpec is a NAME=URL value with the URL's password masked, for
// messages, whether or not the value is valid.
func RedactNodeSpec(spec string) string {
	name, raw, ok := strings.Cut(spec, "=")
	if !ok {
		return spec
	}
	return name + "=" + Node{URL: raw}.Redacted()
}

// Redacted is the URL with any password masked, for messages.
func (n Node) Redacted() string {
	u, err := url.Parse(strings.TrimSpace(n.URL))
	if err == nil && u.User != nil {
		return u.Redacted()
	}
	if at := strings.LastIndex(n.URL, "@"); at >= 0 { // not a URL, but it may hold user:password@
		return "xxxxx" + n.URL[at:]
	}
	return n.URL
}

// NodeCounters is one scrape of a node_exporter: cumulative CPU seconds
// summed over the host's CPUs, and per device the /proc/diskstats counters
// the exporter reports, taken back to the kernel's units (ms, 512-byte
// sectors) so that DiskRates' arithmetic applies unchanged.
type NodeCounters struct {
	CPU    CPUCounters
	HasCPU bool
	// Disks.At is the exporter's clock (node_time_seconds) when it reports
	// it, else the controller's midpoint of the request.
	Disks    DiskCounters
	HasDisks bool
	// Time is the host's clock, node_time_seconds (zero when the page
	// lacks it); Sent and Received the controller's clock when the request
	// went out and its answer came back.
	Time           time.Time
	Sent, Received time.Time
}

// ClockOffset is the host's clock minus the controller's at the middle of
// the request, and whether the page told the host's time.
func (c NodeCounters) ClockOffset() (time.Duration, bool) {
	if c.Time.IsZero() || c.Sent.IsZero() {
		return 0, false
	}
	mid := c.Sent.Add(c.Received.Sub(c.Sent) / 2)
	return c.Time.Sub(mid), true
}

// The metric families a scrape reads; everything else on the page is
// skipped.
const (
	mCPU          = "node_cpu_seconds_total"
	mTime         = "node_time_seconds"
	mReads        = "node_disk_reads_completed_total"
	mWrites       = "node_disk_writes_completed_total"
	mReadBytes    = "node_disk_read_bytes_total"
	mWrittenBytes = "node_disk_written_bytes_total"
	mReadTime     = "node_disk_read_time_seconds_total"
	mWriteTime    = "node_disk_write_time_seconds_total"
	mIOTime       = "node_disk_io_time_seconds_total"
	mIOWeighted   = "node_disk_io_time_weighted_seconds_total"
)

// nodeParser reads node_exporter pages with Prometheus' text parser. One
// is not safe for concurrent use; it keeps its buffers between pages.
type nodeParser struct {
	p          expfmt.TextParser
	page, ours bytes.Buffer
}

func newNodeParser() *nodeParser {
	return &nodeParser{p: expfmt.NewTextParser(model.LegacyValidation)}
}

// ParseNodePage reads a node_exporter page in the text exposition format.
// A page without node_cpu_seconds_total is an error: it is not a
// node_exporter's (or its cpu collector is off). The times of c are left
// for the caller, except Time (node_time_seconds) and Disks.At, which is
// Time when the page has it.
func ParseNodePage(r io.Reader) (NodeCounters, error) {
	return newNodeParser().parse(r)
}

// maxNodePage bounds what a scrape reads of a page.
const maxNodePage = 64 << 20

func (np *nodeParser) parse(r io.Reader) (NodeCounters, error) {
	np.page.Reset()
	if _, err := np.page.ReadFrom(io.LimitReader(r, maxNodePage)); err != nil {
		return NodeCounters{}, err
	}
	// The parser builds messages for every sample: it gets the lines of
	// the families read here and nothing else, picked by their names alone
	// (43 lines of 242 on a filtered 2-CPU page, of 1073 on a whole one),
	// which makes a scrape 4 to 9 times cheaper.
	np.ours.Reset()
	for page := np.page.Bytes(); len(page) > 0; {
		line, rest, _ := bytes.Cut(page, []byte{'\n'})
		if ourLine(line) {
			np.ours.Write(line)
			np.ours.WriteByte('\n')
		}
		page = rest
	}
	fams, err := np.p.TextToMetricFamilies(bytes.NewReader(np.ours.Bytes()))
	if err != nil {
		return NodeCounters{}, fmt.Errorf("reading the page: %w", err)
	}
	var c NodeCounters
	cpu := fams[mCPU]
	if cpu == nil {
		return c, fmt.Errorf("the page has no %s: is it a node_exporter's metrics page?", mCPU)
	}
	c.HasCPU = true
	for _, m := range cpu.GetMetric() {
		v := value(m)
		switch label(m, "mode") {
		case "user":
			c.CPU.User += v
		case "nice":
			c.CPU.Nice += v
		case "system":
			c.CPU.System += v
		case "idle":
			c.CPU.Idle += v
		case "iowait":
			c.CPU.IOWait += v
		case "irq":
			c.CPU.IRQ += v
		case "softirq":
			c.CPU.SoftIRQ += v
		case "steal":
			c.CPU.Steal += v
		}
	}
	if f := fams[mTime]; f != nil && len(f.GetMetric()) > 0 {
		if s := value(f.GetMetric()[0]); s > 0 {
			sec, frac := math.Modf(s)
			c.Time = time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3) // the float holds about µs
		}
	}
	c.Disks = DiskCounters{At: c.Time, Devices: map[string]DiskStat{}}
	// The exporter divides the kernel's ms by 1000 and multiplies its
	// sectors by 512; rounding takes them back exactly.
	ms := func(s float64) uint64 { return uint64(math.Round(s * 1000)) }
	sectors := func(b float64) uint64 { return uint64(math.Round(b / 512)) }
	count := func(n float64) uint64 { return uint64(math.Round(n)) }
	fields := []struct {
		name string
		conv func(float64) uint64
		set  func(*DiskStat, uint64)
	}{
		{mReads, count, func(d *DiskStat, v uint64) { d.ReadIOs = v }},
		{mWrites, count, func(d *DiskStat, v uint64) { d.WriteIOs = v }},
		{mReadBytes, sectors, func(d *DiskStat, v uint64) { d.ReadSectors = v }},
		{mWrittenBytes, sectors, func(d *DiskStat, v uint64) { d.WriteSectors = v }},
		{mReadTime, ms, func(d *DiskStat, v uint64) { d.ReadTicks = v }},
		{mWriteTime, ms, func(d *DiskStat, v uint64) { d.WriteTicks = v }},
		{mIOTime, ms, func(d *DiskStat, v uint64) { d.IOTicks = v }},
		{mIOWeighted, ms, func(d *DiskStat, v uint64) { d.WeightedIOTicks = v }},
	}
	// A device counts only with all eight counters: one missing would
	// read as a rate of 0.
	seen := map[string]int{}
	for _, f := range fields {
		fam := fams[f.name]
		if fam == nil {
			continue
		}
		for _, m := range fam.GetMetric() {
			dev := label(m, "device")
			if dev == "" {
				continue
			}
			d := c.Disks.Devices[dev]
			f.set(&d, f.conv(max(value(m), 0)))
			c.Disks.Devices[dev] = d
			seen[dev]++
		}
	}
	for dev, n := range seen {
		if n != len(fields) {
			delete(c.Disks.Devices, dev)
		}
	}
	c.HasDisks = len(c.Disks.Devices) > 0
	return c, nil
}

// ourLine tells whether a line of a page is a sample or the # TYPE line
// of a family parse reads.
func ourLine(line []byte) bool {
	l := bytes.TrimLeft(line, " \t")
	if len(l) > 0 && l[0] == '#' {
		typ, ok := bytes.CutPrefix(bytes.TrimLeft(l[1:], " \t"), []byte("TYPE"))
		if !ok {
			return false
		}
		l = bytes.TrimLeft(typ, " \t")
	}
	end := bytes.IndexAny(l, "{ \t")
	if end < 0 {
		return false
	}
	switch string(l[:end]) {
	case mCPU, mTime, mReads, mWrites, mReadBytes, mWrittenBytes, mReadTime, mWriteTime, mIOTime, mIOWeighted:
		return true
	}
	return false
}

// value is a sample's value whatever the family's declared type.
func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// HostSample is one host's figures over a sampling interval, from two
// consecutive scrapes of its node_exporter.
type HostSample struct {
	Host string
	// Up is true when both scrapes answered and the figures are measured;
	// a host that did not answer has Up false and no figures (a gap).
	Up      bool
	CPU     CPU
	Devices []stored.DeviceRates
	// ClockOffset is the host's clock minus the controller's, from the
	// later scrape (0 when the page does not tell the time: see Clocked).
	ClockOffset time.Duration
	Clocked     bool
}

// NodeRates computes a host's CPU shares and iostat -x figures over
// prev..cur, with the same arithmetic as the local ones (CPURates,
// DiskRates), on the exporter's clock. Every device the exporter lists is
// in it (the session leaves out idle virtual devices: see keepDevices).
// Up is false if cur's clock is not after prev's.
func NodeRates(prev, cur NodeCounters) HostSample {
	h := HostSample{Up: true}
	h.ClockOffset, h.Clocked = cur.ClockOffset()
	if !cur.Disks.At.After(prev.Disks.At) {
		return HostSample{ClockOffset: h.ClockOffset, Clocked: h.Clocked}
	}
	if prev.HasCPU && cur.HasCPU {
		h.CPU = CPURates(prev.CPU, cur.CPU)
	}
	if prev.HasDisks && cur.HasDisks {
		h.Devices = DiskRates(prev.Disks, cur.Disks)
	}
	return h
}

// virtualDevice matches the block devices that exist on most hosts
// whether used or not: RAM disks, loop devices, zram swap, network block
// devices and floppies. node_exporter leaves out ram, loop and fd by
// default, but an exporter told otherwise lists dozens of idle ones.
var virtualDevice = regexp.MustCompile(`^(ram|loop|zram|nbd|fd)[0-9]+$`)

// keepDevices leaves out of devs the virtual devices (virtualDevice) that
// have done no I/O yet in the session; one that has (a loop-backed tier,
// zram swapping) is kept from its first interval with I/O on, which active
// remembers. Every other device the exporter lists is kept, idle or not,
// so that a host's device list is the same from one sample to the next.
func keepDevices(devs []stored.DeviceRates, active map[string]bool) []stored.DeviceRates {
	out := devs[:0]
	for _, d := range devs {
		if virtualDevice.MatchString(d.Name) && !active[d.Name] {
			if d.RIOPS == 0 && d.WIOPS == 0 && d.UtilPct == 0 && d.AquSz == 0 {
				continue
			}
			active[d.Name] = true
		}
		out = append(out, d)
	}
	return out
}

// nodeCollectors are the node_exporter collectors a scrape asks for
// (collect[]=...), when the URL has no query of its own: a page of some
// 14 KB on a 2-CPU host instead of 50-300 KB with every collector, which
// the exporter's host need not produce and the controller need not parse.
var nodeCollectors = []string{"cpu", "diskstats", "time"}

// NodeReader scrapes one node_exporter. Not safe for concurrent use.
type NodeReader struct {
	Node     Node
	client   *http.Client
	url      string // what is fetched: Node.URL with collect[] when it had no query
	filtered bool   // url asks for nodeCollectors
	parser   *nodeParser
	// Warn is told, once each, of a fallback (a refused collect[]).
	Warn func(string)
}

// NewNodeReader returns a reader of n with the given timeout for a whole
// scrape (connect, request, page). It keeps its connection open between
// scrapes, asks for the page uncompressed (compressing it costs the host
// under test CPU, to save a few KB a second), and uses no proxy.
func NewNodeReader(n Node, timeout time.Duration) *NodeReader {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		DisableCompression:    true,
		MaxIdleConnsPerHost:   1,
		IdleConnTimeout:       time.Minute,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	r := &NodeReader{Node: n, client: &http.Client{Transport: tr, Timeout: timeout}, url: n.URL, parser: newNodeParser()}
	if u, err := url.Parse(n.URL); err == nil && u.RawQuery == "" {
		u.RawQuery = url.Values{"collect[]": nodeCollectors}.Encode()
		r.url, r.filtered = u.String(), true
	}
	return r
}

// Close releases the reader's idle connection.
func (r *NodeReader) Close() { r.client.CloseIdleConnections() }

// Read scrapes the exporter once. An exporter that refuses collect[] (HTTP
// 400: one of the collectors is off) is asked for its whole page from then
// on.
func (r *NodeReader) Read(ctx context.Context) (NodeCounters, error) {
	c, status, err := r.get(ctx, r.url)
	if status == http.StatusBadRequest && r.filtered {
		if r.Warn != nil {
			r.Warn(fmt.Sprintf("node_exporter %s (%s) refuses collect[]=%s (%v); reading its whole page",
				r.Node.Name, r.Node.Redacted(), strings.Join(nodeCollectors, ","), err))
		}
		r.url, r.filtered = r.Node.URL, false
		c, _, err = r.get(ctx, r.url)
	}
	return c, err
}

func (r *NodeReader) get(ctx context.Context, u string) (NodeCounters, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return NodeCounters{}, 0, err
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	sent := time.Now()
	resp, err := r.client.Do(req)
	if err != nil {
		return NodeCounters{}, 0, shortErr(err, r.client.Timeout)
	}
	received := time.Now()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // keep the connection
		s := strings.TrimSpace(strings.SplitN(string(msg), "\n", 2)[0])
		if s != "" {
			s = ": " + s
		}
		return NodeCounters{}, resp.StatusCode, fmt.Errorf("HTTP %s%s", resp.Status, s)
	}
	c, err := r.parser.parse(resp.Body)
	if err != nil {
		return NodeCounters{}, resp.StatusCode, shortErr(err, r.client.Timeout)
	}
	c.Sent, c.Received = sent, received
	if c.Time.IsZero() {
		c.Disks.At = sent.Add(received.Sub(sent) / 2)
	}
	return c, resp.StatusCode, nil
}

// shortErr is the part of a scrape's error that says what happened
// ("connection refused", "no answer within 900ms"), without the URL that
// the caller's message already has.
func shortErr(err error, timeout time.Duration) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %v", timeout)
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// nodeTimeout is how long a scrape may take: within the sampling interval,
// so that a slow or silent exporter neither delays a sample much nor makes
// the next tick late, and at most 2 s.
func nodeTimeout(interval time.Duration) time.Duration {
	return min(interval, 2*time.Second) * 9 / 10
}

// nodeResult is one scrape.
type nodeResult struct {
	at  time.Time // when it was sent
	c   NodeCounters
	err error
}

// nodeState is a session's view of one exporter: the previous scrape, and
// whether it is answering, for its warnings.
type nodeState struct {
	r        *NodeReader
	prev     NodeCounters
	has      bool // prev is the previous tick's scrape
	down     bool // the last scrape failed
	answered bool // a scrape succeeded once
	active   map[string]bool
	warnOnce func(string) // the session's deduplicated warnings
}

func newNodeState(n Node, timeout time.Duration, warnOnce func(string)) *nodeState {
	r := NewNodeReader(n, timeout)
	r.Warn = warnOnce
	return &nodeState{r: r, active: map[string]bool{}, warnOnce: warnOnce}
}

// scrapeNodes starts a scrape of every exporter; wait returns them all,
// each within its timeout.
func (s *Session) scrapeNodes(ctx context.Context) (wait func() []nodeResult) {
	if len(s.nodes) == 0 {
		return func() []nodeResult { return nil }
	}
	res := make([]nodeResult, len(s.nodes))
	var wg sync.WaitGroup
	for i, n := range s.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].at = time.Now()
			res[i].c, res[i].err = n.r.Read(ctx)
		}()
	}
	return func() []nodeResult { wg.Wait(); return res }
}

// update turns a scrape into the host's figures over the interval since
// the previous one, and tells warn (not deduplicated: each carries its
// time) when the exporter stops answering and when it answers again.
func (n *nodeState) update(res nodeResult, warn func(string)) HostSample {
	node := n.r.Node
	say := func(format string, args ...any) {
		if warn != nil {
			warn(fmt.Sprintf("node_exporter %s (%s) ", node.Name, node.Redacted()) + fmt.Sprintf(format, args...))
		}
	}
	when := res.at.Local().Format("15:04:05")
	if res.err != nil {
		if !n.down {
			if n.answered {
				say("stopped answering at %s: %v; its telemetry has a gap", when, res.err)
			} else {
				say("does not answer at %s: %v; its telemetry is missing until it does", when, res.err)
			}
		}
		n.down, n.has = true, false
		return HostSample{Host: node.Name}
	}
	switch {
	case n.down && n.answered:
		say("answers again at %s", when)
	case n.down:
		say("answers at %s; its telemetry starts there", when)
	}
	n.down, n.answered = false, true
	if !res.c.HasDisks {
		n.warnOnce(fmt.Sprintf("node_exporter %s (%s) reports no block devices (node_disk_*): its diskstats collector is off?", node.Name, node.Redacted()))
	}
	if res.c.Time.IsZero() {
		n.warnOnce(fmt.Sprintf("node_exporter %s (%s) does not report node_time_seconds (its time collector is off?): "+
			"its rates are on this host's clock, and its clock offset is unknown", node.Name, node.Redacted()))
	}
	var h HostSample
	if n.has {
		h = NodeRates(n.prev, res.c)
		h.Devices = keepDevices(h.Devices, n.active)
	} else {
		h.ClockOffset, h.Clocked = res.c.ClockOffset()
	}
	h.Host = node.Name
	n.prev, n.has = res.c, true
	return h
}
