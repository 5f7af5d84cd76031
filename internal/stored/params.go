package stored

import (
	"encoding/json"
	"fmt"

	"github.com/tierbench/tierbench/internal/units"
)

// Noisy is how a run judges its TPC-C steps, disk points or backup phases
// measured on a noisy host (the telemetry's judgement), as its parameters
// store it.
type Noisy struct {
	// Limits: zero is the experiment's default (telemetry.DefaultNoisy); a
	// negative limit leaves its check out.
	Limits NoisyLimits `json:"noisy_limits"`
	// Discard leaves noisy repetitions out of the means and intervals
	// (they stay stored and listed).
	Discard bool `json:"discard_noisy,omitempty"`
}

// Placement is what a run's stored parameters say of the scenario it runs
// in; the report reads it. Target is the scenario target (the tier) under
// its own key, since backup and disk runs use "target" for a path.
type Placement struct {
	Label    string   `json:"label,omitempty"`         // the run's name in reports ("": its id)
	Instance string   `json:"instance,omitempty"`      // the server instance, when several run side by side
	Host     string   `json:"scenario_host,omitempty"` // the scenario host the instance runs on ("": the controller)
	Role     string   `json:"role,omitempty"`          // what the instance does meanwhile, a run kind: KindTPCC beside KindBackup
	Phase    string   `json:"phase,omitempty"`         // which part of a side-by-side experiment, e.g. "baseline"
	Target   string   `json:"scenario_target,omitempty"`
	Tier     string   `json:"tier,omitempty"`   // an emulated tier's limits ("": a real one)
	Limits   *Applied `json:"limits,omitempty"` // the server's memory cap and throttles, as read back
	Memory   int64    `json:"server_memory_bytes,omitempty"`
	// SchemaFrom says how the server got its TPC-C schema when it did not
	// load it itself: copied cold from another server's data directory.
	SchemaFrom string `json:"schema_from,omitempty"`
}

// TPCCParams is what the store keeps of a TPC-C run's parameters: all that
// is needed to repeat it, the DSN without its password.
type TPCCParams struct {
	DSN        string `json:"dsn"`
	Engine     string `json:"engine"`
	Warehouses int    `json:"warehouses"`
	VUs        []int  `json:"vus"`
	RampUp     string `json:"rampup"`
	Duration   string `json:"duration"`
	Repeat     int    `json:"repeat"`
	BackToBack bool   `json:"back_to_back,omitempty"`
	// How noisy steps were judged, and whether the run's means left them
	// out.
	Noisy
	Mode           string `json:"mode"`
	Mix            string `json:"mix"`
	AllWarehouses  bool   `json:"all_warehouses"`
	KeyingThinking bool   `json:"keying_thinking"`
	// ThinkTime is a closed loop's mean think time of its own, if any.
	ThinkTime string `json:"think_time,omitempty"`
	Retry     int    `json:"retry"`
	Seed      uint64 `json:"seed"`
	// An open loop's offered rates (transactions a minute, one step each),
	// arrival process and lateness bound; none in a closed loop's.
	Rates     []float64 `json:"rates,omitempty"`
	Arrival   string    `json:"arrival,omitempty"`
	LateAfter string    `json:"late_after,omitempty"`
	// RateFractions, when the rates were given as percentages of a
	// maximum, are those (Rates are then what they came to), measured by
	// a closed-loop step of Probe.
	RateFractions []float64 `json:"rate_fractions_pct,omitempty"`
	Probe         string    `json:"probe,omitempty"`
	KneeP99       string    `json:"knee_p99,omitempty"`
	Placement
}

// Pacing says how a closed loop's VUs were paced, as a clause to follow a
// run's other parameters: ", keying and think times of clause 5.2.5", ",
// think time 2ms a VU (mean)", or "" at full speed.
func (p *TPCCParams) Pacing() string {
	switch {
	case p.KeyingThinking:
		return ", keying and think times of clause 5.2.5"
	case p.ThinkTime != "":
		return ", think time " + p.ThinkTime + " a VU (mean)"
	}
	return ""
}

// DiskParams is what the store keeps of a disk run's parameters. Stores
// written before IOEngine had its own key named it "engine" (LegacyIOEngine);
// the report reads both.
type DiskParams struct {
	Profile    string `json:"profile"`
	Target     string `json:"target"`
	TargetKind string `json:"target_kind"`
	File       string `json:"file"`
	Size       int64  `json:"size"`
	IOEngine   string `json:"ioengine"`
	// LegacyIOEngine is fio's ioengine under the key stores written before
	// the rename gave it; never written.
	LegacyIOEngine string `json:"engine,omitempty"`
	Direct         bool   `json:"direct"`
	Duration       string `json:"duration"`
	Ramp           string `json:"ramp"`
	SteadyState    string `json:"steady_state,omitempty"`
	Repeat         int    `json:"repeat"`
	BackToBack     bool   `json:"back_to_back,omitempty"`
	Placement
	Fio        string      `json:"fio"`
	FioVersion string      `json:"fio_version"`
	Points     []PointSpec `json:"points"`
	// RateFractions: the points ran uncapped, then at these percentages
	// of what each did; KneeP99 bounded the knee of their rates.
	RateFractions []float64 `json:"rate_fractions_pct,omitempty"`
	KneeP99       string    `json:"knee_p99,omitempty"`
	// Servers are the fio servers the points ran on at once ("": the
	// controller's own fio on Target).
	Servers []FioServer `json:"fio_servers,omitempty"`
	// How noisy points were judged, and whether the run's means left
	// them out.
	Noisy
}

// PointSpec is a disk point's spec as a disk run's parameters keep it:
// fio's point spec (fio.Spec), which fio validates and turns into a job.
type PointSpec struct {
	Name       string `json:"name"`
	BS         int64  `json:"bs"` // bytes
	RW         string `json:"rw"`
	RWMixRead  int    `json:"rwmix_read,omitempty"` // percent reads, randrw only
	IODepth    int    `json:"iodepth"`
	Jobs       int    `json:"jobs"`
	RateIOPS   int    `json:"rate_iops,omitempty"` // per job, as fio's rate_iops
	CompressPc int    `json:"compress_pct,omitempty"`
	DedupePc   int    `json:"dedupe_pct,omitempty"`
}

// FioServer is a fio server a disk run's points ran on, as its parameters
// keep it (fio.Server).
type FioServer struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
	Port int    `json:"port"`
}

// BackupParams is what the store keeps of a backup run's parameters.
type BackupParams struct {
	DSN        string `json:"dsn"`
	Engine     string `json:"engine"`
	Warehouses int    `json:"warehouses,omitempty"`
	Target     string `json:"target"`
	DataDir    string `json:"datadir,omitempty"`
	Cycles     int    `json:"cycles"`
	Repeat     int    `json:"repeat"`   // the run has Cycles × Repeat cycles
	Spacing    string `json:"interval"` // the stored key of the cycle spacing
	Method     string `json:"method"`
	Jobs       int    `json:"jobs,omitempty"`
	Verify     bool   `json:"verify"`
	Keep       bool   `json:"keep"`
	IOGroup    string `json:"io_group,omitempty"`
	IONote     string `json:"io_note,omitempty"`
	MemoryMax  int64  `json:"memory_max_bytes,omitempty"`
	Placement
	// How noisy phases were judged, and whether the run's figures left
	// them out.
	Noisy
}

// DurabilityParams is what the store keeps of a durability run. The fault
// and recovery commands are not kept: they may hold secrets.
type DurabilityParams struct {
	DSN            string  `json:"dsn,omitempty"`
	Managed        string  `json:"managed,omitempty"`
	Engine         string  `json:"engine"`
	Warehouses     int     `json:"warehouses"`
	Cycles         int     `json:"cycles"`
	VUs            int     `json:"vus"`
	Rate           float64 `json:"rate,omitempty"` // transactions a minute offered to the VUs as a pool; none: a closed loop
	RunBeforeFault string  `json:"run_before_fault"`
	Fault          string  `json:"fault"`
	RecoverCommand bool    `json:"recover_command"`
	Mode           string  `json:"mode"`
	Seed           uint64  `json:"seed"`
	ColdCache      bool    `json:"cold_cache,omitempty"` // the data directory dropped from the page cache after each fault
	// LogDir is where the cycles' success logs go (not stored: it is the
	// results directory's durability-RUN).
	LogDir string `json:"-"`
	Placement
}

// FaultText names the fault in words: "kill", or "kill, cold cache" when
// the data directory left the page cache after it.
func (p *DurabilityParams) FaultText() string {
	if p.ColdCache {
		return p.Fault + ", cold cache"
	}
	return p.Fault
}

// LoadText names the TPC-C load between faults in words: "4 VUs in a
// closed loop", or "12,000 TPM offered to 8 VUs".
func (p *DurabilityParams) LoadText() string {
	vus := units.Plural(p.VUs, "VU", "VUs")
	if p.Rate > 0 {
		return units.Thousands(int64(p.Rate)) + " TPM offered to " + vus
	}
	return vus + " in a closed loop"
}

// MonitorParams is what the store keeps of a monitor's parameters.
type MonitorParams struct {
	Target   string `json:"target"`
	Interval string `json:"interval"`
	Duration string `json:"duration"`
	DSN      string `json:"dsn"`
}

// SpaceParams is what the store keeps of a space run's parameters.
type SpaceParams struct {
	Target     string  `json:"target"`
	Block      int     `json:"block_bytes"`
	KeepBelow  float64 `json:"compress_keep_below"`
	ZstdSample int     `json:"zstd_sample"` // 0: automatic; the step taken is the result's compression.zstd.sample_every
	Placement
}

// Params are a run's stored parameters read back as its kind's type: the
// field of the run's kind is set, the others nil (all of them for a kind
// this version does not know). Placement and Noisy are read for every kind,
// as the keys they have inline in any kind's parameters: a kind that has
// none leaves them zero.
type Params struct {
	TPCC       *TPCCParams
	Disk       *DiskParams
	Backup     *BackupParams
	Durability *DurabilityParams
	Monitor    *MonitorParams
	Space      *SpaceParams
	TPCH       *TPCHParams

	Placement Placement
	Noisy     Noisy
}

// DecodeParams reads a run's stored parameters (the results store's
// Run.Params) as the type of its kind.
func DecodeParams(kind string, raw []byte) (Params, error) {
	var p Params
	if len(raw) == 0 {
		return p, nil
	}
	var common struct {
		Placement
		Noisy
	}
	if err := json.Unmarshal(raw, &common); err != nil {
		return Params{}, fmt.Errorf("%s parameters: %w", kind, err)
	}
	p.Placement, p.Noisy = common.Placement, common.Noisy
	var v any
	switch kind {
	case KindTPCC:
		p.TPCC = &TPCCParams{}
		v = p.TPCC
	case KindDisk:
		p.Disk = &DiskParams{}
		v = p.Disk
	case KindBackup:
		p.Backup = &BackupParams{}
		v = p.Backup
	case KindDurability:
		p.Durability = &DurabilityParams{}
		v = p.Durability
	case KindMonitor:
		p.Monitor = &MonitorParams{}
		v = p.Monitor
	case KindSpace:
		p.Space = &SpaceParams{}
		v = p.Space
	case KindTPCH:
		p.TPCH = &TPCHParams{}
		v = p.TPCH
	default:
		return p, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return Params{}, fmt.Errorf("%s parameters: %w", kind, err)
	}
	return p, nil
}

// Engine is the database engine the run drove ("" for the kinds that drive
// none, and for parameters that do not say).
func (p Params) Engine() string {
	switch {
	case p.TPCC != nil:
		return p.TPCC.Engine
	case p.Backup != nil:
		return p.Backup.Engine
	case p.Durability != nil:
		return p.Durability.Engine
	case p.TPCH != nil:
		return p.TPCH.Engine
	}
	return ""
}
