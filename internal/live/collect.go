package live

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// runLabels are on every series of a run.
var runLabels = []string{"run", "instance", "engine", "target"}

func desc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append(runLabels[:len(runLabels):len(runLabels)], extra...), nil)
}

// The metrics a run exports; docs/metrics.md lists them with their labels.
var (
	runInfo  = desc("tierbench_run_info", "A run tierbench is recording or has recorded in this process (always 1).", "kind", "label")
	runStart = desc("tierbench_run_start_time_seconds", "When the run started, in seconds since the Unix epoch.")

	tpccVUs       = desc("tierbench_tpcc_vus", "Virtual users of the TPC-C step running.")
	tpccStep      = desc("tierbench_tpcc_step", "The TPC-C step running, 1-based.")
	tpccSteps     = desc("tierbench_tpcc_steps", "The TPC-C run's number of steps.")
	tpccMeasuring = desc("tierbench_tpcc_measuring", "1 in a step's measured interval, 0 in its ramp-up.")
	tpccTPM       = desc("tierbench_tpcc_tpm", "The database's commits and rollbacks per minute over the last second (HammerDB's TPM).")
	tpccNOPM      = desc("tierbench_tpcc_nopm", "New-Orders the database committed per minute over the last second (growth of sum(d_next_o_id)).")
	tpccDBTxns    = desc("tierbench_tpcc_db_transactions_total", "The database's commits and rollbacks since the run started; rate() x 60 is TPM.")
	tpccDBNO      = desc("tierbench_tpcc_db_new_orders_total", "New-Orders the database committed since the run started; rate() x 60 is NOPM.")
	tpccTxns      = desc("tierbench_tpcc_transactions_total", "Business transactions the driver finished, by type and outcome (commit, rollback: the 1% of New-Orders that roll back by design, error).", "type", "outcome")
	tpccLatency   = desc("tierbench_tpcc_transaction_duration_seconds", "Latency of the business transactions the driver completed, ramp-up included, by type.", "type")
	tpccOffered   = desc("tierbench_tpcc_offered_tpm", "An open-loop step's offered transactions a minute (tpcc run --rate); absent in a closed loop.")
	tpccQueue     = desc("tierbench_tpcc_queue", "An open-loop step's arrivals due and waiting for a free VU, at the last second.")
	tpccLate      = desc("tierbench_tpcc_late_total", "Arrivals that began after waiting for a VU longer than --late-after, since the run started (ramp-ups included).")
	tpccStepUnsrv = desc("tierbench_tpcc_step_unserved", "A finished open-loop step's arrivals due by its end that never began (a repeated step: its latest repetition's).", "step", "vus", "offered_tpm")
	tpccStepNOPM  = desc("tierbench_tpcc_step_nopm", "A finished step's NOPM over its measured interval (a repeated step: its latest repetition's).", "step", "vus")
	tpccStepTPM   = desc("tierbench_tpcc_step_tpm", "A finished step's TPM over its measured interval (a repeated step: its latest repetition's).", "step", "vus")

	fioPoint     = desc("tierbench_fio_point", "The disk point running, 1-based.")
	fioPoints    = desc("tierbench_fio_points", "The disk run's number of points.")
	fioIOPS      = desc("tierbench_fio_iops", "A finished disk point's I/O operations per second, by direction (a repeated point: its latest repetition's).", "point", "direction")
	fioBandwidth = desc("tierbench_fio_throughput_bytes_per_second", "A finished disk point's throughput, by direction (a repeated point: its latest repetition's).", "point", "direction")
	fioLatency   = desc("tierbench_fio_latency_seconds", "A finished disk point's completion latency (percentiles merged from fio's histograms), by direction (a repeated point: its latest repetition's).", "point", "direction")
	fioPointSecs = desc("tierbench_fio_point_seconds", "A finished disk point's measured time (a repeated point: its latest repetition's).", "point")
	fioOffered   = desc("tierbench_fio_offered_iops", "A finished disk point's offered I/Os a second at a fixed rate, all its jobs on all its hosts (a repeated point: its latest repetition's).", "point")

	backupCycle   = desc("tierbench_backup_cycle", "The backup cycle running, 1-based.")
	backupCycles  = desc("tierbench_backup_cycles", "The backup run's number of cycles.")
	backupRunning = desc("tierbench_backup_phase_running", "1 for the backup phase running (backup, restore, verify), 0 for the others.", "phase")
	backupElapsed = desc("tierbench_backup_phase_elapsed_seconds", "How long the backup phase running has run.", "phase")
	backupPhases_ = desc("tierbench_backup_phases_total", "Backup and restore phases finished.", "phase")
	backupSeconds = desc("tierbench_backup_phase_duration_seconds", "The last finished phase's duration.", "phase")
	backupBytes   = desc("tierbench_backup_phase_bytes", "The last finished phase's size.", "phase")
	backupRate    = desc("tierbench_backup_phase_throughput_bytes_per_second", "The last finished phase's throughput.", "phase")
	durCycle      = desc("tierbench_durability_cycle", "The durability cycle running, 1-based.")
	durCycles     = desc("tierbench_durability_cycles", "The durability run's number of cycles.")
	durAcked      = desc("tierbench_durability_acknowledged_new_orders", "New-Orders acknowledged so far in the cycle running.")
	durFinished   = desc("tierbench_durability_cycles_total", "Durability cycles finished.")
	durLost       = desc("tierbench_durability_lost_new_orders_total", "Acknowledged New-Orders missing after recovery, over the finished cycles (must stay 0).")
	durExcess     = desc("tierbench_durability_excess_new_orders_total", "Orders committed but never acknowledged (in flight at the fault), over the finished cycles.")
	durRecovery   = desc("tierbench_durability_recovery_seconds", "The last finished cycle's recovery time.")
	hostCPU       = desc("tierbench_host_cpu_ratio", "Share of the host's CPU time in each mode over the last telemetry interval.", "mode")
	hostMemory    = desc("tierbench_host_memory_bytes", "The host's memory by state (used, cache, dirty, writeback).", "state")
	serverCPU     = desc("tierbench_server_cpu_cores", "CPU the database server's processes used over the last interval, in cores.")
	hostBusy      = desc("tierbench_host_cpu_busy_ratio", "Share of the host's CPU time that was busy over the last telemetry interval, by whom: "+
		"the workload (tierbench, the servers it measures), the kernel (its threads, interrupts) or other processes.", "by")
	deviceIOPS   = desc("tierbench_device_iops", "A device's completed I/Os per second over the last interval (device total: the sum over the target's disks).", "device", "direction")
	deviceBytes  = desc("tierbench_device_throughput_bytes_per_second", "A device's throughput over the last interval.", "device", "direction")
	deviceAwait  = desc("tierbench_device_await_seconds", "A device's mean I/O time (iostat's await) over the last interval.", "device", "direction")
	deviceQueue  = desc("tierbench_device_queue_size", "A device's average queue size (iostat's aqu-sz) over the last interval.", "device")
	deviceUtil   = desc("tierbench_device_utilization_ratio", "A device's busy time (iostat's %util) over the last interval.", "device")
	deviceTraced = desc("tierbench_device_traced_latency_seconds", "Block-layer I/O latency percentiles of the target's disks over the last interval, from the block tracepoints.", "percentile")
)

// Describe sends nothing: the database's internals are named by what each
// engine reports, so the exporter is an unchecked collector.
func (e *Exporter) Describe(chan<- *prometheus.Desc) {}

// Collect turns every run's state into metrics.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.runs {
		r.collect(ch)
	}
}

// emitter sends a run's metrics, its labels first.
type emitter struct {
	ch     chan<- prometheus.Metric
	labels []string
}

func (m emitter) with(extra []string) []string {
	return append(m.labels[:len(m.labels):len(m.labels)], extra...)
}

func (m emitter) gauge(d *prometheus.Desc, v float64, extra ...string) {
	m.ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, m.with(extra)...)
}

func (m emitter) counter(d *prometheus.Desc, v float64, extra ...string) {
	m.ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, m.with(extra)...)
}

func (r *runState) collect(ch chan<- prometheus.Metric) {
	m := emitter{ch: ch, labels: r.labels}
	m.gauge(runInfo, 1, r.kind, r.label)
	m.gauge(runStart, float64(r.startedAt.UnixNano())/1e9)
	if t := r.tpcc; t != nil {
		t.collect(m)
	}
	if r.point.count > 0 {
		m.gauge(fioPoint, float64(r.point.index))
		m.gauge(fioPoints, float64(r.point.count))
	}
	for _, p := range r.points {
		collectPoint(m, p)
	}
	if b := r.backup; b != nil {
		b.collect(m)
	}
	if d := r.dur; d != nil {
		d.collect(m)
	}
	if t := r.tpch; t != nil {
		t.collect(m)
	}
	if r.sample != nil {
		collectSample(m, r.sample)
	}
}

func (t *tpccState) collect(m emitter) {
	if t.steps > 0 {
		m.gauge(tpccVUs, float64(t.vus))
		m.gauge(tpccStep, float64(t.step))
		m.gauge(tpccSteps, float64(t.steps))
		measuring := 0.0
		if t.measuring {
			measuring = 1
		}
		m.gauge(tpccMeasuring, measuring)
		m.gauge(tpccTPM, t.tpm)
		m.gauge(tpccNOPM, t.nopm)
		m.counter(tpccDBTxns, float64(t.dbTxns))
		m.counter(tpccDBNO, float64(t.dbNewOrders))
		if t.offered > 0 {
			m.gauge(tpccOffered, t.offered)
			m.gauge(tpccQueue, float64(t.queue))
		}
		if t.open {
			m.counter(tpccLate, float64(t.late))
		}
	}
	for k := range tpcc.NumKinds {
		name := k.String()
		m.counter(tpccTxns, float64(t.done[k]-t.rolledBack[k]), name, "commit")
		m.counter(tpccTxns, float64(t.rolledBack[k]), name, "rollback")
		m.counter(tpccTxns, float64(t.failed[k]), name, "error")
		if b := t.buckets[k]; b != nil {
			buckets := make(map[float64]uint64, len(LatencyBuckets))
			var cum uint64
			for i, bound := range LatencyBuckets {
				cum += b[i]
				buckets[bound.Seconds()] = cum
			}
			count := cum + b[len(b)-1]
			m.ch <- prometheus.MustNewConstHistogram(tpccLatency, count, t.sum[k], buckets, m.with([]string{name})...)
		}
	}
	for i, s := range t.finished {
		step, vus := strconv.Itoa(i+1), strconv.Itoa(s.vus)
		m.gauge(tpccStepNOPM, float64(s.nopm), step, vus)
		m.gauge(tpccStepTPM, float64(s.tpm), step, vus)
		if s.offered > 0 {
			m.gauge(tpccStepUnsrv, float64(s.unserved), step, vus, strconv.FormatFloat(s.offered, 'f', -1, 64))
		}
	}
}

func collectPoint(m emitter, p *pointState) {
	dirs := []struct {
		name string
		st   *stored.DirStats
	}{{"read", p.res.Read}, {"write", p.res.Write}}
	for _, d := range dirs {
		if d.st == nil {
			continue
		}
		s := d.st
		m.gauge(fioIOPS, s.IOPS, p.name, d.name)
		m.gauge(fioBandwidth, s.MBps*1e6, p.name, d.name)
		q := map[float64]float64{0.5: s.P50Ms / 1000, 0.95: s.P95Ms / 1000, 0.99: s.P99Ms / 1000, 0.999: s.P999Ms / 1000}
		m.ch <- prometheus.MustNewConstSummary(fioLatency, s.IOs, s.MeanMs/1000*float64(s.IOs), q, m.with([]string{p.name, d.name})...)
	}
	m.gauge(fioPointSecs, p.res.Seconds, p.name)
	if p.res.RateIOPS > 0 {
		m.gauge(fioOffered, p.res.OfferedIOPS(), p.name)
	}
}

// backupPhases are the phases a backup run goes through, each exported
// whether it runs or not so that a panel's series stay continuous.
var backupPhases = []string{stored.PhaseBackup, stored.PhaseRestore, "verify"}

func (b *backupState) collect(m emitter) {
	m.gauge(backupCycle, float64(b.cycle))
	m.gauge(backupCycles, float64(b.cycles))
	for _, ph := range backupPhases {
		running := 0.0
		if ph == b.phase {
			running = 1
			m.gauge(backupElapsed, b.elapsed, ph)
		}
		m.gauge(backupRunning, running, ph)
	}
	for ph, n := range b.count {
		m.counter(backupPhases_, float64(n), ph)
		if f := b.finished[ph]; f != nil {
			m.gauge(backupSeconds, f.Seconds, ph)
			m.gauge(backupBytes, float64(f.Bytes), ph)
			m.gauge(backupRate, f.MBps*1e6, ph)
		}
	}
}

func (d *durabilityState) collect(m emitter) {
	m.gauge(durCycle, float64(d.cycle))
	m.gauge(durCycles, float64(d.cycles))
	m.gauge(durAcked, float64(d.acknowledged))
	m.counter(durFinished, float64(d.finished))
	m.counter(durLost, float64(d.lost))
	m.counter(durExcess, float64(d.excess))
	if d.last != nil {
		m.gauge(durRecovery, d.last.RecoverySeconds)
	}
}

func collectSample(m emitter, x *telemetry.Sample) {
	for mode, pct := range map[string]float64{"user": x.CPU.UserPct, "system": x.CPU.SystemPct, "iowait": x.CPU.IOWaitPct,
		"idle": x.CPU.IdlePct, "steal": x.CPU.StealPct} {
		m.gauge(hostCPU, pct/100, mode)
	}
	for state, b := range map[string]int64{"used": x.Memory.UsedBytes, "cache": x.Memory.CacheBytes,
		"dirty": x.Memory.DirtyBytes, "writeback": x.Memory.WritebackBytes} {
		m.gauge(hostMemory, float64(b), state)
	}
	if x.ServerCPUPct >= 0 {
		m.gauge(serverCPU, x.ServerCPUPct/100)
	}
	if sh := x.Shares; sh != nil {
		m.gauge(hostBusy, sh.WorkloadPct/100, "workload")
		m.gauge(hostBusy, sh.KernelPct/100, "kernel")
		m.gauge(hostBusy, sh.ForeignPct/100, "other")
	}
	devs := x.Devices
	if x.Total != nil {
		devs = append(devs[:len(devs):len(devs)], *x.Total)
	}
	for _, d := range devs {
		m.gauge(deviceIOPS, d.RIOPS, d.Name, "read")
		m.gauge(deviceIOPS, d.WIOPS, d.Name, "write")
		m.gauge(deviceBytes, d.RMBps*1e6, d.Name, "read")
		m.gauge(deviceBytes, d.WMBps*1e6, d.Name, "write")
		m.gauge(deviceAwait, d.RAwaitMs/1000, d.Name, "read")
		m.gauge(deviceAwait, d.WAwaitMs/1000, d.Name, "write")
		m.gauge(deviceQueue, d.AquSz, d.Name)
		m.gauge(deviceUtil, d.UtilPct/100, d.Name)
	}
	if l := x.Latency; l != nil {
		m.gauge(deviceTraced, l.P50Ms/1000, "p50")
		m.gauge(deviceTraced, l.P95Ms/1000, "p95")
		m.gauge(deviceTraced, l.P99Ms/1000, "p99")
	}
	for name, v := range x.DB {
		n, f := dbMetricName(name)
		d := prometheus.NewDesc(n, "The database's "+name+" as tierbench samples it (see docs/telemetry.md).", runLabels, nil)
		m.ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v*f, m.labels...)
	}
}
