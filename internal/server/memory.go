package server

import "strconv"

// MaxConnections is the max_connections of every managed server: enough for
// the largest virtual-user step of the reference method (89, or 128 in the
// stress test) plus build workers and monitoring, with room to spare.
const MaxConnections = 300

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// MemorySettings sizes PostgreSQL from one number, the memory M (bytes) the
// server is meant to have, the way the white papers size a database VM:
//
//	shared_buffers       = M/4
//	effective_cache_size = 3M/4
//	maintenance_work_mem = M/16, clamped to [64MB, 2GB]
//	work_mem             = M/(4*max_connections), clamped to [4MB, 256MB]
//
// work_mem's rule lets a quarter of M go to sorts and hashes if every one of
// the MaxConnections connections ran one at once; a TPC-H session, one of
// a few at once, raises its own (postgres.TPCHWorkMem: M/32 alone, with M
// read back as 4 × shared_buffers). Values are rounded down to
// whole kB and written in the largest of kB, MB or GB that is exact. M <= 0
// means "not set": nil, and PostgreSQL keeps its defaults.
func MemorySettings(m int64) map[string]string {
	if m <= 0 {
		return nil
	}
	return map[string]string{
		"shared_buffers":       pgSize(m / 4),
		"effective_cache_size": pgSize(m / 4 * 3),
		"maintenance_work_mem": pgSize(clamp(m/16, 64*mib, 2*gib)),
		"work_mem":             pgSize(clamp(m/(4*MaxConnections), 4*mib, 256*mib)),
	}
}

func clamp(v, lo, hi int64) int64 {
	return max(lo, min(v, hi))
}

// pgSize writes bytes as PostgreSQL's memory units (kB, MB, GB; 1024-based).
func pgSize(b int64) string {
	kb := b / kib
	switch {
	case kb > 0 && kb%(1<<20) == 0:
		return strconv.FormatInt(kb>>20, 10) + "GB"
	case kb > 0 && kb%(1<<10) == 0:
		return strconv.FormatInt(kb>>10, 10) + "MB"
	default:
		return strconv.FormatInt(kb, 10) + "kB"
	}
}
