// Package scenario reads scenario files — YAML that names the targets (storage
// to test), the managed servers on them and the steps to run — validates them
// with every problem reported at once at its line, applies a scale and --set
// overrides, and runs the steps in order over an Executor.
//
// The bundled scenarios (quick and the white paper's five experiments) are
// embedded from the repository's scenarios/ directory.
package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/units"
	"github.com/tierbench/tierbench/scenarios"
)

// Scenario is a parsed and validated scenario, with variables substituted and
// references (targets, servers, instances) checked.
type Scenario struct {
	Name    string            `json:"name"`
	Title   string            `json:"title"`
	Source  string            `json:"source"`  // the file, or scenarios/NAME.yaml for a bundled one
	Bundled bool              `json:"bundled"` // Source names an embedded file
	Scale   string            `json:"scale"`   // the scale applied; "" = the file's defaults
	Vars    map[string]string `json:"vars"`    // every variable's value after the scale and --set
	Scales  []string          `json:"scales"`  // the scales the file defines, in its order
	Hosts   []Host            `json:"hosts,omitempty"`
	Targets []Target          `json:"targets"`
	Servers []Server          `json:"servers"`
	Steps   []Step            `json:"steps"`
	// Repeat is how many times each measuring step (tpcc-run, disk,
	// backup, neighbours) repeats its measurement, unless the step says
	// otherwise: 1 when the file does not say.
	Repeat int `json:"repeat"`
}

// Repetitions is a measuring step's repetitions: Repeat times (from the
// step, or the scenario's), interleaved with the step's other points
// unless BackToBack (docs/statistics.md).
type Repetitions struct {
	Repeat     int  `json:"repeat"`
	BackToBack bool `json:"back_to_back,omitempty"`
}

// Target is a place to put data: a directory, optionally made its own device
// (a loop-backed image) and throttled to emulate a slower tier.
type Target struct {
	Name    string   `json:"name"`
	Path    string   `json:"path"` // created if missing; relative paths are relative to the working directory
	Emulate *Emulate `json:"emulate,omitempty"`
	// Hosts are where the target is used: "" is the controller (the
	// machine tierbench runs on), else a host's name. The controller
	// prepares only a target it uses itself.
	Hosts []string `json:"hosts,omitempty"`
	Line  int      `json:"line"`
}

// Local says whether the controller itself uses the target.
func (t Target) Local() bool { return len(t.Hosts) == 0 || slices.Contains(t.Hosts, "") }

// Emulate are the limits of an emulated tier, enforced with cgroup block-I/O
// throttles. A zero field is no limit; Loop > 0 puts the target on a
// loop-backed image of that many bytes, so the throttles apply to a device
// of its own, with the file system FS (ext4, or btrfs with inline
// compression and data checksums on or off: tier.Options).
type Emulate struct {
	Loop      int64   `json:"loop,omitempty"`
	FS        string  `json:"fs,omitempty"`       // "" = ext4
	Compress  string  `json:"compress,omitempty"` // btrfs: "none" (""), "zstd" or "lzo"
	Checksum  *bool   `json:"checksum,omitempty"` // btrfs: data checksums; nil = on
	ReadIOPS  int64   `json:"read_iops,omitempty"`
	WriteIOPS int64   `json:"write_iops,omitempty"`
	ReadMBps  float64 `json:"read_mbps,omitempty"`
	WriteMBps float64 `json:"write_mbps,omitempty"`
}

// Server is a managed database server whose data directory lives on a
// target. Count > 1 makes that many instances cloned from one built schema.
// With Host it runs on that host, managed there over SSH through
// tierbench's own CLI; with DSN it is a server tierbench does not manage
// (a cloud database, a VM), which it only connects to.
type Server struct {
	Name   string `json:"name"`
	Engine string `json:"engine"`
	Target string `json:"target,omitempty"`
	// Hosts are where its instances run, Count on each, in order
	// (NAME-1 … NAME-Count on the first); none: on the controller.
	Hosts    []string          `json:"hosts,omitempty"`
	DSN      string            `json:"-"` // may hold a password: never printed
	Count    int               `json:"count"`
	Memory   int64             `json:"memory,omitempty"`   // bytes: buffers sized from it and a cgroup cap; 0 = engine defaults
	Settings map[string]string `json:"settings,omitempty"` // extra server settings (name = value)
	Line     int               `json:"line"`
}

// Throttle is the tier's I/O limits, as the experiment layer takes them.
func (e *Emulate) Throttle() experiment.Throttle {
	return experiment.Throttle{ReadIOPS: e.ReadIOPS, WriteIOPS: e.WriteIOPS, ReadMBps: e.ReadMBps, WriteMBps: e.WriteMBps}
}

// Managed says whether tierbench starts and stops the server.
func (s Server) Managed() bool { return s.DSN == "" }

// Total is how many instances the server has: Count on each of its hosts.
func (s Server) Total() int { return s.Count * max(1, len(s.Hosts)) }

// HostOf is the host of the server's i-th instance (0-based); "": the
// controller.
func (s Server) HostOf(i int) string {
	if len(s.Hosts) == 0 {
		return ""
	}
	return s.Hosts[min(i/max(s.Count, 1), len(s.Hosts)-1)]
}

// Instances names the server's instances: the server's own name when it has
// one, else NAME-1 … NAME-N.
func (s Server) Instances() []string {
	if s.Total() <= 1 {
		return []string{s.Name}
	}
	out := make([]string, s.Total())
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", s.Name, i+1)
	}
	return out
}

// Step is one step: Kind says which of the pointers is set.
type Step struct {
	Kind       string          `json:"kind"`
	Line       int             `json:"line"`
	Disk       *DiskStep       `json:"disk,omitempty"`
	TPCCBuild  *TPCCBuildStep  `json:"tpcc_build,omitempty"`
	TPCCRun    *TPCCRunStep    `json:"tpcc_run,omitempty"`
	TPCHBuild  *TPCHBuildStep  `json:"tpch_build,omitempty"`
	TPCHRun    *TPCHRunStep    `json:"tpch_run,omitempty"`
	Backup     *BackupStep     `json:"backup,omitempty"`
	Neighbours *NeighboursStep `json:"neighbours,omitempty"`
	Check      *CheckStep      `json:"check,omitempty"`
	Durability *DurabilityStep `json:"durability,omitempty"`
	Space      *SpaceStep      `json:"space,omitempty"`
	Stop       *StopStep       `json:"stop,omitempty"`
	Report     *ReportStep     `json:"report,omitempty"`
}

// The step kinds, in the order the documentation lists them.
const (
	KindDisk       = "disk"
	KindTPCCBuild  = "tpcc-build"
	KindTPCCRun    = "tpcc-run"
	KindTPCHBuild  = "tpch-build"
	KindTPCHRun    = "tpch-run"
	KindBackup     = "backup"
	KindNeighbours = "neighbours"
	KindCheck      = "check"
	KindDurability = "durability"
	KindSpace      = "space"
	KindStop       = "stop"
	KindReport     = "report"
)

// Kinds lists every step kind.
var Kinds = []string{KindDisk, KindTPCCBuild, KindTPCCRun, KindTPCHBuild, KindTPCHRun, KindBackup, KindNeighbours, KindCheck, KindDurability,
	KindSpace, KindStop, KindReport}

// DiskStep runs a storage profile (fio) on a target.
type DiskStep struct {
	Target   string        `json:"target"`
	Profile  string        `json:"profile"`            // a bundled profile (tierbench disk profiles); default quick
	Duration time.Duration `json:"duration,omitempty"` // per point; 0 = the profile's
	// Ramp is each point's unmeasured warm-up (disk run --ramp); nil: the
	// profile's. 0s is none.
	Ramp *time.Duration `json:"ramp,omitempty"`
	Size int64          `json:"size,omitempty"` // test file bytes; 0 = the profile's
	// Hosts run the profile all at once through their fio servers (fio's
	// client/server mode), the target a directory on each; none: the
	// controller runs it on the target itself.
	Hosts []string `json:"hosts,omitempty"`
	// Thresholds are judged on each point (docs/thresholds.md).
	Thresholds []string `json:"thresholds,omitempty"`
	// Rates offer each point at each rate (each job's I/Os a second);
	// Fractions, instead, at percentages of what it did uncapped; KneeP99
	// bounds their knee (disk run --rate-iops, --knee-p99).
	Rates     []float64     `json:"rate,omitempty"`
	Fractions []float64     `json:"rate_fractions_pct,omitempty"`
	KneeP99   time.Duration `json:"knee_p99,omitempty"`
	Repetitions
}

// TPCCBuildStep builds the TPC-C schema on a server (on a server of several
// instances: once, then cloned to the others).
type TPCCBuildStep struct {
	Server     string   `json:"server"`
	Instances  []string `json:"instances"`
	Warehouses int      `json:"warehouses"`
	BuildVUs   int      `json:"build_vus,omitempty"` // loader connections; 0 = one per core
	// From, when set, is a server an earlier tpcc-build step built, on the
	// controller: its first instance's data directory, stopped, is copied
	// cold into this server's instances instead of loading the schema
	// through this server's tier (FromInstance is that instance).
	From         string `json:"from,omitempty"`
	FromInstance string `json:"from_instance,omitempty"`
}

// TPCCRunStep runs TPC-C in steps of virtual users on every instance of a
// server at once (VUs per instance).
type TPCCRunStep struct {
	Server    string        `json:"server"`
	Instances []string      `json:"instances"`
	VUs       []int         `json:"vus"`
	RampUp    time.Duration `json:"rampup"`
	Duration  time.Duration `json:"duration"`
	Mode      string        `json:"mode"` // routines or statements
	// Thresholds are judged on each step of each instance.
	Thresholds []string `json:"thresholds,omitempty"`
	Repetitions
	Rate
	Pace
}

// Pace is how a closed loop's VUs are paced (tpcc run --keying-thinking,
// --think-time): the spec's keying and think times, a mean think time of
// the scenario's own, or neither (each VU at full speed).
type Pace struct {
	KeyingThinking bool          `json:"keying_thinking,omitempty"`
	ThinkTime      time.Duration `json:"think_time,omitempty"`
}

// Rate makes a tpcc-run or neighbours step open-loop (tpcc run --rate):
// one step per rate, in transactions a minute, which its VUs serve as one
// pool.
// Arrival and LateAfter are the run's defaults when not given.
type Rate struct {
	Rates []float64 `json:"rate,omitempty"`
	// Fractions, given instead of Rates ("20%,60%"), are percentages of
	// the most the VUs serve, which a closed-loop step of Probe finds.
	Fractions []float64      `json:"rate_fractions_pct,omitempty"`
	Arrival   string         `json:"arrival,omitempty"`
	LateAfter *time.Duration `json:"late_after,omitempty"` // nil: the run's default
	Probe     *time.Duration `json:"probe,omitempty"`
	KneeP99   *time.Duration `json:"knee_p99,omitempty"`
}

// TPCHBuildStep builds the TPC-H tables at a scale factor on each instance
// of a server, one instance after another, in a database of their own
// (experiment.TPCHDatabase) beside the TPC-C schema's.
type TPCHBuildStep struct {
	Server    string   `json:"server"`
	Instances []string `json:"instances"`
	Scale     float64  `json:"scale"`
	BuildVUs  int      `json:"build_vus,omitempty"` // loader connections; 0 = one per core
}

// TPCHRunStep runs the TPC-H power tests, and the throughput test when
// Streams is above 0, on every instance of a server at once (tpch run).
type TPCHRunStep struct {
	Server     string        `json:"server"`
	Instances  []string      `json:"instances"`
	Seed       int64         `json:"seed,omitempty"` // 0: one drawn per run, recorded
	Validate   bool          `json:"validate,omitempty"`
	NoRefresh  bool          `json:"no_refresh,omitempty"`
	Streams    int           `json:"streams,omitempty"`
	Repeat     int           `json:"repeat"`
	Timeout    time.Duration `json:"timeout,omitempty"`
	Thresholds []string      `json:"thresholds,omitempty"`
}

// BackupStep runs backup cycles on each instance of a server: a cycle is a
// backup and then a restore of it, Cycles of them, one starting every
// Interval (0: back to back).
type BackupStep struct {
	Server    string        `json:"server"`
	Instances []string      `json:"instances"`
	Target    string        `json:"target"` // where backups are written; default the server's target
	Cycles    int           `json:"cycles"`
	Interval  time.Duration `json:"interval,omitempty"`
	Logical   bool          `json:"logical"` // a logical dump rather than a physical base backup
	// Repeat runs the cycles that many times over (experiment.BackupConfig).
	Repeat int `json:"repeat"`
}

// NeighboursStep runs TPC-C on some instances while others run backup
// cycles; with no backup instances it is a baseline of TPC-C on all of them.
type NeighboursStep struct {
	TPCC     []string      `json:"tpcc"`               // instances running TPC-C
	Backup   []string      `json:"backup,omitempty"`   // instances running backup cycles
	Servers  []string      `json:"servers"`            // the servers those instances belong to
	VUs      int           `json:"vus"`                // per TPC-C instance
	RampUp   time.Duration `json:"rampup"`             // before measuring and before the first backup
	Duration time.Duration `json:"duration"`           // measured
	Cycles   int           `json:"cycles,omitempty"`   // backup cycles per backup instance
	Interval time.Duration `json:"interval,omitempty"` // between backup cycle starts
	Target   string        `json:"target,omitempty"`   // where backups are written; "" = each instance's own target
	Logical  bool          `json:"logical,omitempty"`
	Mode     string        `json:"mode"`
	// Thresholds are judged on each TPC-C instance's step.
	Thresholds []string `json:"thresholds,omitempty"`
	// Repeat runs the whole step that many times: each repetition a
	// measured interval of every TPC-C instance beside the same backup
	// schedule, a run of its own per instance.
	Repeat int `json:"repeat"`
	// Rate, one rate in transactions a minute, makes each TPC-C instance
	// open-loop at it: the latency at a given load beside the backups,
	// rather than the throughput they leave.
	Rate
	Pace
}

// CheckStep runs the TPC-C consistency conditions on every instance of a
// server.
type CheckStep struct {
	Server    string   `json:"server"`
	Instances []string `json:"instances"`
	All       bool     `json:"all,omitempty"` // the expensive conditions on every warehouse, not a sample
}

// DurabilityStep runs the durability test of TPC-C clause 3.5.4 on each
// instance of a managed server, one instance after another: cycles of
// TPC-C, a crash while transactions are in flight, recovery, and the check
// that nothing acknowledged was lost (experiment.RunDurability).
type DurabilityStep struct {
	Server         string        `json:"server"`
	Instances      []string      `json:"instances"`
	Cycles         int           `json:"cycles"`
	VUs            int           `json:"vus"`
	Rate           float64       `json:"rate,omitempty"` // TPM offered to the VUs as a pool; 0: a closed loop
	RunBeforeFault time.Duration `json:"run_before_fault"`
	Fault          string        `json:"fault"` // kill, stop or restart
	RecoverTimeout time.Duration `json:"recover_timeout"`
	Mode           string        `json:"mode"`
	ColdCache      bool          `json:"cold_cache,omitempty"` // the data directory dropped from the page cache after each fault
}

// SpaceStep estimates what deduplication, compression and erasure coding
// would save (a read-only scan, experiment.RunSpace): of each instance's
// data directory, or of a target's directory. A server's instances are
// stopped first, so that the scan reads a consistent copy; a later step
// that needs the server starts it again.
type SpaceStep struct {
	Server    string   `json:"server,omitempty"`
	Instances []string `json:"instances,omitempty"`
	Target    string   `json:"target,omitempty"`
	Block     int64    `json:"block,omitempty"`      // bytes; 0 = 4 KiB
	KeepBelow float64  `json:"keep_below,omitempty"` // 0 = 0.5 (docs/space.md)
	// ZstdSample: zstd's ratio is estimated from 1 in ZstdSample unique
	// blocks; 0 = automatic, 1 = every block (docs/space.md).
	ZstdSample int `json:"zstd_sample,omitempty"`
}

// StopStep stops every instance of a server, so that its memory is free for
// the servers of the steps after it; a later step that needs the server
// starts it again.
type StopStep struct {
	Server    string   `json:"server"`
	Instances []string `json:"instances"`
}

// ReportStep writes the report of the scenario's runs so far.
type ReportStep struct {
	Out   string `json:"out,omitempty"` // the HTML file; "" = RESULTS/report.html
	Title string `json:"title,omitempty"`
}

// Servers names the servers a step needs running, in order.
func (s Step) Servers() []string {
	switch {
	case s.TPCCBuild != nil:
		return []string{s.TPCCBuild.Server}
	case s.TPCCRun != nil:
		return []string{s.TPCCRun.Server}
	case s.TPCHBuild != nil:
		return []string{s.TPCHBuild.Server}
	case s.TPCHRun != nil:
		return []string{s.TPCHRun.Server}
	case s.Backup != nil:
		return []string{s.Backup.Server}
	case s.Neighbours != nil:
		return s.Neighbours.Servers
	case s.Check != nil:
		return []string{s.Check.Server}
	case s.Durability != nil:
		return []string{s.Durability.Server}
	}
	return nil
}

// String describes a step in a few words, for progress lines.
func (s Step) String() string {
	switch {
	case s.Disk != nil:
		return fmt.Sprintf("disk %s on %s", s.Disk.Profile, s.Disk.Target)
	case s.TPCCBuild != nil && s.TPCCBuild.From != "":
		return fmt.Sprintf("tpcc-build on %s: %s's %s copied", s.TPCCBuild.Server, s.TPCCBuild.From, units.Plural(s.TPCCBuild.Warehouses, "warehouse", "warehouses"))
	case s.TPCCBuild != nil:
		return fmt.Sprintf("tpcc-build %s on %s", units.Plural(s.TPCCBuild.Warehouses, "warehouse", "warehouses"), s.TPCCBuild.Server)
	case s.TPCCRun != nil && len(s.TPCCRun.Rates) > 0:
		return fmt.Sprintf("tpcc-run on %s, %s VUs serving %s TPM, %s ramp-up + %s each", s.TPCCRun.Server, units.FormatCountList(s.TPCCRun.VUs),
			units.RateListText(s.TPCCRun.Rates, false), s.TPCCRun.RampUp, s.TPCCRun.Duration)
	case s.TPCCRun != nil && len(s.TPCCRun.Fractions) > 0:
		return fmt.Sprintf("tpcc-run on %s, %s VUs serving %s of their maximum, %s ramp-up + %s each", s.TPCCRun.Server, units.FormatCountList(s.TPCCRun.VUs),
			units.RateListText(s.TPCCRun.Fractions, true), s.TPCCRun.RampUp, s.TPCCRun.Duration)
	case s.TPCCRun != nil:
		return fmt.Sprintf("tpcc-run on %s, VUs %s, %s ramp-up + %s each", s.TPCCRun.Server, units.FormatCountList(s.TPCCRun.VUs),
			s.TPCCRun.RampUp, s.TPCCRun.Duration)
	case s.TPCHBuild != nil:
		return fmt.Sprintf("tpch-build at scale factor %g on %s", s.TPCHBuild.Scale, s.TPCHBuild.Server)
	case s.TPCHRun != nil && s.TPCHRun.Streams > 0:
		return fmt.Sprintf("tpch-run on %s: %s, then %s", s.TPCHRun.Server, units.Plural(s.TPCHRun.Repeat, "power test", "power tests"), units.Plural(s.TPCHRun.Streams, "stream", "streams"))
	case s.TPCHRun != nil:
		return fmt.Sprintf("tpch-run on %s: %s", s.TPCHRun.Server, units.Plural(s.TPCHRun.Repeat, "power test", "power tests"))
	case s.Backup != nil:
		return fmt.Sprintf("backup %s, %s", s.Backup.Server, units.Plural(s.Backup.Cycles, "cycle", "cycles"))
	case s.Neighbours != nil:
		n := s.Neighbours
		if len(n.Backup) == 0 {
			return fmt.Sprintf("neighbours: TPC-C on %s", strings.Join(n.TPCC, ", "))
		}
		return fmt.Sprintf("neighbours: TPC-C on %s, backups on %s", strings.Join(n.TPCC, ", "), strings.Join(n.Backup, ", "))
	case s.Check != nil:
		return fmt.Sprintf("check %s", s.Check.Server)
	case s.Durability != nil:
		return fmt.Sprintf("durability %s, %s of %s", s.Durability.Server, units.Plural(s.Durability.Cycles, "cycle", "cycles"), s.Durability.Fault)
	case s.Space != nil && s.Space.Server != "":
		return fmt.Sprintf("space of server %s", s.Space.Server)
	case s.Space != nil:
		return fmt.Sprintf("space of target %s", s.Space.Target)
	case s.Stop != nil:
		return fmt.Sprintf("stop %s", s.Stop.Server)
	case s.Report != nil:
		return "report"
	}
	return s.Kind
}

// Target finds a target by name.
func (sc *Scenario) Target(name string) (Target, bool) {
	for _, t := range sc.Targets {
		if t.Name == name {
			return t, true
		}
	}
	return Target{}, false
}

// Server finds a server by name.
func (sc *Scenario) Server(name string) (Server, bool) {
	for _, s := range sc.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return Server{}, false
}

// Info names a bundled scenario.
type Info struct {
	Name  string `json:"name"`
	Title string `json:"title"`
}

// Bundled lists the embedded scenarios, sorted by name.
func Bundled() []Info {
	var out []Info
	for _, name := range bundledNames() {
		info := Info{Name: name}
		if data, ok := BundledSource(name); ok {
			if sc, err := Parse(bundledPath(name), data, "", nil); err == nil {
				info.Title = sc.Title
			} else {
				info.Title = "(invalid: " + strings.SplitN(err.Error(), "\n", 2)[0] + ")"
			}
		}
		out = append(out, info)
	}
	return out
}

// BundledSource returns the YAML of a bundled scenario, e.g. to copy it.
func BundledSource(name string) ([]byte, bool) {
	if !fs.ValidPath(name) || strings.Contains(name, "/") {
		return nil, false
	}
	data, err := fs.ReadFile(scenarios.FS, name+".yaml")
	return data, err == nil
}

func bundledNames() []string {
	entries, _ := fs.Glob(scenarios.FS, "*.yaml")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e, ".yaml"))
	}
	sort.Strings(names)
	return names
}

// bundledPath is how errors name a bundled file: its place in the repository.
func bundledPath(name string) string { return "scenarios/" + name + ".yaml" }

// Load reads a scenario from a file — when nameOrFile exists or ends in .yaml
// or .yml — or else a bundled scenario of that name, and parses it with
// Parse. Every problem, including an unreadable file or an unknown name, comes
// back as Errors.
func Load(nameOrFile string, scale string, sets map[string]string) (*Scenario, error) {
	ext := strings.ToLower(path.Ext(nameOrFile))
	_, statErr := os.Stat(nameOrFile)
	if statErr == nil || ext == ".yaml" || ext == ".yml" {
		data, err := os.ReadFile(nameOrFile)
		if err != nil {
			msg := err.Error()
			var pe *fs.PathError
			if errors.As(err, &pe) {
				msg = pe.Err.Error()
			}
			return nil, Errors{{File: nameOrFile, Msg: "cannot read the scenario file: " + msg}}
		}
		return Parse(nameOrFile, data, scale, sets)
	}
	data, ok := BundledSource(nameOrFile)
	if !ok {
		return nil, Errors{{File: nameOrFile, Msg: fmt.Sprintf(
			"no such file, and no bundled scenario of that name; bundled scenarios: %s (a file name must exist or end in .yaml)",
			strings.Join(bundledNames(), ", "))}}
	}
	sc, err := Parse(bundledPath(nameOrFile), data, scale, sets)
	if sc != nil {
		sc.Bundled = true
	}
	return sc, err
}
