package scenario

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/fio"
)

func TestBundledScenariosValidateAtEveryScale(t *testing.T) {
	infos := Bundled()
	var names []string
	for _, in := range infos {
		names = append(names, in.Name)
	}
	want := []string{"analytic-tiers", "cluster", "crash-tiers", "engines", "paper-1-memory", "paper-2-tiers", "paper-3-stress", "paper-4-backup", "paper-5-neighbours", "quick", "space-efficiency", "tiers-at-load"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("bundled: %v, want %v", names, want)
	}
	for _, in := range infos {
		for _, scale := range []string{"", "laptop", "paper"} {
			sc, err := Load(in.Name, scale, nil)
			if err != nil {
				t.Errorf("%s at scale %q:\n%v", in.Name, scale, err)
				continue
			}
			if sc.Name != in.Name || sc.Title != in.Title || sc.Title == sc.Name {
				t.Errorf("%s: name %q and title %q (the file's name must match, and it needs a title)", in.Name, sc.Name, sc.Title)
			}
			if last := sc.Steps[len(sc.Steps)-1]; last.Kind != KindReport {
				t.Errorf("%s: the last step is %s, not report", in.Name, last.Kind)
			}
		}
		// The defaults are the laptop scale.
		def, err1 := Load(in.Name, "", nil)
		lap, err2 := Load(in.Name, "laptop", nil)
		if err1 == nil && err2 == nil {
			lap.Scale = ""
			if !reflect.DeepEqual(def, lap) {
				t.Errorf("%s: the defaults differ from the laptop scale", in.Name)
			}
		}
	}
}

// TestBundledLaptopBudget keeps the laptop scale within about ten minutes on
// two cores: measured time, schema size and memory are bounded.
func TestBundledLaptopBudget(t *testing.T) {
	for _, in := range Bundled() {
		sc, err := Load(in.Name, "laptop", nil)
		if err != nil {
			t.Fatal(err)
		}
		var timed time.Duration // ramp-ups and measured intervals; builds come on top
		for _, st := range sc.Steps {
			switch {
			case st.TPCCRun != nil:
				steps := len(st.TPCCRun.VUs)
				if r := st.TPCCRun.Rate; len(r.Rates)+len(r.Fractions) > 0 {
					steps = len(r.Rates) + len(r.Fractions) // a probe for fractions comes on top
				}
				timed += time.Duration(steps*st.TPCCRun.Repeat) * (st.TPCCRun.RampUp + st.TPCCRun.Duration)
				if slices.Max(st.TPCCRun.VUs) > 32 {
					t.Errorf("%s: %d VUs is a lot for 2 cores", in.Name, slices.Max(st.TPCCRun.VUs))
				}
			case st.Neighbours != nil:
				timed += time.Duration(max(st.Neighbours.Repeat, 1)) * (st.Neighbours.RampUp + st.Neighbours.Duration)
			case st.Durability != nil:
				timed += time.Duration(st.Durability.Cycles*len(st.Durability.Instances)) * st.Durability.RunBeforeFault
			case st.Disk != nil:
				p, err := fio.LookupProfile(st.Disk.Profile)
				if err != nil {
					t.Fatal(err)
				}
				d := p.Duration
				if st.Disk.Duration > 0 {
					d = st.Disk.Duration
				}
				points := len(p.Points) * (max(1, len(st.Disk.Rates)) + len(st.Disk.Fractions))
				timed += time.Duration(points*st.Disk.Repeat) * (d + p.Ramp)
			case st.TPCHBuild != nil:
				if st.TPCHBuild.Scale > 1 {
					t.Errorf("%s: TPC-H at scale factor %g takes too long on a laptop; keep it at 1 or less", in.Name, st.TPCHBuild.Scale)
				}
			case st.TPCCBuild != nil:
				if st.TPCCBuild.Warehouses > 6 {
					t.Errorf("%s: %d warehouses take too long to build on a laptop", in.Name, st.TPCCBuild.Warehouses)
				}
			}
		}
		// Three repetitions of each measurement (docs/statistics.md) triple
		// the 7 minutes a laptop run had with one.
		if timed > 21*time.Minute {
			t.Errorf("%s: %s of timed steps at laptop scale; keep it under 21m (7m a repetition) so builds fit in ~30m", in.Name, timed)
		}
		// The memory of the servers up at once: a server starts with the
		// first step that needs it and holds its memory until a stop step.
		var mem, peak int64
		up := map[string]bool{}
		for _, st := range sc.Steps {
			for _, name := range st.Servers() {
				if s, _ := sc.Server(name); !up[name] {
					up[name] = true
					mem += s.Memory * int64(s.Count)
				}
			}
			peak = max(peak, mem)
			if st.Stop != nil && up[st.Stop.Server] {
				s, _ := sc.Server(st.Stop.Server)
				up[st.Stop.Server] = false
				mem -= s.Memory * int64(s.Count)
			}
		}
		if peak > 2<<30 {
			t.Errorf("%s: the memory of the servers up at once adds up to %d MiB at laptop scale", in.Name, peak>>20)
		}
	}
}

// TestBundledPaperScale pins the reference method's numbers (docs/scenarios.md, "The bundled scenarios").
func TestBundledPaperScale(t *testing.T) {
	load := func(name string, sets map[string]string) *Scenario {
		t.Helper()
		sc, err := Load(name, "paper", sets)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	fib := []int{1, 2, 3, 5, 8, 13, 21, 34, 55, 89}

	sc := load("paper-1-memory", nil)
	large, _ := sc.Server("large")
	small, _ := sc.Server("small")
	var run *TPCCRunStep
	copies := 0
	for _, st := range sc.Steps {
		if st.TPCCRun != nil && run == nil {
			run = st.TPCCRun
		}
		if b := st.TPCCBuild; b != nil && b.From == "large" && b.Warehouses == 1200 {
			copies++
		}
	}
	// Built once, by large, and copied to the three others.
	if copies != 3 {
		t.Errorf("paper-1-memory copies large's schema %d times; want 3", copies)
	}
	if sc.Steps[0].TPCCBuild.Warehouses != 1200 || large.Memory != 128<<30 || small.Memory != large.Memory/4 ||
		!reflect.DeepEqual(run.VUs, fib) || run.RampUp != 2*time.Minute || run.Duration != 5*time.Minute {
		t.Errorf("paper-1-memory: %+v %+v %+v", large, small, run)
	}
	// The same pair on the SATA-like tier; each server stopped after its
	// copy and after its turn, so that one holds its memory at a time.
	largeSata, _ := sc.Server("large-sata")
	smallSata, _ := sc.Server("small-sata")
	stops := 0
	for _, st := range sc.Steps {
		if st.Stop != nil {
			stops++
		}
	}
	if largeSata.Target != "sata" || largeSata.Memory != large.Memory || smallSata.Memory != small.Memory || stops != 8 {
		t.Errorf("paper-1-memory on sata: %+v %+v, %d stop steps", largeSata, smallSata, stops)
	}

	sc = load("paper-2-tiers", map[string]string{"fast_path": "/mnt/nvme", "sata_path": "/mnt/sata", "slow_path": "/mnt/slow"})
	if len(sc.Targets) != 3 || sc.Targets[0].Path != "/mnt/nvme" || sc.Targets[2].Path != "/mnt/slow" {
		t.Errorf("paper-2-tiers targets: %+v", sc.Targets)
	}
	for _, tg := range sc.Targets {
		if tg.Emulate != nil {
			t.Errorf("paper-2-tiers at paper scale emulates %s: %+v", tg.Name, tg.Emulate)
		}
	}
	lap, _ := Load("paper-2-tiers", "laptop", nil)
	for _, tg := range lap.Targets {
		if tg.Emulate == nil || tg.Emulate.Loop == 0 || (tg.Name != "fast") != (tg.Emulate.ReadIOPS > 0) {
			t.Errorf("paper-2-tiers at laptop scale: %s emulates %+v", tg.Name, tg.Emulate)
		}
	}

	sc = load("paper-3-stress", nil)
	run = sc.Steps[1].TPCCRun
	if sc.Steps[0].TPCCBuild.Warehouses != 2000 || !reflect.DeepEqual(run.VUs, []int{1, 2, 4, 8, 16, 32, 64, 128}) ||
		run.RampUp != 10*time.Minute || run.Duration != 20*time.Minute {
		t.Errorf("paper-3-stress: %+v", run)
	}

	sc = load("paper-4-backup", nil)
	var cycles []int
	for _, st := range sc.Steps {
		if st.Backup != nil {
			cycles = append(cycles, st.Backup.Cycles)
		}
	}
	if !reflect.DeepEqual(cycles, []int{3, 3}) || len(sc.Targets) != 2 {
		t.Errorf("paper-4-backup: cycles %v on %d targets", cycles, len(sc.Targets))
	}

	// paper-5: the experiment on each of two tiers, 12 instances each (8 on
	// TPC-C beside 4 backing up), real datastores; at laptop scale 3 each,
	// the slow tier emulated and throttled, the fast one not.
	sc = load("paper-5-neighbours", map[string]string{"fast_path": "/mnt/nvme", "slow_path": "/mnt/sata"})
	if len(sc.Targets) != 2 || sc.Targets[0].Path != "/mnt/nvme" || sc.Targets[1].Path != "/mnt/sata" {
		t.Errorf("paper-5-neighbours targets: %+v", sc.Targets)
	}
	for _, tg := range sc.Targets {
		if tg.Emulate != nil {
			t.Errorf("paper-5-neighbours at paper scale emulates %s: %+v", tg.Name, tg.Emulate)
		}
	}
	var steps []*NeighboursStep
	for _, st := range sc.Steps {
		if st.Neighbours != nil {
			steps = append(steps, st.Neighbours)
		}
	}
	if len(sc.Servers) != 2 || len(steps) != 4 {
		t.Fatalf("paper-5-neighbours: %d servers, %d neighbours steps; want 2 and 4", len(sc.Servers), len(steps))
	}
	for i, tier := range []string{"fast", "slow"} {
		s := sc.Servers[i]
		base, noisy := steps[2*i], steps[2*i+1]
		if s.Name != tier || s.Target != tier || s.Count != 12 || len(base.TPCC) != 12 || len(base.Backup) != 0 || len(noisy.TPCC) != 8 ||
			!reflect.DeepEqual(noisy.Backup, []string{tier + "-9", tier + "-10", tier + "-11", tier + "-12"}) ||
			noisy.Cycles != 10 || noisy.Interval != 100*time.Second || noisy.Duration != 20*time.Minute {
			t.Errorf("paper-5-neighbours, tier %s: %+v %+v %+v", tier, s, base, noisy)
		}
	}
	lap, _ = Load("paper-5-neighbours", "laptop", nil)
	for i, tier := range []string{"fast", "slow"} {
		var n, base *NeighboursStep
		for _, st := range lap.Steps {
			if st.Neighbours != nil && strings.HasPrefix(st.Neighbours.TPCC[0], tier+"-") {
				if len(st.Neighbours.Backup) > 0 {
					n = st.Neighbours
				} else {
					base = st.Neighbours
				}
			}
		}
		if n == nil || lap.Servers[i].Count != 3 || len(n.TPCC) != 2 || !reflect.DeepEqual(n.Backup, []string{tier + "-3"}) ||
			n.Cycles != 2 || n.Interval != 15*time.Second {
			t.Errorf("paper-5-neighbours at laptop scale, tier %s: %+v", tier, n)
		}
		// On 2 cores the baseline runs TPC-C on the same instances only.
		if base == nil || n == nil || !reflect.DeepEqual(base.TPCC, n.TPCC) {
			t.Errorf("paper-5-neighbours at laptop scale, tier %s: baseline %+v", tier, base)
		}
		tg := lap.Targets[i]
		if tg.Emulate == nil || tg.Emulate.Loop == 0 || (tier == "slow") != (tg.Emulate.ReadIOPS > 0 && tg.Emulate.WriteMBps > 0) {
			t.Errorf("paper-5-neighbours at laptop scale: %s emulates %+v", tg.Name, tg.Emulate)
		}
	}
}
