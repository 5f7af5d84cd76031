package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/stored"
)

// environmentSection is the hardware and software tables: what all runs
// share once, then what differs, a row per run (shareOnce). Runs without a
// captured inventory are named in a sentence, not compared: every fact of
// theirs would differ from the others'.
func environmentSection(runs []*runData) *Section {
	s := &Section{ID: "environment", Title: "Environment"}
	var have []*runData
	var missing []string
	for _, rd := range runs {
		if rd.Env == nil {
			missing = append(missing, rd.Label)
		} else {
			have = append(have, rd)
		}
	}
	runs = have
	if len(runs) > 1 {
		s.text("What the runs ran on, captured when each started: what they all share first, once, then what differs, run by run. " +
			"Facts tierbench could not read are shown as unknown.")
	} else {
		s.text("What each run ran on, captured when it started. Facts tierbench could not read are shown as unknown.")
	}
	if len(missing) > 0 {
		s.text(fmt.Sprintf("No environment was captured for %s: what %s ran on is unknown.", strings.Join(missing, ", "),
			map[bool]string{true: "it", false: "they"}[len(missing) == 1]))
	}
	if len(runs) == 0 {
		return s
	}
	header := []string{"fact"}
	for _, rd := range runs {
		header = append(header, rd.Label)
	}
	type fact struct {
		name string
		get  func(rd *runData) string
	}
	rows := func(facts []fact) [][]string {
		var out [][]string
		for _, f := range facts {
			row := []string{f.name}
			for _, rd := range runs {
				row = append(row, f.get(rd))
			}
			out = append(out, row)
		}
		return out
	}
	env := func(f func(rd *runData) string) func(rd *runData) string {
		return func(rd *runData) string {
			if rd.Env == nil {
				return unknown
			}
			return f(rd)
		}
	}
	hardware := []fact{
		{"host", env(func(rd *runData) string { return orUnknown(rd.Env.Host.Hostname) })},
		{"CPU", env(func(rd *runData) string { return orUnknown(rd.Env.Host.CPUModel) })},
		{"logical CPUs", env(func(rd *runData) string { return intOrUnknown(rd.Env.Host.Cores) })},
		{"sockets", env(func(rd *runData) string { return intOrUnknown(rd.Env.Host.Sockets) })},
		{"memory", env(func(rd *runData) string { return bytesText(rd.Env.Host.MemoryBytes) })},
		{"virtualisation", env(func(rd *runData) string { return orUnknown(rd.Env.Host.Virtualization) })},
		{"target path", env(func(rd *runData) string {
			if rd.Env.Target == nil {
				return "none"
			}
			return orUnknown(rd.Env.Target.Path)
		})},
		{"filesystem", target(func(rd *runData) string {
			t := rd.Env.Target
			if t.Filesystem == "" {
				return unknown
			}
			return fmt.Sprintf("%s on %s (mounted at %s)", t.Filesystem, orUnknown(t.MountSource), orUnknown(t.MountPoint))
		})},
		{"mount options", target(func(rd *runData) string { return orUnknown(rd.Env.Target.MountOptions) })},
		{"devices", target(func(rd *runData) string {
			var parts []string
			for _, d := range rd.Env.Target.Devices {
				rot := unknown
				if d.Rotational != nil {
					rot = map[bool]string{true: "rotational", false: "non-rotational"}[*d.Rotational]
				}
				model := strings.TrimSpace(d.Vendor + " " + d.Model)
				switch {
				case d.Model == "" && d.Vendor == "":
					model = "model unknown"
				case d.Model == "":
					model = "model unknown (vendor " + d.Vendor + ")"
				}
				desc := []string{model}
				if d.Firmware != "" {
					desc = append(desc, "firmware "+d.Firmware)
				}
				desc = append(desc, bytesText(d.CapacityBytes), rot, "scheduler "+orUnknown(d.Scheduler))
				if d.Transport != "" {
					desc = append(desc, d.Transport)
				}
				if d.BackingFile != "" {
					desc = append(desc, "backed by "+d.BackingFile)
				}
				parts = append(parts, d.Name+": "+strings.Join(desc, ", "))
			}
			if len(parts) == 0 {
				if rd.Env.Target.MemoryBacked {
					return "memory-backed (no device)"
				}
				return unknown
			}
			return strings.Join(parts, "; ")
		})},
	}
	software := []fact{
		{"OS", env(func(rd *runData) string { return orUnknown(rd.Env.Host.OS) })},
		{"kernel", env(func(rd *runData) string { return orUnknown(rd.Env.Host.Kernel) })},
		{"database", env(func(rd *runData) string {
			if rd.Env.Database == nil {
				return "none"
			}
			return orUnknown(strings.TrimSpace(rd.Env.Database.Engine + " " + rd.Env.Database.Version))
		})},
		{"database cache", env(engineCache)},
		{"tierbench", env(func(rd *runData) string { return orUnknown(rd.Env.Software.Tierbench) })},
		{"fio", env(func(rd *runData) string {
			if rd.Kind != stored.KindDisk {
				return "not used"
			}
			return orUnknown(rd.Env.Software.Fio)
		})},
		{"Go", env(func(rd *runData) string { return orUnknown(rd.Env.Software.Go) })},
	}
	tables := []*Table{
		{ID: "environment-hardware", Caption: "Hardware and storage", Header: header, Rows: rows(hardware)},
		{ID: "environment-software", Caption: "Software", Header: header, Rows: rows(software)},
	}
	for _, t := range append(tables, settingsTables(runs)...) {
		for _, part := range shareOnce(t) {
			s.table(part)
		}
	}
	return s
}

// shareOnce splits a table of facts with a column per run in two, so that
// many runs on one host do not repeat its kernel, devices and file systems
// in a column each: the facts every run has alike, once (ID as given), and
// the others with a row per run and a column per fact (ID-by-run). A
// table of one run stays as it is; an empty part is left out by
// Section.table.
func shareOnce(t *Table) []*Table {
	n := len(t.Header) - 1
	if n < 2 {
		return []*Table{t}
	}
	all := fmt.Sprintf("all %d runs", n)
	if n == 2 {
		all = "both runs"
	}
	shared := &Table{ID: t.ID, Caption: t.Caption + ": alike in " + all, Header: []string{"fact", all}}
	byRun := &Table{ID: t.ID + "-by-run", Caption: t.Caption + ": what differs, run by run", Header: []string{"run"}}
	var differ [][]string
	for _, row := range t.Rows {
		if alike := !slices.ContainsFunc(row[2:], func(v string) bool { return v != row[1] }); alike {
			shared.Rows = append(shared.Rows, []string{row[0], row[1]})
			continue
		}
		byRun.Header = append(byRun.Header, row[0])
		differ = append(differ, row)
	}
	if len(differ) > 0 {
		for i := 1; i <= n; i++ {
			r := []string{t.Header[i]}
			for _, row := range differ {
				r = append(r, row[i])
			}
			byRun.Rows = append(byRun.Rows, r)
		}
	}
	return []*Table{shared, byRun}
}

// settingsCaption says what the settings tables hold, whatever the engine.
const settingsCaption = "Database settings that matter (memory, durability, checkpoints, write-ahead or redo log)"

// settingsTables are the database settings each run captured, a row per
// setting in the order first seen, a column per run. Runs of one engine
// share one table; with several engines, whose settings have different
// names (shared_buffers, innodb_buffer_pool_size), each engine has a table
// of its own runs, so no run shows another engine's settings as unknown.
func settingsTables(runs []*runData) []*Table {
	engineName := func(rd *runData) string {
		if e := rd.Env.Database.Engine; e != "" {
			return e
		}
		return engineOf(rd)
	}
	var engs []string
	for _, rd := range runs {
		if rd.Env != nil && rd.Env.Database != nil && !slices.Contains(engs, engineName(rd)) {
			engs = append(engs, engineName(rd))
		}
	}
	table := func(id, caption string, cols []*runData) *Table {
		t := &Table{ID: id, Caption: caption, Header: []string{"fact"}}
		var names []string
		settings := map[*runData][]stored.Setting{} // each run's, made once
		for _, rd := range cols {
			t.Header = append(t.Header, rd.Label)
			if rd.Env == nil || rd.Env.Database == nil {
				continue
			}
			settings[rd] = runSettings(rd)
			for _, st := range settings[rd] {
				if !slices.Contains(names, st.Name) {
					names = append(names, st.Name)
				}
			}
		}
		for _, name := range names {
			row := []string{name}
			for _, rd := range cols {
				v := "–"
				if rd.Env != nil && rd.Env.Database != nil {
					v = unknown
					for _, st := range settings[rd] {
						if st.Name == name {
							v = st.Value
						}
					}
				}
				row = append(row, v)
			}
			t.Rows = append(t.Rows, row)
		}
		return t
	}
	if len(engs) < 2 {
		var cols []*runData // runs without a database have no settings
		for _, rd := range runs {
			if rd.Env != nil && rd.Env.Database != nil {
				cols = append(cols, rd)
			}
		}
		return []*Table{table("environment-database-settings", settingsCaption, cols)}
	}
	var out []*Table
	for _, eng := range engs {
		var cols []*runData
		for _, rd := range runs {
			if rd.Env != nil && rd.Env.Database != nil && engineName(rd) == eng {
				cols = append(cols, rd)
			}
		}
		out = append(out, table("environment-database-settings-"+slug(eng), settingsCaption+", "+engineDisplay(eng), cols))
	}
	return out
}

// target wraps a fact of the run's target path.
func target(f func(rd *runData) string) func(rd *runData) string {
	return func(rd *runData) string {
		switch {
		case rd.Env == nil:
			return unknown
		case rd.Env.Target == nil:
			return "–"
		}
		return f(rd)
	}
}

// runSettings are the database settings a run captured, then, for a TPC-H
// run, the analytic settings its sessions ran with (sized from the
// server's memory and how many sessions share it), named as such: e.g.
// "work_mem (TPC-H power test)".
func runSettings(rd *runData) []stored.Setting {
	out := rd.Env.Database.Settings
	p := rd.Params.TPCH
	if p == nil {
		return out
	}
	out = slices.Clone(out)
	for _, set := range []struct {
		m    map[string]string
		test string
	}{{p.Settings, "power test"}, {p.ThroughputSettings, fmt.Sprintf("throughput test, %d streams", p.Streams)}} {
		for _, k := range slices.Sorted(maps.Keys(set.m)) {
			out = append(out, stored.Setting{Name: k + " (TPC-H " + set.test + ")", Value: set.m[k]})
		}
	}
	return out
}
