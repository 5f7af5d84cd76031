package telemetry

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/stored"
)

// Config says what a Session samples.
type Config struct {
	Interval  time.Duration      // 0: 1 s
	ProcRoot  string             // "": /proc
	SysRoot   string             // "": /sys
	Target    string             // a path whose devices are sampled; "": none
	DB        engine.StatsReader // nil: no database internals
	ServerPID int                // the database server's main process, whose tree's CPU is sampled; 0: none
	// ServerUnseen says the database server runs on this host but its
	// processes cannot be told (ServerPID 0): its CPU would read as other
	// processes', so Sample.Shares is left out.
	ServerUnseen bool
	// SelfPID is tierbench's own process, whose tree is the workload's
	// (0: this process). Workload adds the experiment's other processes.
	SelfPID    int
	Workload   *Workload
	BlockTrace bool // try device latency percentiles from block tracepoints
	// Nodes are hosts whose Prometheus node_exporter is scraped at each
	// sample, all at once, each within min(Interval, 2 s) x 0.9. One that
	// does not answer is a gap in its figures (and a Warn, with the time,
	// when it stops and when it answers again), never an error.
	Nodes []Node
	// OnSample is called from the sampling goroutine after each sample.
	OnSample func(Sample)
	// Warn is told, once each, why something cannot be sampled.
	Warn func(msg string)
}

// Sample is one interval's readings, taken at T and covering the Interval
// before it.
type Sample struct {
	T        time.Time
	Interval time.Duration
	CPU      CPU
	Memory   Memory
	// ServerCPUPct is the CPU the database server's process tree used, in
	// percent of one core (-1 when not sampled).
	ServerCPUPct float64
	// Shares split the host's busy CPU between the workload, the kernel and
	// other processes (nil when not known: the first sample of a server,
	// or a server on this host whose processes cannot be seen).
	Shares      *Shares
	Devices     []stored.DeviceRates // every device of the target's chain
	Total       *stored.DeviceRates  // the sum over the chain's leaves; nil without a target
	Hosts       []HostSample         // one per Config.Nodes, in its order (Up false: no figures)
	Latency     *Latency             // device latency percentiles; nil without the block tracer
	latencyHist []bar                // the interval's latency histogram, for merging over steps
	DB          map[string]float64
}

// bar is one non-empty bucket of a latency histogram (µs).
type bar struct {
	v int64
	n int64
}

// Session samples at its interval until Stop.
type Session struct {
	cfg     Config
	res     *Resolution
	host    *HostReader
	disks   *DiskReader
	tracer  *BlockTracer
	work    *treeCPU        // the server's, tierbench's and the Workload's process trees
	kern    *treeCPU        // the kernel's threads
	kthread int             // kthreadd's pid (0: not visible here)
	nodes   []*nodeState    // the node_exporters, in Config.Nodes' order
	leaves  map[string]bool // the chain's whole disks, which the total sums
	warned  map[string]bool
	warnMu  sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	samples []Sample
	latest  Sample
	has     bool
}

// Start resolves the target, opens the readers and starts sampling. Only a
// host that cannot be read at all is an error; anything else missing is
// told to Warn once and left out.
func Start(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.SysRoot == "" {
		cfg.SysRoot = "/sys"
	}
	if cfg.SelfPID == 0 {
		cfg.SelfPID = os.Getpid()
	}
	s := &Session{cfg: cfg, warned: map[string]bool{}, done: make(chan struct{}),
		work: newTreeCPU(cfg.ProcRoot, false), kern: newTreeCPU(cfg.ProcRoot, true), kthread: kthreadd(cfg.ProcRoot)}
	if s.kthread == 0 {
		s.warn("kernel threads are not visible in " + cfg.ProcRoot + ": their CPU counts as other processes'")
	}
	if err := CheckNodes(cfg.Nodes); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	for _, n := range cfg.Nodes {
		s.nodes = append(s.nodes, newNodeState(n, nodeTimeout(cfg.Interval), s.warn))
	}
	var err error
	if s.host, err = NewHostReader(cfg.ProcRoot); err != nil {
		return nil, fmt.Errorf("telemetry: reading %s: %w", cfg.ProcRoot, err)
	}
	if cfg.Target != "" {
		res, err := ResolvePath(cfg.Target)
		switch {
		case err != nil:
			s.warn(fmt.Sprintf("no device telemetry for %s: %v", cfg.Target, err))
		case len(res.Devices) == 0:
			s.res = &res
			s.warn(fmt.Sprintf("no device telemetry for %s: %s", cfg.Target, res.Note))
		default:
			s.res = &res
			s.leaves = map[string]bool{}
			for _, l := range res.Leaves {
				s.leaves[l] = true
			}
			if s.disks, err = NewDiskReader(cfg.ProcRoot, cfg.SysRoot, res.Devices); err != nil {
				s.warn(fmt.Sprintf("no device telemetry for %s: %v", cfg.Target, err))
			}
			if cfg.BlockTrace && s.disks != nil {
				if s.tracer, err = StartBlockTracer(res.Leaves); err != nil {
					s.warn(fmt.Sprintf("no device latency percentiles: %v", err))
				}
			}
		}
	}
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go s.loop(ctx)
	return s, nil
}

// Resolution is how the target resolved to devices (nil without a target
// or when it could not be resolved).
func (s *Session) Resolution() *Resolution { return s.res }

// warn tells Warn msg once. The node scrapes' goroutines call it too.
func (s *Session) warn(msg string) {
	s.warnMu.Lock()
	defer s.warnMu.Unlock()
	if s.warned[msg] {
		return
	}
	s.warned[msg] = true
	if s.cfg.Warn != nil {
		s.cfg.Warn(msg)
	}
}

// warnAlways tells Warn msg, under warn's lock.
func (s *Session) warnAlways(msg string) {
	s.warnMu.Lock()
	defer s.warnMu.Unlock()
	if s.cfg.Warn != nil {
		s.cfg.Warn(msg)
	}
}

// Stop ends sampling and releases the tracer. Safe to call twice.
func (s *Session) Stop() {
	s.cancel()
	<-s.done
	s.work.close()
	s.kern.close()
	for _, n := range s.nodes {
		n.r.Close()
	}
	if s.tracer != nil {
		s.tracer.Close()
		s.tracer = nil
	}
}

// Latest returns the newest sample, if there is one yet.
func (s *Session) Latest() (Sample, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest, s.has
}

// Samples returns the samples whose interval lies in [from, to]: those
// whose midpoint does.
func (s *Session) Samples(from, to time.Time) []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Sample
	for _, x := range s.samples {
		mid := x.T.Add(-x.Interval / 2)
		if !mid.Before(from) && !mid.After(to) {
			out = append(out, x)
		}
	}
	return out
}

// prev is the previous interval's cumulative readings.
type prev struct {
	at       time.Time
	cpu      CPUCounters
	disks    DiskCounters
	hasDisks bool
	db       map[string]float64
	dbAt     time.Time // when db was read: a reading that failed keeps the one before
}

func (s *Session) loop(ctx context.Context) {
	defer close(s.done)
	var p prev
	s.read(ctx, &p) // the baseline
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		x, ok := s.read(ctx, &p)
		if !ok {
			continue
		}
		s.mu.Lock()
		s.samples = append(s.samples, x)
		s.latest, s.has = x, true
		s.mu.Unlock()
		if s.cfg.OnSample != nil {
			s.cfg.OnSample(x)
		}
	}
}

// read takes one reading, turns it into rates against p, and makes it the
// new p. ok is false for the first reading, which only sets the baseline.
func (s *Session) read(ctx context.Context, p *prev) (x Sample, ok bool) {
	now := time.Now()
	first := p.at.IsZero()
	x = Sample{T: now, Interval: now.Sub(p.at), ServerCPUPct: -1}
	// The exporters are scraped meanwhile; waiting for them at the end
	// delays the sample by at most their timeout.
	scrapes := s.scrapeNodes(ctx)
	secs := x.Interval.Seconds()
	// The processes first, then /proc/stat: the ticks they find fall
	// within the interval /proc/stat then closes.
	roots := append([]int{s.cfg.ServerPID, s.cfg.SelfPID}, s.cfg.Workload.PIDs()...)
	work, found := s.work.ticksSince(roots)
	var kern []uint64
	if s.kthread > 0 {
		kern, _ = s.kern.ticksSince([]int{s.kthread})
	}
	if s.cfg.ServerPID > 0 {
		if !found[0] {
			s.warn(fmt.Sprintf("no server CPU telemetry: PID %d not found under %s", s.cfg.ServerPID, s.cfg.ProcRoot))
		} else if !first {
			x.ServerCPUPct = float64(work[0]) / procUserHZ / secs * 100
		}
	}
	if cpu, err := s.host.CPU(); err == nil {
		x.CPU = CPURates(p.cpu, cpu)
		if !first && !s.cfg.ServerUnseen && (s.cfg.ServerPID <= 0 || found[0]) {
			var w, k uint64
			for _, t := range work {
				w += t
			}
			for _, t := range kern {
				k += t
			}
			sh := shares(p.cpu, cpu, w, k)
			x.Shares = &sh
		}
		p.cpu = cpu
	} else {
		s.warn(fmt.Sprintf("no CPU telemetry: %v", err))
	}
	if mem, err := s.host.Memory(); err == nil {
		x.Memory = mem
	} else {
		s.warn(fmt.Sprintf("no memory telemetry: %v", err))
	}
	if s.disks != nil {
		if dc, err := s.disks.Read(); err == nil {
			if p.hasDisks {
				x.Devices = DiskRates(p.disks, dc)
				var ls []stored.DeviceRates
				for _, d := range x.Devices {
					if s.leaves[d.Name] {
						ls = append(ls, d)
					}
				}
				tot := TotalRates(ls)
				x.Total = &tot
			}
			p.disks, p.hasDisks = dc, true
		} else {
			s.warn(fmt.Sprintf("no device telemetry: %v", err))
		}
	}
	if s.tracer != nil {
		oneIn := s.tracer.OneIn() // the sampling this interval was traced with
		h := s.tracer.CollectHist()
		if !first {
			x.latencyHist = sparse(h)
			l := tracerLatency(h)
			l.OneIn = oneIn
			x.Latency = &l
		}
	}
	if s.cfg.DB != nil {
		qctx, cancel := context.WithTimeout(ctx, s.cfg.Interval)
		st, err := s.cfg.DB.Stats(qctx)
		cancel()
		// A reading that failed (a loaded server past the interval)
		// leaves the last good one in place: the next reading's rates span
		// both intervals, rather than the next interval having none.
		if err == nil {
			x.DB = dbRates(p.db, st, now.Sub(p.dbAt).Seconds())
			p.db, p.dbAt = st.Counters, now
		} else if ctx.Err() == nil {
			s.warn(fmt.Sprintf("no database telemetry: %v", err))
		}
	}
	if res := scrapes(); len(s.nodes) > 0 && ctx.Err() == nil { // Stop cut the scrapes short: no figures, no warnings
		x.Hosts = make([]HostSample, len(s.nodes))
		for i, n := range s.nodes {
			x.Hosts[i] = n.update(res[i], s.warnAlways)
		}
	}
	p.at = now
	return x, !first
}

// dbRates turns counters into per-second rates named NAME_per_s, adds the
// cache hit ratio of the interval and copies the gauges.
func dbRates(prev map[string]float64, st engine.Stats, secs float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range st.Gauges {
		out[k] = v
	}
	if prev == nil || secs <= 0 {
		return out
	}
	for k, v := range st.Counters {
		if p, ok := prev[k]; ok && v >= p {
			out[k+"_per_s"] = (v - p) / secs
		}
	}
	dbRatios(out)
	return out
}

// dbRatios adds to rates (NAME_per_s) what is derived from two of them: the
// cache hit ratio, and the server's own I/O latencies where it times I/O (a
// data block read, a WAL sync, in ms). These latencies include every wait
// above the device, an emulated tier's throttle among them, which device
// await does not.
func dbRatios(rates map[string]float64) {
	if read, hit := rates["blocks_read_per_s"], rates["blocks_hit_per_s"]; read+hit > 0 {
		rates["cache_hit_pct"] = hit / (read + hit) * 100
	}
	if ms, ok := rates["block_read_ms_per_s"]; ok && rates["blocks_read_per_s"] > 0 {
		rates["read_latency_ms"] = ms / rates["blocks_read_per_s"]
	}
	if ms, ok := rates["wal_sync_ms_per_s"]; ok && rates["wal_syncs_per_s"] > 0 {
		rates["wal_sync_latency_ms"] = ms / rates["wal_syncs_per_s"]
	}
}

func sparse(h *hdrhistogram.Histogram) []bar {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	var out []bar
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out = append(out, bar{v: b.To, n: b.Count})
		}
	}
	return out
}

// Summarize aggregates samples (as Samples returns them for a step).
// Host: CPU shares, the server's CPU, memory. Device: the chain's total
// (IOPS, MB/s, awaits weighted by I/Os) and, with the tracer, p50/p95/p99
// of all the step's requests.
func Summarize(samples []Sample) stored.Aggregate {
	a := stored.Aggregate{Samples: len(samples), Host: map[string]float64{}}
	if len(samples) == 0 {
		return a
	}
	n := float64(len(samples))
	var srv, srvN float64
	var sh Shares
	var shN float64
	var tot []stored.DeviceRates
	merged := newLatencyHistogram()
	hasLat, oneIn := false, 1
	dbSum, dbN := map[string]float64{}, map[string]float64{}
	for _, x := range samples {
		a.Host["cpu_user_pct"] += x.CPU.UserPct / n
		a.Host["cpu_system_pct"] += x.CPU.SystemPct / n
		a.Host["cpu_iowait_pct"] += x.CPU.IOWaitPct / n
		a.Host["cpu_idle_pct"] += x.CPU.IdlePct / n
		a.Host["cpu_steal_pct"] += x.CPU.StealPct / n
		a.Host["mem_used_bytes"] += float64(x.Memory.UsedBytes) / n
		a.Host["mem_cache_bytes"] += float64(x.Memory.CacheBytes) / n
		a.Host["mem_dirty_bytes"] += float64(x.Memory.DirtyBytes) / n
		if x.ServerCPUPct >= 0 {
			srv += x.ServerCPUPct
			srvN++
		}
		if x.Shares != nil {
			sh.WorkloadPct += x.Shares.WorkloadPct
			sh.KernelPct += x.Shares.KernelPct
			sh.ForeignPct += x.Shares.ForeignPct
			shN++
		}
		if x.Total != nil {
			tot = append(tot, *x.Total)
		}
		if x.Latency != nil {
			hasLat = true
			oneIn = max(oneIn, x.Latency.OneIn)
			for _, b := range x.latencyHist {
				merged.RecordValues(b.v, b.n)
			}
		}
		for k, v := range x.DB {
			dbSum[k] += v
			dbN[k]++
		}
	}
	if srvN > 0 {
		a.Host["server_cpu_pct"] = srv / srvN
	}
	if shN > 0 {
		a.Host["workload_cpu_pct"] = sh.WorkloadPct / shN
		a.Host["kernel_cpu_pct"] = sh.KernelPct / shN
		a.Host["foreign_cpu_pct"] = sh.ForeignPct / shN
	}
	a.Host["cores"] = float64(runtime.NumCPU())
	if len(tot) > 0 {
		avg := AverageRates(tot)
		a.Device = map[string]float64{
			"r_iops": avg.RIOPS, "w_iops": avg.WIOPS, "r_mbps": avg.RMBps, "w_mbps": avg.WMBps,
			"r_await_ms": avg.RAwaitMs, "w_await_ms": avg.WAwaitMs, "aqu_sz": avg.AquSz, "util_pct": avg.UtilPct,
		}
		if hasLat {
			l := tracerLatency(merged)
			a.Device["p50_ms"], a.Device["p95_ms"], a.Device["p99_ms"] = l.P50Ms, l.P95Ms, l.P99Ms
			a.Device["traced_ios"] = float64(l.Count)
			a.Device["traced_one_in"] = float64(oneIn)
		}
	}
	if len(dbSum) > 0 {
		a.DB = map[string]float64{}
		for k, v := range dbSum {
			a.DB[k] = v / dbN[k]
		}
		// The ratios of the whole step, not the means of per-second ratios.
		dbRatios(a.DB)
	}
	a.Hosts = summarizeHosts(samples)
	return a
}

// summarizeHosts averages each node_exporter host over the samples it
// answered in: CPU shares by plain mean, each device with AverageRates (a
// device absent from some of them, such as a loop device that started
// I/O in the step, counts as idle there), and the median clock offset.
// Missing counts the samples it did not answer in.
func summarizeHosts(samples []Sample) []stored.HostStats {
	var out []stored.HostStats
	at := map[string]int{}
	type acc struct {
		devs    map[string][]stored.DeviceRates
		order   []string
		offsets []float64
	}
	var accs []*acc
	for _, x := range samples {
		for _, h := range x.Hosts {
			i, ok := at[h.Host]
			if !ok {
				i = len(out)
				at[h.Host] = i
				out = append(out, stored.HostStats{Host: h.Host})
				accs = append(accs, &acc{devs: map[string][]stored.DeviceRates{}})
			}
			st, ac := &out[i], accs[i]
			if !h.Up {
				st.Missing++
				continue
			}
			st.Samples++
			st.CPUIdlePct += h.CPU.IdlePct
			st.CPUIowaitPct += h.CPU.IOWaitPct
			st.CPUUserPct += h.CPU.UserPct
			st.CPUSystemPct += h.CPU.SystemPct
			st.CPUStealPct += h.CPU.StealPct
			for _, d := range h.Devices {
				if _, ok := ac.devs[d.Name]; !ok {
					ac.order = append(ac.order, d.Name)
					// The samples before its first appearance, as idle.
					ac.devs[d.Name] = make([]stored.DeviceRates, st.Samples-1, st.Samples)
				}
				ac.devs[d.Name] = append(ac.devs[d.Name], d)
			}
			for _, name := range ac.order { // idle where absent since
				if xs := ac.devs[name]; len(xs) < st.Samples {
					ac.devs[name] = append(xs, stored.DeviceRates{})
				}
			}
			if h.Clocked {
				ac.offsets = append(ac.offsets, float64(h.ClockOffset)/float64(time.Millisecond))
			}
		}
	}
	for i := range out {
		st, ac := &out[i], accs[i]
		if st.Samples == 0 {
			continue
		}
		n := float64(st.Samples)
		st.CPUIdlePct /= n
		st.CPUIowaitPct /= n
		st.CPUUserPct /= n
		st.CPUSystemPct /= n
		st.CPUStealPct /= n
		slices.Sort(ac.order)
		for _, name := range ac.order {
			d := AverageRates(ac.devs[name])
			d.Name = name
			st.Devices = append(st.Devices, d)
		}
		st.ClockOffsetMs = median(ac.offsets)
	}
	return out
}

// median of xs (0 for none); sorts xs.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	m := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[m]
	}
	return (xs[m-1] + xs[m]) / 2
}

// AverageRates averages per-interval rates of equal intervals: IOPS, MB/s,
// queue size and utilisation by plain mean, awaits weighted by I/Os.
func AverageRates(xs []stored.DeviceRates) stored.DeviceRates {
	var a stored.DeviceRates
	var rW, wW float64
	n := float64(len(xs))
	for _, x := range xs {
		a.RIOPS += x.RIOPS / n
		a.WIOPS += x.WIOPS / n
		a.RMBps += x.RMBps / n
		a.WMBps += x.WMBps / n
		a.AquSz += x.AquSz / n
		a.UtilPct += x.UtilPct / n
		a.RAwaitMs += x.RAwaitMs * x.RIOPS
		a.WAwaitMs += x.WAwaitMs * x.WIOPS
		rW += x.RIOPS
		wW += x.WIOPS
	}
	if rW > 0 {
		a.RAwaitMs /= rW
	}
	if wW > 0 {
		a.WAwaitMs /= wW
	}
	a.Name = "total"
	return a
}

// Values flattens a sample into named series values: host.*, dev.NAME.*
// (and dev.total.*), dev.p50_ms/p95_ms/p99_ms, db.*, and per node_exporter
// host node.HOST.* (see hostValues).
func (x Sample) Values() map[string]float64 {
	v := map[string]float64{
		"host.cpu_user_pct": x.CPU.UserPct, "host.cpu_system_pct": x.CPU.SystemPct,
		"host.cpu_iowait_pct": x.CPU.IOWaitPct, "host.cpu_idle_pct": x.CPU.IdlePct, "host.cpu_steal_pct": x.CPU.StealPct,
		"host.mem_used_bytes": float64(x.Memory.UsedBytes), "host.mem_cache_bytes": float64(x.Memory.CacheBytes),
		"host.mem_dirty_bytes": float64(x.Memory.DirtyBytes), "host.mem_writeback_bytes": float64(x.Memory.WritebackBytes),
	}
	if x.ServerCPUPct >= 0 {
		v["host.server_cpu_pct"] = x.ServerCPUPct
	}
	if x.Shares != nil {
		v["host.workload_cpu_pct"], v["host.kernel_cpu_pct"], v["host.foreign_cpu_pct"] = x.Shares.WorkloadPct, x.Shares.KernelPct, x.Shares.ForeignPct
	}
	devs := x.Devices
	if x.Total != nil {
		devs = append(devs[:len(devs):len(devs)], *x.Total)
	}
	for _, d := range devs {
		deviceValues(v, "dev."+d.Name+".", d)
	}
	if x.Latency != nil {
		v["dev.p50_ms"], v["dev.p95_ms"], v["dev.p99_ms"] = x.Latency.P50Ms, x.Latency.P95Ms, x.Latency.P99Ms
	}
	for k, d := range x.DB {
		v["db."+k] = d
	}
	for _, h := range x.Hosts {
		hostValues(v, h)
	}
	return v
}

// deviceValues adds a device's figures under prefix (e.g. "dev.vda.").
func deviceValues(v map[string]float64, prefix string, d stored.DeviceRates) {
	v[prefix+"r_iops"], v[prefix+"w_iops"], v[prefix+"r_mbps"], v[prefix+"w_mbps"] = d.RIOPS, d.WIOPS, d.RMBps, d.WMBps
	v[prefix+"r_await_ms"], v[prefix+"w_await_ms"], v[prefix+"aqu_sz"], v[prefix+"util_pct"] = d.RAwaitMs, d.WAwaitMs, d.AquSz, d.UtilPct
}

// hostValues adds a node_exporter host's figures as node.HOST.*: up (1 or
// 0) always; when up, cpu_*_pct as host.*, dev.DEV.* as the local devices'
// and clock_offset_ms when the host tells its time.
func hostValues(v map[string]float64, h HostSample) {
	p := "node." + h.Host + "."
	if !h.Up {
		v[p+"up"] = 0
		return
	}
	v[p+"up"] = 1
	v[p+"cpu_user_pct"], v[p+"cpu_system_pct"], v[p+"cpu_iowait_pct"] = h.CPU.UserPct, h.CPU.SystemPct, h.CPU.IOWaitPct
	v[p+"cpu_idle_pct"], v[p+"cpu_steal_pct"] = h.CPU.IdlePct, h.CPU.StealPct
	for _, d := range h.Devices {
		deviceValues(v, p+"dev."+d.Name+".", d)
	}
	if h.Clocked {
		v[p+"clock_offset_ms"] = float64(h.ClockOffset) / float64(time.Millisecond)
	}
}
