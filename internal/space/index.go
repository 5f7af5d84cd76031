package space

import (
	"sync"
	"sync/atomic"
)

// The unique-block index is the scan's only memory that grows with the
// data: a set of 128-bit hashes, sharded 256 ways by the hash's top byte so
// that workers seldom wait for one another. Each shard is an open-addressing
// table (linear probing) of 16-byte slots, doubled when it is 3/4 full, so
// it holds one unique block in 16/0.75 = 21.3 to 16/0.375 = 42.7 bytes, 30
// on average over sizes (measured: TestIndexMemory). At 4 KiB blocks a TiB
// of unique data is 2^28 blocks: 5.3 to 10.7 GiB of index, 7.5 GiB typical.
// A Go map would take as much (a Swiss-table slot is 17 bytes at a load of
// 7/8 or less) but hides how much; this table knows its own size exactly,
// which Result.IndexBytes reports, and holds no pointers for the GC to scan.

const (
	shardBits    = 8
	shards       = 1 << shardBits
	initialSlots = 64 // per shard: 256 KiB for the whole index at first
	slotBytes    = 16
)

// hash128 is a block's content hash. {0, 0} marks an empty slot; a block
// whose hash is {0, 0} is remembered apart (shard.zero).
type hash128 struct{ lo, hi uint64 }

type index struct {
	shards [shards]shard
	bytes  atomic.Int64 // the tables' bytes now
	peak   atomic.Int64 // and at their largest, old and new tables both held while one grows
}

type shard struct {
	mu    sync.Mutex
	slots []hash128
	n     int      // slots in use
	zero  bool     // the hash {0, 0} was added
	_     [23]byte // to 64 bytes: a cache line of its own
}

func newIndex() *index {
	x := &index{}
	for i := range x.shards {
		x.shards[i].slots = make([]hash128, initialSlots)
	}
	x.bytes.Store(shards * initialSlots * slotBytes)
	x.peak.Store(x.bytes.Load())
	return x
}

// add records h and reports whether it is new.
func (x *index) add(h hash128) bool {
	s := &x.shards[h.hi>>(64-shardBits)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if h == (hash128{}) {
		added := !s.zero
		s.zero = true
		return added
	}
	if !s.insert(h) {
		return false
	}
	if s.n++; s.n*4 > len(s.slots)*3 {
		x.grow(s)
	}
	return true
}

// insert puts h in s's table unless it is there already (false); the
// caller counts it. The slot is picked by the hash's low bits, which the
// shard's choice (the top byte) leaves uniform.
func (s *shard) insert(h hash128) bool {
	mask := uint64(len(s.slots) - 1)
	for i := h.lo & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return false
		case hash128{}:
			s.slots[i] = h
			return true
		}
	}
}

// grow doubles s's table, counting both tables while the new one fills.
func (x *index) grow(s *shard) {
	old := s.slots
	s.slots = make([]hash128, 2*len(old))
	now := x.bytes.Add(int64(len(s.slots)) * slotBytes)
	for p := x.peak.Load(); now > p && !x.peak.CompareAndSwap(p, now); p = x.peak.Load() {
	}
	for _, h := range old {
		if h != (hash128{}) {
			s.insert(h)
		}
	}
	x.bytes.Add(-int64(len(old)) * slotBytes)
}

// peakBytes is the most memory the index's tables held at once.
func (x *index) peakBytes() int64 { return x.peak.Load() }
