package scenario

import (
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/durability"
	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/stored"

	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/internal/space"

	"github.com/tierbench/tierbench/internal/engine"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/threshold"
	"github.com/tierbench/tierbench/internal/tier"
	"github.com/tierbench/tierbench/internal/units"
)

var (
	targetKeys  = []string{"name", "path", "emulate"}
	emulateKeys = []string{"loop", "fs", "compress", "checksum", "read_iops", "write_iops", "read_mbps", "write_mbps"}
	serverKeys  = []string{"name", "engine", "target", "host", "hosts", "dsn", "count", "memory", "settings"}
	modes       = []string{engine.ModeRoutines, engine.ModeStatements}

	// A range of instances: db-1..8 or db-1..db-8.
	rangeRE = regexp.MustCompile(`^(.+)-(\d+)\.\.(?:(.+)-)?(\d+)$`)
)

// Limits that catch typos (an extra zero) rather than describe hardware.
const (
	maxCount = 1000
)

func (p *parser) parseTargets(f field) {
	if f.val == nil {
		return
	}
	items, ok := p.list(f.val, "targets")
	if !ok {
		return
	}
	for _, it := range items {
		if it.Kind != yaml.MappingNode {
			p.at(it, "a target is a mapping with a name and a path, not %s", kindName(it))
			continue
		}
		what := "target " + peekName(it)
		fs := p.fields(it, what, targetKeys)
		p.required(it, fs, what, "name", "path")
		t := Target{Line: it.Line}
		dup := false
		if f, ok := fs["name"]; ok {
			if name, ok := p.name(f.val, "target name"); ok {
				t.Name = name
				if i, seen := p.targets[name]; seen {
					p.bad(f.val, "target %s is defined twice (first on line %d)", name, p.sc.Targets[i].Line)
					dup = true
				}
			}
		}
		if f, ok := fs["path"]; ok {
			if s, ok := p.text(f.val, what+": path"); ok {
				if strings.TrimSpace(s) == "" {
					p.bad(f.val, "%s: path is empty; give a directory (created if missing)", what)
				}
				t.Path = s
			}
		}
		if f, ok := fs["emulate"]; ok {
			t.Emulate = p.emulate(f.val, what)
		}
		if t.Name != "" && !dup {
			p.targets[t.Name] = len(p.sc.Targets)
			p.sc.Targets = append(p.sc.Targets, t)
		}
	}
}

// emulate reads an emulate block; all zero (how a scale turns emulation off)
// is nil.
func (p *parser) emulate(n *yaml.Node, what string) *Emulate {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.at(n, "%s: emulate must be a mapping of %s, not %s", what, strings.Join(emulateKeys, ", "), kindName(n))
		return nil
	}
	what += ": emulate"
	fs := p.fields(n, what, emulateKeys)
	var e Emulate
	if f, ok := fs["loop"]; ok {
		e.Loop, _ = p.size(f.val, what+" loop")
		if e.Loop > 0 && e.Loop < 64<<20 {
			p.bad(f.val, "%s loop: an image of %s is too small for a file system and data; give 64MiB or more (0: no image)",
				what, units.FormatSize(e.Loop))
		}
	}
	// The image's file system: ext4, or btrfs with inline compression and
	// data checksums (docs/tiers.md).
	for _, x := range []struct {
		key string
		v   *string
	}{{"fs", &e.FS}, {"compress", &e.Compress}} {
		if f, ok := fs[x.key]; ok {
			*x.v, _ = p.text(f.val, what+" "+x.key)
		}
	}
	var fsNode *yaml.Node
	for _, k := range []string{"fs", "compress", "checksum"} {
		if f, ok := fs[k]; ok && fsNode == nil {
			fsNode = f.key
		}
	}
	if f, ok := fs["checksum"]; ok {
		if on, ok := p.boolean(f.val, what+" checksum"); ok {
			e.Checksum = &on
		}
	}
	if fsNode != nil {
		o := tier.Options{FS: e.FS, Compress: e.Compress, Checksum: e.Checksum}
		switch err := o.Check(); {
		case e.Loop == 0:
			p.bad(fsNode, "%s: fs, compress and checksum are the loop image's; give loop too (e.g. loop: 2GiB), or leave them out", what)
		case err != nil:
			p.bad(fsNode, "%s: %v", what, err)
		}
	}
	// The throttles are numbers here; what a throttle may be is the
	// experiment layer's rule, the one `server start` applies too.
	for _, x := range []struct {
		key string
		v   *int64
	}{{"read_iops", &e.ReadIOPS}, {"write_iops", &e.WriteIOPS}} {
		if f, ok := fs[x.key]; ok {
			v, _ := p.integer(f.val, what+" "+x.key, math.MinInt, math.MaxInt)
			*x.v = int64(v)
		}
	}
	for _, x := range []struct {
		key string
		v   *float64
	}{{"read_mbps", &e.ReadMBps}, {"write_mbps", &e.WriteMBps}} {
		if f, ok := fs[x.key]; ok {
			if s, ok := p.text(f.val, what+" "+x.key); ok {
				if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
					p.bad(f.val, "%s %s: %q is not a number", what, x.key, s)
				} else {
					*x.v = v
				}
			}
		}
	}
	p.problems(e.Throttle().Validate(), what, func(pr *experiment.Problem) *yaml.Node {
		if f, ok := fs[pr.Field]; ok {
			return f.val
		}
		return n
	})
	if e == (Emulate{}) {
		return nil
	}
	return &e
}

func (p *parser) parseServers(f field) {
	if f.val == nil {
		return
	}
	items, ok := p.list(f.val, "servers")
	if !ok {
		return
	}
	for _, it := range items {
		if it.Kind != yaml.MappingNode {
			p.at(it, "a server is a mapping with a name, an engine and a target, not %s", kindName(it))
			continue
		}
		what := "server " + peekName(it)
		fs := p.fields(it, what, serverKeys)
		s := Server{Line: it.Line, Count: 1}
		if f, ok := fs["dsn"]; ok {
			p.required(it, fs, what, "name")
			s.DSN, s.Engine = p.unmanaged(f, fs, what)
		} else {
			p.required(it, fs, what, "name", "engine", "target")
		}
		var nameNode *yaml.Node
		if f, ok := fs["name"]; ok {
			nameNode = f.val
			if name, ok := p.name(f.val, "server name"); ok {
				s.Name = name
			}
		}
		if f, ok := fs["engine"]; ok && s.Managed() {
			s.Engine, _ = p.text(f.val, what+": engine")
		}
		if f, ok := fs["target"]; ok && s.Managed() {
			s.Target, _ = p.targetRef(f.val, what+": target")
		}
		if f, ok := fs["host"]; ok {
			s.Hosts = p.serverHosts(f.val, what, s, false)
			if g, ok := fs["hosts"]; ok {
				p.at(g.key, "%s: give host (one) or hosts (a list), not both", what)
			}
		} else if f, ok := fs["hosts"]; ok {
			s.Hosts = p.serverHosts(f.val, what, s, true)
		}
		if f, ok := fs["count"]; ok {
			if c, ok := p.integer(f.val, what+": count", 1, maxCount); ok {
				s.Count = c
			}
		}
		if f, ok := fs["memory"]; ok {
			s.Memory, _ = p.size(f.val, what+": memory")
		}
		var settingKeys map[string]*yaml.Node
		if f, ok := fs["settings"]; ok {
			s.Settings, settingKeys = p.settings(f.val, what)
		}
		if s.Managed() {
			p.checkServer(s, what, fs, settingKeys, it)
		}
		if s.Name == "" {
			continue
		}
		if i, dup := p.servers[s.Name]; dup {
			p.at(nameNode, "server %s is defined twice (first on line %d)", s.Name, p.sc.Servers[i].Line)
			continue
		}
		clash := false
		for _, inst := range s.Instances() {
			if other, taken := p.instanceOf[inst]; taken {
				p.at(nameNode, "%s: its instance %s has the name of an instance of server %s; rename one of them", what, inst, other)
				clash = true
				break
			}
		}
		if clash {
			continue
		}
		for _, inst := range s.Instances() {
			p.instanceOf[inst] = s.Name
		}
		p.servers[s.Name] = len(p.sc.Servers)
		p.sc.Servers = append(p.sc.Servers, s)
	}
}

// peekName is a mapping's name field as written, to say which target or
// server a message is about before the fields are read.
func peekName(n *yaml.Node) string {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i], n.Content[i+1]; k.Value == "name" && v.Kind == yaml.ScalarNode && v.Value != "" {
			return unmark(v.Value)
		}
	}
	return "(unnamed)"
}

// settings reads a server's settings, and the key node of each; what a
// setting's name may be is the experiment layer's rule (checkServer).
func (p *parser) settings(n *yaml.Node, what string) (map[string]string, map[string]*yaml.Node) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		p.at(n, "%s: settings must be a mapping of setting names to values, not %s", what, kindName(n))
		return nil, nil
	}
	out, keys := map[string]string{}, map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.at(k, "%s: a setting's name is a word, not %s", what, kindName(k))
			continue
		}
		if _, dup := out[k.Value]; dup {
			p.at(k, "%s: setting %s is given twice", what, k.Value)
			continue
		}
		if val, ok := p.text(v, what+": setting "+k.Value); ok {
			out[k.Value], keys[k.Value] = val, k
		}
	}
	return out, keys
}

// checkServer checks a managed server with the rules its start applies
// (experiment.ServerConfig.Validate), whether it runs here or on a host:
// a host runs the same tierbench (CheckVersions), so these are the host's
// rules too. Each problem is reported at its key's value.
func (p *parser) checkServer(s Server, what string, fs map[string]field, settingKeys map[string]*yaml.Node, at *yaml.Node) {
	var em *Emulate
	if i, ok := p.targets[s.Target]; ok {
		em = p.sc.Targets[i].Emulate
	}
	listen := ""
	if len(s.Hosts) > 0 {
		if h, ok := p.sc.Host(s.Hosts[0]); ok {
			listen = h.Address
		}
	}
	cfg := serverConfig(s, path.Join("DIR", s.Name), listen, em)
	// The target's throttles are checked, and reported, at the target;
	// the data directory is made when the scenario runs.
	err := experiment.Except(cfg.Validate(), "datadir", "read_iops", "write_iops", "read_mbps", "write_mbps")
	p.problems(err, what, func(pr *experiment.Problem) *yaml.Node {
		if pr.Field == "settings" {
			for name, k := range settingKeys {
				if strconv.Quote(name) == pr.Value {
					return k
				}
			}
		}
		key := map[string]string{"listen": "host"}[pr.Field]
		if key == "" {
			key = pr.Field
		}
		if f, ok := fs[key]; ok {
			return f.val
		}
		if f, ok := fs["hosts"]; ok && pr.Field == "listen" {
			return f.val
		}
		return at
	})
}

// problems reports the experiment layer's Problems in err, each at the
// node nodeOf gives, after what: "server db: memory 100MiB is …".
func (p *parser) problems(err error, what string, nodeOf func(*experiment.Problem) *yaml.Node) {
	for _, pr := range experiment.Problems(err) {
		if n := nodeOf(pr); !p.blamed[n] { // a value reported bad already holds a zero here
			p.bad(n, "%s: %s", what, pr.Error())
		}
	}
}

func (p *parser) targetRef(n *yaml.Node, what string) (string, bool) {
	s, ok := p.text(n, what)
	if !ok {
		return "", false
	}
	if _, ok := p.targets[s]; !ok {
		p.bad(n, "%s %q is not defined; %s", what, s, defined("targets", p.targetNames()))
		return "", false
	}
	return s, true
}

func (p *parser) serverRef(n *yaml.Node, what string) (Server, bool) {
	s, ok := p.text(n, what)
	if !ok {
		return Server{}, false
	}
	i, ok := p.servers[s]
	if !ok {
		p.bad(n, "%s %q is not defined; %s", what, s, defined("servers", p.serverNames()))
		return Server{}, false
	}
	return p.sc.Servers[i], true
}

func defined(what string, names []string) string {
	if len(names) == 0 {
		return "no " + what + " are defined"
	}
	return "defined " + what + ": " + strings.Join(names, ", ")
}

func (p *parser) targetNames() []string {
	var out []string
	for _, t := range p.sc.Targets {
		if t.Name != "" {
			out = append(out, t.Name)
		}
	}
	return out
}

func (p *parser) serverNames() []string {
	var out []string
	for _, s := range p.sc.Servers {
		out = append(out, s.Name)
	}
	return out
}

func (p *parser) parseSteps(f field) {
	items, ok := p.list(f.val, "steps")
	if !ok {
		return
	}
	if len(items) == 0 {
		p.at(f.key, "steps is empty; add at least one step (%s)", strings.Join(Kinds, ", "))
		return
	}
	for _, it := range items {
		var kindNode, body *yaml.Node
		switch {
		case it.Kind == yaml.ScalarNode && !isNull(it):
			kindNode = it // "- report": a step with no fields
		case it.Kind == yaml.MappingNode && len(it.Content) == 2:
			kindNode, body = deref(it.Content[0]), deref(it.Content[1])
		case it.Kind == yaml.MappingNode && len(it.Content) > 2:
			var keys []string
			for i := 0; i < len(it.Content); i += 2 {
				keys = append(keys, it.Content[i].Value)
			}
			p.at(it, "a step has one key, its kind; this one has %d (%s): is a field indented too little?",
				len(keys), strings.Join(keys, ", "))
			continue
		default:
			p.at(it, "a step is a mapping of its kind (%s) to its fields, e.g. - check: {server: db}; this is %s",
				strings.Join(Kinds, ", "), kindName(it))
			continue
		}
		kind := kindNode.Value
		if kindNode.Kind != yaml.ScalarNode || !slices.Contains(Kinds, kind) {
			p.at(kindNode, "unknown step kind %q%s; known kinds: %s", kind, suggest(kind, Kinds), strings.Join(Kinds, ", "))
			continue
		}
		if body != nil && isNull(body) {
			body = nil
		}
		if body != nil && body.Kind != yaml.MappingNode {
			p.at(body, "%s: the fields must be a mapping such as {server: db}, not %s", kind, kindName(body))
			continue
		}
		st := Step{Kind: kind, Line: kindNode.Line}
		switch kind {
		case KindDisk:
			st.Disk = p.diskStep(kindNode, body)
		case KindTPCCBuild:
			st.TPCCBuild = p.tpccBuildStep(kindNode, body)
		case KindTPCCRun:
			st.TPCCRun = p.tpccRunStep(kindNode, body)
		case KindTPCHBuild:
			st.TPCHBuild = p.tpchBuildStep(kindNode, body)
		case KindTPCHRun:
			st.TPCHRun = p.tpchRunStep(kindNode, body)
		case KindBackup:
			st.Backup = p.backupStep(kindNode, body)
		case KindNeighbours:
			st.Neighbours = p.neighboursStep(kindNode, body)
		case KindCheck:
			st.Check = p.checkStep(kindNode, body)
		case KindDurability:
			st.Durability = p.durabilityStep(kindNode, body)
		case KindSpace:
			st.Space = p.spaceStep(kindNode, body)
		case KindStop:
			st.Stop = p.stopStep(kindNode, body)
		case KindReport:
			st.Report = p.reportStep(body)
		}
		p.sc.Steps = append(p.sc.Steps, st)
	}
}

func (p *parser) diskStep(at, body *yaml.Node) *DiskStep {
	const what = KindDisk
	fs := p.fields(body, what, []string{"target", "profile", "duration", "ramp", "size", "hosts", "thresholds", "repeat", "back_to_back", "rate", "knee_p99"})
	p.required(at, fs, what, "target")
	st := &DiskStep{Profile: "quick", Thresholds: p.thresholds(fs, what, stored.KindDisk), Repetitions: p.repetitions(fs, what, true)}
	if f, ok := fs["hosts"]; ok {
		st.Hosts = p.fioHosts(f.val, what)
	}
	if f, ok := fs["target"]; ok {
		st.Target, _ = p.targetRef(f.val, what+": target")
	}
	if f, ok := fs["profile"]; ok {
		if s, ok := p.text(f.val, what+": profile"); ok {
			if _, err := fio.LookupProfile(s); err != nil {
				p.bad(f.val, "%s: %v", what, err)
			}
			st.Profile = s
		}
	}
	if f, ok := fs["duration"]; ok {
		st.Duration, _ = p.duration(f.val, what+": duration (0: the profile's)", false)
	}
	if f, ok := fs["ramp"]; ok {
		if d, ok := p.duration(f.val, what+": ramp", false); ok {
			st.Ramp = &d
		}
	}
	if f, ok := fs["size"]; ok {
		st.Size, _ = p.size(f.val, what+": size")
	}
	if f, ok := fs["rate"]; ok {
		var r Rate
		p.rateList(f.val, what+": rate", &r)
		st.Rates, st.Fractions = r.Rates, r.Fractions
	}
	if f, ok := fs["knee_p99"]; ok {
		st.KneeP99, _ = p.duration(f.val, what+": knee_p99", false)
	}
	if cfg, err := diskConfig(st); err == nil {
		if t, ok := p.sc.Target(st.Target); ok {
			cfg.Target = t.Path
		}
		p.refuse(experiment.Except(cfg.Validate(), supplied...), fs, what, map[string]string{"points": "profile", "rate_iops": "rate"})
	}
	return st
}

func (p *parser) tpccBuildStep(at, body *yaml.Node) *TPCCBuildStep {
	const what = KindTPCCBuild
	fs := p.fields(body, what, []string{"server", "warehouses", "build_vus", "from"})
	if _, copied := fs["from"]; copied {
		p.required(at, fs, what, "server")
	} else {
		p.required(at, fs, what, "server", "warehouses")
	}
	st := &TPCCBuildStep{}
	var to Server
	if f, ok := fs["server"]; ok {
		if s, ok := p.serverRef(f.val, what+": server"); ok {
			st.Server, st.Instances, to = s.Name, s.Instances(), s
		}
	}
	if f, ok := fs["warehouses"]; ok {
		st.Warehouses, _ = p.integer(f.val, what+": warehouses", math.MinInt, math.MaxInt)
	}
	if f, ok := fs["from"]; ok {
		p.copyFrom(f.val, st, to)
	}
	if st.From == "" && st.Server != "" {
		if p.built == nil {
			p.built = map[string]int{}
		}
		p.built[st.Server] = st.Warehouses
	}
	cfg := experiment.BuildConfig{Warehouses: st.Warehouses, BuildVUs: 1} // build_vus 0: one per core
	if f, ok := fs["build_vus"]; ok {
		st.BuildVUs, _ = p.integer(f.val, what+": build_vus", math.MinInt, math.MaxInt)
		cfg.BuildVUs = st.BuildVUs
	}
	p.refuse(cfg.Validate(), fs, what, nil)
	return st
}

// copyFrom reads a tpcc-build step's from: a server on the controller,
// of the same engine, that an earlier tpcc-build step built with the same
// warehouses (when the step gives them).
func (p *parser) copyFrom(n *yaml.Node, st *TPCCBuildStep, to Server) {
	src, ok := p.serverRef(n, KindTPCCBuild+": from")
	if !ok {
		return
	}
	w, built := p.built[src.Name]
	switch {
	case src.Name == st.Server:
		p.bad(n, "%s: from %q is the server itself; name another server whose schema an earlier tpcc-build step built", KindTPCCBuild, src.Name)
	case !built:
		p.bad(n, "%s: from %q has no schema yet; build it with a tpcc-build step before this one", KindTPCCBuild, src.Name)
	case to.Name != "" && src.Engine != to.Engine:
		p.bad(n, "%s: from %q is a %s server and %s is %s; a data directory copies only to the same engine", KindTPCCBuild, src.Name, src.Engine, to.Name, to.Engine)
	case len(src.Hosts) > 0 || len(to.Hosts) > 0:
		p.bad(n, "%s: from %q copies a data directory on the controller; servers on other hosts build their own schema", KindTPCCBuild, src.Name)
	case st.Warehouses != 0 && st.Warehouses != w:
		p.bad(n, "%s: from %q has %d warehouses, not %d; leave warehouses out to copy its schema as built", KindTPCCBuild, src.Name, w, st.Warehouses)
	default:
		st.From, st.FromInstance, st.Warehouses = src.Name, src.Instances()[0], w
	}
}

// thresholds reads a step's thresholds: a list of expressions (or one),
// each checked as --threshold checks it, its error at its own line.
func (p *parser) thresholds(fs map[string]field, what, kind string) []string {
	f, ok := fs["thresholds"]
	if !ok {
		return nil
	}
	items := []*yaml.Node{f.val}
	if f.val.Kind == yaml.SequenceNode || isNull(f.val) {
		if items, ok = p.list(f.val, what+": thresholds"); !ok {
			return nil
		}
	}
	var out []string
	for _, n := range items {
		s, ok := p.text(n, what+": thresholds")
		if !ok {
			continue
		}
		if _, err := threshold.Parse(kind, []string{s}); err != nil {
			p.bad(n, "%s: %v", what, err) // one expression: one line
			continue
		}
		out = append(out, s)
	}
	return out
}

// mode reads a step's TPC-C mode (its rule is the run's Validate).
func (p *parser) mode(fs map[string]field, what string) string {
	f, ok := fs["mode"]
	if !ok {
		return engine.ModeRoutines
	}
	s, _ := p.text(f.val, what+": mode")
	return s
}

// repetitions reads a measuring step's repeat (default: the scenario's)
// and, where its points can be ordered (interleaved), back_to_back.
func (p *parser) repetitions(fs map[string]field, what string, ordered bool) Repetitions {
	r := Repetitions{Repeat: p.sc.Repeat}
	if f, ok := fs["repeat"]; ok {
		if n, ok := p.integer(f.val, what+": repeat", math.MinInt, math.MaxInt); ok {
			r.Repeat = n
		}
	}
	if f, ok := fs["back_to_back"]; ok && ordered {
		r.BackToBack, _ = p.boolean(f.val, what+": back_to_back")
	}
	return r
}

func (p *parser) tpccRunStep(at, body *yaml.Node) *TPCCRunStep {
	const what = KindTPCCRun
	fs := p.fields(body, what, []string{"server", "vus", "rampup", "duration", "mode", "thresholds", "repeat", "back_to_back",
		"rate", "arrival", "late_after", "probe", "knee_p99", "keying_thinking", "think_time"})
	p.required(at, fs, what, "server", "vus", "rampup", "duration")
	st := &TPCCRunStep{Mode: p.mode(fs, what), Thresholds: p.thresholds(fs, what, stored.KindTPCC), Repetitions: p.repetitions(fs, what, true),
		Pace: p.pace(fs, what)}
	if f, ok := fs["server"]; ok {
		if s, ok := p.serverRef(f.val, what+": server"); ok {
			st.Server, st.Instances = s.Name, s.Instances()
		}
	}
	if f, ok := fs["vus"]; ok {
		st.VUs, _ = p.countList(f.val, what+": vus")
	}
	if f, ok := fs["rampup"]; ok {
		st.RampUp, _ = p.duration(f.val, what+": rampup", false)
	}
	if f, ok := fs["duration"]; ok {
		st.Duration, _ = p.duration(f.val, what+": duration", false)
	}
	st.Rate = p.rate(fs, what)
	cfg := tpccConfig(st.VUs, st.RampUp, st.Duration, st.Repetitions, st.Mode, st.Rate, st.Pace)
	p.refuse(experiment.Except(cfg.Validate(), supplied...), fs, what, nil)
	return st
}

func (p *parser) tpchBuildStep(at, body *yaml.Node) *TPCHBuildStep {
	const what = KindTPCHBuild
	fs := p.fields(body, what, []string{"server", "scale", "build_vus"})
	p.required(at, fs, what, "server", "scale")
	st := &TPCHBuildStep{}
	if f, ok := fs["server"]; ok {
		if s, ok := p.serverRef(f.val, what+": server"); ok {
			st.Server, st.Instances = s.Name, s.Instances()
			if p.tpchBuilt == nil {
				p.tpchBuilt = map[string]bool{}
			}
			p.tpchBuilt[s.Name] = true
		}
	}
	if f, ok := fs["scale"]; ok {
		st.Scale, _ = p.float(f.val, what+": scale")
	}
	if f, ok := fs["build_vus"]; ok {
		st.BuildVUs, _ = p.integer(f.val, what+": build_vus", math.MinInt, math.MaxInt)
	}
	p.refuse(tpchBuildConfig(st).Validate(), fs, what, nil)
	return st
}

func (p *parser) tpchRunStep(at, body *yaml.Node) *TPCHRunStep {
	const what = KindTPCHRun
	fs := p.fields(body, what, []string{"server", "seed", "validate", "no_refresh", "streams", "repeat", "timeout", "thresholds"})
	p.required(at, fs, what, "server")
	st := &TPCHRunStep{Thresholds: p.thresholds(fs, what, stored.KindTPCH), Repeat: p.repetitions(fs, what, false).Repeat}
	if f, ok := fs["server"]; ok {
		if s, ok := p.serverRef(f.val, what+": server"); ok {
			st.Server, st.Instances = s.Name, s.Instances()
			if !p.tpchBuilt[s.Name] {
				p.bad(f.val, "%s: server %q has no TPC-H tables yet; build them with a tpch-build step before this one", what, s.Name)
			}
		}
	}
	if f, ok := fs["seed"]; ok {
		if n, ok := p.integer(f.val, what+": seed", math.MinInt, math.MaxInt); ok {
			st.Seed = int64(n)
		}
	}
	if f, ok := fs["validate"]; ok {
		st.Validate, _ = p.boolean(f.val, what+": validate")
	}
	if f, ok := fs["no_refresh"]; ok {
		st.NoRefresh, _ = p.boolean(f.val, what+": no_refresh")
	}
	if f, ok := fs["streams"]; ok {
		if n, ok := p.integer(f.val, what+": streams", math.MinInt, math.MaxInt); ok {
			st.Streams = n
			p.refuse(experiment.GivenStreams(n), fs, what, nil)
		}
	}
	if f, ok := fs["timeout"]; ok {
		st.Timeout, _ = p.duration(f.val, what+": timeout (0: none)", false)
	}
	p.refuse(experiment.Except(tpchRunConfig(st).Validate(), supplied...), fs, what, nil)
	return st
}

// rate reads a TPC-C step's open-loop fields: rate, arrival, late_after,
// probe and knee_p99, those of them the step's fields allow.
func (p *parser) rate(fs map[string]field, what string) Rate {
	var r Rate
	if f, ok := fs["rate"]; ok {
		p.rateList(f.val, what+": rate", &r)
	}
	if f, ok := fs["arrival"]; ok {
		r.Arrival, _ = p.text(f.val, what+": arrival")
	}
	for _, o := range []struct {
		key string
		to  **time.Duration
	}{{"late_after", &r.LateAfter}, {"probe", &r.Probe}, {"knee_p99", &r.KneeP99}} {
		if f, ok := fs[o.key]; ok {
			if d, ok := p.duration(f.val, what+": "+o.key, false); ok {
				*o.to = &d
			}
		}
	}
	return r
}

// pace reads a TPC-C step's closed-loop pacing: keying_thinking and
// think_time.
func (p *parser) pace(fs map[string]field, what string) Pace {
	var c Pace
	if f, ok := fs["keying_thinking"]; ok {
		c.KeyingThinking, _ = p.boolean(f.val, what+": keying_thinking")
	}
	if f, ok := fs["think_time"]; ok {
		c.ThinkTime, _ = p.duration(f.val, what+": think_time", false)
	}
	return c
}

func (p *parser) backupStep(at, body *yaml.Node) *BackupStep {
	const what = KindBackup
	fs := p.fields(body, what, []string{"server", "target", "cycles", "interval", "logical", "repeat"})
	p.required(at, fs, what, "server")
	st := &BackupStep{Cycles: 1, Repeat: p.repetitions(fs, what, false).Repeat}
	if f, ok := fs["server"]; ok {
		if s, ok := p.serverRef(f.val, what+": server"); ok {
			st.Server, st.Instances, st.Target = s.Name, s.Instances(), s.Target
			p.needsManaged(f.val, what, s, "backs up its data directory")
		}
	}
	if f, ok := fs["target"]; ok {
		st.Target, _ = p.targetRef(f.val, what+": target")
	}
	if f, ok := fs["cycles"]; ok {
		st.Cycles, _ = p.integer(f.val, what+": cycles", math.MinInt, math.MaxInt)
	}
	if f, ok := fs["interval"]; ok {
		st.Interval, _ = p.duration(f.val, what+": interval", false)
	}
	if f, ok := fs["logical"]; ok {
		st.Logical, _ = p.boolean(f.val, what+": logical")
	}
	cfg := backupConfig(st.Cycles, st.Repeat, st.Interval, time.Time{}, st.Logical)
	p.refuse(experiment.Except(cfg.Validate(), append(supplied, "target")...), fs, what, nil)
	return st
}

func (p *parser) neighboursStep(at, body *yaml.Node) *NeighboursStep {
	const what = KindNeighbours
	fs := p.fields(body, what, []string{"tpcc", "backup", "vus", "rampup", "duration", "cycles", "interval", "target", "logical", "mode", "thresholds",
		"repeat", "rate", "arrival", "late_after", "keying_thinking", "think_time"})
	p.required(at, fs, what, "tpcc", "vus", "rampup", "duration")
	st := &NeighboursStep{Mode: p.mode(fs, what), Thresholds: p.thresholds(fs, what, stored.KindTPCC), Repeat: p.repetitions(fs, what, false).Repeat,
		Rate: p.rate(fs, what), Pace: p.pace(fs, what)}
	if f, ok := fs["rate"]; ok {
		switch {
		case len(st.Rate.Fractions) > 0:
			// A percentage needs each instance's probe, which would run
			// beside the others' and the backups.
			p.bad(f.val, "%s: rate: give transactions a minute per TPC-C instance, e.g. 6000; a percentage of the most it serves needs "+
				"a closed-loop probe, which a neighbours step does not run (measure it with a tpcc-run step first)", what)
		case len(st.Rate.Rates) > 1:
			p.bad(f.val, "%s: rate: give one rate, in transactions a minute per TPC-C instance, not %d: a neighbours step has one measured interval",
				what, len(st.Rate.Rates))
		}
	}
	seen := map[string]*yaml.Node{}
	addServer := func(inst string) {
		if s := p.instanceOf[inst]; !slices.Contains(st.Servers, s) {
			st.Servers = append(st.Servers, s)
		}
	}
	if f, ok := fs["tpcc"]; ok {
		st.TPCC = p.instances(f.val, what+": tpcc", seen, true)
	}
	if f, ok := fs["backup"]; ok {
		st.Backup = p.instances(f.val, what+": backup", seen, false)
		for _, inst := range st.Backup {
			if s, ok := p.sc.Server(p.instanceOf[inst]); ok && !p.needsManaged(f.val, what+": backup", s, "backs up its data directory") {
				break
			}
		}
	}
	for _, inst := range append(slices.Clone(st.TPCC), st.Backup...) {
		addServer(inst)
	}
	if f, ok := fs["vus"]; ok {
		st.VUs, _ = p.integer(f.val, what+": vus (one count per TPC-C instance)", math.MinInt, math.MaxInt)
	}
	if f, ok := fs["rampup"]; ok {
		st.RampUp, _ = p.duration(f.val, what+": rampup", false)
	}
	durOK := false
	if f, ok := fs["duration"]; ok {
		st.Duration, durOK = p.duration(f.val, what+": duration", false)
	}
	if _, ok := fs["vus"]; ok {
		cfg := tpccConfig([]int{st.VUs}, st.RampUp, st.Duration, Repetitions{Repeat: st.Repeat}, st.Mode, st.Rate, st.Pace)
		p.refuse(experiment.Except(cfg.Validate(), supplied...), fs, what, nil)
	}
	if f, ok := fs["target"]; ok {
		st.Target, _ = p.targetRef(f.val, what+": target")
	}
	if f, ok := fs["logical"]; ok {
		st.Logical, _ = p.boolean(f.val, what+": logical")
	}
	cyclesF, hasCycles := fs["cycles"]
	intervalF, hasInterval := fs["interval"]
	if f, ok := fs["backup"]; !ok || isEmpty(f.val) {
		for _, f := range []field{cyclesF, intervalF} {
			if f.key != nil {
				p.at(f.key, "%s: %s applies to backup instances, and backup names none", what, f.key.Value)
			}
		}
		return st
	}
	if !hasCycles {
		p.at(at, "%s: missing cycles (how many backups each backup instance runs)", what)
	}
	cyclesOK, intervalOK := false, false
	if hasCycles {
		st.Cycles, cyclesOK = p.integer(cyclesF.val, what+": cycles", math.MinInt, math.MaxInt)
	}
	if hasInterval {
		st.Interval, intervalOK = p.duration(intervalF.val, what+": interval", true)
	} else if cyclesOK && st.Cycles > 1 {
		p.at(at, "%s: missing interval (the time between the starts of backup cycles)", what)
	}
	cfg := backupConfig(st.Cycles, 1, st.Interval, time.Time{}, st.Logical)
	if err := experiment.Except(cfg.Validate(), append(supplied, "target")...); err != nil {
		p.refuse(err, fs, what, nil)
		cyclesOK = cyclesOK && !p.blamed[cyclesF.val]
	}
	if cyclesOK && intervalOK && durOK {
		if need := st.Interval * time.Duration(st.Cycles); need > st.Duration {
			p.bad(fs["duration"].val, "%s: duration %s is shorter than the backups need: %d cycles every %s = %s; lengthen duration or shorten interval",
				what, st.Duration, st.Cycles, st.Interval, need)
		}
	}
	return st
}

// isEmpty: null, [] or "".
func isEmpty(n *yaml.Node) bool {
	return isNull(n) || (n.Kind == yaml.SequenceNode && len(n.Content) == 0) || (n.Kind == yaml.ScalarNode && n.Value == "")
}

// instances reads a list of instances: NAME (one instance, or every instance
// of a server), or a range SERVER-A..B. Each may appear once in a step.
func (p *parser) instances(n *yaml.Node, what string, seen map[string]*yaml.Node, needOne bool) []string {
	es, ok := p.entries(n, what)
	if ok && len(es) == 0 && needOne {
		p.bad(n, "%s names no instance; name instances (db-1), servers (db) or ranges (db-1..4)", what)
	}
	var out []string
	for _, e := range es {
		names, ok := p.expandInstance(e, what)
		if !ok {
			continue
		}
		for _, inst := range names {
			if prev, dup := seen[inst]; dup {
				p.bad(e.node, "%s: instance %s is already listed (line %d); each instance runs one thing", what, inst, prev.Line)
				continue
			}
			seen[inst] = e.node
			out = append(out, inst)
		}
	}
	return out
}

func (p *parser) expandInstance(e entry, what string) ([]string, bool) {
	if i, ok := p.servers[e.text]; ok {
		return p.sc.Servers[i].Instances(), true
	}
	if _, ok := p.instanceOf[e.text]; ok {
		return []string{e.text}, true
	}
	if m := rangeRE.FindStringSubmatch(e.text); m != nil && (m[3] == "" || m[3] == m[1]) {
		i, ok := p.servers[m[1]]
		a, errA := strconv.Atoi(m[2])
		b, errB := strconv.Atoi(m[4])
		switch {
		case !ok:
			p.bad(e.node, "%s: %s: server %q is not defined; %s", what, e.text, m[1], defined("servers", p.serverNames()))
			return nil, false
		case errA != nil || errB != nil || a < 1 || b < a:
			p.bad(e.node, "%s: range %s must run from a low instance number to a higher one, e.g. %s-1..2", what, e.text, m[1])
			return nil, false
		case p.sc.Servers[i].Total() < 2 || b > p.sc.Servers[i].Total():
			p.bad(e.node, "%s: %s names instances that do not exist: %s", what, e.text, instancesOf(p.sc.Servers[i]))
			return nil, false
		}
		var out []string
		for k := a; k <= b; k++ {
			out = append(out, fmt.Sprintf("%s-%d", m[1], k))
		}
		return out, true
	}
	// Say what exists: the instances of the server the name looks like.
	if j := strings.LastIndexByte(e.text, '-'); j > 0 {
		if i, ok := p.servers[e.text[:j]]; ok {
			p.bad(e.node, "%s: instance %s does not exist: %s", what, e.text, instancesOf(p.sc.Servers[i]))
			return nil, false
		}
	}
	var all []string
	for _, s := range p.sc.Servers {
		all = append(all, s.Instances()...)
	}
	p.bad(e.node, "%s: instance %q does not exist; %s", what, e.text, defined("instances", all))
	return nil, false
}

func instancesOf(s Server) string {
	inst := s.Instances()
	if len(inst) == 1 {
		return fmt.Sprintf("server %s has one instance, named %s", s.Name, s.Name)
	}
	return fmt.Sprintf("server %s has %d instances, %s … %s", s.Name, len(inst), inst[0], inst[len(inst)-1])
}

func (p *parser) checkStep(at, body *yaml.Node) *CheckStep {
	const what = KindCheck
	fs := p.fields(body, what, []string{"server", "all"})
	p.required(at, fs, what, "server")
	st := &CheckStep{}
	if f, ok := fs["server"]; ok {
		if s, ok := p.serverRef(f.val, what+": server"); ok {
			st.Server, st.Instances = s.Name, s.Instances()
		}
	}
	if f, ok := fs["all"]; ok {
		st.All, _ = p.boolean(f.val, what+": all")
	}
	return st
}

func (p *parser) durabilityStep(at, body *yaml.Node) *DurabilityStep {
	const what = KindDurability
	fs := p.fields(body, what, []string{"server", "cycles", "vus", "rate", "run_before_fault", "fault", "recover_timeout", "mode", "cold_cache"})
	p.required(at, fs, what, "server")
	d := experiment.NewDurabilityConfig()
	st := &DurabilityStep{Cycles: d.Cycles, VUs: d.VUs, RunBeforeFault: d.RunBeforeFault, Fault: d.Fault, RecoverTimeout: d.RecoverTimeout,
		Mode: p.mode(fs, what)}
	if f, ok := fs["server"]; ok {
		if s, ok := p.serverRef(f.val, what+": server"); ok {
			st.Server, st.Instances = s.Name, s.Instances()
			p.needsManaged(f.val, what, s, "crashes and restarts it")
		}
	}
	for _, o := range []struct {
		key string
		to  *int
	}{{"cycles", &st.Cycles}, {"vus", &st.VUs}} {
		if f, ok := fs[o.key]; ok {
			*o.to, _ = p.integer(f.val, what+": "+o.key, math.MinInt, math.MaxInt)
		}
	}
	for _, o := range []struct {
		key string
		to  *time.Duration
	}{{"run_before_fault", &st.RunBeforeFault}, {"recover_timeout", &st.RecoverTimeout}} {
		if f, ok := fs[o.key]; ok {
			*o.to, _ = p.duration(f.val, what+": "+o.key, false)
		}
	}
	if f, ok := fs["rate"]; ok {
		// Empty (a variable left so): a closed loop, as tpcc-run's.
		if text, ok := p.text(f.val, what+": rate"); ok {
			var err error
			if st.Rate, err = experiment.ParseDurabilityRate(what+": rate", text); err != nil {
				p.bad(f.val, "%v", err)
			}
		}
	}
	if f, ok := fs["fault"]; ok {
		var ok bool
		st.Fault, ok = p.text(f.val, what+": fault")
		switch faults := []string{durability.FaultKill, durability.FaultStop, durability.FaultRestart}; {
		case !ok:
		case st.Fault == durability.FaultCommand:
			p.bad(f.val, "%s: fault command runs a command of yours, which a scenario does not; use one of %s (tierbench durability --fault-command runs one)",
				what, strings.Join(faults, ", "))
		case !slices.Contains(faults, st.Fault):
			p.bad(f.val, "%s: fault %q is unknown; use one of %s", what, st.Fault, strings.Join(faults, ", "))
		}
	}
	if f, ok := fs["cold_cache"]; ok {
		st.ColdCache, _ = p.boolean(f.val, what+": cold_cache")
	}
	p.refuse(experiment.Except(durabilityConfig(st, "").Validate(), append(supplied, "managed", "warehouses", "cold_cache")...), fs, what, nil)
	return st
}

func (p *parser) spaceStep(at, body *yaml.Node) *SpaceStep {
	const what = KindSpace
	fs := p.fields(body, what, []string{"server", "target", "block", "keep_below", "zstd_sample"})
	st := &SpaceStep{}
	serverF, hasServer := fs["server"]
	targetF, hasTarget := fs["target"]
	switch {
	case hasServer && hasTarget:
		p.bad(targetF.key, "%s: give server or target, not both: a server's data directories, or a target's directory", what)
	case !hasServer && !hasTarget:
		p.at(at, "%s: missing server or target (what to scan: a server's data directories, or a target's directory)", what)
	case hasServer:
		if s, ok := p.serverRef(serverF.val, what+": server"); ok {
			st.Server, st.Instances = s.Name, s.Instances()
			p.needsManaged(serverF.val, what, s, "reads its data directory")
			if len(s.Hosts) > 0 {
				p.bad(serverF.val, "%s: server %s runs on another host, and space scans data on this host only so far; scan it there with tierbench space --target DATADIR",
					what, s.Name)
			}
		}
	default:
		st.Target, _ = p.targetRef(targetF.val, what+": target")
	}
	// Each value is checked alone by the scan's own rules (space.Options),
	// so that a problem lands at its key.
	if f, ok := fs["block"]; ok {
		if n, ok := p.size(f.val, what+": block"); ok {
			if n > 1<<30 || (space.Options{BlockSize: int(n)}).Validate() != nil || n == 0 {
				p.bad(f.val, "%s: block %s is not a power of two from 512 to 1m; give e.g. 4k, 8k or 64k", what, f.val.Value)
			} else {
				st.Block = n
			}
		}
	}
	if f, ok := fs["keep_below"]; ok {
		if v, ok := p.float(f.val, what+": keep_below"); ok {
			if v == 0 || (space.Options{KeepBelow: v}).Validate() != nil {
				p.bad(f.val, "%s: keep_below %s is not above 0 and at most 1; give e.g. 0.5 (a block kept compressed at half its size or less)", what, f.val.Value)
			} else {
				st.KeepBelow = v
			}
		}
	}
	if f, ok := fs["zstd_sample"]; ok {
		if n, err := space.ParseZstdSample(f.val.Value); err != nil || f.val.Kind != yaml.ScalarNode {
			p.bad(f.val, "%s: zstd_sample %s is not auto or a power of two; give auto, 1 (every block, exact) or e.g. 32", what, f.val.Value)
		} else {
			st.ZstdSample = n
		}
	}
	return st
}

func (p *parser) stopStep(at, body *yaml.Node) *StopStep {
	const what = KindStop
	fs := p.fields(body, what, []string{"server"})
	p.required(at, fs, what, "server")
	st := &StopStep{}
	if f, ok := fs["server"]; ok {
		if s, ok := p.serverRef(f.val, what+": server"); ok {
			st.Server, st.Instances = s.Name, s.Instances()
			p.needsManaged(f.val, what, s, "stops it")
		}
	}
	return st
}

func (p *parser) reportStep(body *yaml.Node) *ReportStep {
	const what = KindReport
	fs := p.fields(body, what, []string{"out", "title"})
	st := &ReportStep{}
	if f, ok := fs["out"]; ok {
		st.Out, _ = p.text(f.val, what+": out")
	}
	if f, ok := fs["title"]; ok {
		st.Title, _ = p.text(f.val, what+": title")
	}
	return st
}
