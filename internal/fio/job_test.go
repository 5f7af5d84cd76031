package fio

import (
	"strings"
	"testing"
	"time"
)

func TestSweepOrder(t *testing.T) {
	got := Sweep(Spec{Jobs: 1}, []int64{4 << 10, 64 << 10}, []string{RandRW, SeqRead}, []int{70, 50}, nil, []int{1, 8})
	want := []string{
		"4k-randrw70-qd1x1", "4k-randrw70-qd8x1", "4k-randrw50-qd1x1", "4k-randrw50-qd8x1", "4k-read-qd1x1", "4k-read-qd8x1",
		"64k-randrw70-qd1x1", "64k-randrw70-qd8x1", "64k-randrw50-qd1x1", "64k-randrw50-qd8x1", "64k-read-qd1x1", "64k-read-qd8x1",
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("sweep\n got %v\nwant %v", names, want)
	}
}

func TestSpecDirections(t *testing.T) {
	cases := []struct {
		s             Spec
		reads, writes bool
	}{
		{Spec{RW: RandRW, RWMixRead: 70}, true, true},
		{Spec{RW: RandRW, RWMixRead: 100}, true, false},
		{Spec{RW: RandRW, RWMixRead: 0}, false, true},
		{Spec{RW: RandRead}, true, false},
		{Spec{RW: SeqWrite}, false, true},
	}
	for _, c := range cases {
		if c.s.Reads() != c.reads || c.s.Writes() != c.writes {
			t.Errorf("%+v: reads %t writes %t, want %t %t", c.s, c.s.Reads(), c.s.Writes(), c.reads, c.writes)
		}
	}
}

func TestSpecValidate(t *testing.T) {
	ok := Spec{BS: 4096, RW: RandRW, RWMixRead: 70, IODepth: 8, Jobs: 4}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid spec refused: %v", err)
	}
	bad := map[string]func(*Spec){
		"pattern":  func(s *Spec) { s.RW = "random" },
		"bs":       func(s *Spec) { s.BS = 1000 },
		"mix":      func(s *Spec) { s.RWMixRead = 101 },
		"depth":    func(s *Spec) { s.IODepth = 0 },
		"jobs":     func(s *Spec) { s.Jobs = 1000 },
		"compress": func(s *Spec) { s.CompressPc = -1 },
	}
	for name, f := range bad {
		s := ok
		f(&s)
		if s.Validate() == nil {
			t.Errorf("%s: %+v accepted", name, s)
		}
	}
}

// The job file carries every setting, splits the file into one region per
// job, and leaves out what a point does not use.
func TestJobFile(t *testing.T) {
	s := Spec{BS: 4096, RW: RandRW, RWMixRead: 70, IODepth: 8, Jobs: 4, CompressPc: 50}
	s.Name = PointName(s)
	job, err := JobFile(s, Settings{IOEngine: "libaio", Direct: true, Duration: time.Minute, Ramp: 1500 * time.Millisecond,
		File: "/t/f.dat", Size: 1 << 30, LogPrefix: "/w/p1", SteadyState: "iops_slope:2%", SteadyWindow: 30 * time.Second,
		Header: "point 1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"; point 1\n", "ioengine=libaio\n", "direct=1\n", "filename=/t/f.dat\n", "runtime=60s\n",
		"ramp_time=1500ms\n", "steadystate=iops_slope:2%\n", "steadystate_duration=30s\n", "[4k-randrw70-qd8x4]\n",
		"rw=randrw\n", "rwmixread=70\n", "bs=4k\n", "iodepth=8\n", "numjobs=4\n", "size=268435456\n",
		"offset_increment=268435456\n", "write_iops_log=/w/p1\n", "log_avg_msec=1000\n",
		"buffer_compress_percentage=50\n", "refill_buffers=1\n"} {
		if !strings.Contains(job, want) {
			t.Errorf("job file lacks %q:\n%s", want, job)
		}
	}
	for _, absent := range []string{"dedupe_percentage", "rate_iops", "steadystate_ramp_time"} {
		if strings.Contains(job, absent) {
			t.Errorf("job file has %s, which the point does not use:\n%s", absent, job)
		}
	}
	// A rated point: Poisson arrivals at each job's rate, and its name says so.
	rated := Spec{BS: 4096, RW: RandRead, IODepth: 1, Jobs: 2, RateIOPS: 500}
	rated.Name = PointName(rated)
	if job, _ := JobFile(rated, Settings{IOEngine: "psync", Duration: time.Second, File: "/f", Size: 100 << 20}); rated.Name != "4k-randread-qd1x2-rate500" ||
		!strings.Contains(job, "rate_iops=500\nrate_process=poisson\n") {
		t.Errorf("a rated point %s:\n%s", rated.Name, job)
	}
	seq := Spec{Name: "x", BS: 256 << 10, RW: SeqRead, IODepth: 1, Jobs: 3}
	job, err = JobFile(seq, Settings{IOEngine: "psync", Duration: time.Second, File: "/f", Size: 100 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// 100 MiB / 3 jobs = 33.3 MiB, rounded down to whole MiB.
	if !strings.Contains(job, "size=34603008\n") || strings.Contains(job, "rwmixread") || !strings.Contains(job, "direct=0\n") {
		t.Errorf("sequential job file:\n%s", job)
	}
	if _, err := JobFile(Spec{Name: "x", BS: 4096, RW: RandRead, IODepth: 1, Jobs: 8}, Settings{IOEngine: "psync",
		Duration: time.Second, File: "/f", Size: 4 << 20}); err == nil || !strings.Contains(err.Error(), "--size") {
		t.Errorf("4 MiB for 8 jobs: %v, want a refusal naming --size", err)
	}
}

func TestProfiles(t *testing.T) {
	want := map[string]int{"paper": 18, "easy-run": 6, "quick": 4}
	for _, p := range Profiles {
		if n, ok := want[p.Name]; !ok || len(p.Points) != n {
			t.Errorf("profile %s has %d points, want %d", p.Name, len(p.Points), want[p.Name])
		}
		seen := map[string]bool{}
		for _, s := range p.Points {
			if err := s.Validate(); err != nil || s.Name != PointName(s) || seen[s.Name] {
				t.Errorf("profile %s point %+v: %v (duplicate %t)", p.Name, s, err, seen[s.Name])
			}
			seen[s.Name] = true
		}
		if got, err := LookupProfile(p.Name); err != nil || got.Name != p.Name {
			t.Errorf("LookupProfile(%s) = %v, %v", p.Name, got.Name, err)
		}
	}
	// The paper's sequential sweeps run 4k to 256k.
	paper, _ := LookupProfile("paper")
	if paper.Points[1].Name != "4k-read-qd8x4" || paper.Points[7].Name != "256k-read-qd8x4" || paper.Points[14].Name != "256k-write-qd8x4" {
		t.Errorf("paper sweep: %s .. %s, %s", paper.Points[1].Name, paper.Points[7].Name, paper.Points[14].Name)
	}
	if _, err := LookupProfile("nope"); err == nil || !strings.Contains(err.Error(), "easy-run") {
		t.Errorf("unknown profile: %v", err)
	}
}

func TestParseVersion(t *testing.T) {
	cases := []struct {
		in           string
		major, minor int
		ok           bool
	}{
		{"fio-3.33", 3, 33, true},
		{"fio-3.35-12-gabcdef", 3, 35, true},
		{"fio-2.2.10", 2, 2, true},
		{"fio version 3", 0, 0, false},
	}
	for _, c := range cases {
		ma, mi, ok := parseVersion(c.in)
		if ma != c.major || mi != c.minor || ok != c.ok {
			t.Errorf("parseVersion(%q) = %d, %d, %t", c.in, ma, mi, ok)
		}
	}
}
