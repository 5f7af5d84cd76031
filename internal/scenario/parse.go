package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tierbench/tierbench/internal/repeat"

	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/internal/units"
)

// DefaultDataDir is the value of the built-in variable ${data}, under which
// the bundled scenarios put their targets; --set data=DIR moves them all.
const DefaultDataDir = "./tierbench-data"

// Inside a flow mapping such as {vus: ${vus}} YAML reads the "}" of ${vus} as
// the mapping's end. So before YAML sees the text, every ${name} becomes
// $⦃name⦄: the same number of characters (yaml.v3 counts columns in
// characters, so every position stays exact) and no flow indicators. Values
// are substituted, and messages printed, with ${name} again.
const (
	markOpen  = "$⦃"
	markClose = "⦄"
)

var (
	refRE    = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	markedRE = regexp.MustCompile(`\$⦃([A-Za-z_][A-Za-z0-9_]*)⦄`)
	varRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	nameRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	// yaml.v3 reports syntax errors as "yaml: line N: what".
	yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
)

func protectRefs(src []byte) []byte { return refRE.ReplaceAll(src, []byte("$$⦃${1}⦄")) }

func unmark(s string) string { return markedRE.ReplaceAllString(s, "$${${1}}") }

var topKeys = []string{"name", "title", "description", "repeat", "scales", "hosts", "targets", "servers", "steps"}

// Parse reads a scenario. name is how errors name the file; scale picks a
// scale the file defines ("" = its default variables only); sets overrides
// variables (--set key=value). Every problem comes back at once, as Errors.
func Parse(name string, data []byte, scale string, sets map[string]string) (*Scenario, error) {
	p := &parser{file: name, hosts: map[string]int{}, targets: map[string]int{}, servers: map[string]int{}, instanceOf: map[string]string{}}
	sc := p.parse(data, scale, sets)
	if len(p.errs) > 0 {
		return nil, p.errs.sorted()
	}
	return sc, nil
}

// parser walks the yaml.Node tree itself rather than decoding into structs,
// so every problem keeps its line and column and none stops the others.
type parser struct {
	file  string
	lines []string // the protected source, to place a ${name} exactly
	errs  Errors
	vars  map[string]string
	set   map[string]bool // variables given by --set

	sc         *Scenario
	hosts      map[string]int    // name -> index in sc.Hosts
	targets    map[string]int    // name -> index in sc.Targets
	servers    map[string]int    // name -> index in sc.Servers
	instanceOf map[string]string // instance -> server
	// built are the servers a tpcc-build step built so far, with its
	// warehouses: the sources a later one may copy (from).
	built map[string]int
	// tpchBuilt are the servers a tpch-build step built so far: those a
	// tpch-run step may run on.
	tpchBuilt map[string]bool
	// blamed are the values already reported bad: a config's Validate
	// adds nothing about them (refuse).
	blamed map[*yaml.Node]bool
}

func (p *parser) add(line, col int, format string, args ...any) {
	p.errs = append(p.errs, Error{File: p.file, Line: line, Col: col, Msg: capQuoted(unmark(fmt.Sprintf(format, args...)))})
}

func (p *parser) at(n *yaml.Node, format string, args ...any) {
	p.blame(n)
	p.add(n.Line, n.Column, format, args...)
}

// blame records a node reported bad.
func (p *parser) blame(n *yaml.Node) {
	if p.blamed == nil {
		p.blamed = map[*yaml.Node]bool{}
	}
	p.blamed[n] = true
}

// bad reports a problem with a value; when the value came from variables it
// says which, since the fix is then in scales or --set.
func (p *parser) bad(n *yaml.Node, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	var refs []string
	for _, m := range markedRE.FindAllStringSubmatch(n.Value, -1) {
		ref := "${" + m[1] + "}"
		if p.set[m[1]] {
			ref += ", given by --set " + m[1]
		}
		refs = append(refs, ref)
	}
	if len(refs) > 0 {
		msg += " (from " + strings.Join(refs, ", ") + ")"
	}
	p.at(n, "%s", msg)
}

type field struct{ key, val *yaml.Node }

func (p *parser) parse(data []byte, scale string, sets map[string]string) *Scenario {
	root := p.decode(data)
	if root == nil {
		return nil
	}
	fs := p.fields(root, "scenario", topKeys)
	sc := &Scenario{Source: p.file, Scale: scale}
	p.sc = sc

	refs := map[string]bool{}
	for _, k := range topKeys {
		if f, ok := fs[k]; ok && k != "scales" {
			collectRefs(f.val, refs)
		}
	}
	p.variables(fs["scales"], scale, sets, refs)
	sc.Vars = make(map[string]string, len(p.vars))
	for k, v := range p.vars {
		sc.Vars[k] = unmark(v)
	}

	if f, ok := fs["name"]; ok {
		sc.Name, _ = p.name(f.val, "name")
	} else {
		p.at(root, "missing name: give the scenario a name (letters, digits, -, _ and .)")
	}
	if f, ok := fs["title"]; ok {
		sc.Title, _ = p.text(f.val, "title")
	}
	if sc.Title == "" {
		sc.Title = sc.Name
	}
	if f, ok := fs["description"]; ok {
		p.text(f.val, "description")
	}
	sc.Repeat = 1
	if f, ok := fs["repeat"]; ok {
		sc.Repeat, _ = p.integer(f.val, "repeat (the repetitions of every measuring step)", 1, repeat.MaxRepeat)
		sc.Repeat = max(sc.Repeat, 1)
	}
	p.parseHosts(fs["hosts"])
	p.parseTargets(fs["targets"])
	p.parseServers(fs["servers"])
	if f, ok := fs["steps"]; ok {
		p.parseSteps(f)
		p.placeTargets()
	} else {
		p.at(root, "missing steps: a scenario needs a list of steps (%s)", strings.Join(Kinds, ", "))
	}
	return sc
}

// decode reads the one YAML document of a scenario and returns its root
// mapping, or nil after reporting why there is none.
func (p *parser) decode(data []byte) (root *yaml.Node) {
	defer func() {
		// A malformed file must be an error, never a crash of tierbench.
		if r := recover(); r != nil {
			p.add(0, 0, "the YAML parser failed on this file: %v", r)
			root = nil
		}
	}()
	src := protectRefs(data)
	p.lines = strings.Split(string(src), "\n")
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.add(0, 0, "the file is empty; a scenario needs at least a name and steps")
		} else {
			p.yamlError(err)
		}
		return nil
	}
	var more yaml.Node
	switch err := dec.Decode(&more); {
	case err == nil:
		p.add(more.Line, 0, "a scenario file holds one YAML document; remove this second one (and the --- before it)")
	case !errors.Is(err, io.EOF):
		p.yamlError(err)
	}
	root = &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			p.add(0, 0, "the file is empty; a scenario needs at least a name and steps")
			return nil
		}
		root = root.Content[0]
	}
	root = deref(root)
	if root.Kind != yaml.MappingNode {
		p.at(root, "a scenario is a mapping with the keys %s; this is %s", strings.Join(topKeys, ", "), kindName(root))
		return nil
	}
	return root
}

// parserProblems are the messages of yaml.v3's parser (not its scanner). For
// these it reports the 0-based line of the construct being parsed — "while
// parsing a flow mapping" — so the real line is one more; for scanner errors
// the line is already 1-based. With no line at all, the mark was on the
// first line.
var parserProblems = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'", "did not find expected '-' indicator",
	"did not find expected <document start>", "did not find expected <stream-start>", "did not find expected key",
	"did not find expected node content", "found duplicate %TAG directive", "found duplicate %YAML directive",
	"found incompatible YAML document", "found undefined tag handle",
}

func (p *parser) yamlError(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if slices.Contains(parserProblems, msg) {
			line++
		}
	} else if strings.Contains(msg, "anchor") {
		line = 0 // the composer's errors about anchors carry no place
	}
	p.add(line, 0, "YAML syntax: %s", msg)
}

// deref follows aliases (*name) to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	orig := n
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	if n == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: orig.Line, Column: orig.Column}
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "empty"
		}
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// collectRefs adds every ${name} under n to refs. Aliases are not followed:
// what they point to is scanned where it is defined.
func collectRefs(n *yaml.Node, refs map[string]bool) {
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode {
		for _, m := range markedRE.FindAllStringSubmatch(n.Value, -1) {
			refs[m[1]] = true
		}
	}
	for _, c := range n.Content {
		collectRefs(c, refs)
	}
}

// fields reads a mapping's keys, reporting duplicates and keys not in known.
// n may be nil or empty (a step without fields).
func (p *parser) fields(n *yaml.Node, what string, known []string) map[string]field {
	out := make(map[string]field)
	if n == nil {
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.at(k, "%s: a key must be a plain name, not %s", what, kindName(k))
			continue
		}
		name := k.Value
		if prev, dup := out[name]; dup {
			p.at(k, "%s: %s is given twice (first on line %d)", what, name, prev.key.Line)
			continue
		}
		out[name] = field{k, v}
		if !slices.Contains(known, name) {
			p.at(k, "%s: unknown key %q%s; known keys: %s", what, name, suggest(name, known), strings.Join(known, ", "))
		}
	}
	return out
}

// required reports the names missing from fs, at node at.
func (p *parser) required(at *yaml.Node, fs map[string]field, what string, names ...string) {
	var missing []string
	for _, n := range names {
		if _, ok := fs[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		p.at(at, "%s: missing %s (required: %s)", what, strings.Join(missing, ", "), strings.Join(names, ", "))
	}
}

// list returns a sequence's items; empty (null) is an empty list.
func (p *parser) list(n *yaml.Node, what string) ([]*yaml.Node, bool) {
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.SequenceNode {
		p.at(n, "%s must be a list (items starting with -), not %s", what, kindName(n))
		return nil, false
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = deref(c)
	}
	return out, true
}

// variables builds p.vars: the default scale's values, overlaid with the
// chosen scale's, then with --set, then every ${name} inside them resolved.
func (p *parser) variables(f field, scale string, sets map[string]string, refs map[string]bool) {
	type def struct {
		val  string
		node *yaml.Node // nil: from --set or built in
	}
	known := map[string]bool{"data": true}
	for r := range refs {
		known[r] = true
	}
	defs := map[string]map[string]def{}
	var scaleNames []string
	if f.val != nil && !isNull(f.val) {
		if f.val.Kind != yaml.MappingNode {
			p.at(f.val, "scales must be a mapping of scale names (default, laptop, paper, …) to variables, not %s", kindName(f.val))
		} else {
			for i := 0; i+1 < len(f.val.Content); i += 2 {
				k, v := deref(f.val.Content[i]), deref(f.val.Content[i+1])
				if k.Kind != yaml.ScalarNode || !nameRE.MatchString(k.Value) {
					p.at(k, "scales: a scale's name is letters, digits, -, _ and . (got %s)", kindName(k))
					continue
				}
				if _, dup := defs[k.Value]; dup {
					p.at(k, "scales: scale %s is given twice", k.Value)
					continue
				}
				vs := map[string]def{}
				defs[k.Value] = vs
				scaleNames = append(scaleNames, k.Value)
				if isNull(v) {
					continue
				}
				if v.Kind != yaml.MappingNode {
					p.at(v, "scale %s must be a mapping of variable names to values, not %s", k.Value, kindName(v))
					continue
				}
				for j := 0; j+1 < len(v.Content); j += 2 {
					vk, vv := deref(v.Content[j]), deref(v.Content[j+1])
					switch {
					case vk.Kind != yaml.ScalarNode || !varRE.MatchString(vk.Value):
						p.at(vk, "scale %s: a variable's name is letters, digits and _, starting with a letter (got %s)", k.Value, kindName(vk))
					case vs[vk.Value].node != nil:
						p.at(vk, "scale %s: variable %s is given twice (first on line %d)", k.Value, vk.Value, vs[vk.Value].node.Line)
					case vv.Kind != yaml.ScalarNode:
						p.at(vv, "scale %s: variable %s must be a single value, not %s (write a list of counts as \"1,2,4\")",
							k.Value, vk.Value, kindName(vv))
					default:
						val := vv.Value
						if isNull(vv) {
							val = ""
						}
						vs[vk.Value] = def{val, vv}
						known[vk.Value] = true
					}
				}
			}
		}
	}

	p.sc.Scales = scaleNames
	vals := map[string]def{"data": {DefaultDataDir, nil}}
	for k, d := range defs["default"] {
		vals[k] = d
	}
	if scale != "" {
		if s, ok := defs[scale]; ok {
			for k, d := range s {
				vals[k] = d
			}
		} else if len(scaleNames) == 0 {
			p.add(0, 0, "--scale %s: this file defines no scales", scale)
		} else {
			p.add(0, 0, "--scale %s: not defined in this file; its scales: %s", scale, strings.Join(scaleNames, ", "))
		}
	}
	var knownNames []string
	for k := range known {
		knownNames = append(knownNames, k)
	}
	sort.Strings(knownNames)
	setKeys := make([]string, 0, len(sets))
	for k := range sets {
		setKeys = append(setKeys, k)
	}
	sort.Strings(setKeys)
	for _, k := range setKeys {
		if !known[k] {
			p.add(0, 0, "--set %s: the scenario has no variable %s%s; its variables: %s", k, k, suggest(k, knownNames), strings.Join(knownNames, ", "))
			continue
		}
		vals[k] = def{string(protectRefs([]byte(sets[k]))), nil}
		if p.set == nil {
			p.set = map[string]bool{}
		}
		p.set[k] = true
	}

	// Resolve ${name} inside values, depth first, refusing cycles.
	p.vars = map[string]string{}
	state := map[string]int{} // 1: being resolved, 2: done
	fail := func(name string, d def, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if d.node != nil {
			p.at(d.node, "variable %s: %s", name, msg)
		} else {
			p.add(0, 0, "--set %s: %s", name, msg)
		}
	}
	var resolve func(name string, chain []string) string
	resolve = func(name string, chain []string) string {
		if state[name] == 2 {
			return p.vars[name]
		}
		d := vals[name]
		state[name] = 1
		chain = append(chain, name)
		if strings.Contains(d.val, "${") {
			fail(name, d, "malformed variable reference in %q; write ${name} with a name of letters, digits and _", d.val)
		}
		out := markedRE.ReplaceAllStringFunc(d.val, func(m string) string {
			ref := m[len(markOpen) : len(m)-len(markClose)]
			switch {
			case state[ref] == 1:
				fail(name, d, "variables refer to each other in a cycle: %s -> %s", strings.Join(chain, " -> "), ref)
				return m
			case !hasKey(vals, ref):
				fail(name, d, "${%s} is not defined", ref)
				return m
			}
			return resolve(ref, chain)
		})
		state[name] = 2
		p.vars[name] = out
		return out
	}
	names := make([]string, 0, len(vals))
	for k := range vals {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		resolve(k, nil)
	}
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

func (p *parser) varList() string {
	names := make([]string, 0, len(p.vars))
	for k := range p.vars {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// text returns a scalar's value with every ${name} substituted, or false
// after reporting why it cannot.
func (p *parser) text(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		p.at(n, "%s must be a single value, not %s", what, kindName(n))
		return "", false
	}
	raw := n.Value
	if isNull(n) {
		raw = ""
	}
	ok := true
	if strings.Contains(raw, "${") {
		p.at(n, "%s: malformed variable reference in %q; write ${name} with a name of letters, digits and _", what, raw)
		ok = false
	}
	k := 0
	out := markedRE.ReplaceAllStringFunc(raw, func(m string) string {
		k++
		name := m[len(markOpen) : len(m)-len(markClose)]
		v, defined := p.vars[name]
		if !defined {
			line, col := p.refPos(n, k)
			p.blame(n)
			p.add(line, col, "%s: ${%s} is not defined; define it under scales or pass --set %s=VALUE (variables: %s)",
				what, name, name, p.varList())
			ok = false
			return m
		}
		return v
	})
	return out, ok
}

// refPos finds the k-th ${…} of scalar n in the source, for an exact column;
// failing that, n's own position.
func (p *parser) refPos(n *yaml.Node, k int) (int, int) {
	for l := n.Line - 1; l >= 0 && l < len(p.lines) && l < n.Line+200; l++ {
		line := p.lines[l]
		col := 0 // runes skipped so far
		if l == n.Line-1 {
			skip := n.Column - 1
			for skip > 0 && line != "" {
				_, size := utf8.DecodeRuneInString(line)
				line = line[size:]
				skip--
				col++
			}
		}
		for {
			i := strings.Index(line, markOpen)
			if i < 0 {
				break
			}
			col += utf8.RuneCountInString(line[:i])
			if k--; k == 0 {
				return l + 1, col + 1
			}
			line = line[i+len(markOpen):]
			col += utf8.RuneCountInString(markOpen)
		}
	}
	return n.Line, n.Column
}

// name reads a name: letters, digits, -, _ and ., starting with a letter or
// digit (names become directory and instance names).
func (p *parser) name(n *yaml.Node, what string) (string, bool) {
	s, ok := p.text(n, what)
	if !ok {
		return "", false
	}
	if !nameRE.MatchString(s) {
		if s == "" {
			p.bad(n, "%s is empty", what)
		} else {
			p.bad(n, "%s %q: use letters, digits, -, _ and ., starting with a letter or digit", what, s)
		}
		return "", false
	}
	return s, true
}

func (p *parser) integer(n *yaml.Node, what string, lo, hi int) (int, bool) {
	s, ok := p.text(n, what)
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		p.bad(n, "%s: %q is not a whole number", what, s)
		return 0, false
	}
	if v < lo || v > hi {
		p.bad(n, "%s must be between %d and %d (got %d)", what, lo, hi, v)
		return 0, false
	}
	return v, true
}

func (p *parser) float(n *yaml.Node, what string) (float64, bool) {
	s, ok := p.text(n, what)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v != v || v < 0 || v > 1e12 {
		p.bad(n, "%s: %q is not a number of 0 or more", what, s)
		return 0, false
	}
	return v, true
}

func (p *parser) size(n *yaml.Node, what string) (int64, bool) {
	s, ok := p.text(n, what)
	if !ok {
		return 0, false
	}
	v, err := units.ParseSize(s)
	if err != nil {
		p.bad(n, "%s: %v", what, err)
		return 0, false
	}
	return v, true
}

// duration reads a duration; positive requires more than zero.
func (p *parser) duration(n *yaml.Node, what string, positive bool) (time.Duration, bool) {
	s, ok := p.text(n, what)
	if !ok {
		return 0, false
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		p.bad(n, "%s: %v", what, err)
		return 0, false
	}
	if positive && d <= 0 {
		p.bad(n, "%s must be more than 0s (got %s)", what, s)
		return 0, false
	}
	return d, true
}

func (p *parser) boolean(n *yaml.Node, what string) (bool, bool) {
	s, ok := p.text(n, what)
	if !ok {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off":
		return false, true
	}
	p.bad(n, "%s: %q is not true or false", what, s)
	return false, false
}

// countList reads counts such as "1,2,4" or "1-3,5", or a YAML list of them.
func (p *parser) countList(n *yaml.Node, what string) ([]int, bool) {
	s, ok := p.joined(n, what)
	if !ok {
		return nil, false
	}
	v, err := units.ParseCountList(s)
	if err != nil {
		p.bad(n, "%s: %v", what, err)
		return nil, false
	}
	return v, true
}

// rateList reads rates such as "20000,40000" or fractions such as
// "20%,60%", or a YAML list of either, into r.
func (p *parser) rateList(n *yaml.Node, what string, r *Rate) {
	s, ok := p.joined(n, what)
	if !ok || strings.TrimSpace(s) == "" { // a variable left empty: no rates, a closed loop
		return
	}
	v, percent, err := units.ParseRateList(s)
	switch {
	case err != nil:
		p.bad(n, "%s: %v", what, err)
	case percent:
		r.Fractions = v
	default:
		r.Rates = v
	}
}

// joined reads a comma-separated value, or a YAML list of values joined by
// commas.
func (p *parser) joined(n *yaml.Node, what string) (string, bool) {
	var s string
	if n.Kind == yaml.SequenceNode {
		var parts []string
		for _, c := range n.Content {
			t, ok := p.text(deref(c), what)
			if !ok {
				return "", false
			}
			parts = append(parts, t)
		}
		s = strings.Join(parts, ",")
	} else {
		t, ok := p.text(n, what)
		if !ok {
			return "", false
		}
		s = t
	}
	return s, true
}

// entry is one item of a list of names, with the node to blame.
type entry struct {
	text string
	node *yaml.Node
}

// entries reads names given as a YAML list or as one comma-separated value
// (which is what a variable gives).
func (p *parser) entries(n *yaml.Node, what string) ([]entry, bool) {
	var nodes []*yaml.Node
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			nodes = append(nodes, deref(c))
		}
	default:
		nodes = []*yaml.Node{n}
	}
	var out []entry
	good := true
	for _, c := range nodes {
		s, ok := p.text(c, what)
		if !ok {
			good = false
			continue
		}
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, entry{part, c})
			}
		}
	}
	return out, good
}

// suggest offers the known word nearest to s, when one is close.
func suggest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(s, k); d < bestD && d <= len(s)/2 {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
