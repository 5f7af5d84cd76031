package repeat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// order runs a plan through a fake executor that records what it was
// asked to run, as "step.rep", and stops when stop says so.
func order(ctx context.Context, slots []Slot, stop func(Slot) error) (string, int, error) {
	var got []string
	done, err := Run(ctx, slots, func(_ context.Context, s Slot) error {
		got = append(got, fmt.Sprintf("%d.%d@%d", s.Step, s.Rep, s.Index))
		if stop != nil {
			return stop(s)
		}
		return nil
	})
	return strings.Join(got, " "), done, err
}

func TestInterleaved(t *testing.T) {
	got, done, err := order(context.Background(), Plan(3, 2, false), nil)
	if want := "0.1@0 1.1@1 2.1@2 0.2@3 1.2@4 2.2@5"; got != want || done != 6 || err != nil {
		t.Errorf("interleaved: %s (%d, %v); want %s", got, done, err, want)
	}
}

func TestBackToBack(t *testing.T) {
	got, _, _ := order(context.Background(), Plan(3, 2, true), nil)
	if want := "0.1@0 0.2@1 1.1@2 1.2@3 2.1@4 2.2@5"; got != want {
		t.Errorf("back to back: %s; want %s", got, want)
	}
	if got, _, _ := order(context.Background(), Plan(2, 1, true), nil); got != "0.1@0 1.1@1" {
		t.Errorf("one repetition: %s", got)
	}
}

// An error or a cancelled context stops the run where it is.
func TestRunStops(t *testing.T) {
	boom := errors.New("boom")
	got, done, err := order(context.Background(), Plan(2, 3, false), func(s Slot) error {
		if s.Index == 3 {
			return boom
		}
		return nil
	})
	if got != "0.1@0 1.1@1 0.2@2 1.2@3" || done != 3 || !errors.Is(err, boom) {
		t.Errorf("error at slot 3: %s, %d done, %v", got, done, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got, done, err = order(ctx, Plan(2, 3, false), func(s Slot) error {
		if s.Index == 1 {
			cancel()
		}
		return nil
	})
	if got != "0.1@0 1.1@1" || done != 2 || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled in slot 1: %s, %d done, %v", got, done, err)
	}
}

func TestCheck(t *testing.T) {
	for _, n := range []int{0, -1, MaxRepeat + 1} {
		if err := Check(n); err == nil || !strings.Contains(err.Error(), "from 1 to 1000") {
			t.Errorf("Check(%d) = %v", n, err)
		}
	}
	if Check(1) != nil || Check(MaxRepeat) != nil {
		t.Error("1 and MaxRepeat are fine")
	}
}
