// Package repeat orders the repetitions of a run's steps (TPC-C's VU
// counts, a disk run's points, a backup run's cycles): interleaved by
// default, 1,2,4,1,2,4,…, so that a slow spell of the host lands on every
// step alike rather than on one step's repetitions; or back to back,
// 1,1,2,2,4,4, when each step must follow its own kind (a warm cache).
package repeat

import (
	"context"
	"fmt"
)

// MaxRepeat bounds a run's repetitions.
const MaxRepeat = 1000

// Slot is one repetition of one step, in the order the run takes them.
type Slot struct {
	Index int // its position in the run, from 0: the stored step's index
	Step  int // which step, from 0, in the order the steps were given
	Rep   int // which repetition of it, from 1
}

// Plan is the order of n repetitions of steps steps.
func Plan(steps, n int, backToBack bool) []Slot {
	out := make([]Slot, 0, steps*n)
	for i := range steps * n {
		s := Slot{Index: i, Step: i % steps, Rep: i/steps + 1}
		if backToBack {
			s.Step, s.Rep = i/n, i%n+1
		}
		out = append(out, s)
	}
	return out
}

// Check is n as a count of repetitions: at least 1, at most MaxRepeat.
func Check(n int) error {
	if n < 1 || n > MaxRepeat {
		return fmt.Errorf("repeat %d is out of range; give a count of repetitions from 1 to %d, e.g. 3", n, MaxRepeat)
	}
	return nil
}

// Run runs exec for each slot in turn, stopping at the first error or when
// ctx ends (ctx's error, with the slots done so far counted in done).
func Run(ctx context.Context, slots []Slot, exec func(context.Context, Slot) error) (done int, err error) {
	for _, s := range slots {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		if err := exec(ctx, s); err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}
