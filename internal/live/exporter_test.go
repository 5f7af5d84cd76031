package live

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/tierbench/tierbench/internal/driver"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// ticks feeds a TPC-C run two seconds through a recorder with the live
// buckets, as the driver does, and checks what a scrape shows: counters
// added up by type and outcome, cumulative histogram buckets, the gauges of
// the latest second, and a side-by-side run kept apart by its labels.
func TestExporterTPCC(t *testing.T) {
	e := New()
	a, b := e.Observer(), e.Observer()
	a.Started(experiment.Started{RunID: "r1", Kind: stored.KindTPCC, Params: &stored.TPCCParams{Engine: "postgres",
		Placement: stored.Placement{Instance: "db1", Target: "fast"}}})
	b.Started(experiment.Started{RunID: "r2", Kind: stored.KindTPCC, Params: &stored.TPCCParams{Engine: "mariadb"}})

	rec := metrics.NewRecorder(int(tpcc.NumKinds)).WithBuckets(LatencyBuckets)
	second := func(lat []time.Duration, rolledBack int, fails int) driver.Tick {
		for i, d := range lat {
			rec.Record(int(tpcc.NewOrder), d, true, i < rolledBack)
		}
		for range fails {
			rec.Fail(int(tpcc.Payment))
		}
		tk := driver.Tick{Step: 1, Steps: 2, VUs: 4, Phase: "measure", Transactions: 10, NewOrders: 5, TPM: 600, NOPM: 300}
		tk.TxnPerSec[tpcc.NewOrder] = int64(len(lat))
		rec.Drain(tk.RolledBack[:], tk.Failed[:], tk.Latency[:])
		return tk
	}
	t1 := second([]time.Duration{80 * time.Microsecond, 400 * time.Microsecond, 3 * time.Millisecond}, 1, 2)
	a.Tick(experiment.Tick{TPCC: &t1})
	t2 := second([]time.Duration{20 * time.Second}, 0, 0)
	t2.NOPM = 120
	t2.NoTPM, t2.TPM, t2.Transactions = true, 0, 0 // no TPM taken: the gauge keeps the last second's
	a.Tick(experiment.Tick{TPCC: &t2})
	b.Tick(experiment.Tick{TPCC: &driver.Tick{Step: 1, Steps: 1, VUs: 1, Phase: "rampup", Transactions: 3}})
	a.Result(experiment.Result{TPCC: &stored.TPCCStep{VUs: 4, TPM: 620, NOPM: 310}})

	got := gatherText(t, e)
	for _, line := range []string{
		`tierbench_tpcc_transactions_total{engine="postgres",instance="db1",outcome="commit",run="r1",target="fast",type="new_order"} 3`,
		`tierbench_tpcc_transactions_total{engine="postgres",instance="db1",outcome="rollback",run="r1",target="fast",type="new_order"} 1`,
		`tierbench_tpcc_transactions_total{engine="postgres",instance="db1",outcome="error",run="r1",target="fast",type="payment"} 2`,
		`tierbench_tpcc_transaction_duration_seconds_bucket{engine="postgres",instance="db1",run="r1",target="fast",type="new_order",le="0.0001"} 1`,
		`tierbench_tpcc_transaction_duration_seconds_bucket{engine="postgres",instance="db1",run="r1",target="fast",type="new_order",le="0.0005"} 2`,
		`tierbench_tpcc_transaction_duration_seconds_bucket{engine="postgres",instance="db1",run="r1",target="fast",type="new_order",le="10"} 3`,
		`tierbench_tpcc_transaction_duration_seconds_bucket{engine="postgres",instance="db1",run="r1",target="fast",type="new_order",le="+Inf"} 4`,
		`tierbench_tpcc_transaction_duration_seconds_sum{engine="postgres",instance="db1",run="r1",target="fast",type="new_order"} 20.00348`,
		`tierbench_tpcc_db_new_orders_total{engine="postgres",instance="db1",run="r1",target="fast"} 10`,
		`tierbench_tpcc_nopm{engine="postgres",instance="db1",run="r1",target="fast"} 120`,
		`tierbench_tpcc_tpm{engine="postgres",instance="db1",run="r1",target="fast"} 600`,
		`tierbench_tpcc_db_transactions_total{engine="postgres",instance="db1",run="r1",target="fast"} 10`,
		`tierbench_tpcc_vus{engine="postgres",instance="db1",run="r1",target="fast"} 4`,
		`tierbench_tpcc_measuring{engine="postgres",instance="db1",run="r1",target="fast"} 1`,
		`tierbench_tpcc_step_nopm{engine="postgres",instance="db1",run="r1",step="1",target="fast",vus="4"} 310`,
		`tierbench_tpcc_db_transactions_total{engine="mariadb",instance="",run="r2",target=""} 3`,
		`tierbench_tpcc_measuring{engine="mariadb",instance="",run="r2",target=""} 0`,
		`tierbench_run_info{engine="postgres",instance="db1",kind="tpcc",label="",run="r1",target="fast"} 1`,
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("the exposition lacks\n  %s", line)
		}
	}
	if strings.Contains(got, `run="r2",target="",type="new_order",le=`) {
		t.Error("a run without latency buckets exported a latency histogram")
	}
	if strings.Contains(got, "tierbench_tpcc_offered_tpm") || strings.Contains(got, "tierbench_tpcc_late_total") {
		t.Error("closed-loop runs exported open-loop metrics")
	}
}

// An open-loop run's ticks give the offered rate, the queue at the last
// second and the late arrivals so far; a finished step its unserved.
func TestExporterTPCCOpenLoop(t *testing.T) {
	e := New()
	o := e.Observer()
	o.Started(experiment.Started{RunID: "r3", Kind: stored.KindTPCC, Params: &stored.TPCCParams{Engine: "postgres"}})
	for _, x := range []struct{ late, queue int64 }{{2, 7}, {3, 40}} {
		o.Tick(experiment.Tick{TPCC: &driver.Tick{Step: 1, Steps: 1, VUs: 8, Phase: "measure", OfferedTPM: 12000, Late: x.late, Queue: x.queue}})
	}
	o.Result(experiment.Result{TPCC: &stored.TPCCStep{VUs: 8, TPM: 11900, OpenLoop: &stored.OpenLoop{OfferedTPM: 12000, Unserved: 4}}})
	got := gatherText(t, e)
	for _, line := range []string{
		`tierbench_tpcc_offered_tpm{engine="postgres",instance="",run="r3",target=""} 12000`,
		`tierbench_tpcc_queue{engine="postgres",instance="",run="r3",target=""} 40`,
		`tierbench_tpcc_late_total{engine="postgres",instance="",run="r3",target=""} 5`,
		`tierbench_tpcc_step_unserved{engine="postgres",instance="",offered_tpm="12000",run="r3",step="1",target="",vus="8"} 4`,
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("the exposition lacks\n  %s\n%s", line, got)
		}
	}
}

// gatherText is the registry's exposition in the text format.
func gatherText(t *testing.T, e *Exporter) string {
	t.Helper()
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "tierbench_") || strings.HasPrefix(mf.GetName(), "tierbench_process_") {
			continue
		}
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// A disk run's points, a backup's phases and telemetry samples: each in
// base units, under bounded labels.
func TestExporterDiskBackupTelemetry(t *testing.T) {
	e := New()
	o := e.Observer()
	o.Progress(experiment.Progress{Point: &experiment.PointProgress{Index: 0, Count: 2}}) // before Started: ignored
	o.Started(experiment.Started{RunID: "d1", Kind: stored.KindDisk, Params: &stored.DiskParams{Target: "/mnt/x"}})
	o.Progress(experiment.Progress{Point: &experiment.PointProgress{Index: 1, Count: 2}})
	o.Result(experiment.Result{Point: &stored.Point{Name: "randread-4k", Seconds: 30,
		Read: &stored.DirStats{IOPS: 12000, MBps: 49.152, MeanMs: 0.2, P50Ms: 0.15, P95Ms: 0.4, P99Ms: 0.9, P999Ms: 2, IOs: 360000}}})
	o.Result(experiment.Result{Point: &stored.Point{Name: "randread-4k-rate200", Seconds: 30, Jobs: 2, RateIOPS: 200,
		Read: &stored.DirStats{IOPS: 398, IOs: 11940}}})
	o.Progress(experiment.Progress{Telemetry: &telemetry.Sample{
		CPU:          telemetry.CPU{IdlePct: 75, IOWaitPct: 20, UserPct: 5},
		ServerCPUPct: -1,
		Shares:       &telemetry.Shares{WorkloadPct: 3, KernelPct: 1, ForeignPct: 1},
		Devices:      []stored.DeviceRates{{Name: "vdb", RIOPS: 11000, RMBps: 45, RAwaitMs: 0.25, UtilPct: 90}},
		Latency:      &telemetry.Latency{P50Ms: 0.1, P95Ms: 0.3, P99Ms: 0.8},
		DB:           map[string]float64{"cache_hit_pct": 99, "wal_sync_ms_per_s": 5},
	}})
	b := e.Observer()
	b.Started(experiment.Started{RunID: "b1", Kind: stored.KindBackup, Params: &stored.BackupParams{Engine: "postgres", Target: "/mnt/b"}})
	b.Progress(experiment.Progress{Phase: &experiment.PhaseProgress{Cycle: 2, Cycles: 3, Phase: "restore", Elapsed: 4 * time.Second}})

	got := gatherText(t, e)
	for _, line := range []string{
		`tierbench_fio_point{engine="",instance="",run="d1",target="/mnt/x"} 2`,
		`tierbench_fio_iops{direction="read",engine="",instance="",point="randread-4k",run="d1",target="/mnt/x"} 12000`,
		`tierbench_fio_throughput_bytes_per_second{direction="read",engine="",instance="",point="randread-4k",run="d1",target="/mnt/x"} 4.9152e+07`,
		`tierbench_fio_latency_seconds{direction="read",engine="",instance="",point="randread-4k",run="d1",target="/mnt/x",quantile="0.99"} 0.0009`,
		`tierbench_fio_latency_seconds_count{direction="read",engine="",instance="",point="randread-4k",run="d1",target="/mnt/x"} 360000`,
		`tierbench_fio_offered_iops{engine="",instance="",point="randread-4k-rate200",run="d1",target="/mnt/x"} 400`,
		`tierbench_fio_iops{direction="read",engine="",instance="",point="randread-4k-rate200",run="d1",target="/mnt/x"} 398`,
		`tierbench_host_cpu_ratio{engine="",instance="",mode="iowait",run="d1",target="/mnt/x"} 0.2`,
		`tierbench_host_cpu_busy_ratio{by="workload",engine="",instance="",run="d1",target="/mnt/x"} 0.03`,
		`tierbench_host_cpu_busy_ratio{by="other",engine="",instance="",run="d1",target="/mnt/x"} 0.01`,
		`tierbench_device_iops{device="vdb",direction="read",engine="",instance="",run="d1",target="/mnt/x"} 11000`,
		`tierbench_device_utilization_ratio{device="vdb",engine="",instance="",run="d1",target="/mnt/x"} 0.9`,
		`tierbench_device_traced_latency_seconds{engine="",instance="",percentile="p99",run="d1",target="/mnt/x"} 0.0008`,
		`tierbench_db_cache_hit_ratio{engine="",instance="",run="d1",target="/mnt/x"} 0.99`,
		`tierbench_db_wal_sync_seconds_per_second{engine="",instance="",run="d1",target="/mnt/x"} 0.005`,
		`tierbench_backup_phase_running{engine="postgres",instance="",phase="restore",run="b1",target="/mnt/b"} 1`,
		`tierbench_backup_phase_running{engine="postgres",instance="",phase="backup",run="b1",target="/mnt/b"} 0`,
		`tierbench_backup_phase_elapsed_seconds{engine="postgres",instance="",phase="restore",run="b1",target="/mnt/b"} 4`,
		`tierbench_backup_cycle{engine="postgres",instance="",run="b1",target="/mnt/b"} 2`,
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("the exposition lacks\n  %s", line)
		}
	}
	if n := strings.Count(got, "tierbench_fio_offered_iops{"); n != 1 {
		t.Errorf("%d offered rates exported; want the rated point's only", n)
	}
	if strings.Contains(got, "tierbench_server_cpu_cores") {
		t.Error("a server CPU that was not sampled (-1) is exported")
	}
	if n := strings.Count(got, "tierbench_fio_point{"); n != 1 {
		t.Errorf("%d fio_point series; the progress before Started must be ignored and the run's counted once", n)
	}
}

func TestDBMetricName(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		f    float64
	}{
		{"blocks_read_per_s", "tierbench_db_blocks_read_per_second", 1},
		{"cache_hit_pct", "tierbench_db_cache_hit_ratio", 0.01},
		{"read_latency_ms", "tierbench_db_read_latency_seconds", 0.001},
		{"block_read_ms_per_s", "tierbench_db_block_read_seconds_per_second", 0.001},
		{"Active-IO", "tierbench_db_active_io", 1},
	} {
		got, f := dbMetricName(c.in)
		if got != c.want || f != c.f {
			t.Errorf("dbMetricName(%q) = %q, %g; want %q, %g", c.in, got, f, c.want, c.f)
		}
	}
}

func TestCheckAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:0": true, "127.0.0.1:9464": true, "[::1]:9464": true, "localhost:9464": true, "0.0.0.0:9464": true,
		":9464": false, "127.0.0.1": false, "127.0.0.1:http": false, "127.0.0.1:70000": false, "": false,
	} {
		err := CheckAddr(addr)
		if (err == nil) != ok {
			t.Errorf("CheckAddr(%q) = %v; want ok=%t", addr, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("CheckAddr(%q)'s error does not show a right address: %v", addr, err)
		}
	}
}
