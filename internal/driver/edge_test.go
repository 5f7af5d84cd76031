package driver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/driver"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/experiment/tpcctest"
	"github.com/tierbench/tierbench/internal/server/pgtest"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// A server that stops answering for good (its backends frozen, as on a
// hung disk) does not hang the step's end: after EdgeLimit the step is
// kept from the last reading of the counters that came back, as its
// server's loss, and the run fails saying why.
func TestEdgeOfFrozenServer(t *testing.T) {
	t.Parallel()
	pgtest.RequireBinaries(t)
	ctx := context.Background()
	dsn := tpcctest.Database(t, 1)
	db, err := experiment.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Frozen from 3 s into the 5-second interval until well after the
	// end has given up on it.
	const freezeAt, duration, limit = 3 * time.Second, 5 * time.Second, 1500 * time.Millisecond
	frozen := make(chan time.Time, 1)
	go func() {
		time.Sleep(freezeAt)
		from, _ := tpcctest.StallBackends(t, ctx, dsn, duration-freezeAt+limit+3*time.Second)
		frozen <- from
	}()
	steps, err := driver.Run(ctx, driver.Config{Runner: db.(engine.Runner), Mode: engine.ModeRoutines, Mix: tpcc.DefaultMix,
		Steps: []int{2}, Duration: duration, EdgeLimit: limit})
	from := <-frozen
	if err == nil || !strings.Contains(err.Error(), "did not answer the end of the step's measured interval within 1.5s") {
		t.Errorf("run on a frozen server: %v; want it failed, saying the server did not answer", err)
	}
	if len(steps) != 1 {
		t.Fatalf("%d steps; want the one the freeze cut short", len(steps))
	}
	s := steps[0]
	// The step ends at its last reading, taken before the backends stopped
	// (on a busy host they stop some time after freezeAt).
	if !s.ServerLost || !s.Interrupted || s.Seconds <= 0 || from.IsZero() || s.MeasureEnd.After(from) || s.TPM <= 0 || !s.NOPMCheck.OK {
		t.Errorf("server lost %v, interrupted %v, %.2f s measured, ending %s before the freeze, TPM %d, NOPM check %+v; want it kept from a reading before the freeze",
			s.ServerLost, s.Interrupted, s.Seconds, from.Sub(s.MeasureEnd), s.TPM, s.NOPMCheck)
	}
}
