package report

import (
	"fmt"
	"strings"
)

// environmentSection is the hardware and software tables, one column per
// run. A run without a captured inventory shows unknown everywhere.
func environmentSection(runs []*runData) *Section {
	s := &Section{ID: "environment", Title: "Environment"}
	s.text("What each run ran on, captured when it started. Facts tierbench could not read are shown as unknown.")
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
		{"tierbench", env(func(rd *runData) string { return orUnknown(rd.Env.Software.Tierbench) })},
		{"fio", env(func(rd *runData) string {
			if rd.Kind != "disk" {
				return "not used"
			}
			return orUnknown(rd.Env.Software.Fio)
		})},
		{"Go", env(func(rd *runData) string { return orUnknown(rd.Env.Software.Go) })},
	}
	// Database settings: the union of names, in the order first seen.
	var names []string
	seen := map[string]bool{}
	for _, rd := range runs {
		if rd.Env == nil || rd.Env.Database == nil {
			continue
		}
		for _, st := range rd.Env.Database.Settings {
			if !seen[st.Name] {
				seen[st.Name] = true
				names = append(names, st.Name)
			}
		}
	}
	var settings []fact
	for _, name := range names {
		settings = append(settings, fact{name, func(rd *runData) string {
			if rd.Env == nil || rd.Env.Database == nil {
				return "–"
			}
			for _, st := range rd.Env.Database.Settings {
				if st.Name == name {
					return st.Value
				}
			}
			return unknown
		}})
	}
	s.table(&Table{ID: "environment-hardware", Caption: "Hardware and storage", Header: header, Rows: rows(hardware)})
	s.table(&Table{ID: "environment-software", Caption: "Software", Header: header, Rows: rows(software)})
	s.table(&Table{ID: "environment-database-settings", Caption: "Database settings that matter (memory, durability, checkpoints, WAL)",
		Header: header, Rows: rows(settings)})
	return s
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
