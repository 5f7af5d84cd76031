package fio

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// platVal is the latency (ns) fio's json+ prints for histogram bin idx
// (stat.c plat_idx_to_val, FIO_IO_U_PLAT_BITS 6): bins are exact up to
// 128 ns, then 64 per power of two, each named by its middle.
func platVal(idx int) int64 {
	if idx < 128 {
		return int64(idx)
	}
	errBits := idx>>6 - 1
	base := int64(1) << (errBits + 6)
	return base + int64((float64(idx%64)+0.5)*float64(int64(1)<<errBits))
}

// benchBins is a realistic direction of a 60-second job: about 700
// non-empty bins from 20 µs to 20 ms, 1.2 million IOs.
func benchBins(rng *rand.Rand) (string, uint64) {
	var b strings.Builder
	var n uint64
	for idx := 700; idx < 1400; idx++ { // platVal(700) ≈ 21 µs, platVal(1400) ≈ 21 ms
		c := uint64(rng.IntN(3400))
		if c == 0 {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"%d": %d`, platVal(idx), c)
		n += c
	}
	return b.String(), n
}

// benchClients is the json+ output of a fio client that ran 8 jobs on
// each of hosts servers, and the same 32 jobs as one local fio's "jobs".
func benchClients(hosts, jobs int) (client, local []byte, servers []Server) {
	rng := rand.New(rand.NewPCG(1, 2))
	var entries, plain []string
	for h := range hosts {
		s := Server{Name: fmt.Sprintf("h%d", h+1), Addr: fmt.Sprintf("10.0.0.%d", h+1), Port: DefaultServerPort}
		servers = append(servers, s)
		for range jobs {
			rb, rn := benchBins(rng)
			wb, wn := benchBins(rng)
			read := dirJSON(float64(rn)/60, float64(rn)*4096/60, rn, 300_000, 20_000_000, rb)
			write := dirJSON(float64(wn)/60, float64(wn)*4096/60, wn, 800_000, 20_000_000, wb)
			plain = append(plain, jobJSON("4k-randrw70-qd8x8", 0, read, write, 60000, 5, 10, ""))
			entries = append(entries, jobJSON("4k-randrw70-qd8x8", 0, read, write, 60000, 5, 10,
				fmt.Sprintf(`, "hostname": %q, "port": %d`, s.Addr, s.Port)))
		}
	}
	// fio's own sum names the first host and has no job options.
	sum := jobJSON("All clients", 0, idle, idle, 60000*hosts*jobs, 0, 0, `, "hostname": "10.0.0.1", "port": 8765`)
	entries = append(entries, strings.Replace(sum, `"job options": {"rw": "randrw"}, `, "", 1))
	client = []byte(`{"fio version": "fio-3.33", "client_stats": [` + strings.Join(entries, ",\n") + "]}\n")
	local = []byte(docJSON(plain...))
	return client, local, servers
}

// BenchmarkMergeHosts: what a point on 4 hosts × 8 jobs costs to merge,
// next to the same 32 jobs run by one local fio. "parse" includes decoding
// fio's JSON; "merge" is the merging alone (per host and aggregate for the
// client, aggregate alone for the local run): the aggregate over the hosts
// reads each job's bins once more, linear in the bins.
func BenchmarkMergeHosts(b *testing.B) {
	client, local, servers := benchClients(4, 8)
	b.Run("parse/client-4x8", func(b *testing.B) {
		b.SetBytes(int64(len(client)))
		for b.Loop() {
			if _, _, err := ParseClientOutput(client, servers); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parse/local-32", func(b *testing.B) {
		b.SetBytes(int64(len(local)))
		for b.Loop() {
			if _, err := ParseOutput(local); err != nil {
				b.Fatal(err)
			}
		}
	})
	var cout, lout fioOutput
	if err := json.Unmarshal(client, &cout); err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(local, &lout); err != nil {
		b.Fatal(err)
	}
	b.Run("merge/client-4x8", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := mergeClients(cout.Version, cout.Clients, servers); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("merge/local-32", func(b *testing.B) {
		for b.Loop() {
			if _, err := mergeJobs(lout.Version, lout.Jobs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The benchmark's documents merge to the same aggregate either way.
func TestBenchClientsAgree(t *testing.T) {
	client, local, servers := benchClients(4, 8)
	agg, hosts, err := ParseClientOutput(client, servers)
	if err != nil {
		t.Fatal(err)
	}
	one, err := ParseOutput(local)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 4 || agg.Jobs != 32 || one.Jobs != 32 || agg.Read.P99Ms != one.Read.P99Ms || agg.Read.IOs != one.Read.IOs ||
		!near(agg.Write.IOPS, one.Write.IOPS) || agg.RuntimeS != 60 {
		t.Errorf("client %+v / %+v, local %+v / %+v", agg, *agg.Read, one, *one.Read)
	}
}
