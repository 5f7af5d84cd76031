package live

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stored"
)

// A repeated run (--repeat 2) finishes each VU count and each disk point
// twice. A scrape must still gather (no two series with one label set),
// show one series per VU count and per point, and hold the latest
// repetition's figures.
func TestExporterRepetitions(t *testing.T) {
	e := New()
	tp := e.Observer()
	tp.Started(experiment.Started{RunID: "t1", Kind: stored.KindTPCC, Params: &stored.TPCCParams{Engine: "postgres"}})
	// 4 and 8 VUs, interleaved: 4, 8, 4, 8.
	for _, s := range []stored.TPCCStep{
		{Index: 0, VUs: 4, Repetition: 1, TPM: 1000, NOPM: 440},
		{Index: 1, VUs: 8, Repetition: 1, TPM: 1800, NOPM: 800},
		{Index: 2, VUs: 4, Repetition: 2, TPM: 1100, NOPM: 480},
		{Index: 3, VUs: 8, Repetition: 2, TPM: 1900, NOPM: 840},
	} {
		tp.Result(experiment.Result{TPCC: &s})
	}
	dk := e.Observer()
	dk.Started(experiment.Started{RunID: "d1", Kind: stored.KindDisk, Params: &stored.DiskParams{Target: "/mnt/x"}})
	for rep, iops := range []float64{10000, 12000} {
		dk.Progress(experiment.Progress{Point: &experiment.PointProgress{Index: rep, Count: 2}})
		dk.Result(experiment.Result{Point: &stored.Point{Name: "randread-4k", Repetition: rep + 1, Seconds: 30 + float64(rep),
			Read: &stored.DirStats{IOPS: iops, MBps: iops * 4096 / 1e6, MeanMs: 0.2, P99Ms: 0.9 + float64(rep), IOs: uint64(iops) * 30}}})
	}

	if _, err := e.Registry().Gather(); err != nil {
		t.Fatalf("Gather: %v", err)
	}
	got := gatherText(t, e)
	for _, line := range []string{
		`tierbench_tpcc_step_nopm{engine="postgres",instance="",run="t1",step="1",target="",vus="4"} 480`,
		`tierbench_tpcc_step_tpm{engine="postgres",instance="",run="t1",step="1",target="",vus="4"} 1100`,
		`tierbench_tpcc_step_nopm{engine="postgres",instance="",run="t1",step="2",target="",vus="8"} 840`,
		`tierbench_tpcc_step_tpm{engine="postgres",instance="",run="t1",step="2",target="",vus="8"} 1900`,
		`tierbench_fio_iops{direction="read",engine="",instance="",point="randread-4k",run="d1",target="/mnt/x"} 12000`,
		`tierbench_fio_throughput_bytes_per_second{direction="read",engine="",instance="",point="randread-4k",run="d1",target="/mnt/x"} 4.9152e+07`,
		`tierbench_fio_latency_seconds{direction="read",engine="",instance="",point="randread-4k",run="d1",target="/mnt/x",quantile="0.99"} 0.0019`,
		`tierbench_fio_latency_seconds_count{direction="read",engine="",instance="",point="randread-4k",run="d1",target="/mnt/x"} 360000`,
		`tierbench_fio_point_seconds{engine="",instance="",point="randread-4k",run="d1",target="/mnt/x"} 31`,
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("the exposition lacks\n  %s", line)
		}
	}
	for prefix, want := range map[string]int{
		"tierbench_tpcc_step_nopm{":            2, // one per VU count
		"tierbench_tpcc_step_tpm{":             2,
		"tierbench_fio_iops{":                  1, // one per point and direction
		"tierbench_fio_point_seconds{":         1,
		"tierbench_fio_latency_seconds_count{": 1,
	} {
		if n := strings.Count(got, "\n"+prefix); n != want {
			t.Errorf("%d %s…} series; want %d", n, prefix, want)
		}
	}
}

// A run that does not repeat its steps keeps each as it ran, even two of
// one VU count (--vus 4,4): steps 1 and 2.
func TestExporterUnrepeatedSteps(t *testing.T) {
	e := New()
	o := e.Observer()
	o.Started(experiment.Started{RunID: "t1", Kind: stored.KindTPCC, Params: &stored.TPCCParams{Engine: "postgres"}})
	o.Result(experiment.Result{TPCC: &stored.TPCCStep{Index: 0, VUs: 4, NOPM: 440}})
	o.Result(experiment.Result{TPCC: &stored.TPCCStep{Index: 1, VUs: 4, NOPM: 460}})
	got := gatherText(t, e)
	for _, line := range []string{
		`tierbench_tpcc_step_nopm{engine="postgres",instance="",run="t1",step="1",target="",vus="4"} 440`,
		`tierbench_tpcc_step_nopm{engine="postgres",instance="",run="t1",step="2",target="",vus="4"} 460`,
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("the exposition lacks\n  %s", line)
		}
	}
}
