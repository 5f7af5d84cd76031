// Package stored holds the documents tierbench keeps in its results store,
// each as the one Go type its writer marshals and the report decodes: a
// TPC-C step, a disk point, a backup or restore phase, a durability cycle,
// the per-host figures each of them carries, a run's parameters with its
// scenario placement, and the run kinds. Beside them are the pure folds
// over repetitions that both a run and the report compute: which
// repetitions count, and their grouping into one step, point or phase kind.
//
// It is a leaf: it imports no workload, engine, server or database driver,
// so that the report, which reads the store, imports none of them either.
package stored

// Run kinds, as the results store records them (results.Run.Kind).
const (
	KindTPCC       = "tpcc"
	KindDisk       = "disk"
	KindBackup     = "backup"
	KindDurability = "durability"
	KindMonitor    = "monitor"
	KindSpace      = "space" // what dedup, compression and erasure coding would save
	KindTPCH       = "tpch"  // the analytic workload's power and throughput tests
)
