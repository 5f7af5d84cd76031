package experiment_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/fio/fiotest"
	"github.com/tierbench/tierbench/internal/proctest"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/stored"
)

// noisyRep is a repetition's noisy verdict and host figures, as the
// documents of disk and backup runs give them.
type noisyRep struct {
	Noisy string             `json:"noisy"`
	Host  map[string]float64 `json:"host"`
}

// Disk points and backup phases measured beside a spinning process are
// flagged noisy as TPC-C steps are, discarding noisy repetitions keeps
// them when every repetition was (nothing else measured them), and limits
// of 0 (the zero stored.Noisy) turn the check off. This was the CLI's
// TestDiskAndBackupNoisy; the text view's line under each noisy
// repetition is checked in internal/cli (TestViewNoisy).
func TestDiskAndBackupNoisy(t *testing.T) {
	fiotest.Require(t)
	dsn := tpcctest.Database(t, 1)
	proctest.Spinner(t)
	res := t.TempDir()
	target := t.TempDir()
	disk := func(noisy stored.Noisy) *experiment.DiskResult {
		t.Helper()
		out, err := experiment.RunDisk(context.Background(), experiment.DiskConfig{
			Record: experiment.Record{Results: res, Telemetry: experiment.Telemetry{Interval: 250 * time.Millisecond, BlockTrace: true},
				Noisy: noisy},
			Target: target, Profile: "ad-hoc", Repeat: 2,
			Points:        []fio.Spec{{Name: "4k-randread-qd1x1", BS: 4096, RW: fio.RandRead, IODepth: 1, Jobs: 1}},
			Settings:      fio.Settings{Duration: 2 * time.Second, Direct: true},
			TargetOptions: fio.TargetOptions{Size: 16 << 20},
		}, experiment.Nop{})
		if err != nil {
			t.Fatalf("disk run: %v", err)
		}
		return out
	}
	var d struct {
		Points []struct {
			Discarded   int        `json:"discarded_noisy"`
			Repetitions []noisyRep `json:"repetitions"`
		} `json:"points"`
	}
	if out := asDoc(t, disk(discardNoisy()), &d); len(d.Points) != 1 || len(d.Points[0].Repetitions) != 2 {
		t.Fatalf("%s", out)
	}
	for i, r := range d.Points[0].Repetitions {
		if !strings.Contains(r.Noisy, "other processes") || r.Host["foreign_cpu_pct"] <= 10 {
			t.Errorf("point repetition %d beside a spinning process: noisy %q, host %v", i+1, r.Noisy, r.Host)
		}
		// fio is tierbench's child: its CPU is the workload's.
		if r.Host["workload_cpu_pct"] <= 0 {
			t.Errorf("point repetition %d: workload CPU %v; want fio's", i+1, r.Host["workload_cpu_pct"])
		}
	}
	if d.Points[0].Discarded != 0 {
		t.Errorf("discarded %d of 2 noisy repetitions; want none, since nothing else measured the point", d.Points[0].Discarded)
	}
	// --noisy-cpu 0 --noisy-steal 0: both checks left out.
	if out := asDoc(t, disk(stored.Noisy{}), &struct{}{}); strings.Contains(out, `"noisy"`) {
		t.Errorf("disk run without noisy checks: want no point noisy:\n%s", out)
	}

	base := pgtest.TempDir(t)
	out, err := experiment.RunBackup(context.Background(), experiment.BackupConfig{
		Record: experiment.Record{Results: res, Telemetry: experiment.Telemetry{Interval: 200 * time.Millisecond, BlockTrace: true},
			Noisy: discardNoisy()},
		DSN: dsn, Target: filepath.Join(base, "backups"), Logical: true, Jobs: 2, Verify: true, Cycles: 1, Repeat: 2,
	}, experiment.Nop{})
	if err != nil {
		t.Fatalf("backup run: %v", err)
	}
	var b struct {
		Cycles []struct {
			Backup, Restore *noisyRep
		} `json:"cycles"`
		Discarded int `json:"discarded_noisy"`
	}
	if doc := asDoc(t, out, &b); len(b.Cycles) != 2 {
		t.Fatalf("%s", doc)
	}
	for i, c := range b.Cycles {
		for name, p := range map[string]*noisyRep{"backup": c.Backup, "restore": c.Restore} {
			if p == nil || !strings.Contains(p.Noisy, "other processes") {
				t.Errorf("cycle %d's %s beside a spinning process: %+v; want it noisy", i+1, name, p)
			}
		}
	}
	if b.Discarded != 0 {
		t.Errorf("backup run discarded %d phases, all noisy; want none", b.Discarded)
	}
}

// discardNoisy judges by the default limits and leaves noisy repetitions
// out of the means.
func discardNoisy() stored.Noisy {
	n := experiment.DefaultNoisy()
	n.Discard = true
	return n
}
