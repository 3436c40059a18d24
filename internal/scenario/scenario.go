// Package scenario reads scenario files: `cnperf run -f FILE` runs the
// scenarios of FILE in order. A scenario file is one or more YAML
// documents separated by `---`, a scenario each: a name and the flags of
// `cnperf run` as keys (without their dashes: networks, duration,
// mode-opt, neighbours, the backends' flags...), so that every flag is a
// key and a flag added to run is one too. The keys are taken from run's
// own flag set and their values set on it, so a scenario goes through the
// same parsing and plan as the command line. `suite` takes a suite's name,
// as the flag does, or a suite written out (package suite's format, as
// `cnperf suites --show NAME` prints it). Dump writes the scenario a
// command line means; Schema is the format's JSON Schema.
package scenario

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/registry"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/workload"
)

// NotKeys are run's flags a scenario does not take: they say what to do
// with the file, on the command line.
var NotKeys = []string{"f", "file", "dump-scenario", "dry-run"}

// Scenario is one scenario of a file, checked against run's flags.
type Scenario struct {
	Name string
	File string
	Line int // of its name
	// Suite is its suite written out (suite: {...}); nil when it names
	// one (or none).
	Suite *suite.Suite
	keys  []key
}

// key is one flag's value, as the text the flag takes.
type key struct {
	name, text string
	line       int
}

// Load reads the scenarios of the file at path; see Parse.
func Load(path string, fs *flag.FlagSet) ([]Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("-f %s: no such file; name a scenario file (docs/usage.md, Scenario files)", path)
		}
		return nil, fmt.Errorf("-f %s: %v; name a readable scenario file", path, err)
	}
	return Parse(path, b, fs)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// Parse reads the scenarios of a file (its name in errors: FILE:LINE:
// ...). fs is a fresh flag set of `cnperf run`: every key must be one of
// its flags (but NotKeys), and every value is set on it to check it.
func Parse(file string, data []byte, fs *flag.FlagSet) ([]Scenario, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []Scenario
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			msg := err.Error()
			if m := yamlLine.FindStringSubmatch(msg); m != nil {
				return nil, fmt.Errorf("%s:%s: %s; fix the YAML (see docs/usage.md, Scenario files)", file, m[1], strings.TrimPrefix(msg, m[0]))
			}
			return nil, fmt.Errorf("%s: %s; fix the YAML (see docs/usage.md, Scenario files)", file, strings.TrimPrefix(msg, "yaml: "))
		}
		if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
			continue // an empty document: comments only
		}
		s, err := parseOne(file, doc.Content[0], fs)
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			if o.Name == s.Name {
				return nil, fmt.Errorf("%s:%d: a second scenario %q (the first at line %d); give each scenario its own name", file, s.Line, s.Name, o.Line)
			}
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no scenario in it; give one, e.g. name: quick-look, networks: [vxlan, host-gw] (docs/usage.md, Scenario files)", file)
	}
	return out, nil
}

func parseOne(file string, m *yaml.Node, fs *flag.FlagSet) (Scenario, error) {
	s := Scenario{File: file, Line: m.Line}
	if m.Kind != yaml.MappingNode {
		return s, fmt.Errorf("%s:%d: a scenario is a mapping of keys to values; write e.g. name: quick-look, then a key per line", file, m.Line)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k, v := m.Content[i], m.Content[i+1]; k.Value == "name" {
			if v.Kind != yaml.ScalarNode || strings.TrimSpace(v.Value) == "" || v.Tag == "!!null" {
				return s, fmt.Errorf("%s:%d: the scenario's name is empty; give it one, e.g. name: quick-look", file, v.Line)
			}
			s.Name, s.Line = v.Value, k.Line
		}
	}
	if s.Name == "" {
		return s, fmt.Errorf("%s:%d: a scenario without a name; give it one, e.g. name: quick-look", file, m.Line)
	}
	where := fmt.Sprintf("in scenario %q", s.Name)
	errf := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", file, n.Line, fmt.Sprintf(format, args...))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := k.Value
		if seen[name] {
			return s, errf(k, "key %q twice %s; give it once", name, where)
		}
		seen[name] = true
		f := fs.Lookup(name)
		switch {
		case name == "name":
			continue
		case slices.Contains(NotKeys, name):
			return s, errf(k, "key %q %s is for the command line: give --%s to cnperf run -f FILE instead", name, where, name)
		case f == nil:
			hint := ""
			if c := registry.Closest(name, Keys(fs)); c != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", c)
			}
			return s, errf(k, "unknown key %q %s%s; the keys are the flags of cnperf run, see cnperf run -h", name, where, hint)
		case name == "suite" && v.Kind == yaml.MappingNode:
			st, err := suite.Parse(file, fmt.Sprintf("scenario %q", s.Name), v, func(o string) bool { return isOption(fs, o) })
			if err != nil {
				return s, err
			}
			st.Name = s.Name
			s.Suite = &st
			continue
		}
		text, err := valueText(kindOf(f), v)
		if err != nil {
			return s, errf(v, "key %q %s %v", name, where, err)
		}
		if err := fs.Set(name, text); err != nil {
			return s, errf(v, "key %q %s: %v; see cnperf run -h", name, where, err)
		}
		s.keys = append(s.keys, key{name: name, text: text, line: k.Line})
	}
	return s, nil
}

// Keys are the keys a scenario takes: name and run's flags but NotKeys,
// sorted.
func Keys(fs *flag.FlagSet) []string {
	out := []string{"name"}
	fs.VisitAll(func(f *flag.Flag) {
		if !slices.Contains(NotKeys, f.Name) {
			out = append(out, f.Name)
		}
	})
	slices.Sort(out)
	return out
}

// isOption says whether a key of a suite written out is an experiment's
// or a workload's option (one of run's flags).
func isOption(fs *flag.FlagSet, name string) bool {
	if fs.Lookup(name) == nil {
		return false
	}
	if _, ok := option.Find(experiment.Options(), name); ok {
		return true
	}
	return slices.ContainsFunc(workload.Flags(), func(f workload.Flag) bool { return f.Name == name })
}

// kind is how a flag's value is written in YAML.
type kind int

const (
	text     kind = iota // a scalar, or a list of them (joined with commas)
	boolean              // true or false
	integer              // a whole number
	duration             // 5s, 200ms
	pairs                // a mapping of key: value (or key=value text)
)

func kindOf(f *flag.Flag) kind {
	if _, ok := f.Value.(option.KeyValueFlag); ok {
		return pairs
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return boolean
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case int:
			return integer
		case time.Duration:
			return duration
		}
	}
	return text
}

// valueText is the text a flag of kind k takes for the YAML value v.
func valueText(k kind, v *yaml.Node) (string, error) {
	scalar := v.Kind == yaml.ScalarNode && v.Tag != "!!null"
	switch k {
	case boolean:
		if !scalar || v.Tag != "!!bool" {
			return "", errors.New("wants true or false")
		}
	case integer:
		if !scalar || v.Tag != "!!int" {
			return "", errors.New("wants a whole number, e.g. 3")
		}
	case duration:
		if !scalar {
			return "", errors.New("wants a duration, e.g. 5s or 200ms")
		}
		if _, err := time.ParseDuration(v.Value); err != nil {
			return "", fmt.Errorf("wants a duration, e.g. 5s or 200ms, not %q", v.Value)
		}
	case pairs:
		if v.Kind == yaml.MappingNode {
			var kv []string
			for i := 0; i+1 < len(v.Content); i += 2 {
				if v.Content[i+1].Kind != yaml.ScalarNode {
					return "", errors.New("wants key: value pairs, e.g. {encrypt: aes-gcm}")
				}
				kv = append(kv, v.Content[i].Value+"="+v.Content[i+1].Value)
			}
			if len(kv) == 0 {
				return "", errors.New("names nothing; give key: value pairs, e.g. {encrypt: aes-gcm}, or drop it")
			}
			return strings.Join(kv, ","), nil
		}
		fallthrough
	default:
		t, ok := suite.Text(v)
		if !ok {
			return "", errors.New("wants a value or a list of values, e.g. [vxlan, host-gw]")
		}
		return t, nil
	}
	return v.Value, nil
}

// String names the scenario and where it is: scenario "x" (FILE:LINE).
func (s Scenario) String() string {
	return fmt.Sprintf("scenario %q (%s:%d)", s.Name, s.File, s.Line)
}

// Apply sets the scenario's values on fs, a fresh flag set of `cnperf
// run`, but for the flags in skip (those the command line gives: it
// replaces them, parsed after).
func (s Scenario) Apply(fs *flag.FlagSet, skip map[string]bool) error {
	for _, k := range s.keys {
		if skip[k.name] {
			continue
		}
		if err := fs.Set(k.name, k.text); err != nil {
			return fmt.Errorf("%s:%d: key %q in scenario %q: %v; see cnperf run -h", s.File, k.line, k.name, s.Name, err)
		}
	}
	return nil
}

// Wrap places an error of the scenario's plan at the line of the key it
// names (--networks: the networks: line), else at the scenario's name:
// FILE:LINE: scenario "x": ERR.
func (s Scenario) Wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s:%d: scenario %q: %w", s.File, s.lineOf(err.Error()), s.Name, err)
}

// lineOf is the line of the key an error names: as a flag (--networks),
// else by a value of it, quoted ("nope" of networks: [vxlan, nope]); else
// the scenario's.
func (s Scenario) lineOf(msg string) int {
	for _, k := range s.keys {
		if i := strings.Index(msg, "--"+k.name); i >= 0 {
			if end := i + 2 + len(k.name); end == len(msg) || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz-_", rune(msg[end])) {
				return k.line
			}
		}
	}
	for _, k := range s.keys {
		for _, v := range strings.Split(k.text, ",") {
			if v = strings.TrimSpace(v); v != "" && strings.Contains(msg, fmt.Sprintf("%q", v)) {
				return k.line
			}
		}
	}
	return s.Line
}

// Dump writes, as a scenario file of one scenario named name, the flags
// set on fs (run's, parsed from a command line) but NotKeys: running it
// with -f means what the command line did.
func Dump(w io.Writer, name string, fs *flag.FlagSet) error {
	m := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
	}
	str := func(s string) *yaml.Node {
		n := &yaml.Node{Kind: yaml.ScalarNode, Value: s}
		var probe any
		if yaml.Unmarshal([]byte(s), &probe) != nil || probe == nil {
			n.Tag = "!!str" // quoted: it would not read back as this text
		}
		return n
	}
	add("name", str(name))
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(NotKeys, f.Name) {
			return
		}
		switch kindOf(f) {
		case boolean:
			add(f.Name, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: f.Value.String()})
		case integer:
			add(f.Name, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: f.Value.String()})
		case pairs:
			p := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
			kv := f.Value.(option.KeyValueFlag).Pairs()
			keys := make([]string, 0, len(kv))
			for k := range kv {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				p.Content = append(p.Content, str(k), str(kv[k]))
			}
			add(f.Name, p)
		default:
			add(f.Name, str(f.Value.String()))
		}
	})
	fmt.Fprintln(w, "# cnperf run -f FILE runs this scenario; written by cnperf run --dump-scenario")
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return err
	}
	return enc.Close()
}
