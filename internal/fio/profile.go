package fio

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Profile is a bundled set of points with the durations and test-file size
// that suit it. A user's --duration, --ramp and --size override them.
type Profile struct {
	Name     string        `json:"name"`
	Title    string        `json:"title"`
	Duration time.Duration `json:"-"`
	Ramp     time.Duration `json:"-"`
	Size     int64         `json:"-"`
	Points   []Spec        `json:"points"`
}

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// Profiles are the bundled profiles, in the order `disk profiles` lists them.
var Profiles = []Profile{
	{
		Name: "paper",
		Title: "the reference white paper's datastore characterisation: 4k random 70/30 at QD8 x 4 threads, " +
			"sequential read and write 4k..256k, 4k 75/25 at QD32 on one thread (the per-second trace), 256k sequential",
		Duration: time.Minute, Ramp: 10 * time.Second, Size: 8 * gib,
		Points: slices.Concat(
			[]Spec{{BS: 4 * kib, RW: RandRW, RWMixRead: 70, IODepth: 8, Jobs: 4}},
			Sweep(Spec{RW: SeqRead, IODepth: 8, Jobs: 4}, []int64{4 * kib, 8 * kib, 16 * kib, 32 * kib, 64 * kib, 128 * kib, 256 * kib}, nil, nil, nil, nil),
			Sweep(Spec{RW: SeqWrite, IODepth: 8, Jobs: 4}, []int64{4 * kib, 8 * kib, 16 * kib, 32 * kib, 64 * kib, 128 * kib, 256 * kib}, nil, nil, nil, nil),
			[]Spec{
				{BS: 4 * kib, RW: RandRW, RWMixRead: 75, IODepth: 32, Jobs: 1},
				{BS: 256 * kib, RW: SeqRead, IODepth: 32, Jobs: 1},
				{BS: 256 * kib, RW: SeqWrite, IODepth: 32, Jobs: 1},
			}),
	},
	{
		Name:     "easy-run",
		Title:    "HCIBench's easy-run six: 4k random read, 4k random write, 256k sequential read and write, 4k 70/30, 8k 50/50 (QD8 x 4 threads)",
		Duration: time.Minute, Ramp: 10 * time.Second, Size: 4 * gib,
		Points: []Spec{
			{BS: 4 * kib, RW: RandRead, IODepth: 8, Jobs: 4},
			{BS: 4 * kib, RW: RandWrite, IODepth: 8, Jobs: 4},
			{BS: 256 * kib, RW: SeqRead, IODepth: 8, Jobs: 4},
			{BS: 256 * kib, RW: SeqWrite, IODepth: 8, Jobs: 4},
			{BS: 4 * kib, RW: RandRW, RWMixRead: 70, IODepth: 8, Jobs: 4},
			{BS: 8 * kib, RW: RandRW, RWMixRead: 50, IODepth: 8, Jobs: 4},
		},
	},
	{
		Name:     "quick",
		Title:    "a one-minute smoke set: 4k random 70/30 (QD8 x 2), 4k random read at QD1 (latency), 256k sequential read and write",
		Duration: 10 * time.Second, Ramp: 2 * time.Second, Size: 256 * mib,
		Points: []Spec{
			{BS: 4 * kib, RW: RandRW, RWMixRead: 70, IODepth: 8, Jobs: 2},
			{BS: 4 * kib, RW: RandRead, IODepth: 1, Jobs: 1},
			{BS: 256 * kib, RW: SeqRead, IODepth: 8, Jobs: 1},
			{BS: 256 * kib, RW: SeqWrite, IODepth: 8, Jobs: 1},
		},
	},
}

func init() {
	for i := range Profiles {
		for j := range Profiles[i].Points {
			Profiles[i].Points[j].Name = PointName(Profiles[i].Points[j])
		}
	}
}

// LookupProfile finds a bundled profile by name.
func LookupProfile(name string) (Profile, error) {
	for _, p := range Profiles {
		if p.Name == name {
			return p, nil
		}
	}
	var names []string
	for _, p := range Profiles {
		names = append(names, p.Name)
	}
	return Profile{}, fmt.Errorf("profile %q is unknown; use one of %s (see tierbench disk profiles)", name, strings.Join(names, ", "))
}

// Sweep is the cross product of the given lists over base, in the order
// block size, pattern, read share, jobs, queue depth (the last varies
// fastest, so consecutive points of one block size and pattern trace an
// IOPS-vs-latency curve). A nil list keeps base's value.
func Sweep(base Spec, bs []int64, rw []string, mix, jobs, depth []int) []Spec {
	if bs == nil {
		bs = []int64{base.BS}
	}
	if rw == nil {
		rw = []string{base.RW}
	}
	if mix == nil {
		mix = []int{base.RWMixRead}
	}
	if jobs == nil {
		jobs = []int{base.Jobs}
	}
	if depth == nil {
		depth = []int{base.IODepth}
	}
	var out []Spec
	for _, b := range bs {
		for _, r := range rw {
			mixes := mix
			if r != RandRW {
				mixes = []int{0} // one point: the read share means nothing here
			}
			for _, m := range mixes {
				for _, j := range jobs {
					for _, d := range depth {
						s := base
						s.BS, s.RW, s.RWMixRead, s.Jobs, s.IODepth = b, r, m, j, d
						s.Name = PointName(s)
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}
