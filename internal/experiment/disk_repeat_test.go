package experiment_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/fio/fiotest"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/threshold"
)

// A count of repetitions out of range is ErrInvalid, before fio or the
// store is touched.
func TestRunDiskRepeatInvalid(t *testing.T) {
	dir := t.TempDir()
	spec := fio.Spec{Name: "4k-randread-qd1", BS: 4096, RW: fio.RandRead, IODepth: 1, Jobs: 1}
	for _, n := range []int{-1, 1001} {
		_, err := experiment.RunDisk(context.Background(), experiment.DiskConfig{Record: experiment.Record{Results: dir}, Target: dir,
			Points: []fio.Spec{spec}, Repeat: n, Fio: "/nonexistent/fio"}, experiment.Nop{})
		if !errors.Is(err, experiment.ErrInvalid) || !strings.Contains(err.Error(), "from 1 to 1000") {
			t.Errorf("Repeat %d: %v; want ErrInvalid", n, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tierbench.db")); err == nil {
		t.Error("bad input recorded a run")
	}
}

// One point twice, back to back, from a front end of its own: the observer
// hears each repetition start as step i of 2 and finish with its number,
// each is judged as a point of its own, and the document has the point
// once with n = 2.
func TestRunDiskRepeat(t *testing.T) {
	t.Parallel()
	fiotest.Require(t)
	ts, err := threshold.Parse(stored.KindDisk, []string{"read.iops>=1"})
	if err != nil {
		t.Fatal(err)
	}
	spec := fio.Spec{Name: "4k-randread-qd1", BS: 4096, RW: fio.RandRead, IODepth: 1, Jobs: 1}
	rec := &recorder{}
	out, err := experiment.RunDisk(context.Background(), experiment.DiskConfig{
		Record: experiment.Record{Results: t.TempDir()}, Target: t.TempDir(), Profile: "ad-hoc", Points: []fio.Spec{spec},
		Repeat: 2, BackToBack: true, Thresholds: ts,
		Settings: fio.Settings{Duration: time.Second}, TargetOptions: fio.TargetOptions{Size: 16 << 20},
	}, rec)
	if err != nil {
		t.Fatal(err)
	}
	var starts, reps []int
	for _, p := range rec.progress {
		if p.Point != nil && p.Point.Count == 2 {
			starts = append(starts, p.Point.Index)
		}
	}
	var names []string
	for _, r := range rec.results {
		if r.Point != nil {
			reps = append(reps, r.Point.Repetition)
		}
		for _, v := range r.Thresholds {
			names = append(names, v.Name)
		}
	}
	if len(starts) != 2 || starts[0] != 0 || starts[1] != 1 || len(reps) != 2 || reps[0] != 1 || reps[1] != 2 {
		t.Errorf("point starts %v, results' repetitions %v; want [0 1] and [1 2]", starts, reps)
	}
	if strings.Join(names, "; ") != "4k-randread-qd1, repetition 1; 4k-randread-qd1, repetition 2" {
		t.Errorf("verdicts on %q", names)
	}
	if p := out.Points; out.Repeat != 2 || len(p) != 1 || p[0].Stats["read.iops"].N != 2 || len(p[0].Repetitions) != 2 || p[0].Pooled == nil {
		t.Errorf("document: repeat %d, points %+v", out.Repeat, p)
	}
}
