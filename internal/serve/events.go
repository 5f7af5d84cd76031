package serve

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/tpcc"
)

// An event is one of a run's observer events as the event stream sends it:
// its number in the run's stream (from 1, the SSE id), its name (tick,
// progress, result, note or done) and its JSON.
type event struct {
	ID   int
	Name string
	Data []byte
}

// maxEvents bounds what a log keeps for replay: ten hours of one-second
// ticks. A client that asks for older events gets those still kept.
const maxEvents = 36_000

// eventLog is one run's (or scenario's) events, kept for clients that
// follow it now and for those that reconnect with Last-Event-ID.
type eventLog struct {
	mu     sync.Mutex
	events []event
	first  int           // the ID of events[0]
	next   int           // the ID the next event gets
	done   bool          // a done event was added: nothing follows
	wake   chan struct{} // closed and replaced at each event
	limit  int           // how many events it keeps
}

func newEventLog() *eventLog {
	return &eventLog{first: 1, next: 1, wake: make(chan struct{}), limit: maxEvents}
}

// add appends an event whose data is v marshalled; nothing after done.
func (l *eventLog) add(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	l.events = append(l.events, event{ID: l.next, Name: name, Data: data})
	l.next++
	if len(l.events) > l.limit {
		drop := len(l.events) - l.limit
		l.events = append(l.events[:0:0], l.events[drop:]...)
		l.first += drop
	}
	l.done = name == "done"
	close(l.wake)
	l.wake = make(chan struct{})
}

// after returns the events after id, whether the log is done, and a
// channel closed at the next event.
func (l *eventLog) after(id int) ([]event, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := max(id+1-l.first, 0)
	if i > len(l.events) {
		i = len(l.events)
	}
	return l.events[i:len(l.events):len(l.events)], l.done, l.wake
}

// observer turns an experiment's events into the log's.
type observer struct {
	log *eventLog
	// started is called with each run's id as the store records it (a
	// scenario records several).
	started func(runID string)
}

func (o *observer) Note(msg string) { o.log.add("note", map[string]string{"msg": msg}) }

func (o *observer) Started(s experiment.Started) {
	if o.started != nil {
		o.started(s.RunID)
	}
	o.log.add("progress", map[string]any{"started": map[string]any{"run_id": s.RunID, "kind": s.Kind, "params": s.Params}})
}

func (o *observer) Progress(p experiment.Progress) {
	m := map[string]any{}
	switch {
	case p.Build != nil:
		m["build"] = map[string]any{"phase": p.Build.Phase, "warehouses_done": p.Build.WarehousesDone, "warehouses": p.Build.Warehouses,
			"rows": p.Build.Rows, "bytes": p.Build.Bytes, "fraction": p.Build.Fraction}
	case p.Layout != nil:
		m["layout"] = map[string]any{"file": p.Layout.File, "have_bytes": p.Layout.Have, "want_bytes": p.Layout.Want}
	case p.Point != nil:
		m["point"] = map[string]any{"index": p.Point.Index, "count": p.Point.Count, "name": p.Point.Spec.Name,
			"ramp_s": p.Point.Ramp.Seconds(), "duration_s": p.Point.Duration.Seconds()}
	case p.Phase != nil:
		m["phase"] = map[string]any{"cycle": p.Phase.Cycle, "cycles": p.Phase.Cycles, "phase": p.Phase.Phase, "elapsed_s": p.Phase.Elapsed.Seconds()}
	case p.Cycle != nil:
		m["cycle"] = map[string]any{"cycle": p.Cycle.Cycle, "cycles": p.Cycle.Cycles, "elapsed_s": p.Cycle.Elapsed.Seconds(),
			"acknowledged": p.Cycle.Acknowledged}
	case p.Scan != nil:
		m["scan"] = p.Scan
	}
	if p.Telemetry != nil {
		m["telemetry"] = sampleDoc(p.Telemetry)
	}
	o.log.add("progress", m)
}

func (o *observer) Tick(t experiment.Tick) { o.log.add("tick", tickDoc(t)) }

func (o *observer) Result(r experiment.Result) {
	m := map[string]any{}
	switch {
	case r.TPCC != nil:
		m["tpcc"] = r.TPCC
		notes(m, r.TPCC.Notes())
	case r.TPCHQuery != nil:
		m["tpch"] = r.TPCHQuery
	case r.Point != nil:
		m["point"] = r.Point
		notes(m, r.Point.Notes())
	case r.Phase != nil:
		m["phase"] = r.Phase
	case r.Cycle != nil:
		m["cycle"] = r.Cycle
	case r.Build != nil:
		m["build"] = r.Build
	case r.Check != nil:
		m["check"] = r.Check
	}
	if len(r.Thresholds) > 0 {
		m["thresholds"] = r.Thresholds
	}
	o.log.add("result", m)
}

// notes adds a step's or point's sentences, as the CLI prints them under
// its figures, to its result event.
func notes(m map[string]any, n []string) {
	if len(n) > 0 {
		m["notes"] = n
	}
}

// tickDoc is a tick as the event stream sends it: a TPC-C second's figures
// (when it is one) and the latest telemetry sample, one time axis for both.
func tickDoc(t experiment.Tick) map[string]any {
	m := map[string]any{}
	if x := t.TPCC; x != nil {
		txn := map[string]int64{}
		for k := range tpcc.NumKinds {
			txn[k.String()] = x.TxnPerSec[k]
		}
		var tpm any = x.TPM
		if x.NoTPM {
			tpm = nil // not taken this second (driver.Tick.NoTPM): the console skips it
		}
		m["t"] = x.T
		d := map[string]any{"step": x.Step, "steps": x.Steps, "repetition": x.Rep, "repeat": x.Repeat, "vus": x.VUs,
			"phase": x.Phase, "elapsed_s": x.Elapsed.Seconds(), "tpm": tpm, "nopm": x.NOPM, "client_tpm": x.ClientTPM,
			"new_order_p50_ms": x.NewOrderP50Ms, "new_order_p95_ms": x.NewOrderP95Ms, "new_order_p99_ms": x.NewOrderP99Ms,
			"txn_per_s": txn}
		if x.OfferedTPM > 0 { // an open loop's
			d["offered_tpm"], d["late"], d["queue"] = x.OfferedTPM, x.Late, x.Queue
		}
		m["tpcc"] = d
	}
	if t.Telemetry != nil {
		if _, ok := m["t"]; !ok {
			m["t"] = t.Telemetry.T
		}
		m["telemetry"] = sampleDoc(t.Telemetry)
	}
	return m
}

// sampleDoc is a telemetry sample with the keys the stored aggregates use:
// CPU (and its split between the workload, the kernel and other
// processes), the target's devices and their sum, each node_exporter host,
// the database's figures.
func sampleDoc(s *telemetry.Sample) map[string]any {
	m := map[string]any{"t": s.T, "interval_s": s.Interval.Seconds(), "cpu": s.CPU, "memory": s.Memory}
	if s.ServerCPUPct >= 0 {
		m["server_cpu_pct"] = s.ServerCPUPct
	}
	if s.Shares != nil {
		m["cpu_split"] = map[string]float64{"workload_pct": s.Shares.WorkloadPct, "kernel_pct": s.Shares.KernelPct,
			"other_pct": s.Shares.ForeignPct}
	}
	if s.Total != nil {
		m["device"] = s.Total
	}
	if len(s.Devices) > 0 {
		m["devices"] = s.Devices
	}
	if s.Latency != nil {
		m["device_latency"] = s.Latency
	}
	if len(s.DB) > 0 {
		m["db"] = s.DB
	}
	if len(s.Hosts) > 0 {
		hosts := make([]map[string]any, len(s.Hosts))
		for i, h := range s.Hosts {
			hosts[i] = map[string]any{"host": h.Host, "up": h.Up}
			if h.Up {
				hosts[i]["cpu"], hosts[i]["devices"] = h.CPU, h.Devices
			}
		}
		m["hosts"] = hosts
	}
	return m
}

// doneDoc is the last event of a run: its status, its outcome and, when it
// did not succeed, why.
type doneDoc struct {
	Status  string    `json:"status"`
	Outcome string    `json:"outcome"`
	Error   string    `json:"error,omitempty"`
	Runs    []string  `json:"runs,omitempty"` // a scenario's runs
	At      time.Time `json:"at"`
}
