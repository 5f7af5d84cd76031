package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/report"
	"github.com/tierbench/tierbench/internal/scenario"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/telemetry"
	"github.com/tierbench/tierbench/internal/tpcc"
	"github.com/tierbench/tierbench/internal/units"
)

// view is the command line's experiment.Observer: notes and progress on
// stderr, results on stdout as they come (none with --json, whose one
// document the command prints at the end). Progress is redrawn in place on
// a terminal and printed every few seconds as a line otherwise.
type view struct {
	g     *Globals
	tty   bool
	drawn bool // a progress line is drawn in place
	ticks int  // TPC-C seconds seen: a line every fifth when not a terminal
	// build is the schema build's start and its last line printed.
	buildStart, buildLine time.Time
	scanStart, scanLine   time.Time // a space scan's progress
	tableHead             bool      // the disk or backup table's header is printed
	// durability is the durability run's parameters, which its cycle lines
	// name.
	durability *stored.DurabilityParams
	store      string // the results store's path, from the run's start
	engine     string // the TPC-C run's engine, which its step summaries name
}

func newView(g *Globals) *view { return &view{g: g, tty: isTerminal(g.Stderr)} }

var _ experiment.Observer = (*view)(nil)

// draw shows a progress line: in place on a terminal; as a line when every
// is true otherwise.
func (v *view) draw(line string, every bool) {
	switch {
	case v.tty:
		fmt.Fprintf(v.g.Stderr, "\r\033[K%s", line)
		v.drawn = true
	case every:
		fmt.Fprintln(v.g.Stderr, line)
	}
}

// clear removes a progress line drawn in place.
func (v *view) clear() {
	if v.drawn {
		fmt.Fprint(v.g.Stderr, "\r\033[K")
		v.drawn = false
	}
}

func (v *view) Note(msg string) {
	v.clear()
	v.g.progressf("%s\n", msg)
}

func (v *view) Started(s experiment.Started) {
	v.clear() // a schema build's line, when the main job built one first
	v.store = s.StorePath
	switch p := s.Params.(type) {
	case *stored.TPCCParams:
		v.engine = p.Engine
		v.g.progressf("run %s: %s, steps %s VUs, ramp-up %s, measured %s per step, mode %s%s\n",
			s.RunID, units.Plural(p.Warehouses, "warehouse", "warehouses"), units.FormatCountList(p.VUs), p.RampUp, p.Duration, p.Mode, p.Pacing())
	case *stored.DiskParams:
		v.g.progressf("run %s: profile %s, %s on %s (%s, %s of %s), measured %s each after %s ramp, engine %s, direct=%t\n",
			s.RunID, p.Profile, units.Plural(len(p.Points), "point", "points"), p.Target, p.TargetKind, units.FormatSize(p.Size), p.File,
			p.Duration, p.Ramp, p.IOEngine, p.Direct)
	case *stored.BackupParams:
		every := ""
		if p.Spacing != "0s" {
			every = ", one every " + p.Spacing
		}
		v.g.progressf("run %s: %s of %s backup and restore into %s%s\n", s.RunID, units.Plural(p.Cycles, "cycle", "cycles"), p.Method, p.Target, every)
	case *stored.DurabilityParams:
		v.durability = p
		v.g.progressf("durability run %s: %s of %s TPC-C, %s, on %s, then %s; success logs in %s\n",
			s.RunID, units.Plural(p.Cycles, "cycle", "cycles"), p.RunBeforeFault, p.LoadText(), units.Plural(p.Warehouses, "warehouse", "warehouses"), p.FaultText(), p.LogDir)
	case *stored.MonitorParams:
		v.g.progressf("monitor %s: sampling every %s", s.RunID, p.Interval)
		if r := s.Resolution; r != nil {
			v.g.progressf(" %s (%s on %s, devices %v)", p.Target, r.FSType, r.Mount, r.Devices)
		}
		v.g.progressf("; Ctrl-C ends it\n")
	}
}

func (v *view) Progress(p experiment.Progress) {
	switch {
	case p.Build != nil:
		b := p.Build
		v.buildProgress(b.Phase, fmt.Sprintf("%d/%d warehouses", b.WarehousesDone, b.Warehouses), b.Rows, b.Bytes, b.Fraction)
	case p.TPCHBuild != nil:
		b := p.TPCHBuild
		v.buildProgress(b.Phase, fmt.Sprintf("%.0f%% of the rows' runs", 100*b.Fraction), b.Rows, b.Bytes, b.Fraction)
	case p.Layout != nil:
		v.g.progressf("laying out the test file %s: %s to %s\n", p.Layout.File, units.FormatSize(p.Layout.Have), units.FormatSize(p.Layout.Want))
	case p.Point != nil:
		pt := p.Point
		v.draw(fmt.Sprintf("point %d/%d %s: %s ramp + %s", pt.Index+1, pt.Count, pt.Spec.Name, pt.Ramp, pt.Duration), true)
	case p.Phase != nil:
		ph := p.Phase
		line := fmt.Sprintf("cycle %d/%d %-7s %4.0fs", ph.Cycle, ph.Cycles, ph.Phase, ph.Elapsed.Seconds()) + telemetryStatus(p.Telemetry)
		v.draw(line, int(ph.Elapsed.Round(time.Second).Seconds())%5 == 0)
	case p.Scan != nil:
		v.scanProgress(*p.Scan)
	case p.Cycle != nil:
		c := p.Cycle
		if n := int(c.Elapsed.Seconds()); n > 0 && n%5 == 0 {
			v.g.progressf("cycle %d/%d: %2.0f s, %d New-Orders acknowledged\n", c.Cycle, c.Cycles, c.Elapsed.Seconds(), c.Acknowledged)
		}
	}
}

// buildProgress draws a schema build's progress.
// done says how far the load is, e.g. "3/10 warehouses".
func (v *view) buildProgress(phase, done string, rows, bytes int64, fraction float64) {
	if v.buildStart.IsZero() {
		v.buildStart = time.Now()
	}
	el := time.Since(v.buildStart).Seconds()
	line := fmt.Sprintf("%s: %s, %.1fM rows, %.0f rows/s, %.1f MB/s",
		phase, done, float64(rows)/1e6, float64(rows)/el, float64(bytes)/1e6/el)
	if phase == "load" && fraction > 0 && fraction < 1 {
		line += fmt.Sprintf(", ETA %s", time.Duration(el*(1-fraction)/fraction*float64(time.Second)).Round(time.Second))
	}
	switch phase {
	case "index":
		line += fmt.Sprintf(", loaded in %.1f s; building keys and indexes", el)
	case "analyze":
		line += fmt.Sprintf(", %.1f s in; gathering statistics", el)
	}
	every := phase != "load" || time.Since(v.buildLine) >= 5*time.Second
	if every {
		v.buildLine = time.Now()
	}
	v.draw(line, every)
}

func (v *view) Tick(t experiment.Tick) {
	if t.TPCC == nil {
		if t.Telemetry != nil && !v.g.JSON {
			printSample(v.g.Stdout, *t.Telemetry)
		}
		return
	}
	x := t.TPCC
	v.ticks++
	rep := ""
	if x.Repeat > 1 {
		rep = fmt.Sprintf(" (rep %d/%d)", x.Rep, x.Repeat)
	}
	tpm := fmt.Sprintf("%8.0f", x.TPM)
	if x.NoTPM {
		tpm = fmt.Sprintf("%8s", "–") // PostgreSQL's commits since the start edge not yet published
	}
	v.draw(fmt.Sprintf("step %d/%d%s  %d VUs  %-7s %4.0fs  TPM %s  NOPM %8.0f  NO p95 %6.2f ms",
		x.Step, x.Steps, rep, x.VUs, x.Phase, x.Elapsed.Seconds(), tpm, x.NOPM, x.NewOrderP95Ms)+telemetryStatus(t.Telemetry), v.ticks%5 == 0)
}

func (v *view) Result(r experiment.Result) {
	if (r.Build != nil || r.TPCHBuild != nil) && v.drawn {
		fmt.Fprintln(v.g.Stderr) // the build's last line stays
		v.drawn = false
	}
	v.clear()
	if v.g.JSON {
		return
	}
	w := v.g.Stdout
	switch {
	case r.TPCC != nil:
		printStep(w, r.TPCC, v.engine)
		printNoisy(w, r.TPCC.Noisy)
	case r.Point != nil:
		v.diskRow(*r.Point)
		printNoisy(w, r.Point.Noisy)
	case r.Phase != nil:
		v.backupRow(r.Phase)
		printNoisy(w, r.Phase.Noisy)
	case r.Cycle != nil:
		printCycle(w, r.Cycle, v.durability)
	case r.Build != nil:
		printBuildResult(w, r.Build)
		fmt.Fprintln(w)
	case r.TPCHQuery != nil:
		printTPCHQuery(w, r.TPCHQuery)
	case r.Check != nil:
		printCheckResult(w, r.Check)
	case len(r.Thresholds) > 0:
		for _, vd := range r.Thresholds {
			fmt.Fprintf(w, "threshold %s\n", vd)
		}
		v.tableHead = false // a disk table goes on under its header again
	}
}

// printNoisy says why the step, point or phase just printed was measured
// on a noisy host, when it was.
func printNoisy(w io.Writer, why string) {
	if why != "" {
		fmt.Fprintf(w, "  noisy host: %s\n", why)
	}
}

// done clears what is drawn in place, before the command's last words.
func (v *view) done() { v.clear() }

// telemetryStatus is the short telemetry part of a live line: CPU idle and
// iowait, and the target's device latency ("" without a sample).
func telemetryStatus(x *telemetry.Sample) string {
	if x == nil {
		return ""
	}
	s := fmt.Sprintf("  idle %3.0f%% iowait %3.0f%%", x.CPU.IdlePct, x.CPU.IOWaitPct)
	if x.Total != nil {
		s += fmt.Sprintf("  dev r %5.0f w %5.0f IOPS await %5.2f/%5.2f ms", x.Total.RIOPS, x.Total.WIOPS, x.Total.RAwaitMs, x.Total.WAwaitMs)
	}
	if x.Latency != nil && x.Latency.Count > 0 {
		s += fmt.Sprintf(" p99 %5.2f ms", x.Latency.P99Ms)
	}
	return s
}

// diskRow prints a finished point in fixed-width columns.
func (v *view) diskRow(p stored.Point) {
	w := v.g.Stdout
	if !v.tableHead {
		fmt.Fprintf(w, "%-22s %39s %39s %13s\n", "", "---------------- read ----------------", "---------------- write ---------------", "")
		fmt.Fprintf(w, "%-22s %9s %7s %7s %7s %7s %9s %7s %7s %7s %7s %13s\n", "point",
			"IOPS", "MB/s", "mean ms", "p99", "p99.9", "IOPS", "MB/s", "mean ms", "p99", "p99.9", "CPU usr/sys %")
		v.tableHead = true
	}
	cells := func(d *stored.DirStats) string {
		if d == nil {
			return fmt.Sprintf("%9s %7s %7s %7s %7s", "-", "-", "-", "-", "-")
		}
		return fmt.Sprintf("%9.0f %7.1f %7.3f %7.3f %7.3f", d.IOPS, d.MBps, d.MeanMs, d.P99Ms, d.P999Ms)
	}
	name := p.Name
	if p.Interrupted {
		name += " (cut)"
	}
	fmt.Fprintf(w, "%-22s %s %s %13s\n", name, cells(p.Read), cells(p.Write), fmt.Sprintf("%.0f/%.0f", p.UsrCPUPct, p.SysCPUPct))
	// On several hosts, the row above is their aggregate; each host's own
	// follow, indented, with its CPU from node_exporter when sampled.
	for _, h := range p.Hosts {
		if h.Read == nil && h.Write == nil {
			continue // a host only node_exporter watched
		}
		cpu := ""
		if h.NodeStats != nil && h.Samples > 0 {
			cpu = fmt.Sprintf("idle %.0f%%", h.CPUIdlePct)
		}
		fmt.Fprintf(w, "  %-20s %s %s %13s\n", h.Host, cells(h.Read), cells(h.Write), cpu)
	}
	for _, n := range p.Notes() {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

// backupRow prints a finished phase.
func (v *view) backupRow(m *stored.PhaseResult) {
	w := v.g.Stdout
	if !v.tableHead {
		fmt.Fprintf(w, "%5s  %-7s  %-13s  %9s  %10s  %8s  %15s  %15s  %8s\n",
			"cycle", "phase", "method", "seconds", "size", "MB/s", "dev r/w IOPS", "await r/w ms", "verified")
		v.tableHead = true
	}
	iops, await := "-", "-"
	if d := m.Device; d != nil {
		iops = fmt.Sprintf("%.0f/%.0f", d["r_iops"], d["w_iops"])
		await = fmt.Sprintf("%.2f/%.2f", d["r_await_ms"], d["w_await_ms"])
	}
	verified := "-"
	if m.Phase.Phase == stored.PhaseRestore {
		verified = map[bool]string{true: "yes", false: "no"}[m.Verified]
	}
	fmt.Fprintf(w, "%5d  %-7s  %-13s  %9.2f  %10s  %8.1f  %15s  %15s  %8s\n",
		m.Cycle, m.Phase.Phase, m.Method, m.Seconds, units.FormatSize(m.Bytes), m.MBps, iops, await, verified)
}

// printCycle prints a finished durability cycle.
func printCycle(w io.Writer, c *stored.DurabilityCycle, p *stored.DurabilityParams) {
	cycles, fault := 0, ""
	if p != nil {
		cycles, fault = p.Cycles, p.Fault
	}
	verdict := "ok"
	if !c.OK {
		verdict = "FAILED: " + strings.Join(c.Problems, "; ")
	}
	consistency := "hold"
	if !c.Consistency {
		consistency = "FAIL " + strings.Join(c.Failed, ",")
	}
	fmt.Fprintf(w, "cycle %d/%d: %.0f s of TPC-C, then %s: %d New-Orders acknowledged (%d committed, %d rolled back); "+
		"found %d, lost %d, rolled back but found %d; excess %d (at most %d); recovered in %.2f s; consistency conditions %s; %s\n",
		c.Cycle, cycles, c.RanSeconds, fault, c.Acknowledged, c.Committed, c.RolledBack,
		c.Found, c.Lost, c.RolledBackFound, c.Excess, c.ExcessBound, c.RecoverySeconds, consistency, verdict)
	for _, x := range c.Violations {
		state := "committed, missing"
		if x.RolledBack {
			state = "rolled back, present"
		}
		fmt.Fprintf(w, "  order w=%d d=%d o_id=%d (customer %d, %d lines): %s\n", x.W, x.D, x.OID, x.Customer, x.Lines, state)
	}
}

// scenarioView is the command line's scenario.Listener.
type scenarioView struct {
	*view
	report string // the report's path, once written
}

var _ scenario.Listener = (*scenarioView)(nil)

func (v *scenarioView) Step(i, n int, st scenario.Step) {
	v.clear()
	v.g.progressf("\n== step %d/%d: %s\n", i, n, st)
}

func (v *scenarioView) Checked(instance string, c *tpcc.CheckResult) {
	if !v.g.JSON {
		fmt.Fprintf(v.g.Stdout, "consistency of %s:\n", instance)
		printCheckResult(v.g.Stdout, c)
	}
}

func (v *scenarioView) Neighbour(instance string, s *stored.TPCCStep) {
	if !v.g.JSON {
		held := ""
		if d := s.Stalled(); d > 0 {
			held = fmt.Sprintf("  a transaction held %.1f s at the end", d.Seconds())
		}
		fmt.Fprintf(v.g.Stdout, "%-12s %3d VUs  %8d TPM  %8d NOPM  NO p95 %.2f ms%s\n", instance, s.VUs, s.TPM, s.NOPM, s.Txn["new_order"].P95Ms, held)
	}
}

func (v *scenarioView) Reported(w report.Written) {
	v.report = w.HTML
	if !v.g.JSON {
		fmt.Fprintf(v.g.Stdout, "report: %s\n", w.HTML)
	}
}
