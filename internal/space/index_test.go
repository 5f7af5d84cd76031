package space

import (
	"runtime"
	"testing"
)

// splitmix is a stream of well-mixed 64-bit values, as hashes are.
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func TestIndex(t *testing.T) {
	x := newIndex()
	var s splitmix = 1
	var hs []hash128
	for range 100000 {
		hs = append(hs, hash128{lo: s.next(), hi: s.next()})
	}
	// The empty slot's marker and hashes that share a shard or a slot.
	hs = append(hs, hash128{}, hash128{lo: 0, hi: 1}, hash128{lo: 1, hi: 0}, hash128{lo: 1 << 40, hi: 0}, hash128{lo: 1, hi: 1 << 56})
	for i, h := range hs {
		if !x.add(h) {
			t.Fatalf("hash %d (%x) reported seen", i, h)
		}
	}
	for i, h := range hs {
		if x.add(h) {
			t.Fatalf("hash %d (%x) reported new twice", i, h)
		}
	}
	var n int
	for i := range x.shards {
		sh := &x.shards[i]
		n += sh.n
		if sh.n*4 > len(sh.slots)*3 || len(sh.slots)&(len(sh.slots)-1) != 0 {
			t.Errorf("shard %d: %d of %d slots used", i, sh.n, len(sh.slots))
		}
	}
	if n != len(hs)-1 { // {0, 0} is kept apart
		t.Errorf("%d hashes in the tables, want %d", n, len(hs)-1)
	}
	var slots int64
	for i := range x.shards {
		slots += int64(len(x.shards[i].slots))
	}
	if x.bytes.Load() != slots*slotBytes || x.peakBytes() < x.bytes.Load() || x.peakBytes() > x.bytes.Load()*5/4 {
		t.Errorf("bytes %d, peak %d, for %d slots", x.bytes.Load(), x.peakBytes(), slots)
	}
}

// TestIndexMemory measures the index over 2 million unique blocks (8 GiB
// of unique data at 4 KiB): the heap grows by what the index counts (its
// IndexBytes), which lies in the documented 21.3 to 42.7 bytes per block.
func TestIndexMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("short: 2 million hashes")
	}
	const n = 2_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := newIndex()
	var s splitmix = 7
	for range n {
		x.add(hash128{lo: s.next(), hi: s.next()})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	now := x.bytes.Load()
	t.Logf("%d unique blocks: heap +%d bytes (%.1f per block); index counts %d now (%.1f per block), %d at its peak",
		n, heap, float64(heap)/n, now, float64(now)/n, x.peakBytes())
	if d := float64(heap-now) / float64(now); d < -0.02 || d > 0.02 {
		t.Errorf("the heap grew by %d bytes, the index counts %d: %.1f%% apart", heap, now, 100*d)
	}
	if per := float64(now) / n; per < 21.3 || per > 42.7 {
		t.Errorf("%.1f bytes per block, outside 16/0.75 to 16/0.375", per)
	}
	runtime.KeepAlive(x)
}
