package experiment

import (
	"encoding/json"
	"testing"

	"github.com/tierbench/tierbench/internal/fio"
)

// A disk run's parameters keep its points and fio servers as stored's own
// records of fio.Spec and fio.Server: every field of those must reach the
// store, under the key fio's types give it.
func TestStoredPointSpecs(t *testing.T) {
	spec := fio.Spec{Name: "p", BS: 4096, RW: "randrw", RWMixRead: 70, IODepth: 8, Jobs: 2, RateIOPS: 100, CompressPc: 50, DedupePc: 10}
	srv := fio.Server{Name: "h1", Addr: "10.0.0.1", Port: 8765}
	for _, tc := range []struct{ fio, stored any }{
		{[]fio.Spec{spec}, pointSpecs([]fio.Spec{spec})},
		{[]fio.Server{srv}, fioServers([]fio.Server{srv})},
	} {
		a, err := json.Marshal(tc.fio)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(tc.stored)
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Errorf("stored as %s; fio's is %s", b, a)
		}
	}
}
