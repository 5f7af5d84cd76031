package durability

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/internal/driver"
	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// Fault causes a failure and recovers from it.
type Fault interface {
	// Cause causes the failure while the virtual users run.
	Cause(ctx context.Context) error
	// Recover does what brings the database back (start it, run the
	// user's command); Run then waits until the database answers.
	Recover(ctx context.Context) error
}

// Config describes a durability test.
type Config struct {
	// Open opens the database; it is called again after each recovery.
	Open   func(ctx context.Context) (engine.DB, error)
	Cycles int
	VUs    int
	// Rate, when above 0, offers TPC-C at that many transactions a minute
	// (Poisson arrivals) to the VUs as one pool, as tpcc run --rate does:
	// the fault then hits the load a user sets rather than saturation.
	Rate           float64
	RunBeforeFault time.Duration // TPC-C time before each fault
	Fault          Fault
	// RecoverTimeout bounds the wait for the database to answer after a
	// fault's recovery.
	RecoverTimeout time.Duration
	LogDir         string // the success logs go here, one per cycle
	Mode           string // engine.ModeRoutines or engine.ModeStatements
	Seed           uint64 // 0: random

	// OnProgress is called about once a second while TPC-C runs.
	OnProgress func(cycle int, elapsed time.Duration, acked int64)
	// OnCycle is called with each finished cycle's result.
	OnCycle func(*stored.DurabilityCycle)
	// BeforeVerify runs between recovery and verification; tests use it to
	// make the database lose an order.
	BeforeVerify func(ctx context.Context, acks []tpcc.Ack) error
}

// maxViolations bounds the violations a cycle result lists.
const maxViolations = 20

// ErrInterrupted is returned (wrapped) when ctx ended before every cycle
// finished; the finished cycles are still returned.
var ErrInterrupted = errors.New("durability test interrupted")

// Run runs the cycles in turn.
func Run(ctx context.Context, cfg Config) ([]*stored.DurabilityCycle, error) {
	if cfg.RecoverTimeout <= 0 {
		cfg.RecoverTimeout = 10 * time.Minute
	}
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	seeds := tpcc.NewRand(cfg.Seed)
	var out []*stored.DurabilityCycle
	for i := 1; i <= cfg.Cycles; i++ {
		res, err := runCycle(ctx, &cfg, i, seeds.Uint64())
		if err != nil {
			if ctx.Err() != nil {
				return out, fmt.Errorf("%w in cycle %d", ErrInterrupted, i)
			}
			return out, fmt.Errorf("cycle %d: %w", i, err)
		}
		out = append(out, res)
		if cfg.OnCycle != nil {
			cfg.OnCycle(res)
		}
	}
	return out, nil
}

func runCycle(ctx context.Context, cfg *Config, cycle int, seed uint64) (*stored.DurabilityCycle, error) {
	res := &stored.DurabilityCycle{Cycle: cycle, ExcessBound: int64(cfg.VUs), StartedAt: time.Now()}
	db, err := cfg.Open(ctx)
	if err != nil {
		return nil, err
	}
	runner, ok := db.(engine.Runner)
	if !ok {
		db.Close()
		return nil, errors.New("this engine cannot run TPC-C")
	}
	c1, err := runner.Counters(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	res.Count1 = c1.SumNextOID

	log, err := CreateLog(filepath.Join(cfg.LogDir, fmt.Sprintf("cycle-%02d.log", cycle)))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("creating the success log: %w", err)
	}
	res.Log = log.Path()
	ran, faultErr := runUntilFault(ctx, cfg, cycle, seed, runner, log)
	res.FaultAt = res.StartedAt.Add(ran)
	res.RanSeconds = ran.Seconds()
	logErr := log.Close()
	db.Close()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case faultErr != nil:
		return nil, faultErr
	case logErr != nil:
		return nil, logErr
	}

	recovered := time.Now()
	if err := cfg.Fault.Recover(ctx); err != nil {
		return nil, fmt.Errorf("recovering: %w", err)
	}
	db, c2, err := waitForDatabase(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	res.RecoverySeconds = time.Since(recovered).Seconds()
	res.Count2 = c2.SumNextOID
	acks, err := ReadLog(res.Log)
	if err != nil {
		return nil, err
	}
	if cfg.BeforeVerify != nil {
		if err := cfg.BeforeVerify(ctx, acks); err != nil {
			return nil, err
		}
	}
	verifier, ok := db.(engine.OrderVerifier)
	if !ok {
		return nil, errors.New("this engine cannot verify acknowledged orders")
	}
	bad, err := verifier.VerifyOrders(ctx, acks)
	if err != nil {
		return nil, err
	}
	check, err := db.CheckTPCC(ctx, engine.CheckOptions{Seed: seed})
	if err != nil {
		return nil, fmt.Errorf("checking consistency: %w", err)
	}
	judge(res, acks, bad, check)
	return res, nil
}

// runUntilFault runs TPC-C with the success log for cfg.RunBeforeFault,
// causes the fault while the virtual users run, then stops them. It
// returns how long TPC-C ran before the fault.
func runUntilFault(ctx context.Context, cfg *Config, cycle int, seed uint64, runner engine.Runner, log *Log) (time.Duration, error) {
	var acked atomic.Int64
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	started := time.Now()
	done := make(chan error, 1)
	go func() {
		dc := driver.Config{
			Runner: runner, Mode: cfg.Mode, Steps: []int{cfg.VUs}, Duration: 1000 * time.Hour,
			Mix: tpcc.DefaultMix, Seed: seed,
			OnNewOrder: func(in *tpcc.NewOrderInput, out tpcc.NewOrderOutput) {
				log.Append(tpcc.NewAck(in, out))
				acked.Add(1)
			},
			OnTick: func(driver.Tick) {
				if cfg.OnProgress != nil {
					cfg.OnProgress(cycle, time.Since(started), acked.Load())
				}
			},
		}
		if cfg.Rate > 0 {
			dc.Rates = []float64{cfg.Rate}
		}
		_, err := driver.Run(runCtx, dc)
		done <- err
	}()
	timer := time.NewTimer(cfg.RunBeforeFault)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		stop()
		<-done
		return time.Since(started), ctx.Err()
	case err := <-done:
		return time.Since(started), fmt.Errorf("TPC-C stopped before the fault: %w", err)
	case <-timer.C:
	}
	ran := time.Since(started)
	// The virtual users keep running while the fault happens: what they had
	// in flight dies with the server. Whatever still runs afterwards (a
	// command fault need not stop the server) is cut off: at most one
	// unacknowledged commit per virtual user.
	faultErr := cfg.Fault.Cause(ctx)
	stop()
	<-done
	if faultErr != nil {
		return ran, fmt.Errorf("causing the fault: %w", faultErr)
	}
	return ran, nil
}

// waitForDatabase opens the database and reads its counters until both
// work, cfg.RecoverTimeout passes, or ctx ends.
func waitForDatabase(ctx context.Context, cfg *Config) (engine.DB, engine.Counters, error) {
	deadline := time.Now().Add(cfg.RecoverTimeout)
	for {
		db, err := cfg.Open(ctx)
		if err == nil {
			c, cerr := db.(engine.Runner).Counters(ctx)
			if cerr == nil {
				return db, c, nil
			}
			err = cerr
			db.Close()
		}
		if ctx.Err() != nil {
			return nil, engine.Counters{}, ctx.Err()
		}
		if time.Now().After(deadline) {
			return nil, engine.Counters{}, fmt.Errorf("the database did not answer within %s of recovery (last error: %v); "+
				"give a --recover-command that restarts it, or a longer --recover-timeout", cfg.RecoverTimeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// judge fills in the verdict of a cycle: every committed New-Order found,
// no rolled-back one, the order count grown by the committed ones plus at
// most one in flight per virtual user, and consistency.
func judge(res *stored.DurabilityCycle, acks, bad []tpcc.Ack, check *tpcc.CheckResult) {
	for _, a := range acks {
		if a.RolledBack {
			res.RolledBack++
		} else {
			res.Committed++
		}
	}
	res.Acknowledged = res.Committed + res.RolledBack
	for _, a := range bad {
		if a.RolledBack {
			res.RolledBackFound++
		} else {
			res.Lost++
		}
	}
	res.Found = res.Committed - res.Lost
	res.Violations = bad[:min(len(bad), maxViolations)]
	res.Excess = res.Count2 - res.Count1 - res.Committed
	res.Consistency = check.OK
	for _, c := range check.Conditions {
		if !c.OK {
			res.Failed = append(res.Failed, c.ID)
		}
	}
	if res.Lost > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("%d committed New-Orders lost", res.Lost))
	}
	if res.RolledBackFound > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("%d rolled-back New-Orders present", res.RolledBackFound))
	}
	if res.Excess < 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("sum(d_next_o_id) grew by %d fewer than the committed New-Orders", -res.Excess))
	} else if res.Excess > res.ExcessBound {
		res.Problems = append(res.Problems, fmt.Sprintf("%d orders committed but never acknowledged, more than the %d virtual users had in flight", res.Excess, res.ExcessBound))
	}
	if !res.Consistency {
		res.Problems = append(res.Problems, fmt.Sprintf("consistency conditions fail: %v", res.Failed))
	}
	res.OK = len(res.Problems) == 0
}

// Totals sums the cycles: the `total` of `durability --json`.
type Totals struct {
	Cycles          int     `json:"cycles"`
	Acknowledged    int64   `json:"acknowledged"`
	Committed       int64   `json:"committed"`
	Found           int64   `json:"found"`
	Lost            int64   `json:"lost"`
	RolledBackFound int64   `json:"rolled_back_found"`
	MaxExcess       int64   `json:"max_excess"`
	MinRecovery     float64 `json:"min_recovery_seconds"`
	MaxRecovery     float64 `json:"max_recovery_seconds"`
	FailedCycles    int     `json:"failed_cycles"`
	OK              bool    `json:"ok"`
}

// Total sums results.
func Total(results []*stored.DurabilityCycle) Totals {
	t := Totals{Cycles: len(results), OK: true}
	for i, r := range results {
		t.Acknowledged += r.Acknowledged
		t.Committed += r.Committed
		t.Found += r.Found
		t.Lost += r.Lost
		t.RolledBackFound += r.RolledBackFound
		t.MaxExcess = max(t.MaxExcess, r.Excess)
		if i == 0 || r.RecoverySeconds < t.MinRecovery {
			t.MinRecovery = r.RecoverySeconds
		}
		t.MaxRecovery = max(t.MaxRecovery, r.RecoverySeconds)
		if !r.OK {
			t.FailedCycles++
			t.OK = false
		}
	}
	return t
}
