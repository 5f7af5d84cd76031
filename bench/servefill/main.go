// Command servefill fills a results store with N finished TPC-C runs of
// three steps each, for bench/serve.sh to list (a bench tool, not part of
// tierbench).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/tierbench/tierbench/internal/results"
)

func main() {
	dir := flag.String("dir", "", "results directory to fill")
	n := flag.Int("runs", 1000, "runs to add")
	flag.Parse()
	if *dir == "" {
		log.Fatal("servefill: give -dir")
	}
	store, err := results.Open(*dir)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	for i := range *n {
		r, err := store.CreateRun(ctx, "tpcc", fmt.Sprintf("group-%d", i%10), map[string]any{"vus": []int{1, 2, 4}, "warehouses": 4})
		if err != nil {
			log.Fatal(err)
		}
		now := time.Now()
		for j, vus := range []int{1, 2, 4} {
			// A step's document of the size a real one has (its
			// transaction percentiles and telemetry aggregates).
			txn := map[string]any{}
			for _, k := range []string{"new_order", "payment", "order_status", "delivery", "stock_level"} {
				txn[k] = map[string]any{"count": 1000 * vus, "p50_ms": 1.2, "p95_ms": 3.4, "p99_ms": 5.6, "p999_ms": 9.1, "max_ms": 20.5}
			}
			m, _ := json.Marshal(map[string]any{"vus": vus, "nopm": 5000*vus + i, "tpm": 11000 * vus, "txn": txn,
				"host":   map[string]float64{"cpu_idle_pct": 40, "cpu_user_pct": 40, "cpu_system_pct": 15, "cpu_iowait_pct": 5},
				"device": map[string]float64{"r_iops": 100, "w_iops": 900, "r_await_ms": 0.2, "w_await_ms": 0.8}})
			if err := store.AddStep(ctx, results.Step{RunID: r.ID, Index: j, Name: fmt.Sprintf("vus=%d", vus),
				StartedAt: now, MeasureStart: now, MeasureEnd: now.Add(time.Minute), Metrics: m}); err != nil {
				log.Fatal(err)
			}
		}
		if err := store.FinishRun(ctx, r.ID, results.StatusComplete, map[string]any{"run_id": r.ID}); err != nil {
			log.Fatal(err)
		}
	}
}
