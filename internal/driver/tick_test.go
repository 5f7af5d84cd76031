package driver

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/metrics"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// A second of the measured interval at about 2,500 transactions a second
// (4 VUs, routines mode), latencies spread log-normally around 1.5 ms.
func BenchmarkEmitTick(b *testing.B) {
	const perSecond = 2500
	r := tpcc.NewRand(1)
	g := rand.New(rand.NewPCG(1, 2))
	deck := tpcc.NewMixDeck(tpcc.DefaultMix)
	kinds := make([]tpcc.Kind, perSecond)
	lat := make([]time.Duration, perSecond)
	for i := range kinds {
		kinds[i] = deck.Draw(r)
		lat[i] = time.Duration(1500 * math.Exp(g.NormFloat64()*0.8) * float64(time.Microsecond))
	}
	hist := metrics.NewRecorder(int(tpcc.NumKinds), int(tpcc.NewOrder))
	cfg := &Config{Steps: []int{4}}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for i, k := range kinds {
			hist.Record(int(k), lat[i], true, false)
		}
		b.StartTimer()
		emitTick(cfg, Tick{Step: 1, Steps: 1, Rep: 1, Repeat: 1, VUs: 4}, "measure", time.Now(), time.Second, time.Second, engine.Counters{}, engine.Counters{}, tpmSpan{100, time.Second}, hist)
	}
}
